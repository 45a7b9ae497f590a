package cli_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/dblat/dblat/internal/cli"
	"github.com/dblat/dblat/internal/engine/firebird/fbtest"
	"github.com/dblat/dblat/internal/engine/mariadb/mariadbtest"
	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
	"github.com/dblat/dblat/internal/managed"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/runner"
)

// TestMain doubles as the dblat binary: with DBLAT_CLI_CHILD=1 the test binary runs the CLI
// on its arguments, so a test can kill a real dblat process.
func TestMain(m *testing.M) {
	if os.Getenv("DBLAT_CLI_CHILD") == "1" {
		os.Exit(cli.Main(cli.NewState(), os.Args[1:]))
	}
	testDirs.Sweep(os.TempDir())
	code := m.Run()
	// engines_test starts the shared MariaDB and Firebird servers too: stop all three, or
	// the MariaDB server outlives this binary (until the next one's sweep) and Firebird's
	// files stay in the temporary directory.
	pgtest.Shutdown()
	mariadbtest.Shutdown()
	fbtest.Shutdown()
	os.Exit(code)
}

// testDirs are the tests' state directories; the servers a dead test binary left in one are
// stopped by the next (TestMain).
var testDirs = managed.TestDirs{Prefix: "dblat-cli-test-", Registry: "state"}

// env is one isolated dblat setup: its own state directory and results database.
type env struct {
	t       *testing.T
	dir     string
	signals chan os.Signal
}

func newEnv(t *testing.T) *env {
	t.Helper()
	// Managed servers run as an unprivileged user that must reach the state directory
	// (testDirs makes it so).
	dir, err := testDirs.Make("")
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, dir: dir, signals: make(chan os.Signal, 2)}
	t.Cleanup(func() {
		e.run("server", "stop", "--all")
		os.RemoveAll(dir)
	})
	return e
}

// loaded returns a new database on the shared PostgreSQL server holding what `dblat load
// ARGS` loads: loaded once per test binary into a template, copied for each test.
func loaded(t *testing.T, args ...string) string {
	t.Helper()
	return pgtest.Loaded(t, strings.Join(args, " "), func(dsn string) error {
		if code, _, errs := newEnv(t).run(append(append([]string{"load"}, args...), "--target", dsn)...); code != 0 {
			return fmt.Errorf("dblat load %s: exit %d: %s", strings.Join(args, " "), code, errs)
		}
		return nil
	})
}

// chdir makes e's directory the working directory for the rest of the test, for a test
// whose commands read or write files by relative paths (a study's report by default);
// such a test cannot run in parallel with others.
func (e *env) chdir() { e.t.Chdir(e.dir) }

func (e *env) resultsPath() string { return filepath.Join(e.dir, "results.db") }

// run executes dblat in-process and returns its exit code, stdout and stderr.
func (e *env) run(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := e.runTo(&out, &errb, args...)
	return code, out.String(), errb.String()
}

// runTo executes dblat in-process, writing its output to stdout and stderr, and returns its
// exit code.
func (e *env) runTo(stdout, stderr io.Writer, args ...string) int {
	st := &cli.State{Stdout: stdout, Stderr: stderr, Signals: e.signals,
		Getenv: func(k string) string {
			switch k {
			case "DBLAT_STATE":
				return filepath.Join(e.dir, "state")
			case "DBLAT_RESULTS":
				return e.resultsPath()
			}
			return ""
		}}
	return cli.Main(st, args)
}

// windowTicks matches the --progress json events of a run's measurement window in which
// transactions completed, half a second or more into the window (an interval that ends
// just after the warm-up holds the warm-up's transactions): once one is seen, the window
// has figures to save. encoding/json writes the keys in this order.
var windowTicks = regexp.MustCompile(`"event":"tick","offset_s":(0\.[5-9]\d*|[1-9]\d*(\.\d+)?),"phase":"window".*"all":\{"committed":[1-9]`)

// startWatched runs dblat in-process in the background with --progress json added, and
// returns a channel that receives the first --progress line matching re and one that
// receives the exit code; what the command printed is in the watch.
func (e *env) startWatched(re *regexp.Regexp, args ...string) (*watch, <-chan int) {
	w := &watch{re: re, hits: make(chan string, 1)}
	done := make(chan int, 1)
	go func() { done <- e.runTo(w, w, append(args, "--progress", "json")...) }()
	return w, done
}

