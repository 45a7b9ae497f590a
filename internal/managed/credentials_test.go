package managed

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestCredentialsAreTheInvokingUsers: the credentials directory and its files are the
// invoking user's alone (0700, 0600), a password survives a read back, and Hand gives the
// server's account everything of an instance directory except them.
func TestCredentialsAreTheInvokingUsers(t *testing.T) {
	inst := &Instance{Dir: t.TempDir()}
	if inst.HasCredentials() {
		t.Fatal("a new instance has credentials")
	}
	if _, ok, err := inst.Password("SYSDBA"); ok || err != nil {
		t.Fatalf("password of a new instance: %v, %v", ok, err)
	}
	pw, err := NewPassword()
	if err != nil {
		t.Fatal(err)
	}
	if len(pw) != 32 {
		t.Errorf("password %d characters long, want 32 (128 bits in hex)", len(pw))
	}
	if other, _ := NewPassword(); other == pw {
		t.Error("two passwords alike")
	}
	if err := inst.SavePassword("SYSDBA", pw); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := inst.Password("SYSDBA"); got != pw || !ok || err != nil {
		t.Errorf("read back %q, %v, %v", got, ok, err)
	}
	if !inst.HasCredentials() {
		t.Error("HasCredentials after SavePassword is false")
	}
	if p := inst.PasswordFile("SYSDBA"); p != filepath.Join(inst.Dir, CredentialsDir, "sysdba.password") {
		t.Errorf("PasswordFile = %s", p)
	}
	for p, want := range map[string]os.FileMode{filepath.Join(inst.Dir, CredentialsDir): 0o700, inst.PasswordFile("SYSDBA"): 0o600} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", p, st.Mode().Perm(), want)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(inst.Dir, CredentialsDir))
	if len(entries) != 1 {
		t.Errorf("credentials directory holds %d files, want 1 (no temporary file left)", len(entries))
	}

	if os.Geteuid() != 0 {
		t.Skip("skipping Hand: giving files to another account needs root")
	}
	acct := &Account{Name: "nobody", UID: 65534, GID: 65534}
	data := filepath.Join(inst.Dir, "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Dir(inst.Dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := acct.Hand(inst.Dir); err != nil {
		t.Fatal(err)
	}
	for p, uid := range map[string]int{data: 65534, filepath.Join(inst.Dir, CredentialsDir): os.Geteuid(), inst.PasswordFile("SYSDBA"): os.Geteuid()} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := int(st.Sys().(*syscall.Stat_t).Uid); got != uid {
			t.Errorf("%s belongs to uid %d after Hand, want %d", p, got, uid)
		}
	}
}
