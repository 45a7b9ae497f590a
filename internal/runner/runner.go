package runner

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/dblat/dblat/internal/latency"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/spec"
	"github.com/dblat/dblat/internal/workload"
)

// Config says how to drive a workload: the run's Drive (spec.Drive: terminals, pool, warm-up
// and window, open-loop rate, latency limit, retries) and what the runner reports back.
type Config struct {
	// Drive is how hard and how long to drive the workload, as the run description
	// resolved and validated it (spec.Run.Resolve, spec.Drive.Validate): the runner checks
	// nothing again. Its zero values read as spec says (Drive.Pool: one connection per
	// terminal; Drive.Tries: one try).
	//
	// With Rate set the workload is driven open-loop: transactions arrive at Rate per
	// second in total, from the start of the warm-up, on a schedule fixed before the run
	// (Arrival, Seed) that does not depend on how fast the server answers. Free terminals
	// take the arrivals in order, each waiting for its arrival's intended start; Terminals
	// bounds how many run at once, and an arrival that finds every terminal busy waits
	// (its wait is schedule lag, part of its response time). With LatencyLimit an arrival
	// picked up later than the limit is skipped (Summary.Skipped), a slower transaction is
	// counted late (Summary.Late) and none is retried past it. A transaction that fails
	// with a retryable error (engine.ClassRetryable) is run again at once on the same
	// connection with the same input (workload.Terminal), up to MaxTries tries, its
	// response time running from the first try.
	spec.Drive
	// Hooks are how the caller ends a run early and hears from it (runner.Run uses them;
	// a Session takes its own in Session.Run).
	Hooks
	// SampleEvery is the interval of the stored samples (default 1 s).
	SampleEvery time.Duration
	// NOPMType names the transaction type whose commits per minute are Summary.NOPM
	// (TPC-C's "new_order", workload.Metric.TxType); "" leaves NOPM 0.
	NOPMType string
	// DrainTimeout bounds how long the transactions in flight when the window ends (or the
	// run is drained) may take to finish; those still running then are canceled. They end
	// after the window and count in no figure either way, so this bounds a run's length
	// without changing its result. Zero means DefaultDrainTimeout.
	DrainTimeout time.Duration
}

// Hooks connect a running run to its caller. Every field is optional.
type Hooks struct {
	// Drain, when closed, ends the run early: in-flight transactions finish and the figures
	// measured so far are returned with Result.Interrupted set.
	Drain <-chan struct{}
	// Samples receives each interval's samples from the ticker goroutine. It should return
	// quickly.
	Samples func([]results.Sample)
	// WindowStart and WindowEnd are called when the measurement window starts (after the
	// warm-up) and when it ends, from Run's goroutine, so that a caller can take its own
	// measurements over the window (the latency link's lateness and CPU).
	WindowStart, WindowEnd func()
}

// DefaultDrainTimeout is Config.DrainTimeout's default. A transaction still running this
// long after the window is waiting for something that may not come soon: Firebird 3.0
// detects a deadlock only after its DeadlockTimeout (10 s) and, under load, not at all
// until a waiter gives up, which made runs end 10 to 40 s after their window.
const DefaultDrainTimeout = 2 * time.Second

// Result holds the figures of the measurement window.
type Result struct {
	Summary results.Summary
	Tx      []results.TxSummary
	// CPUSeconds is the user+system CPU time dblat used during the measurement window.
	CPUSeconds float64
	// Interrupted is set when the run was drained before its window ended.
	Interrupted bool
	// Warmup is the warm-up the run had: the Drive's for a fixed one, what the steady-state
	// rule chose for an automatic one (steadyAt).
	Warmup time.Duration
}

// pooled is one connection of the runner's pool with its meter.
type pooled struct {
	conn  *sql.Conn
	meter Meter
}

// Run opens a session (Open), runs it and closes it: a run from connecting to the last
// figure. It returns an error, and no figures, if preparation or the pool fails; if ctx is
// canceled (a hard stop), the figures until then with the error (Session.Run).
func Run(ctx context.Context, t workload.Target, w workload.Workload, cfg Config) (*Result, error) {
	s, err := Open(ctx, t, w, cfg)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.Run(ctx, cfg.Hooks)
}

// Session is a run ready to start: its pool open and its workload prepared. It is used by
// one goroutine.
type Session struct {
	t    workload.Target
	w    workload.Workload
	cfg  Config
	pool chan pooled
	// stuck is set when a terminal was abandoned (abandonAfter): Close does not wait for
	// its connection.
	stuck bool
}