// await waits for w's first match, or fails the test after a generous bound.
func (w *watch) await(t *testing.T) {
	t.Helper()
	select {
	case <-w.hits:
	case <-time.After(3 * time.Minute):
		t.Fatalf("no line matching %s in 3 minutes:\n%s", w.re, w.String())
	}
}

// must runs dblat and fails the test unless it exits 0.
func (e *env) must(args ...string) string {
	e.t.Helper()
	code, out, errs := e.run(args...)
	if code != 0 {
		e.t.Fatalf("dblat %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errs)
	}
	return out
}

// fails runs dblat, expects exit code want, and checks that stderr's last line contains
// every fragment and that the error is one line.
func (e *env) fails(want int, fragments []string, args ...string) {
	e.t.Helper()
	code, _, errs := e.run(args...)
	if code != want {
		e.t.Fatalf("dblat %s: exit %d, want %d\nstderr: %s", strings.Join(args, " "), code, want, errs)
	}
	lines := strings.Split(strings.TrimSpace(errs), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "dblat: ") {
		e.t.Errorf("error line %q lacks the dblat: prefix", last)
	}
	for _, f := range fragments {
		if !strings.Contains(last, f) {
			e.t.Errorf("dblat %s: error %q does not mention %q", strings.Join(args, " "), last, f)
		}
	}
}

func TestManagedServerLoadRunCheckResults(t *testing.T) {
	t.Parallel()
	pgtest.Server(t) // skip or fail early when PostgreSQL is not installed
	e := newEnv(t)
	dsn := strings.TrimSpace(e.must("server", "start", "postgres", "--name", "pg1", "--set", "work_mem=8MB"))
	if !strings.HasPrefix(dsn, "postgres://dblat@127.0.0.1:") {
		t.Fatalf("server start printed %q, want a DSN", dsn)
	}
	if out := e.must("server", "list"); !regexp.MustCompile(`pg1\s+postgres\s+running`).MatchString(out) {
		t.Errorf("server list:\n%s", out)
	}
	// Starting it again is harmless; changing its settings while it runs is refused.
	e.must("server", "start", "postgres", "--name", "pg1")
	e.fails(cli.ExitUsage, []string{"stop it first"}, "server", "start", "postgres", "--name", "pg1", "--set", "work_mem=9MB")

	// run before load: a clear error that says what to do.
	e.fails(cli.ExitUsage, []string{"no TPC-C data", "dblat load tpcc"}, "run", "tpcc", "--target", "pg1", "--duration", "1s")

	e.must("load", "tpcc", "--target", "pg1", "--warehouses", "1")
	e.fails(cli.ExitUsage, []string{"warehouses 3", "only 1 loaded"}, "run", "tpcc", "--target", "pg1", "--warehouses", "3", "--duration", "1s")

	out := e.must("run", "tpcc", "--target", "pg1", "--terminals", "4", "--duration", "3s", "--warmup", "1s")
	if !regexp.MustCompile(`NOPM [1-9]\d*`).MatchString(out) || !strings.Contains(out, "new_order") {
		t.Errorf("run summary lacks NOPM or the per-type table:\n%s", out)
	}
	e.must("check", "tpcc", "--target", "pg1")

	list := e.must("results", "list")
	if !regexp.MustCompile(`(?m)^1\s+\S+ \S+\s+finished\s+postgres\s+pg1\s+tpcc\s+1\s+4\s+4`).MatchString(list) {
		t.Errorf("results list:\n%s", list)
	}
	show := e.must("results", "show", "1", "--settings")
	if !strings.Contains(show, "work_mem") || !strings.Contains(show, "8192 kB") {
		t.Errorf("results show lacks the setting read back from the server:\n%s", show)
	}
	var runs []results.Run
	if err := json.Unmarshal([]byte(e.must("results", "export", "--format", "json")), &runs); err != nil {
		t.Fatal(err)
	}
	r := runs[0]
	if r.Status != results.StatusFinished || r.Summary.NOPM <= 0 || len(r.Tx) != 5 || r.Server.Settings["work_mem"] != "8192 kB" ||
		r.StatsAfter["pg_stat_database.xact_commit"] <= r.StatsBefore["pg_stat_database.xact_commit"] || r.Client.CPUModel == "" {
		t.Errorf("exported run incomplete: %+v", r)
	}
	for _, tx := range r.Tx {
		if tx.Committed > 0 && tx.RoundTrips < 1 {
			t.Errorf("%s: %.1f round trips per transaction; every transaction needs at least one", tx.Type, tx.RoundTrips)
		}
	}
	rows, err := csv.NewReader(strings.NewReader(e.must("results", "export", "--format", "csv"))).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Errorf("csv export: %v, %d rows", err, len(rows))
	}

	e.must("server", "stop", "--name", "pg1") // as `server start` spells it; a bare NAME is tested below
	if out := e.must("server", "list"); !regexp.MustCompile(`pg1\s+postgres\s+stopped`).MatchString(out) {
		t.Errorf("server list after stop:\n%s", out)
	}
	e.fails(cli.ExitUsage, []string{"not running", "dblat server start postgres --name pg1"}, "run", "tpcc", "--target", "pg1")
}

