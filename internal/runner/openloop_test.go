package runner_test

import (
	"context"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/runner"
	"github.com/dblat/dblat/internal/spec"
	"github.com/dblat/dblat/internal/stalltest"
	"github.com/dblat/dblat/internal/workload"
)

// TestRunRetriesWithTheSameInput: with --max-tries 3 a transaction that fails with a
// serialization failure on its first try is run again with the same input and commits;
// its retry is counted, not its failure. With one try it is an error.
func TestRunRetriesWithTheSameInput(t *testing.T) {
	tg := target(t)
	for _, tries := range []int{1, 3} {
		w := &probe{types: []workload.TxType{{Name: "flaky"}}, next: func(int, int) int { return 0 }}
		res, err := runner.Run(context.Background(), tg, w, runner.Config{Drive: spec.Drive{Terminals: 2, Duration: 500 * time.Millisecond, MaxTries: tries}})
		if err != nil {
			t.Fatal(err)
		}
		f := find(res, "flaky")
		if done := f.Committed + f.Errors["retryable"]; done == 0 {
			t.Fatalf("max tries %d: no transaction in 0.5 s", tries)
		}
		seen := w.tries()
		if tries == 1 {
			if f.Committed != 0 || f.Retries != 0 || seen[2] != 0 {
				t.Errorf("max tries 1: %d committed, %d retries, %d inputs run twice; want none", f.Committed, f.Retries, seen[2])
			}
			continue
		}
		// Every input is run exactly twice: the failed first try and the retry, with the
		// same input (the probe counts tries per input).
		if seen[1] > 2 || seen[3] != 0 || seen[2] == 0 {
			t.Errorf("tries per input %v: want every input run twice (two may be cut off by the window's end)", seen)
		}
		if f.Errors["retryable"] != 0 || f.Retries != f.Committed || f.Retried != f.Committed {
			t.Errorf("max tries 3: committed %d, retries %d, retried %d, errors %v; want one retry per commit and no errors",
				f.Committed, f.Retries, f.Retried, f.Errors)
		}
		if res.Summary.Retries != f.Retries {
			t.Errorf("run-wide retries %d, type's %d", res.Summary.Retries, f.Retries)
		}
		// Response time runs from the first try: it covers both tries' service.
		if f.RespP50Us < f.P50Us {
			t.Errorf("response p50 %d µs below service p50 %d µs", f.RespP50Us, f.P50Us)
		}
	}
	// A transaction that always fails uses its three tries, then counts as one error.
	w := &probe{types: []workload.TxType{{Name: "fail"}}, next: func(int, int) int { return 0 }}
	res, err := runner.Run(context.Background(), tg, w, runner.Config{Drive: spec.Drive{Terminals: 1, Duration: 300 * time.Millisecond, MaxTries: 3}})
	if err != nil {
		t.Fatal(err)
	}
	f := find(res, "fail")
	if n := f.Errors["retryable"]; n == 0 || f.Retries != 2*n || f.Retried != n {
		t.Errorf("always failing: %d errors, %d retries, %d retried; want 2 retries per error", n, f.Retries, f.Retried)
	}
}

// TestOpenLoopKeepsItsRate: an unsaturated open-loop run starts its arrivals on schedule,
// whatever the terminals' count, and is not an overload point.
func TestOpenLoopKeepsItsRate(t *testing.T) {
	tg := target(t)
	// Transactions that do not touch the database: how fast terminals take arrivals up
	// is the runner's alone, however busy the server's machine is.
	w := &probe{types: []workload.TxType{{Name: "noop"}}, next: func(int, int) int { return 0 }}
	const rate = 200
	stalls := stalltest.Watch()
	res, err := runner.Run(context.Background(), tg, w, runner.Config{Drive: spec.Drive{Terminals: 4, Warmup: 200 * time.Millisecond, Duration: 2 * time.Second, Rate: rate, Arrival: spec.ArrivalPoisson, Seed: 3}})
	stall := stalls().Longest
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary
	// The schedule is fixed by the seed before the run: a Poisson count over 2 s at 200/s,
	// 400 ± 20 (one standard deviation), the same on every machine.
	if s.Offered < 300 || s.Offered > 500 {
		t.Errorf("offered %d arrivals in 2 s at 200/s", s.Offered)
	}
	// Four terminals that do nothing keep up with 200 a second: no arrival is skipped, and
	// at the end at most the overload rule's 1 % are still waiting for a terminal — unless
	// this process was not given a CPU for a while near the end (a machine far busier than
	// its cores), which leaves up to a stall's worth of arrivals unstarted: the machine's,
	// not the runner's, and the test says so.
	switch allowed := int64(rate*stall.Seconds()) + 2; {
	case s.Skipped != 0:
		t.Errorf("an unsaturated run skipped %d arrivals", s.Skipped)
	case s.Overload && s.Backlog > allowed:
		t.Errorf("an unsaturated run: overload %v, backlog %d (this process's longest stall %v explains %d)", s.Overload, s.Backlog, stall, allowed)
	case s.Overload:
		t.Logf("backlog %d at the end after this process went %v without a CPU: the machine's, not checked", s.Backlog, stall)
	}
	if !s.Overload {
		if want := float64(s.Offered) / 2; s.AchievedRate < 0.97*want {
			t.Errorf("achieved %.1f/s of %.1f/s offered", s.AchievedRate, want)
		}
	}
	// The window's commits are its started arrivals, give or take the transactions in
	// flight at either edge (at most one per terminal at each), and those a stall of this
	// process moved across an edge: arrivals due before it that ran after it.
	ok := find(res, "noop")
	const terminals = 4
	tol := terminals + int64(2*rate*stall.Seconds())
	if got, started := ok.Committed, s.Offered-s.Backlog; got < started-tol || got > started+tol {
		t.Errorf("%d committed for %d offered, %d of them not started (tolerance %d after a stall of %v)", got, s.Offered, s.Backlog, tol, stall)
	}
	if ok.RespHist == "" || ok.LagHist == "" || ok.RespP99Us < ok.P50Us {
		t.Errorf("response and lag histograms missing or inconsistent: %+v", ok)
	}
}

