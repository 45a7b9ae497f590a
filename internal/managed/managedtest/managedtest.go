// Package managedtest helps the engines' tests check what a managed server lets in: it runs
// client programs as another user of the machine (managed.Stranger), the account nobody,
// which only a test running as root can do. It is imported only by tests.
package managedtest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/dblat/dblat/internal/managed"
)

// Stranger returns the account nobody as a managed.Stranger to run clients as another user
// of the machine against srv; its home is removed when the test ends. Without root the
// test is skipped: only root runs programs as another account.
func Stranger(t testing.TB, srv *managed.Instance) *managed.Stranger {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipping: running clients as another account needs root")
	}
	s, err := managed.NewStranger(srv.RunAs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// NeedTools skips the test when one of the programs names is not on PATH, or fails it when
// required (DBLAT_REQUIRE_SERVERS=1: the server's client tools come with its packages).
func NeedTools(t testing.TB, required bool, names ...string) {
	t.Helper()
	for _, name := range names {
		if _, err := exec.LookPath(name); err != nil {
			if required {
				t.Fatalf("%s is not installed (scripts/setup.sh installs it)", name)
			}
			t.Skipf("skipping: %s is not installed", name)
		}
	}
}

// Readopt starts inst with l, stops it, removes its credentials and starts it again, as a
// server made by an earlier dblat is adopted, and returns dblat's password from before; it
// fails t unless the restart gave a new one. The server is stopped when the test
// ends.
func Readopt(t testing.TB, l managed.Launcher, inst *managed.Instance) (old string) {
	t.Helper()
	ctx := context.Background()
	if err := l.Start(ctx, inst); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Stop(ctx, inst) })
	old, _, _ = inst.Password("dblat")
	if err := l.Stop(ctx, inst); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(inst.Dir, managed.CredentialsDir)); err != nil {
		t.Fatal(err)
	}
	if err := l.Start(ctx, inst); err != nil {
		t.Fatal(err)
	}
	fresh, ok, err := inst.Password("dblat")
	if !ok || err != nil || fresh == old {
		t.Fatalf("after the restart: a new password %v (%v), the same as before %v", ok, err, fresh == old)
	}
	return old
}