func TestBadInputGetsOneLineErrors(t *testing.T) {
	// Give the run something to lose: a stored run must survive every failure below.
	dsn := loaded(t, "tpcc", "--warehouses", "1")
	e := newEnv(t)
	e.must("run", "tpcc", "--target", dsn, "--terminals", "2", "--duration", "1s", "--warmup", "0s")

	e.fails(cli.ExitFailure, []string{"cannot connect", "127.0.0.1"}, "run", "tpcc", "--target", "postgres://x@127.0.0.1:1/db?sslmode=disable&connect_timeout=2")

	srv := pgtest.Server(t)
	createRole(t, srv.DSN, "bench", "right")
	wrong := fmt.Sprintf("postgres://bench:wrong@127.0.0.1:%d/postgres?sslmode=disable", srv.Port)
	code, _, errs := e.run("run", "tpcc", "--target", wrong)
	if code != cli.ExitFailure || !strings.Contains(errs, "password authentication failed") || strings.Contains(errs, "wrong") {
		t.Errorf("wrong password: exit %d, %q (must say so, without echoing the password)", code, errs)
	}

	e.fails(cli.ExitFailure, []string{fmt.Sprint(srv.Port), "in use", "--port"}, "server", "start", "postgres", "--name", "clash", "--port", fmt.Sprint(srv.Port))
	e.fails(cli.ExitFailure, []string{"--bin-dir", "no initdb"}, "server", "start", "postgres", "--name", "nobin", "--bin-dir", "/nonexistent")
	e.fails(cli.ExitFailure, []string{"--bin-dir", "no initdb"}, "server", "start", "postgres", "--name", "nobin", "--pg-bin", "/nonexistent")
	e.fails(cli.ExitUsage, []string{"unknown PostgreSQL setting", "shared_buffers"}, "server", "start", "postgres", "--name", "typo", "--set", "shared_bufers=1GB")
	e.fails(cli.ExitUsage, []string{"--set", "key=value"}, "server", "start", "postgres", "--name", "x", "--set", "novalue")
	e.fails(cli.ExitUsage, []string{"server name"}, "server", "start", "postgres", "--name", "../evil")
	e.fails(cli.ExitUsage, []string{"unknown DSN scheme"}, "run", "tpcc", "--target", "oracle://x@y/z")
	e.fails(cli.ExitUsage, []string{"no such managed server", "nosuch"}, "run", "tpcc", "--target", "nosuch")
	e.fails(cli.ExitUsage, []string{"--terminals"}, "run", "tpcc", "--target", dsn, "--terminals", "0")
	e.fails(cli.ExitUsage, []string{"--mix"}, "run", "tpcc", "--target", dsn, "--mix", "1,2")
	e.fails(cli.ExitUsage, []string{"unknown flag"}, "run", "tpcc", "--terminal", "3")
	// Flags a workload does not use are refused, not ignored.
	e.fails(cli.ExitUsage, []string{"unknown flag: --mode"}, "run", "simple", "select-only", "--target", dsn, "--mode", "batched")
	e.fails(cli.ExitUsage, []string{"unknown flag: --warehouses"}, "run", "simple", "select-only", "--target", dsn, "--warehouses", "2")
	e.fails(cli.ExitUsage, []string{"--blobs-per-tx is not an option of select-only"}, "run", "simple", "select-only", "--target", dsn, "--blobs-per-tx", "2")
	e.fails(cli.ExitUsage, []string{"--interpolate-params is not an option of workload tpcc on postgres"}, "run", "tpcc", "--target", dsn, "--interpolate-params")
	// A typo in a subcommand is an error, not the parent's help and exit 0.
	e.fails(cli.ExitUsage, []string{`unknown command "dif" for "dblat results"`, "did you mean diff?"}, "results", "dif", "1", "2")
	e.fails(cli.ExitUsage, []string{"did you mean list?"}, "study", "lst")
	e.fails(cli.ExitUsage, []string{"not a number"}, "results", "show", "abc")
	e.fails(cli.ExitUsage, []string{"not found"}, "results", "show", "999")
	e.fails(cli.ExitUsage, []string{"--format", "json or csv"}, "results", "export", "--format", "xml")

	// Input judged against the data is judged before the run is stored: exit 2, nothing kept.
	e.fails(cli.ExitUsage, []string{"--home-warehouses goes up to warehouse 3, but only 1 warehouse is active"}, "run", "tpcc", "--target", dsn,
		"--home-warehouses", "2-3", "--duration", "1s")
	e.must("load", "simple", "blob", "--target", dsn, "--blob-rows", "200", "--blob-size", "100")
	e.fails(cli.ExitUsage, []string{"--blobs-per-tx 500 is more than the 200 rows of blobs loaded"}, "run", "simple", "blob", "--target", dsn,
		"--blobs-per-tx", "500", "--duration", "1s")
	e.fails(cli.ExitUsage, []string{"--blobs-per-tx must be a whole number"}, "run", "simple", "blob", "--target", dsn, "--blobs-per-tx", "abc")
	var stored []results.Run
	if err := json.Unmarshal([]byte(e.must("results", "export")), &stored); err != nil || len(stored) != 1 {
		t.Errorf("bad input stored runs: %d runs, %v", len(stored), err)
	}

	// An unwritable results file fails before anything runs, and the existing store is intact.
	blocker := filepath.Join(e.dir, "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	e.fails(cli.ExitFailure, []string{"results database", "--results"}, "--results", filepath.Join(blocker, "x.db"), "run", "tpcc", "--target", dsn, "--duration", "1s")
	if out := e.must("results", "list"); !strings.Contains(out, "finished") {
		t.Errorf("the earlier run is gone:\n%s", out)
	}
}

func createRole(t *testing.T, dsn, name, password string) {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	_, _ = c.Exec(ctx, fmt.Sprintf("DROP ROLE IF EXISTS %s", name))
	if _, err := c.Exec(ctx, fmt.Sprintf("CREATE ROLE %s LOGIN PASSWORD '%s'", name, password)); err != nil {
		t.Fatal(err)
	}
}

func TestFirstInterruptSavesTheRunSecondStops(t *testing.T) {
	t.Parallel()
	dsn := loaded(t, "tpcc", "--warehouses", "1")
	e := newEnv(t)
	// Interrupted once its window has commits.
	w, done := e.startWatched(windowTicks, "run", "tpcc", "--target", dsn, "--terminals", "2", "--duration", "1m", "--warmup", "1s")
	w.await(t)
	e.signals <- syscall.SIGINT
	start := time.Now()
	if code := <-done; code != cli.ExitInterrupted {
		t.Fatalf("exit %d, want %d; output: %s", code, cli.ExitInterrupted, w)
	}
	// The drain takes at most the runner's drain time-out; storing the run, a moment.
	if took := time.Since(start); took > runner.DefaultDrainTimeout+10*time.Second {
		t.Errorf("drain took %v", took)
	}
	if out := w.String(); !strings.Contains(out, `"status":"aborted"`) {
		t.Errorf("progress should show the saved, interrupted run:\n%s", out)
	}
	var runs []results.Run
	if err := json.Unmarshal([]byte(e.must("results", "export")), &runs); err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].Status != results.StatusAborted || runs[0].Summary.Committed == 0 {
		t.Errorf("want one aborted run with what was measured, got %+v", runs)
	}
}

