package runner_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/engine/firebird/fbtest"
	"github.com/dblat/dblat/internal/engine/postgres"
	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/runner"
	"github.com/dblat/dblat/internal/spec"
	"github.com/dblat/dblat/internal/workload"
)

func TestMain(m *testing.M) {
	code := m.Run()
	// BenchmarkClientCPU starts a Firebird server too.
	pgtest.Shutdown()
	fbtest.Shutdown()
	os.Exit(code)
}

// probe is a tiny real workload: "ok" commits a SELECT, "rollback" ends in a designed
// rollback, "fail" raises a serialization failure, "sleep" holds its connection for 5 ms,
// "flaky" raises a serialization failure on every first try of a transaction and commits
// on the next, "read" reads the table probe_t (which the test creates), and "noop" does not
// touch the database.
type probe struct {
	mu    sync.Mutex
	types []workload.TxType
	next  func(term, n int) int
	// inputs records, per terminal and transaction input (Next's count), the tries Run
	// made with it.
	inputs map[[2]int]int
	// pause is the keying and think time of every transaction.
	pause workload.Pause
	// gate holds "gated" transactions, which do not touch the database, while it is shut.
	gate gate
}

// gate holds the transactions that pass it while it is shut.
type gate struct {
	mu      sync.Mutex
	shut    chan struct{} // nil while open
	waiting int
	all     chan struct{} // closed when want transactions wait
	want    int
}

// pass returns at once while the gate is open, else when it opens.
func (g *gate) pass() {
	g.mu.Lock()
	shut := g.shut
	if shut != nil {
		g.waiting++
		if g.waiting == g.want {
			close(g.all)
		}
	}
	g.mu.Unlock()
	if shut != nil {
		<-shut
	}
}

// close shuts the gate and returns a channel closed once n transactions wait at it, and
// the function that opens it again.
func (g *gate) close(n int) (<-chan struct{}, func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.shut, g.waiting, g.want, g.all = make(chan struct{}), 0, n, make(chan struct{})
	shut := g.shut
	return g.all, func() {
		g.mu.Lock()
		g.shut = nil
		g.mu.Unlock()
		close(shut)
	}
}

func (p *probe) Name() string                                  { return "probe" }
func (p *probe) TxTypes() []workload.TxType                    { return p.types }
func (p *probe) Prepare(ctx context.Context, db *sql.DB) error { return db.PingContext(ctx) }
func (p *probe) NewTerminal(id int) workload.Terminal          { return &probeTerm{p: p, id: id} }

// probeTerm's input is the number of its transaction, drawn by Next.
type probeTerm struct {
	p      *probe
	id, n  int
	txType int
}

func (t *probeTerm) Next() (int, workload.Pause) {
	t.n++
	t.txType = t.p.next(t.id, t.n)
	return t.txType, t.p.pause
}

