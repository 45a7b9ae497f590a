package fbtest

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/managed"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// TestHelperServer is not a test: it is the test binary TestKilledBinaryLeavesNothing kills.
// It starts the shared Super server, says where, and waits to be killed.
func TestHelperServer(t *testing.T) {
	if os.Getenv("FBTEST_HELPER") != "1" {
		t.Skip("helper process only")
	}
	inst := Server(t, "Super")
	fmt.Printf("SERVER %d %s\n", inst.PID, baseDir)
	time.Sleep(2 * time.Minute)
}

// TestKilledBinaryLeavesNothing kills a test binary that runs a server outright (SIGKILL:
// no TestMain cleanup), then checks that its server is gone and that the next test binary's
// sweep removes its directory.
func TestKilledBinaryLeavesNothing(t *testing.T) {
	requireBinaries(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperServer$", "-test.count=1")
	cmd.Env = append(os.Environ(), "FBTEST_HELPER=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var pid int
	var dir string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 3 && f[0] == "SERVER" {
			pid, _ = strconv.Atoi(f[1])
			dir = f[2]
			break
		}
	}
	if pid == 0 || !strings.HasPrefix(filepath.Base(dir), dirs.Prefix) {
		t.Fatalf("the helper did not start a server (%v)", sc.Err())
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	deadline := time.Now().Add(15 * time.Second)
	for managed.Alive(pid) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if managed.Alive(pid) {
		t.Errorf("server %d of the killed test binary still runs", pid)
	}
	dirs.Sweep(filepath.Dir(dir))
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s of the killed test binary is still there after the sweep (%v)", dir, err)
	}
}

// TestFakeServer is not a test: it is the process fakeServer starts, standing in for a
// Firebird server whose test binary died.
func TestFakeServer(t *testing.T) {
	if os.Getenv("FBTEST_FAKE_SERVER") != "1" {
		t.Skip("helper process only")
	}
	time.Sleep(time.Minute)
	os.Exit(0)
}

// fakeServer starts a process whose command line names the instance directory inst, as a
// managed Firebird server's does.
func fakeServer(t *testing.T, inst string) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestFakeServer$", "--", inst)
	cmd.Env = append(os.Environ(), "FBTEST_FAKE_SERVER=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	t.Cleanup(func() { _ = managed.StopPID(pid, syscall.SIGKILL, 5*time.Second) })
	return pid
}

// fakeDir makes a directory as dirs.Make does, owned by owner, with an instance whose
// firebird.pid names pid (none when pid is 0).
func fakeDir(t *testing.T, root, name string, owner, pid int) string {
	t.Helper()
	d := filepath.Join(root, dirs.Prefix+name)
	inst := filepath.Join(d, "srv-1", "super")
	if err := os.MkdirAll(inst, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, "owner"), []byte(strconv.Itoa(owner)), 0o644); err != nil {
		t.Fatal(err)
	}
	if pid != 0 {
		if err := os.WriteFile(filepath.Join(inst, "firebird.pid"), []byte(strconv.Itoa(pid)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// TestSweep checks the sweep's choices: a dead owner's server is stopped and its directory
// removed; a live owner's directory, and one without an owner yet, stay; a PID that is not
// the directory's server (reused) is never signalled.
func TestSweep(t *testing.T) {
	root := t.TempDir()
	exited := exec.Command(os.Args[0], "-test.run=^$")
	if err := exited.Run(); err != nil {
		t.Fatal(err)
	}
	dead := exited.Process.Pid

	stale := filepath.Join(root, dirs.Prefix+"stale")
	orphan := fakeServer(t, filepath.Join(stale, "srv-1", "super"))
	fakeDir(t, root, "stale", dead, orphan)

	live := filepath.Join(root, dirs.Prefix+"live")
	running := fakeServer(t, filepath.Join(live, "srv-1", "super"))
	fakeDir(t, root, "live", os.Getppid(), running) // its owner still runs

	other := fakeDir(t, root, "other", dead, running) // names the live directory's server
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