// TestSecondInterruptStopsAtOnce: a second Ctrl-C during the drain of the first cancels the
// transactions in flight (each waits 300 ms of added RTT, so the drain would take that long)
// and the run is still saved, as aborted by the second interrupt.
func TestSecondInterruptStopsAtOnce(t *testing.T) {
	t.Parallel()
	dsn := loaded(t, "simple", "select-only", "--scale", "1")
	e := newEnv(t)
	// Both interrupts come once the window has commits, one after the other: the CLI
	// takes them in order, the second while the first's drain waits for the transactions
	// in flight.
	w, done := e.startWatched(windowTicks, "run", "simple", "select-only", "--target", dsn, "--terminals", "4", "--duration", "1m",
		"--warmup", "0s", "--rtt", "300ms")
	w.await(t)
	e.signals <- syscall.SIGINT
	e.signals <- syscall.SIGINT
	if code := <-done; code != cli.ExitInterrupted {
		t.Fatalf("exit %d, want %d; output: %s", code, cli.ExitInterrupted, w)
	}
	var runs []results.Run
	if err := json.Unmarshal([]byte(e.must("results", "export")), &runs); err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].Status != results.StatusAborted || runs[0].Reason != "stopped by a second interrupt" ||
		runs[0].Summary.Committed == 0 {
		t.Errorf("want one run aborted by the second interrupt, with what it measured, got %+v", runs)
	}
}

