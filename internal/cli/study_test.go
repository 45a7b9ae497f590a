package cli_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/cli"
	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
	"github.com/dblat/dblat/internal/managed"
	"github.com/dblat/dblat/internal/results"
)

// writeStudy writes a small study file: rtt 0/1ms × terminals 1/2, runs of `window`.
func (e *env) writeStudy(name string, repeat int, window string) string {
	e.t.Helper()
	path := filepath.Join(e.dir, name+".yaml")
	src := fmt.Sprintf(`study: %s
design: full
repeat: %d
seed: 7
max_failures: 2
server:
  engine: postgres
  settings: {shared_buffers: 32MB}
base:
  workload: tpcc
  warehouses: 1
  duration: %s
  warmup: 0s
factors:
  rtt: [0, 1ms]
  terminals: [1, 2]
`, name, repeat, window)
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return path
}

// runsOf returns the study's stored runs.
func (e *env) runsOf(study string) []results.Run {
	e.t.Helper()
	var runs []results.Run
	out := e.must("results", "export", "--format", "json")
	if err := json.Unmarshal([]byte(out), &runs); err != nil {
		e.t.Fatal(err)
	}
	var mine []results.Run
	for _, r := range runs {
		if r.Study == study {
			mine = append(mine, r)
		}
	}
	return mine
}

func TestStudyPlanRunStatusReport(t *testing.T) {
	pgtest.Server(t)
	e := newEnv(t)
	e.chdir() // the report goes to the working directory by default
	file := e.writeStudy("small", 1, "1s")
	plan := e.must("study", "plan", file)
	if !strings.Contains(plan, "4 cells × repeat 1") || !strings.Contains(plan, "4 runs to go") {
		t.Errorf("plan:\n%s", plan)
	}
	summary := e.must("study", "run", file)
	if n := strings.Count(summary, "\n"); n > 40 || !strings.Contains(summary, filepath.Join(e.dir, "small.html")) {
		t.Errorf("study run's summary: %d lines, want at most 40 naming the HTML report:\n%s", n, summary)
	}
	runs := e.runsOf("small")
	if len(runs) != 4 {
		t.Fatalf("%d runs stored, want 4", len(runs))
	}
	for _, r := range runs {
		if r.Status != results.StatusFinished || r.Link == nil || r.Params.Options["set.shared_buffers"] != "32MB" {
			t.Errorf("run %d: status %s, link %+v, options %v", r.ID, r.Status, r.Link, r.Params.Options)
			continue
		}
		// Every cell goes through the link and stores its calibration. The link's accuracy is
		// measured by the latency package's benchmarks; here a busy machine's noise must not
		// fail the study, but a wrong unit or a missing calibration must.
		tol := max(r.Link.RTT, 2*time.Millisecond)
		if d := r.Link.AchievedP50 - r.Link.RTT; r.Link.Samples == 0 || d > tol || d < -tol {
			t.Errorf("run %d: requested %v, achieved %v over %d samples", r.ID, r.Link.RTT, r.Link.AchievedP50, r.Link.Samples)
		}
	}
	if out := e.must("study", "status", "small"); !strings.Contains(out, "4 finished, 0 failed, 0 aborted; complete") {
		t.Errorf("status:\n%s", out)
	}
	// Running it again finds nothing to do and adds no run.
	_, _, errs := e.run("study", "run", file)
	if !strings.Contains(errs, "is complete") || len(e.runsOf("small")) != 4 {
		t.Errorf("second run should do nothing: %s", errs)
	}
	html := filepath.Join(e.dir, "small.html")
	e.must("report", "small", "-o", html)
	b, err := os.ReadFile(html)
	if err != nil || strings.Count(string(b), "<svg") < 2 {
		t.Errorf("report has %d charts (%v)", strings.Count(string(b), "<svg"), err)
	}
	if short, full := e.must("report", "small"), e.must("report", "small", "--full"); strings.Count(short, "\n") > 40 ||
		strings.Count(full, "\n") <= strings.Count(short, "\n") {
		t.Errorf("report text: summary %d lines, --full %d lines", strings.Count(short, "\n"), strings.Count(full, "\n"))
	}
	// Two runs of different cells: the configuration that differs, and the figures' change.
	diff := e.must("results", "diff", fmt.Sprint(runs[0].ID), fmt.Sprint(runs[3].ID))
	if !strings.Contains(diff, "NOPM") {
		t.Errorf("results diff:\n%s", diff)
	}
	e.fails(cli.ExitUsage, []string{"neither run ids nor a study"}, "results", "diff", "small", "nosuch")
	csv := e.must("report", "small", "--format", "csv")
	if n := strings.Count(strings.TrimSpace(csv), "\n"); n != 4 {
		t.Errorf("csv report has %d data rows, want 4 cells:\n%s", n, csv)
	}
	if out := e.must("server", "list"); !regexp.MustCompile(`small\s+postgres\s+stopped`).MatchString(out) {
		t.Errorf("the study's server was not stopped:\n%s", out)
	}
	e.fails(cli.ExitUsage, []string{"no study", "nosuch"}, "report", "nosuch")
}

