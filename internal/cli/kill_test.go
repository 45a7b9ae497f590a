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
// Firebird SuperServer, SuperClassic and Classic here, MariaDB in TestStudyMariaDBKilledMidRun
// (killMidRun says what is checked). The Firebird studies share a state directory, so that
// the second and third restore the first one's template instead of loading: they run one
// after another.
func TestStudyServerKilledMidRunPerArchitecture(t *testing.T) {
	t.Parallel()
	fbtest.Require(t)
	e := newEnv(t)
	for _, mode := range []string{"Super", "SuperClassic", "Classic"} {
		t.Run(mode, func(t *testing.T) {
			e.t = t
			killMidRun(t, e, "firebird-"+mode, "{engine: firebird, settings: {ServerMode: "+mode+"}}")
		})
	}
	e.t = t
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

// TestStudyMariaDBKilledMidRun is TestStudyServerKilledMidRunPerArchitecture's case of
// MariaDB, on a state directory of its own.
func TestStudyMariaDBKilledMidRun(t *testing.T) {
	t.Parallel()
	mariadbtest.SkipIfMissing(t)
	killMidRun(t, newEnv(t), "mariadb", "{engine: mariadb, settings: {innodb_buffer_pool_size: 64M}}")
}

// killMidRun runs a study of two TPC-C runs on a managed server described by server and
// kills the server in the first run's window: that run fails with the reason, the study
// goes on (its next run starts the server again), `study status` shows the killed cell
// still to run, and `study resume` finishes it.
func killMidRun(t *testing.T, e *env, arch, server string) {
	t.Helper()
	start := time.Now()
	name := "kill-" + strings.ToLower(arch)
	file := filepath.Join(e.dir, name+".yaml")
	src := fmt.Sprintf(`study: %s
repeat: 1
seed: 7
max_failures: 2
server: %s
base: {workload: tpcc, warehouses: 1, duration: 2s, warmup: 0s}
factors:
  terminals: [1, 2]
`, name, server)
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
	t.Logf("%s: %.0f s", arch, time.Since(start).Seconds())
}