func (t *probeTerm) Run(ctx context.Context, conn *sql.Conn) error {
	t.p.mu.Lock()
	if t.p.inputs == nil {
		t.p.inputs = map[[2]int]int{}
	}
	key := [2]int{t.id, t.n}
	t.p.inputs[key]++
	try := t.p.inputs[key]
	t.p.mu.Unlock()
	switch t.p.types[t.txType].Name {
	case "noop":
		return nil
	case "gated":
		t.p.gate.pass()
		return nil
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	switch t.p.types[t.txType].Name {
	case "ok":
		var one int
		if err := tx.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
			return err
		}
	case "rollback":
		return workload.ErrExpectedRollback
	case "fail":
		_, err := tx.ExecContext(ctx, `DO $$ BEGIN RAISE EXCEPTION USING ERRCODE = '40001'; END $$`)
		return err
	case "flaky":
		if try == 1 {
			_, err := tx.ExecContext(ctx, `DO $$ BEGIN RAISE EXCEPTION USING ERRCODE = '40001'; END $$`)
			return err
		}
	case "sleep":
		if _, err := tx.ExecContext(ctx, "SELECT pg_sleep(0.005)"); err != nil {
			return err
		}
	case "read":
		var n int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM probe_t").Scan(&n); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// tries returns how many inputs Run saw once, twice, ... (index 0 unused).
func (p *probe) tries() map[int]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[int]int{}
	for _, n := range p.inputs {
		out[n]++
	}
	return out
}

func target(t *testing.T) workload.Target {
	t.Helper()
	return open(t, pgtest.NewDatabase(t))
}

// open connects to the test database dsn; the connection pool is closed when t ends.
func open(t testing.TB, dsn string) workload.Target {
	t.Helper()
	db, err := postgres.Engine{}.Open(context.Background(), dsn, engine.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return workload.Target{Engine: postgres.Engine{}, DB: db}
}

func find(res *runner.Result, typ string) results.TxSummary {
	for _, tx := range res.Tx {
		if tx.Type == typ {
			return tx
		}
	}
	return results.TxSummary{}
}

func TestRunCountsOutcomesByKind(t *testing.T) {
	tg := target(t)
	// Every 10th transaction rolls back by design, every 25th fails retryably.
	w := &probe{types: []workload.TxType{{Name: "ok"}, {Name: "rollback"}, {Name: "fail"}},
		next: func(_, n int) int {
			switch {
			case n%25 == 0:
				return 2
			case n%10 == 0:
				return 1
			}
			return 0
		}}
	var mu sync.Mutex
	var samples []results.Sample
	res, err := runner.Run(context.Background(), tg, w, runner.Config{Drive: spec.Drive{Terminals: 4, Warmup: 300 * time.Millisecond, Duration: 1500 * time.Millisecond}, SampleEvery: 250 * time.Millisecond, Hooks: runner.Hooks{Samples: func(s []results.Sample) { mu.Lock(); samples = append(samples, s...); mu.Unlock() }}})
	if err != nil {
		t.Fatal(err)
	}
	ok, rb, fail := find(res, "ok"), find(res, "rollback"), find(res, "fail")
	if ok.Committed == 0 {
		t.Fatalf("no commits in 1.5 s")
	}
	if rb.Rollbacks == 0 || rb.Committed != 0 || len(rb.Errors) != 0 {
		t.Errorf("designed rollbacks must be counted as rollbacks, not commits or errors: %+v", rb)
	}
	if fail.Errors["retryable"] == 0 || fail.Committed != 0 {
		t.Errorf("serialization failures must be counted as retryable errors: %+v", fail)
	}
	if ex := res.Summary.ErrorExamples["retryable"]; len(ex) != 1 || !strings.Contains(ex[0], "40001") {
		t.Errorf("error examples %v, want the one serialization failure message", res.Summary.ErrorExamples)
	}
	// The transactions a terminal ended in the window are a run of consecutive numbers n, of
	// any length L: among them the multiples of 10 and of 50 number L/10 and L/50 give or
	// take one, so its rollbacks (multiples of 10 but not of 25) are 4/50 of L within 2
	// and its failures (multiples of 25) 2/50 of L within 1, whatever its length. Summed
	// over the 4 terminals, with L the window's transactions:
	all := float64(ok.Committed + rb.Rollbacks + fail.Errors["retryable"])
	if d := float64(rb.Rollbacks) - all*4/50; d < -8 || d > 8 {
		t.Errorf("%d rollbacks among %.0f transactions, want 4/50 of them within 8 (one in 10 by design, but not those that fail)", rb.Rollbacks, all)
	}
	if d := float64(fail.Errors["retryable"]) - all*2/50; d < -4 || d > 4 {
		t.Errorf("%d failures among %.0f transactions, want 2/50 of them within 4 (one in 25 by design)", fail.Errors["retryable"], all)
	}
	if res.Summary.Elapsed != 1500*time.Millisecond {
		t.Errorf("elapsed %v, want the full window", res.Summary.Elapsed)
	}
	wantTPS := float64(res.Summary.Committed+res.Summary.Rollbacks) / 1.5
	if d := res.Summary.TPS - wantTPS; d > 1e-6 || d < -1e-6 {
		t.Errorf("TPS %.1f, want %.1f", res.Summary.TPS, wantTPS)
	}
	if ok.P50Us <= 0 || ok.P99Us < ok.P50Us || ok.MaxUs < ok.P99Us || ok.Hist == "" {
		t.Errorf("percentiles not ordered or histogram missing: %+v", ok)
	}
	// Warm-up samples have negative offsets, and the warm-up is not in the window's counts.
	var warm, windowCommits int64
	for _, s := range samples {
		if s.Type != "" {
			continue
		}
		if s.Offset <= 0 {
			warm += s.Committed
		} else {
			windowCommits += s.Committed
		}
	}
	if warm == 0 {
		t.Error("no warm-up samples")
	}
	if total := res.Summary.Committed + res.Summary.Rollbacks; total >= warm+windowCommits {
		t.Errorf("window count %d includes the warm-up (samples: %d warm-up + %d window)", total, warm, windowCommits)
	}
}

func TestRunRecordsConnectionWaitApart(t *testing.T) {
	tg := target(t)
	w := &probe{types: []workload.TxType{{Name: "sleep"}}, next: func(int, int) int { return 0 }}
	res, err := runner.Run(context.Background(), tg, w, runner.Config{Drive: spec.Drive{Terminals: 8, Connections: 2, Duration: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	s := find(res, "sleep")
	// 8 terminals share 2 connections and never pause: 2 transactions run while 6
	// terminals wait, so by Little's law a terminal waits 3 times as long as it is served,
	// however long the server takes. The wait is at least the 5 ms of one transaction, and
	// the service time, which excludes the queue, is shorter than the wait.
	if s.WaitMeanUs < 5000 {
		t.Errorf("mean connection wait %.0f µs, want > 5 ms with 8 terminals on 2 connections", s.WaitMeanUs)
	}
	if s.MeanUs >= s.WaitMeanUs {
		t.Errorf("mean service time %.0f µs not below the mean wait %.0f µs: it includes the queue", s.MeanUs, s.WaitMeanUs)
	}
}

func TestRunDrainReturnsPartialWindow(t *testing.T) {
	tg := target(t)
	w := &probe{types: []workload.TxType{{Name: "ok"}}, next: func(int, int) int { return 0 }}
	// Drained once the window has a commit, whenever that is on this machine: in a sample
	// of an interval that began after the window did (the hooks run on Run's goroutine,
	// one after another).
	drain := make(chan struct{})
	var once sync.Once
	windowSamples := -1 // batches of samples since the window started; -1 before
	samples := func(ss []results.Sample) {
		if windowSamples < 0 {
			return
		}
		windowSamples++
		for _, s := range ss {
			if s.Type == "" && windowSamples >= 2 && s.Committed > 0 {
				once.Do(func() { close(drain) })
			}
		}
	}
	const window = time.Minute
	var drained time.Time
	res, err := runner.Run(context.Background(), tg, w, runner.Config{
		Drive: spec.Drive{Terminals: 2, Warmup: 200 * time.Millisecond, Duration: window}, SampleEvery: 50 * time.Millisecond,
		Hooks: runner.Hooks{Drain: drain, Samples: samples,
			WindowStart: func() { windowSamples = 0 }, WindowEnd: func() { drained = time.Now() }}})
	if err != nil {
		t.Fatal(err)
	}
	// The transactions in flight finish within the drain time-out (the probe's take
	// microseconds), and the pool closes.
	if took := time.Since(drained); took > runner.DefaultDrainTimeout+time.Second {
		t.Errorf("the run returned %v after its window ended", took)
	}
	if !res.Interrupted || res.Summary.Elapsed >= window || res.Summary.Committed == 0 {
		t.Errorf("want an interrupted run with part of its window measured, got interrupted=%v elapsed=%v committed=%d",
			res.Interrupted, res.Summary.Elapsed, res.Summary.Committed)
	}
}

// TestRunStartsNothingAfterItsWindow: a terminal starts no transaction once the window's
// time is over, even while the run's goroutine, which stops the terminals, is held up (here
// by a Samples hook that takes longer than the window): at most one transaction per
// terminal, the one in flight at the window's end, runs beyond what the window counts.
func TestRunStartsNothingAfterItsWindow(t *testing.T) {
	tg := target(t)
	w := &probe{types: []workload.TxType{{Name: "noop"}}, next: func(int, int) int { return 0 }}
	const terminals = 2
	slow := func([]results.Sample) { time.Sleep(400 * time.Millisecond) }
	res, err := runner.Run(context.Background(), tg, w, runner.Config{
		Drive:       spec.Drive{Terminals: terminals, Duration: 300 * time.Millisecond},
		SampleEvery: 100 * time.Millisecond, Hooks: runner.Hooks{Samples: slow}})
	if err != nil {
		t.Fatal(err)
	}
	var ran int64
	for _, n := range w.tries() {
		ran += int64(n)
	}
	counted := res.Summary.Committed
	if counted == 0 || ran < counted || ran > counted+terminals {
		t.Errorf("the terminals ran %d transactions, the window counted %d: want at most %d more", ran, counted, terminals)
	}
}

// TestRunMeasuresStalls: while every terminal waits, no transaction ends, and the window's
// samples say for how long at least: the sample whose interval saw the terminals go on
// again holds a stall no shorter than the time all of them were known to wait.
func TestRunMeasuresStalls(t *testing.T) {
	tg := target(t)
	w := &probe{types: []workload.TxType{{Name: "gated"}}, next: func(int, int) int { return 0 }}
	const terminals = 2
	var mu sync.Mutex
	var samples []results.Sample
	var held time.Duration
	window := make(chan struct{})
	go func() {
		<-window
		all, open := w.gate.close(terminals)
		<-all
		from := time.Now()
		time.Sleep(200 * time.Millisecond)
		mu.Lock()
		held = time.Since(from)
		mu.Unlock()
		open()
	}()
	_, err := runner.Run(context.Background(), tg, w, runner.Config{
		Drive:       spec.Drive{Terminals: terminals, Duration: time.Second},
		SampleEvery: 100 * time.Millisecond,
		Hooks: runner.Hooks{WindowStart: func() { close(window) }, Samples: func(s []results.Sample) {
			mu.Lock()
			samples = append(samples, s...)
			mu.Unlock()
		}}})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	var longest time.Duration
	for _, s := range samples {
		if s.Type != "" && s.StallUs != 0 {
			t.Errorf("sample of type %q has a stall: only the sample of all types holds one", s.Type)
		}
		longest = max(longest, time.Duration(s.StallUs)*time.Microsecond)
	}
	if held == 0 || longest < held.Truncate(time.Microsecond) {
		t.Errorf("longest stall sampled %v, want at least the %v every terminal waited", longest, held)
	}
}

// TestRunMinTransactions: a window with a count to reach runs on past its duration until
// its samples counted it, or until its longest; one whose count cannot be reached ends at
// its longest.
func TestRunMinTransactions(t *testing.T) {
	tg := target(t)
	for _, c := range []struct {
		name string
		min  int
	}{{"reached", 150}, {"out of reach", 1 << 30}} {
		w := &probe{types: []workload.TxType{{Name: "sleep"}}, next: func(int, int) int { return 0 }}
		d := spec.Drive{Terminals: 1, Duration: 300 * time.Millisecond, MinTransactions: c.min}
		res, err := runner.Run(context.Background(), tg, w, runner.Config{Drive: d, SampleEvery: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		s := res.Summary
		if s.Elapsed < d.Duration || s.Elapsed > d.MaxWindow() {
			t.Errorf("%s: window %v, want from %v to %v", c.name, s.Elapsed, d.Duration, d.MaxWindow())
		}
		if s.Elapsed < d.MaxWindow() && s.Committed < int64(c.min) {
			t.Errorf("%s: the window ended at %v with %d committed, before its count of %d and its longest", c.name, s.Elapsed, s.Committed, c.min)
		}
	}
}

// TestRunHardCancelReturnsError: a canceled context stops the run at once with its error,
// and what the window measured until then is kept, as a second Ctrl-C in `dblat run`
// saves the run with its figures.
func TestRunHardCancelReturnsError(t *testing.T) {
	tg := target(t)
	w := &probe{types: []workload.TxType{{Name: "sleep"}}, next: func(int, int) int { return 0 }}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	windowSamples := -1 // as in TestRunDrainReturnsPartialWindow
	samples := func(ss []results.Sample) {
		if windowSamples < 0 {
			return
		}
		windowSamples++
		for _, s := range ss {
			if s.Type == "" && windowSamples >= 2 && s.Committed > 0 {
				cancel()
			}
		}
	}
	res, err := runner.Run(ctx, tg, w, runner.Config{Drive: spec.Drive{Terminals: 2, Duration: time.Minute},
		SampleEvery: 50 * time.Millisecond, Hooks: runner.Hooks{Samples: samples, WindowStart: func() { windowSamples = 0 }}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if res == nil || !res.Interrupted || res.Summary.Elapsed >= time.Minute || find(res, "sleep").Committed == 0 {
		t.Errorf("want the figures measured until the stop, got %+v", res)
	}
}
