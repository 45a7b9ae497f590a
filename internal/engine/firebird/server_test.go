package firebird_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/engine/firebird"
	"github.com/dblat/dblat/internal/engine/firebird/fbtest"
	"github.com/dblat/dblat/internal/managed"
	"github.com/dblat/dblat/internal/managed/managedtest"
)

// related returns the live processes whose parent or process group is pid (the server's
// children, also after they were re-parented), read from /proc.
func related(t *testing.T, pid int) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil || p == pid {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if f[0] == "Z" {
			continue
		}
		if f[1] == strconv.Itoa(pid) || f[2] == strconv.Itoa(pid) {
			out = append(out, p)
		}
	}
	return out
}

func newInstance(t *testing.T, name string, settings map[string]string) *managed.Instance {
	t.Helper()
	return &managed.Instance{Name: name, Engine: "firebird", Dir: filepath.Join(fbtest.Dir(t), name), Settings: settings}
}

// TestManagedServerLifecycle starts a server in each architecture with settings that differ
// from the defaults, reads them back, holds a few connections (each a process of its own in
// Classic), stops it, and checks that no process of it survives; then restarts it.
func TestManagedServerLifecycle(t *testing.T) {
	for _, tc := range []struct {
		arch     string
		pageSize string
		buffers  string
	}{{"Super", "16384", "3000"}, {"SuperClassic", "8192", "700"}, {"Classic", "16384", "300"}} {
		t.Run(tc.arch, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			inst := newInstance(t, "life-"+strings.ToLower(tc.arch), map[string]string{
				"servermode": tc.arch, "PageSize": tc.pageSize, "DefaultDbCachePages": tc.buffers, "ForcedWrites": "off"})
			l := firebird.Launcher{}
			if err := l.Start(ctx, inst); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = l.Stop(ctx, inst) })
			pid := inst.PID
			if strings.Contains(inst.DSN, ":"+"@") || strings.Count(inst.DSN, "@") != 1 || strings.Contains(inst.DSN, "SYSDBA:") {
				t.Errorf("managed DSN carries a password: %s", inst.DSN)
			}
			if got := (firebird.Engine{}).Redact(inst.DSN); got != inst.DSN {
				t.Errorf("Redact changed a password-free DSN: %s -> %s", inst.DSN, got)
			}
			st, err := os.Stat(firebird.PasswordFile(inst))
			if err != nil || st.Mode().Perm() != 0o600 {
				t.Errorf("password file: %v, mode %v", err, st.Mode())
			}

			var dbs []func() error
			for i := 0; i < 3; i++ {
				db, err := firebird.Engine{}.Open(ctx, inst.DSN, engine.OpenOptions{})
				if err != nil {
					t.Fatal(err)
				}
				dbs = append(dbs, db.Close)
				if i == 0 {
					info, err := firebird.Engine{}.Inspect(ctx, db)
					if err != nil {
						t.Fatal(err)
					}
					for k, want := range map[string]string{firebird.KeyPageSize: tc.pageSize, firebird.KeyPageBuffers: tc.buffers,
						firebird.KeyServerMode: tc.arch, firebird.KeyForcedWrites: "off", firebird.KeyWireEncrypted: "TRUE"} {
						if info.Settings[k] != want {
							t.Errorf("%s read back as %q, want %q", k, info.Settings[k], want)
						}
					}
				}
			}
			kids := related(t, pid)
			if tc.arch == "Classic" && len(kids) < 3 {
				t.Errorf("Classic listener %d has %d children with 3 connections open, want >= 3", pid, len(kids))
			}
			if tc.arch != "Classic" && len(kids) != 0 {
				t.Errorf("%s server %d has child processes %v", tc.arch, pid, kids)
			}
			// Stop with the connections still open: in Classic their processes outlive the
			// listener unless Stop finds them.
			if err := l.Stop(ctx, inst); err != nil {
				t.Fatal(err)
			}
			for _, c := range dbs {
				_ = c()
			}
			if managed.Alive(pid) {
				t.Errorf("server %d still running after Stop", pid)
			}
			if left := related(t, pid); len(left) > 0 {
				t.Errorf("processes %v of server %d survive Stop", left, pid)
			}
			for _, k := range kids {
				if managed.Alive(k) {
					if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", k)); err == nil && !strings.Contains(string(b), ") Z ") {
						t.Errorf("child %d survives Stop", k)
					}
				}
			}

			// A restart keeps the port and the database; another page size is refused.
			port := inst.Port
			inst.Settings["PageSize"] = map[string]string{"16384": "8192", "8192": "16384"}[tc.pageSize]
			err = l.Start(ctx, inst)
			if err == nil || !strings.Contains(err.Error(), "page size is fixed") || strings.Contains(err.Error(), "\n") {
				t.Errorf("restart with another page size: %v", err)
			}
			if inst.PID != 0 {
				t.Errorf("failed start left PID %d", inst.PID)
			}
			inst.Settings["PageSize"] = tc.pageSize
			if err := l.Start(ctx, inst); err != nil {
				t.Fatal(err)
			}
			if inst.Port != port {
				t.Errorf("port changed across restart: %d -> %d", port, inst.Port)
			}
		})
	}
}

