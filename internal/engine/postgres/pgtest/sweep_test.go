package pgtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/managed"
)

// TestFakeServer is not a test: it is the process fakeServer starts, standing in for a
// postmaster left behind by a dead test binary.
func TestFakeServer(t *testing.T) {
	if os.Getenv("PGTEST_FAKE_SERVER") != "1" {
		t.Skip("helper process only")
	}
	time.Sleep(time.Minute)
	os.Exit(0)
}

// fakeServer starts a process whose command line names dir/pg/data, as a postmaster's does.
func fakeServer(t *testing.T, dir string) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestFakeServer$", "--", "-D", filepath.Join(dir, "pg", "data"))
	cmd.Env = append(os.Environ(), "PGTEST_FAKE_SERVER=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	t.Cleanup(func() { _ = managed.StopPID(pid, syscall.SIGKILL, 5*time.Second) })
	return pid
}

// fakeDir makes a directory as dirs.Make does, owned by owner, with a postmaster.pid naming pid
// (none when pid is 0).
func fakeDir(t *testing.T, root, name string, owner, pid int) string {
	t.Helper()
	d := filepath.Join(root, dirs.Prefix+name)
	if err := os.MkdirAll(filepath.Join(d, "pg", "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, "owner"), []byte(strconv.Itoa(owner)), 0o644); err != nil {
		t.Fatal(err)
	}
	if pid != 0 {
		pf := filepath.Join(d, "pg", "data", "postmaster.pid")
		if err := os.WriteFile(pf, []byte(strconv.Itoa(pid)+"\n"+d+"/pg/data\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

func TestSweep(t *testing.T) {
	root := t.TempDir()
	exited := exec.Command(os.Args[0], "-test.run=^$")
	if err := exited.Run(); err != nil {
		t.Fatal(err)
	}
	dead := exited.Process.Pid

	stale := filepath.Join(root, dirs.Prefix+"stale")
	orphan := fakeServer(t, stale)
	fakeDir(t, root, "stale", dead, orphan)

	live := filepath.Join(root, dirs.Prefix+"live")
	running := fakeServer(t, live)
	fakeDir(t, root, "live", os.Getppid(), running) // its owner still runs

	// A stale directory whose pid file names a process that is not its server (a reused PID).
	other := fakeDir(t, root, "other", dead, running)
	// A directory whose owner file is not written yet.
	unowned := filepath.Join(root, dirs.Prefix+"unowned")
	if err := os.Mkdir(unowned, 0o755); err != nil {
		t.Fatal(err)
	}

	dirs.Sweep(root)

	if managed.Alive(orphan) {
		t.Errorf("server %d of a dead test binary still runs", orphan)
	}
	if !managed.Alive(running) {
		t.Errorf("server %d of a running test binary was stopped", running)
	}
	for d, want := range map[string]bool{stale: false, other: false, live: true, unowned: true} {
		if _, err := os.Stat(d); (err == nil) != want {
			t.Errorf("%s: exists = %v, want %v", filepath.Base(d), err == nil, want)
		}
	}
}