func TestStudyFileErrorsNameTheLine(t *testing.T) {
	e := newEnv(t)
	path := filepath.Join(e.dir, "bad.yaml")
	if err := os.WriteFile(path, []byte("study: bad\nserver: {engine: postgres}\nbase:\n  terminal: 4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.fails(cli.ExitUsage, []string{path + ":4", `unknown key "terminal"`, "terminals"}, "study", "plan", path)
	if err := os.WriteFile(path, []byte("study: bad\nserver: {engine: oracle}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.fails(cli.ExitUsage, []string{path + ":2", "oracle"}, "study", "plan", path)
}

// watch is an io.Writer that reports lines matching a pattern on a channel.
type watch struct {
	mu   sync.Mutex
	buf  strings.Builder
	re   *regexp.Regexp
	hits chan string
}

// String returns what was written so far.
func (w *watch) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

func (w *watch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	for _, line := range strings.Split(string(p), "\n") {
		if w.re.MatchString(line) {
			select {
			case w.hits <- line:
			default:
			}
		}
	}
	return len(p), nil
}

func TestStudyResumeAfterKill9(t *testing.T) {
	t.Parallel()
	pgtest.Server(t)
	e := newEnv(t)
	file := e.writeStudy("killed", 2, "2s")
	cmd := exec.Command(os.Args[0], "study", "run", file)
	cmd.Dir = e.dir // its report
	cmd.Env = append(os.Environ(), "DBLAT_CLI_CHILD=1", "DBLAT_STATE="+filepath.Join(e.dir, "state"), "DBLAT_RESULTS="+e.resultsPath())
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill it during its fourth run, after three have been stored: once the run is stored
	// as running ("run N: ...").
	sc := bufio.NewScanner(stderr)
	fourth := false
	for sc.Scan() {
		line := sc.Text()
		fourth = fourth || strings.HasPrefix(line, "[4/8]")
		if fourth && strings.HasPrefix(line, "run ") {
			break
		}
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	go func() { _, _ = io.Copy(io.Discard, stderr) }()
	_ = cmd.Wait()

	before := e.runsOf("killed")
	finishedBefore := 0
	for _, r := range before {
		if r.Status == results.StatusFinished {
			finishedBefore++
		}
	}
	if finishedBefore != 3 {
		t.Fatalf("%d runs finished before the kill, want 3: %+v", finishedBefore, before)
	}
	e.must("study", "resume", "killed", "-o", filepath.Join(e.dir, "killed.html"))
	perCell := map[string]int{}
	aborted := 0
	for _, r := range e.runsOf("killed") {
		switch r.Status {
		case results.StatusFinished:
			perCell[r.CellKey]++
		case results.StatusAborted:
			aborted++
		}
	}
	if len(perCell) != 4 || aborted != 1 {
		t.Errorf("after resume: finished per cell %v, aborted %d; want 2 in each of 4 cells and the killed run aborted", perCell, aborted)
	}
	for k, n := range perCell {
		if n != 2 {
			t.Errorf("cell %s has %d finished runs, want exactly 2 (no loss, no duplicate)", k, n)
		}
	}
	if out := e.must("server", "list"); !regexp.MustCompile(`killed\s+postgres\s+stopped`).MatchString(out) {
		t.Errorf("the server the killed study left running was not stopped by the resume:\n%s", out)
	}
}

func TestStudyServerKilledMidRunFailsThatRunOnly(t *testing.T) {
	t.Parallel()
	pgtest.Server(t)
	e := newEnv(t)
	file := e.writeStudy("crash", 1, "3s")
	// The server is killed in the first run's window.
	w, done := e.startWatched(windowTicks, "study", "run", file, "-o", filepath.Join(e.dir, "crash.html"))
	w.await(t)
	inst, err := managed.Registry{Root: filepath.Join(e.dir, "state")}.Load("crash")
	if err != nil || inst.PID == 0 {
		t.Fatalf("server record: %+v %v", inst, err)
	}
	if err := syscall.Kill(inst.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if code := <-done; code != 0 {
		t.Fatalf("study exit %d\n%s", code, w.String())
	}
	runs := e.runsOf("crash")
	var failed, finished int
	for _, r := range runs {
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
	if failed != 1 || finished != 3 {
		t.Errorf("want 1 failed and 3 finished runs, got %d and %d", failed, finished)
	}
	// The missing cell is still to run.
	if out := e.must("study", "status", "crash"); !strings.Contains(out, "1 run remaining") {
		t.Errorf("status:\n%s", out)
	}
}