func TestManagedServerRefusesSettings(t *testing.T) {
	for _, tc := range []struct {
		settings map[string]string
		want     []string
	}{
		{map[string]string{"DefaultDbCachPages": "100"}, []string{`"DefaultDbCachPages"`, "did you mean DefaultDbCachePages"}},
		{map[string]string{"ReadConsistency": "1"}, []string{`"ReadConsistency"`, "4.0+"}},
		{map[string]string{"PageSize": "32768"}, []string{"PageSize=32768", "4096, 8192, 16384"}},
		{map[string]string{"PageSize": "2048"}, []string{"PageSize=2048"}},
		{map[string]string{"RemoteServicePort": "3050"}, []string{"RemoteServicePort", "--port"}},
		{map[string]string{"ServerMode": "Hybrid"}, []string{"ServerMode=Hybrid"}},
		{map[string]string{"TempCacheLimit": "1\nRemoteBindAddress = 0.0.0.0"}, []string{"one line"}},
	} {
		inst := newInstance(t, "refuse", tc.settings)
		err := firebird.Launcher{}.Start(context.Background(), inst)
		if err == nil {
			_ = firebird.Launcher{}.Stop(context.Background(), inst)
			t.Errorf("%v: started", tc.settings)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%v: error should say %q on one line: %q", tc.settings, w, err)
			}
		}
		if inst.PID != 0 {
			t.Errorf("%v: PID %d left behind", tc.settings, inst.PID)
		}
		if _, err := os.Stat(filepath.Join(inst.Dir, "firebird.conf")); err == nil {
			t.Errorf("%v: files written before the settings were checked", tc.settings)
		}
	}
}

func TestFindBinariesNamesTheFix(t *testing.T) {
	_, err := firebird.FindBinaries("/nonexistent")
	if err == nil || !strings.Contains(err.Error(), "--fb-bin") {
		t.Errorf("err = %v", err)
	}
}

// TestManagedServerVerifiesBuffers asks for fewer page buffers than Firebird accepts: the
// server silently uses its minimum, and Start must say so instead of running.
func TestManagedServerVerifiesBuffers(t *testing.T) {
	inst := newInstance(t, "buffers", map[string]string{"DefaultDbCachePages": "10"})
	err := firebird.Launcher{}.Start(context.Background(), inst)
	if err == nil {
		_ = firebird.Launcher{}.Stop(context.Background(), inst)
		t.Fatal("started with 10 page buffers")
	}
	if !strings.Contains(err.Error(), "DefaultDbCachePages=10 asked for") || inst.PID != 0 {
		t.Errorf("err %v, PID %d", err, inst.PID)
	}
}

