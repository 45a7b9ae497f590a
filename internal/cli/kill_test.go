package cli_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/engine/firebird/fbtest"
	"github.com/dblat/dblat/internal/engine/mariadb/mariadbtest"
	"github.com/dblat/dblat/internal/managed"
	"github.com/dblat/dblat/internal/results"
)

// TestStudyServerKilledMidRunPerArchitecture kills the managed server during a study's first
// run, for each server architecture besides PostgreSQL's (TestStudyServerKilledMidRunFailsThatRunOnly):
// Firebird SuperServer, SuperClassic and Classic, and MariaDB. The run fails with the
// reason, the study goes on (its next run starts the server again), `study status` shows the
// killed cell still to run, and `study resume` finishes it. The Firebird studies share a
// state directory, so that the second and third restore the first one's template instead
// of loading.
func TestStudyServerKilledMidRunPerArchitecture(t *testing.T) {
	t.Parallel()
	type arch struct {
		name, server string
		require      func(testing.TB)
	}
	var archs []arch
	for _, mode := range []string{"Super", "SuperClassic", "Classic"} {
		archs = append(archs, arch{"firebird-" + mode, "{engine: firebird, settings: {ServerMode: " + mode + "}}", fbtest.Require})
	}
	archs = append(archs, arch{"mariadb", "{engine: mariadb, settings: {innodb_buffer_pool_size: 64M}}", mariadbtest.SkipIfMissing})
	// One state directory: the Firebird studies load their data once, as a template the
	// others restore, so the architectures run one after another.
	e := newEnv(t)
	for _, a := range archs {
		t.Run(a.name, func(t *testing.T) {
			a.require(t)
			start := time.Now()
			name := "kill-" + strings.ToLower(a.name)
			file := filepath.Join(e.dir, name+".yaml")
			src := fmt.Sprintf(`study: %s
repeat: 1
seed: 7
max_failures: 2
server: %s
base: {workload: tpcc, warehouses: 1, duration: 3s, warmup: 0s}
factors:
  terminals: [1, 2]
`, name, a.server)
			if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			// The server is killed in the first run's window.
			w, done := e.startWatched(windowTicks, "study", "run", file, "-o", filepath.Join(e.dir, name+".html"))
			w.await(t)
			inst, err := managed.Registry{Root: filepath.Join(e.dir, "state")}.Load(name)
			if err != nil || inst.PID == 0 {
				t.Fatalf("server record: %+v %v", inst, err)
			}
			if err := syscall.Kill(inst.PID, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			if code := <-done; code != 0 {
				t.Fatalf("study exit %d\n%s", code, w.String())
			}
			var failed, finished int
			for _, r := range e.runsOf(name) {
				switch r.Status {
				case results.StatusFailed:
					failed++
					if !strings.Contains(r.Reason, "exited during the run") {
						t.Errorf("failed run's reason: %q", r.Reason)
					}
				case results.StatusFinished:
					finished++
				}
			}
			if failed != 1 || finished != 1 {
				t.Fatalf("want 1 failed and 1 finished run, got %d and %d\n%s", failed, finished, w.String())
			}
			if out := e.must("study", "status", name); !strings.Contains(out, "1 run remaining") {
				t.Errorf("status:\n%s", out)
			}
			e.must("study", "resume", name, "-o", filepath.Join(e.dir, name+".html"))
			if out := e.must("study", "status", name); !strings.Contains(out, "2 finished, 1 failed, 0 aborted; complete") {
				t.Errorf("status after resume:\n%s", out)
			}
			t.Logf("%s: %.0f s", a.name, time.Since(start).Seconds())
		})
	}
	// The Firebird studies loaded their data once: one template, which the others restored.
	out := e.must("server", "templates")
	if strings.Count(out, " firebird ") != 1 || !strings.Contains(out, "PageSize=8192") {
		t.Errorf("server templates:\n%s", out)
	}
	e.must("server", "templates", "--remove-all")
	if out := e.must("server", "templates"); !strings.Contains(out, "no templates") {
		t.Errorf("after --remove-all:\n%s", out)
	}
}