func TestKilledRunIsMarkedAbortedOnNextStart(t *testing.T) {
	t.Parallel()
	dsn := loaded(t, "tpcc", "--warehouses", "1")
	e := newEnv(t)
	cmd := exec.Command(os.Args[0], "--results", e.resultsPath(), "run", "tpcc", "--target", dsn,
		"--terminals", "2", "--duration", "1m", "--warmup", "0s", "--progress", "json")
	cmd.Env = append(os.Environ(), "DBLAT_CLI_CHILD=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Killed in its window, once it has commits.
	sc := bufio.NewScanner(stdout)
	started := false
	for sc.Scan() {
		if windowTicks.MatchString(sc.Text()) {
			started = true
			break
		}
	}
	if !started {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatal("child never reached its window")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	out := e.must("results", "list")
	if !regexp.MustCompile(`(?m)^1\s+.*\baborted\b`).MatchString(out) {
		t.Errorf("killed run not marked aborted:\n%s", out)
	}
	code, show, _ := e.run("results", "show", "1")
	if code != 0 || !strings.Contains(show, "ended before the run finished") {
		t.Errorf("results show 1 should give the reason:\n%s", show)
	}
}

func TestHelpEverywhere(t *testing.T) {
	e := newEnv(t)
	for _, args := range [][]string{{"--help"}, {"server", "--help"}, {"server", "start", "--help"}, {"load", "tpcc", "--help"},
		{"run", "tpcc", "--help"}, {"check", "tpcc", "--help"}, {"results", "export", "--help"}, {"quickstart", "--help"}} {
		code, out, _ := e.run(args...)
		if code != 0 || !strings.Contains(out, "Usage:") {
			t.Errorf("dblat %s: exit %d\n%s", strings.Join(args, " "), code, out)
		}
	}
	if code, out, _ := e.run("version"); code != 0 || !strings.HasPrefix(out, "dblat ") {
		t.Errorf("version: %d %q", code, out)
	}
}

func TestRelativeStateDirectory(t *testing.T) {
	pgtest.Server(t)
	e := newEnv(t)
	t.Chdir(e.dir)
	// A relative --state must work: the server resolves paths against its data directory.
	e.must("--state", "rel-state", "server", "start", "postgres", "--name", "rel")
	if out := e.must("--state", "rel-state", "server", "list"); !regexp.MustCompile(`rel\s+postgres\s+running`).MatchString(out) {
		t.Errorf("server list:\n%s", out)
	}
	e.must("--state", "rel-state", "server", "stop", "rel")
}

func TestSimpleWorkloads(t *testing.T) {
	t.Parallel()
	dsn := pgtest.NewDatabase(t)
	e := newEnv(t)
	e.fails(cli.ExitUsage, []string{"no select-only data", "dblat load simple select-only"}, "run", "simple", "select-only", "--target", dsn, "--duration", "1s")
	e.must("load", "simple", "select-only", "--target", dsn, "--scale", "1")
	for _, proto := range []string{"prepared", "simple", "extended"} {
		out := e.must("run", "simple", "select-only", "--target", dsn, "--terminals", "2", "--duration", "1s", "--warmup", "0s", "--protocol", proto)
		if !regexp.MustCompile(`(?m)^\s+select\s+[1-9]\d*\s+0\s+0\s.*\s1\.0\s`).MatchString(out) {
			t.Errorf("select-only with %s: want commits at 1.0 round trip each:\n%s", proto, out)
		}
		if r := e.lastRun(); r.Params.Workload != "select-only" || r.Params.Options["protocol"] != proto {
			t.Errorf("stored run: %+v", r.Params)
		}
	}
	e.fails(cli.ExitUsage, []string{"unknown simple workload"}, "run", "simple", "select-everything", "--target", dsn)
	e.must("load", "simple", "ping", "--target", dsn)
	e.must("run", "simple", "ping", "--target", dsn, "--terminals", "1", "--duration", "1s", "--warmup", "0s", "--rtt", "1ms")
	if r := e.lastRun(); r.Link == nil || r.Summary.TPS > 1000 {
		t.Errorf("ping at 1 ms RTT: %.0f TPS through %+v; one terminal cannot exceed ~1000", r.Summary.TPS, r.Link)
	}

	// Open loop: the summary leads with response time and the rate kept.
	out := e.must("run", "simple", "select-only", "--target", dsn, "--terminals", "2", "--duration", "1s", "--warmup", "0s",
		"--rate", "200", "--arrival", "poisson", "--max-tries", "3", "--latency-limit", "1s")
	// Whether two terminals kept 200 a second is the machine's (the runner's tests tell
	// its lateness from the machine's); the summary says OVERLOAD exactly when the stored
	// run is an overload point.
	r := e.lastRun()
	if !strings.Contains(out, "open loop: offered 200/s (poisson)") || !strings.Contains(out, "response p50 ms") ||
		!strings.Contains(out, "retries 0") || strings.Contains(out, "OVERLOAD") != r.Summary.Overload {
		t.Errorf("open-loop summary (overload %v):\n%s", r.Summary.Overload, out)
	}
	if r.Params.Rate != 200 || r.Params.Arrival != "poisson" || r.Params.MaxTries != 3 ||
		r.Params.LatencyLimit != time.Second || r.Summary.Offered == 0 || r.Tx[0].RespHist == "" {
		t.Errorf("stored open-loop run: %+v %+v", r.Params, r.Summary)
	}
	// One terminal 1 ms away serves under 1,000 pings a second: 5,000 offered is an overload
	// point, an exit status only when asked for.
	overload := []string{"run", "simple", "ping", "--target", dsn, "--terminals", "1", "--duration", "1s", "--warmup", "0s",
		"--rtt", "1ms", "--rate", "5000"}
	if out := e.must(overload...); !strings.Contains(out, "OVERLOAD POINT") {
		t.Errorf("overloaded run's summary:\n%s", out)
	}
	e.fails(cli.ExitOverload, []string{"overload point"}, append(overload, "--fail-on-overload")...)
	e.fails(cli.ExitUsage, []string{"--arrival", "--rate"}, "run", "simple", "ping", "--target", dsn, "--arrival", "poisson")
	e.fails(cli.ExitUsage, []string{"--think", "--rate"}, "run", "tpcc", "--target", dsn, "--think", "--rate", "10")
	e.fails(cli.ExitUsage, []string{"--max-tries"}, "run", "tpcc", "--target", dsn, "--max-tries", "0")
	e.fails(cli.ExitUsage, []string{"--fail-on-overload needs --rate"}, "run", "tpcc", "--target", dsn, "--fail-on-overload")
}

// TestSharedPostgresStore: two dblat processes running at once into one PostgreSQL results
// store both land, and importing a SQLite store into it twice adds its runs once.
func TestSharedPostgresStore(t *testing.T) {
	t.Parallel()
	target := pgtest.NewDatabase(t)
	store := pgtest.NewDatabase(t)
	e := newEnv(t)
	e.must("load", "tpcc", "--target", target, "--warehouses", "1")
	var procs []*exec.Cmd
	var outs []*bytes.Buffer
	for range 2 {
		cmd := exec.Command(os.Args[0], "--results", store, "run", "tpcc", "--target", target, "--terminals", "2",
			"--duration", "2s", "--warmup", "0s")
		cmd.Env = append(os.Environ(), "DBLAT_CLI_CHILD=1", "DBLAT_STATE="+filepath.Join(e.dir, "state"))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs, outs = append(procs, cmd), append(outs, &out)
	}
	for i, cmd := range procs {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("dblat run %d: %v\n%s", i, err, outs[i])
		}
	}
	list := e.must("--results", store, "results", "list")
	if n := strings.Count(list, "finished"); n != 2 {
		t.Errorf("%d finished runs in the shared store, want 2:\n%s", n, list)
	}

	e.must("run", "tpcc", "--target", target, "--terminals", "1", "--duration", "1s", "--warmup", "0s") // into the SQLite file
	for range 2 {
		e.must("--results", store, "results", "import", e.resultsPath())
	}
	if n := strings.Count(e.must("--results", store, "results", "list"), "finished"); n != 3 {
		t.Errorf("%d finished runs after importing one run twice, want 3", n)
	}
	if code, _, errs := e.run("--results", "postgres:nowhere", "results", "list"); code == 0 || strings.Contains(errs, "created") {
		t.Errorf("a malformed store location: exit %d, %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "postgres:nowhere")); err == nil {
		t.Error("a malformed PostgreSQL location created a file")
	}
}

// TestProgressJSON: --progress json prints one JSON object per line on stdout, for scripts:
// the run's start, a tick per second and its end with the headline figure.
func TestProgressJSON(t *testing.T) {
	t.Parallel()
	dsn := loaded(t, "simple", "select-only", "--scale", "1")
	e := newEnv(t)
	out := e.must("run", "simple", "select-only", "--target", dsn, "--terminals", "2", "--duration", "2s", "--warmup", "1s",
		"--progress", "json")
	events := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("line %q is not JSON: %v", line, err)
		}
		name, _ := ev["event"].(string)
		events[name]++
		if name == "run_ended" && (ev["metric"] != "TPS" || ev["status"] != "finished") {
			t.Errorf("run_ended %v", ev)
		}
	}
	if events["run_started"] != 1 || events["run_ended"] != 1 || events["tick"] < 2 {
		t.Errorf("events %v, want one start, one end and a tick per second", events)
	}
	e.fails(cli.ExitUsage, []string{"--progress"}, "run", "simple", "select-only", "--target", dsn, "--progress", "yaml")
}