// TestOtherAccountNeedsThePassword: another user of the machine gets into a managed server
// neither over TCP without SYSDBA's password nor through an embedded engine of its own
// (Firebird has no Unix socket on Linux: the local way in is to open the database files,
// which belong to the server's account), and does over TCP with the password file its
// owner handed over (issue 46). It runs isql-fb as the account nobody, which needs root.
func TestOtherAccountNeedsThePassword(t *testing.T) {
	srv := fbtest.Server(t, "Super")
	s := managedtest.Stranger(t, srv)
	managedtest.NeedTools(t, fbtest.Required(), "isql-fb")
	if out, err := s.Command("cat", firebird.PasswordFile(srv)).CombinedOutput(); err == nil {
		t.Errorf("%s can read the password file:\n%s", s.Name, out)
	}
	given, err := s.Give(firebird.PasswordFile(srv))
	if err != nil {
		t.Fatal(err)
	}
	bench := filepath.Join(srv.Dir, "data", "bench.fdb")
	remote := fmt.Sprintf("127.0.0.1/%d:%s", srv.Port, bench)
	isql := func(args ...string) (string, error) {
		cmd := s.Command("isql-fb", append([]string{"-q", "-b"}, args...)...)
		// The embedded engine's lock files in the stranger's home, so that what stops it is
		// the database file's permissions.
		cmd.Env = append(cmd.Env, "FIREBIRD_LOCK="+s.Home)
		cmd.Stdin = strings.NewReader("SELECT 'in as ' || CURRENT_USER FROM RDB$DATABASE;\n")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	for _, args := range [][]string{{"-user", "SYSDBA", remote}, {"-user", "SYSDBA", "-password", "masterkey", remote}, {remote}} {
		if out, err := isql(args...); err == nil || strings.Contains(out, "in as") || !strings.Contains(out, "user name and password are not defined") {
			t.Errorf("%s %s without the password: %v: %s (want a refusal of the login)", s.Name, strings.Join(args, " "), err, out)
		}
	}
	for _, args := range [][]string{{"-user", "SYSDBA", bench}, {"-user", "SYSDBA", "-fetch_password", given, bench}} {
		if out, err := isql(args...); err == nil || strings.Contains(out, "in as") || !strings.Contains(out, "ermission denied") {
			t.Errorf("%s %s through an embedded engine: %v: %s (want the file's permissions to refuse it)", s.Name, strings.Join(args, " "), err, out)
		}
	}
	if out, err := isql("-user", "SYSDBA", "-fetch_password", given, remote); err != nil || !strings.Contains(out, "in as SYSDBA") {
		t.Errorf("%s with the password file: %v: %s", s.Name, err, out)
	}
}

// TestManagedServerMovesOldPassword: an instance of a dblat from before credentials/ kept
// SYSDBA's password in sysdba.password beside its files; its next start moves it into the
// credentials directory, the invoking user's, and the server goes on taking it.
func TestManagedServerMovesOldPassword(t *testing.T) {
	ctx := context.Background()
	inst := newInstance(t, "old", fbtest.Settings("Super"))
	l := firebird.Launcher{}
	if err := l.Start(ctx, inst); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Stop(ctx, inst) })
	pw, _, _ := inst.Password("SYSDBA")
	if err := l.Stop(ctx, inst); err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(inst.Dir, "sysdba.password")
	if err := os.Rename(firebird.PasswordFile(inst), old); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(inst.Dir, managed.CredentialsDir)); err != nil {
		t.Fatal(err)
	}
	if err := l.Start(ctx, inst); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := inst.Password("SYSDBA"); got != pw || !ok || err != nil {
		t.Errorf("the password after the move: %v, %v, the same %v", ok, err, got == pw)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("%s is still there: %v", old, err)
	}
	db, err := firebird.Engine{}.Open(ctx, inst.DSN, engine.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
}