// Open opens the connection pool on t and prepares w on one of its connections. cfg.Drive
// must be valid (spec.Drive.Validate): the run description is checked once, before it gets
// here. Its error is the pool's, or the workload's Prepare (which an option.Error marks as
// the user's input). Close the session when done.
func Open(ctx context.Context, t workload.Target, w workload.Workload, cfg Config) (*Session, error) {
	if cfg.SampleEvery <= 0 {
		cfg.SampleEvery = time.Second
	}
	if cfg.DrainTimeout <= 0 {
		cfg.DrainTimeout = DefaultDrainTimeout
	}
	db := t.DB
	db.SetMaxOpenConns(cfg.Pool())
	db.SetMaxIdleConns(cfg.Pool())
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	pool, err := openPool(ctx, db, cfg.Pool())
	if err != nil {
		return nil, err
	}
	s := &Session{t: t, w: w, cfg: cfg, pool: pool}
	if err := prepareOnPooled(ctx, db, pool, w); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the session's connections. A connection that a stuck terminal still holds
// (see abandonAfter) is left to it.
func (s *Session) Close() {
	if s.pool == nil {
		return
	}
	for range s.cfg.Pool() {
		var p pooled
		if s.stuck {
			select {
			case p = <-s.pool:
			default:
				continue
			}
		} else {
			p = <-s.pool
		}
		if p.conn != nil {
			p.conn.Close()
		}
	}
	s.pool = nil
}

// abandonAfter is how long a run waits, after canceling its terminals, for a terminal whose
// driver call ignores the cancellation (a statement the server never answers): the run
// then ends without it, and its goroutine and connection are left to the driver. Firebird's
// canceled statements once hung that way for good (the engine now drops their connection).
const abandonAfter = 10 * time.Second

// waitAtMost waits for wg for at most d; false when it gave up.
func waitAtMost(wg *sync.WaitGroup, d time.Duration) bool {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

// Run runs the warm-up and the measurement window, telling h, and returns the window's
// figures. If ctx is canceled (a hard stop) the transactions in flight are canceled at
// once, and it returns the figures of the window until then (Result.Interrupted) with
// ctx's error. A session runs once.
func (s *Session) Run(ctx context.Context, h Hooks) (*Result, error) {
	cfg := s.cfg
	cfg.Hooks = h
	types := make([]string, len(s.w.TxTypes()))
	for i, tt := range s.w.TxTypes() {
		types[i] = tt.Name
	}
	start := time.Now()
	rec := newRecorder(2*runtime.GOMAXPROCS(0), len(types), start)
	tl := newTimeline(&cfg, rec, types, start)
	// stop is closed when terminals must not start another transaction.
	stop := make(chan struct{})
	// The terminals' context: the run's, canceled also DrainTimeout after stop closes.
	termCtx, cancelTerms := context.WithCancel(ctx)
	defer cancelTerms()
	examples := &errorExamples{}
	d := &driver{ctx: termCtx, quiet: workload.WithStopping(termCtx), cfg: &cfg, eng: s.t.Engine, db: s.t.DB, pool: s.pool,
		rec: rec, examples: examples, stop: stop, windowStart: &tl.windowStart, windowEnd: &tl.windowEnd}
	if cfg.Rate > 0 {
		d.sched, _ = newSchedule(tl.start, cfg.Rate, cfg.Arrival, cfg.Seed) // checked by Open
	}
	var wg sync.WaitGroup
	for i := range cfg.Terminals {
		term := s.w.NewTerminal(cfg.FirstTerminal + i)
		p := newPause(stop)
		wg.Go(func() {
			defer p.close()
			d.terminal(i, term, p)
		})
	}

	tl.run(ctx, cfg.Drain)
	close(stop)
	tl.drain()
	drained := time.AfterFunc(cfg.DrainTimeout, cancelTerms)
	s.stuck = !waitAtMost(&wg, cfg.DrainTimeout+abandonAfter)
	drained.Stop()
	tl.emit(time.Now())

	elapsed := tl.elapsed()
	res := summarize(rec.window(len(types)), types, cfg.NOPMType, elapsed)
	if d.sched != nil {
		d.openLoop(&res.Summary, elapsed)
	}
	res.CPUSeconds = tl.cpuEnd - tl.cpuAtWindow
	res.Summary.ErrorExamples = examples.snapshot()
	res.Interrupted = tl.cut
	res.Warmup = tl.warmup()
	res.Summary.Warmup = res.Warmup
	return res, ctx.Err()
}

// openPool opens n connections concurrently, each with a Slot so that a metering dialer can
// hand over its meter. Idle connections left by Prepare are dropped first, so that every
// pooled connection is dialled here.
func openPool(ctx context.Context, db *sql.DB, n int) (chan pooled, error) {
	db.SetMaxIdleConns(0)
	db.SetMaxIdleConns(n)
	pool := make(chan pooled, n)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			p, err := dialPooled(ctx, db)
			if err != nil {
				errs <- err
				return
			}
			pool <- p
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		close(pool)
		for p := range pool {
			p.conn.Close()
		}
		return nil, fmt.Errorf("open connection pool: %w", err)
	}
	return pool, nil
}

// prepareOnPooled runs w.Prepare on one of the pool's connections, lent back to db for it:
// with every other connection held, that is the only one db has. A connection of its own
// would have to be closed before the run so that every terminal's is metered, and closing
// deallocates each prepared statement, a round trip each: seconds through a link at 20 ms.
func prepareOnPooled(ctx context.Context, db *sql.DB, pool chan pooled, w workload.Workload) error {
	lent := <-pool
	lent.conn.Close() // back to db's idle list
	err := w.Prepare(ctx, db)
	// The same connection again, unless Prepare broke it and db dials a new one, which
	// then brings its own meter.
	back, derr := dialPooled(ctx, db)
	if derr != nil {
		pool <- pooled{}
		return errors.Join(err, fmt.Errorf("open connection pool: %w", derr))
	}
	if back.meter == nil {
		back.meter = lent.meter
	}
	pool <- back
	return err
}

func dialPooled(ctx context.Context, db *sql.DB) (pooled, error) {
	sctx, slot := latency.WithMeterSlot(ctx)
	c, err := db.Conn(sctx)
	if err != nil {
		return pooled{}, err
	}
	if err := c.PingContext(ctx); err != nil {
		c.Close()
		return pooled{}, err
	}
	p := pooled{conn: c}
	if slot.Conn != nil { // a metering dialer's connection
		p.meter = slot.Conn
	}
	return p, nil
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}
