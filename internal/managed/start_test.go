package managed

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestPrepare: the port is claimed and the directory made absolute.
func TestPrepare(t *testing.T) {
	t.Chdir(t.TempDir())
	inst := &Instance{Name: "p", Dir: "srv"}
	if _, err := Prepare(inst, ""); err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(inst.Dir) || inst.Port == 0 {
		t.Errorf("dir %q, port %d", inst.Dir, inst.Port)
	}
}

// lastLogLine is a Spawn logError: the last line logged from offset on.
func lastLogLine(path string, offset int64) string {
	b, err := os.ReadFile(path)
	if err != nil || offset > int64(len(b)) {
		return "no log"
	}
	lines := strings.Split(strings.TrimSpace(string(b[offset:])), "\n")
	return lines[len(lines)-1]
}

// spawn starts a real process as a server for a new instance whose log already holds a
// line from an earlier start, and stops it when the test ends.
func spawn(t *testing.T, name string, args ...string) (*Instance, *Process) {
	t.Helper()
	inst := &Instance{Name: "s", Dir: t.TempDir(), RunAs: "stale"}
	if err := os.WriteFile(inst.LogPath(), []byte("an earlier start failed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Spawn(inst, nil, exec.Command(name, args...), lastLogLine)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if inst.PID != 0 {
			_ = StopPID(inst.PID, syscall.SIGTERM, 5*time.Second)
		}
	})
	if inst.PID == 0 || inst.RunAs != "" {
		t.Fatalf("PID %d, run as %q", inst.PID, inst.RunAs)
	}
	return inst, p
}

func TestAwaitReady(t *testing.T) {
	ctx := context.Background()
	refused := errors.New("connection refused")
	t.Run("answers", func(t *testing.T) {
		_, p := spawn(t, "sleep", "30")
		probes := 0
		err := p.AwaitReady(ctx, time.Minute, func(context.Context) error {
			if probes++; probes < 3 {
				return refused
			}
			return nil
		})
		if err != nil || probes != 3 {
			t.Errorf("%v after %d probes", err, probes)
		}
	})
	t.Run("exits", func(t *testing.T) {
		inst, p := spawn(t, "sh", "-c", "echo starting; echo 'FATAL: no such setting' >&2; exit 3")
		err := p.AwaitReady(ctx, time.Minute, func(context.Context) error { return refused })
		if err == nil || !strings.Contains(err.Error(), "sh exited at start (exit status 3): FATAL: no such setting (log: "+inst.LogPath()+")") {
			t.Errorf("error %v", err)
		}
		if inst.PID != 0 {
			t.Errorf("PID %d after the exit", inst.PID)
		}
		if b, _ := os.ReadFile(inst.LogPath()); !strings.HasPrefix(string(b), "an earlier start failed\nstarting\n") {
			t.Errorf("log %q: the output is not appended", b)
		}
	})
	t.Run("stop waiting", func(t *testing.T) {
		inst, p := spawn(t, "sleep", "30")
		denied := errors.New("password refused")
		err := p.AwaitReady(ctx, time.Minute, func(context.Context) error { return StopWaiting(denied) })
		if err != denied || inst.PID == 0 || !Alive(inst.PID) {
			t.Errorf("error %v, PID %d: want the probe's error at once, the server left to the caller", err, inst.PID)
		}
	})
	t.Run("times out", func(t *testing.T) {
		inst, p := spawn(t, "sleep", "30")
		err := p.AwaitReady(ctx, 100*time.Millisecond, func(context.Context) error { return refused })
		if err == nil || !strings.Contains(err.Error(), "sleep did not accept connections within 100ms (last error: connection refused") || !Alive(inst.PID) {
			t.Errorf("error %v, PID %d", err, inst.PID)
		}
	})
}