// TestRunsCanBeToldApart: runs that differ in their mode, their path to the server (direct
// against the link at RTT 0) or their pacing show it in results list, show and the CSV.
func TestRunsCanBeToldApart(t *testing.T) {
	t.Parallel()
	dsn := loaded(t, "tpcc", "--warehouses", "1")
	e := newEnv(t)
	short := []string{"--target", dsn, "--terminals", "2", "--duration", "1s", "--warmup", "0s"}
	e.must(append([]string{"run", "tpcc"}, short...)...)
	e.must(append([]string{"run", "tpcc", "--mode", "procedure", "--rtt", "0"}, short...)...)
	e.must(append([]string{"run", "tpcc", "--rate", "40"}, short...)...)
	list := e.must("results", "list")
	for _, want := range []string{"PATH", "MODE", "RATE", "direct", "link 0", "procedure", "client", "at 40/s offered"} {
		if !strings.Contains(list, want) {
			t.Errorf("results list lacks %q:\n%s", want, list)
		}
	}
	if show := e.must("results", "show", "2"); !strings.Contains(show, "path rtt 0") || !strings.Contains(show, "mode=procedure") {
		t.Errorf("results show of the procedure run through the link:\n%s", show)
	}
	csv := e.must("results", "export", "--format", "csv")
	if !strings.Contains(csv, ",path,mode,max_tries,options") || !strings.Contains(csv, ",link,procedure,1,") || !strings.Contains(csv, ",direct,client,1,") {
		t.Errorf("CSV lacks the path, mode and options columns:\n%s", csv)
	}
}