// TestOpenLoopCatchesCoordinatedOmission stalls the server for 1 s (another session holds
// an exclusive lock on the table the workload reads) during a rate run and during a
// closed-loop run with the same terminals. The rate run's response times include the wait
// of every arrival the stall held up, so its p99 reflects the stall while its service-time
// p99 need not; the closed loop sends nothing while its terminals are blocked, so only the
// few transactions caught in the stall see it, and its p99 hides it.
func TestOpenLoopCatchesCoordinatedOmission(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	tg := open(t, dsn)
	// The locking session has a pool of its own: the run takes all of tg's connections.
	locker := open(t, dsn).DB
	ctx := context.Background()
	if _, err := locker.ExecContext(ctx, "CREATE TABLE probe_t (x int); INSERT INTO probe_t VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	const stall = time.Second
	run := func(rate float64) results.TxSummary {
		t.Helper()
		lockDone := make(chan error, 1)
		time.AfterFunc(time.Second, func() {
			tx, err := locker.BeginTx(ctx, nil)
			if err != nil {
				lockDone <- err
				return
			}
			if _, err := tx.ExecContext(ctx, "LOCK TABLE probe_t IN ACCESS EXCLUSIVE MODE"); err != nil {
				tx.Rollback()
				lockDone <- err
				return
			}
			time.Sleep(stall)
			lockDone <- tx.Commit()
		})
		w := &probe{types: []workload.TxType{{Name: "read"}}, next: func(int, int) int { return 0 }}
		res, err := runner.Run(ctx, tg, w, runner.Config{Drive: spec.Drive{Terminals: 4, Duration: 3 * time.Second, Rate: rate}})
		if err != nil {
			t.Fatal(err)
		}
		if err := <-lockDone; err != nil {
			t.Fatal(err)
		}
		return find(res, "read")
	}
	open := run(200)
	closed := run(0)
	const terminals = 4
	t.Logf("open loop at 200/s: response p99 %d µs, max %d µs; service p99 %d µs; %d transactions", open.RespP99Us, open.RespMaxUs, open.P99Us, open.Committed)
	t.Logf("closed loop: response p99 %d µs, max %d µs; service p99 %d µs; %d transactions", closed.RespP99Us, closed.RespMaxUs, closed.P99Us, closed.Committed)
	// The first arrival the stall catches waits for all of it.
	if open.RespMaxUs < (stall * 9 / 10).Microseconds() {
		t.Errorf("open loop: response max %d µs, want the 1 s stall", open.RespMaxUs)
	}
	// About 200 of the window's 600 arrivals fall in the stall, most held up by half a
	// second or more: far above the 1 % that p99 leaves out.
	if open.RespP99Us < (stall / 2).Microseconds() {
		t.Errorf("open loop: response p99 %d µs does not reflect the 1 s stall", open.RespP99Us)
	}
	// Only the 4 transactions in flight when the stall began (of ~600) took long to serve.
	if open.P99Us*2 > open.RespP99Us {
		t.Errorf("open loop: service p99 %d µs close to response p99 %d µs; the stall's wait is schedule lag, not service", open.P99Us, open.RespP99Us)
	}
	// The closed loop: only the transactions in flight when the stall began waited, one
	// per terminal, which p99 leaves out when they are under 1 % of the window's, as the
	// thousands a machine runs in 3 s make them. A machine too busy to run a hundred per
	// terminal cannot tell, and the test says so.
	switch {
	case closed.Committed < 100*terminals:
		t.Logf("closed loop: %d transactions in 3 s, too few for p99 to leave out the %d the stall held up: not checked", closed.Committed, terminals)
	case closed.RespP99Us*2 > open.RespP99Us:
		t.Errorf("closed loop: response p99 %d µs; want it to hide the stall (open loop: %d µs)", closed.RespP99Us, open.RespP99Us)
	}
}

// TestOpenLoopOverload offers twice what the terminals can serve: the run still ends on
// time, marks itself an overload point and counts what it could not start; with a latency
// limit it skips the late arrivals instead, and its response times stay bounded by it.
func TestOpenLoopOverload(t *testing.T) {
	tg := target(t)
	// Two terminals of 5 ms transactions serve at most 400 per second.
	for _, limit := range []time.Duration{0, 50 * time.Millisecond} {
		w := &probe{types: []workload.TxType{{Name: "sleep"}}, next: func(int, int) int { return 0 }}
		began := time.Now()
		res, err := runner.Run(context.Background(), tg, w, runner.Config{Drive: spec.Drive{Terminals: 2, Duration: 1500 * time.Millisecond, Rate: 800, LatencyLimit: limit}})
		if err != nil {
			t.Fatal(err)
		}
		// Opening two connections, the window, the drain time-out at most, and closing.
		if took := time.Since(began); took > 1500*time.Millisecond+runner.DefaultDrainTimeout+time.Second {
			t.Errorf("limit %v: a 1.5 s overloaded run took %v", limit, took)
		}
		s := res.Summary
		sl := find(res, "sleep")
		t.Logf("limit %v: offered %d, skipped %d, backlog %d, late %d, achieved %.0f/s, response p99 %d µs", limit,
			s.Offered, s.Skipped, s.Backlog, s.Late, s.AchievedRate, sl.RespP99Us)
		if !s.Overload {
			t.Errorf("limit %v: not marked an overload point: %+v", limit, s)
		}
		if s.AchievedRate > 0.75*800 {
			t.Errorf("limit %v: achieved %.0f/s of 800/s with capacity for 400", limit, s.AchievedRate)
		}
		if limit == 0 {
			if s.Backlog < s.Offered/4 || s.Skipped != 0 {
				t.Errorf("no limit: backlog %d of %d offered, skipped %d; want about half left unstarted", s.Backlog, s.Offered, s.Skipped)
			}
			continue
		}
		if s.Skipped < s.Offered/4 || s.Backlog > s.Offered/10 {
			t.Errorf("limit %v: skipped %d, backlog %d of %d offered; want about half skipped and none left", limit, s.Skipped, s.Backlog, s.Offered)
		}
		// A started arrival was at most 50 ms late when a terminal took it up, and then
		// took its own connection at once. Without the limit the lag grows to about
		// 750 ms (half the window's arrivals wait); the bound tells the two apart and
		// leaves a busy machine a quarter of a second to schedule the terminal.
		if sl.LagMaxUs > (limit + 250*time.Millisecond).Microseconds() {
			t.Errorf("limit %v: schedule lag up to %d µs", limit, sl.LagMaxUs)
		}
	}
}

// TestThinkTimesCountFromTheIntendedStart: under keying times a transaction's intended
// start is the end of its keying time, as scheduled. Ten terminals key for 40 ms and then
// share one connection for 5 ms each, more than it can serve, so they queue for it: the
// response time is that wait plus the service time (response = lag + service), and the
// keying time before the intended start is in neither.
func TestThinkTimesCountFromTheIntendedStart(t *testing.T) {
	tg := target(t)
	const keying = 40 * time.Millisecond
	w := &probe{types: []workload.TxType{{Name: "sleep"}}, next: func(int, int) int { return 0 },
		pause: workload.Pause{Keying: keying}}
	stalls := stalltest.Watch()
	res, err := runner.Run(context.Background(), tg, w, runner.Config{Drive: spec.Drive{Terminals: 10, Connections: 1, Warmup: 200 * time.Millisecond, Duration: 2 * time.Second}})
	stall := stalls().Longest
	if err != nil {
		t.Fatal(err)
	}
	s := find(res, "sleep")
	if s.Committed == 0 {
		t.Fatalf("no transactions")
	}
	// Means add up: response = lag + service, to the histograms' precision.
	if d := s.RespMeanUs - (s.LagMeanUs + s.MeanUs); d > 0.01*s.RespMeanUs || d < -0.01*s.RespMeanUs {
		t.Errorf("response mean %.0f µs ≠ lag %.0f + service %.0f", s.RespMeanUs, s.LagMeanUs, s.MeanUs)
	}
	// Ten terminals need the connection for 5 ms each per cycle of at least 45 ms: they
	// wait for it. (Eight would need 40 of 45 ms: keying times of equal length then fall
	// into turns that hardly wait, and the test failed on a busy machine.) The lag holds that wait, and besides it only how late a terminal woke from its
	// keying time (a fraction of a millisecond, more on a busy machine), not the 40 ms of
	// keying itself.
	t.Logf("%d transactions: response mean %.0f µs = lag %.0f (pool wait %.0f) + service %.0f", s.Committed, s.RespMeanUs, s.LagMeanUs, s.WaitMeanUs, s.MeanUs)
	// The late wake-up is at most this process's longest stall, or half the keying time
	// (a fraction of a millisecond on a machine with CPUs to spare).
	late := max(keying/2, stall)
	if s.WaitMeanUs < 500 || s.LagMeanUs < s.WaitMeanUs || s.LagMeanUs-s.WaitMeanUs > float64(late.Microseconds()) {
		t.Errorf("lag mean %.0f µs, pool wait mean %.0f µs: want a wait, and the lag that wait plus a late wake-up", s.LagMeanUs, s.WaitMeanUs)
	}
}
