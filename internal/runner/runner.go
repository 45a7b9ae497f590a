package runner

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/latency"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/workload"
)

// Config says how to drive a workload.
type Config struct {
	// Terminals is the number of concurrent emulated users (≥ 1).
	Terminals int
	// Connections is the pool size; 0 means one per terminal. With fewer connections than
	// terminals, terminals queue for a connection and the queueing time is recorded apart
	// from the service time.
	Connections int
	// Warmup runs before the measurement window and is excluded from every figure.
	Warmup time.Duration
	// Duration is the measurement window.
	Duration time.Duration
	// SampleEvery is the interval of the stored samples (default 1 s).
	SampleEvery time.Duration
	// Drain, when closed, ends the run early: in-flight transactions finish and the figures
	// measured so far are returned with Result.Interrupted set.
	Drain <-chan struct{}
	// Samples, when set, receives each interval's samples from the ticker goroutine. It should
	// return quickly.
	Samples func([]results.Sample)
	// Connected, when set, is called once every pooled connection is open, before warm-up.
	Connected func()
	// DrainTimeout bounds how long the transactions in flight when the window ends (or the
	// run is drained) may take to finish; those still running then are canceled. They end
	// after the window and count in no figure either way, so this bounds a run's length
	// without changing its result. Zero means DefaultDrainTimeout.
	DrainTimeout time.Duration
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
}

// pooled is one connection of the runner's pool with its meter.
type pooled struct {
	conn  *sql.Conn
	meter Meter
}

// Run prepares the workload, opens the pool, runs warm-up and the measurement window, and
// returns the window's figures. It returns an error, and no figures, if preparation or the
// pool fails, or if ctx is canceled (a hard stop).
func Run(ctx context.Context, t workload.Target, w workload.Workload, cfg Config) (*Result, error) {
	if cfg.Terminals < 1 {
		return nil, fmt.Errorf("terminals must be at least 1, got %d", cfg.Terminals)
	}
	if cfg.Connections <= 0 {
		cfg.Connections = cfg.Terminals
	}
	if cfg.Connections > cfg.Terminals {
		cfg.Connections = cfg.Terminals
	}
	if cfg.Duration <= 0 {
		return nil, fmt.Errorf("duration must be positive, got %v", cfg.Duration)
	}
	if cfg.SampleEvery <= 0 {
		cfg.SampleEvery = time.Second
	}
	if cfg.DrainTimeout <= 0 {
		cfg.DrainTimeout = DefaultDrainTimeout
	}
	db := t.DB
	db.SetMaxOpenConns(cfg.Connections)
	db.SetMaxIdleConns(cfg.Connections)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	if err := w.Prepare(ctx, db); err != nil {
		return nil, err
	}
	pool, err := openPool(ctx, db, cfg.Connections)
	if err != nil {
		return nil, err
	}
	defer func() {
		for range cfg.Connections {
			p := <-pool
			if p.conn != nil {
				p.conn.Close()
			}
		}
	}()
	if cfg.Connected != nil {
		cfg.Connected()
	}

	types := make([]string, len(w.TxTypes()))
	for i, tt := range w.TxTypes() {
		types[i] = tt.Name
	}
	rec := newRecorder(2*runtime.GOMAXPROCS(0), len(types))
	examples := &errorExamples{}
	start := time.Now()
	windowStart := start.Add(cfg.Warmup)
	// windowEnd moves earlier when the run is drained; terminals read it on every
	// transaction, so it is an atomic (nanoseconds since windowStart) rather than a lock.
	var windowEnd atomic.Int64
	windowEnd.Store(int64(cfg.Duration))

	// stop is closed when terminals must not start another transaction.
	stop := make(chan struct{})
	var stopOnce sync.Once
	closeStop := func() { stopOnce.Do(func() { close(stop) }) }
	interrupted := false // written and read by this goroutine only

	// The terminals' context: the run's, canceled also DrainTimeout after stop closes.
	termCtx, cancelTerms := context.WithCancel(ctx)
	defer cancelTerms()
	var wg sync.WaitGroup
	for i := range cfg.Terminals {
		term := w.NewTerminal(i)
		wg.Go(func() {
			runTerminal(termCtx, i, term, t.Engine, db, pool, rec, examples, stop, func(done time.Time) bool {
				off := done.Sub(windowStart)
				return off >= 0 && int64(off) < windowEnd.Load()
			})
		})
	}

	cpuStart := cpuSeconds()
	cpuAtWindow := math.NaN()
	tick := time.NewTicker(cfg.SampleEvery)
	defer tick.Stop()
	timer := time.NewTimer(time.Until(windowStart.Add(cfg.Duration)))
	defer timer.Stop()
	warm := time.NewTimer(cfg.Warmup)
	defer warm.Stop()
	emit := func(now time.Time) {
		iv := rec.takeInterval(len(types))
		if cfg.Samples != nil {
			cfg.Samples(samples(iv, types, now.Sub(windowStart)))
		}
	}
loop:
	for {
		select {
		case now := <-tick.C:
			emit(now)
		case <-warm.C:
			cpuAtWindow = cpuSeconds()
		case <-timer.C:
			break loop
		case <-cfg.Drain:
			interrupted = true
			windowEnd.Store(int64(time.Since(windowStart)))
			break loop
		case <-ctx.Done():
			closeStop()
			wg.Wait()
			return nil, ctx.Err()
		}
	}
	closeStop()
	cpuEnd := cpuSeconds()
	if math.IsNaN(cpuAtWindow) {
		cpuAtWindow = cpuStart
	}
	drained := time.AfterFunc(cfg.DrainTimeout, cancelTerms)
	wg.Wait()
	drained.Stop()
	emit(time.Now())

	elapsed := time.Duration(windowEnd.Load())
	if elapsed < 0 {
		elapsed = 0
	}
	res := summarize(rec.window(len(types)), types, elapsed)
	res.CPUSeconds = cpuEnd - cpuAtWindow
	res.Summary.ErrorExamples = examples.snapshot()
	res.Interrupted = interrupted
	return res, nil
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

func dialPooled(ctx context.Context, db *sql.DB) (pooled, error) {
	sctx, slot := WithSlot(ctx)
	c, err := db.Conn(sctx)
	if err != nil {
		return pooled{}, err
	}
	if err := c.PingContext(ctx); err != nil {
		c.Close()
		return pooled{}, err
	}
	return pooled{conn: c, meter: slot.Meter}, nil
}

func runTerminal(ctx context.Context, id int, term workload.Terminal, eng engine.Engine, db *sql.DB, pool chan pooled,
	rec *recorder, examples *errorExamples, stop <-chan struct{}, inWindow func(time.Time) bool) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		txType, pause := term.Next()
		if !sleep(ctx, stop, pause.Keying) {
			return
		}
		t0 := time.Now()
		var p pooled
		select {
		case p = <-pool:
		case <-stop:
			return
		case <-ctx.Done():
			return
		}
		if p.conn == nil { // a lost connection not yet replaced
			var err error
			if p, err = dialPooled(ctx, db); err != nil {
				pool <- pooled{}
				rec.record(id, outcome{txType: txType, failed: true, class: engine.ClassConnection, inWindow: inWindow(time.Now())})
				if !sleep(ctx, stop, 100*time.Millisecond) {
					return
				}
				continue
			}
		}
		t1 := time.Now()
		var before latency.Counts
		if p.meter != nil {
			before = p.meter.Counts()
		}
		err := term.Run(ctx, p.conn, txType)
		t2 := time.Now()
		o := outcome{txType: txType, wait: t1.Sub(t0), svc: t2.Sub(t1), inWindow: inWindow(t2)}
		if p.meter != nil && (err == nil || errors.Is(err, workload.ErrExpectedRollback)) {
			w := p.meter.Counts().Sub(before)
			o.wire = &w
		}
		switch {
		case err == nil:
		case errors.Is(err, workload.ErrExpectedRollback):
			o.rollback = true
		case ctx.Err() != nil:
			// The run was stopped, or the transaction outlived the window by DrainTimeout
			// and was canceled: not an error of the engine's, and after the window.
			pool <- p
			return
		default:
			o.failed = true
			o.class = eng.Classify(err)
			examples.add(o.class, err)
			if o.class == engine.ClassConnection {
				p.conn.Close()
				p = pooled{}
			}
		}
		pool <- p
		rec.record(id, o)
		if !sleep(ctx, stop, pause.Think) {
			return
		}
	}
}

// sleep pauses for d unless the run stops first; it reports whether to go on.
func sleep(ctx context.Context, stop <-chan struct{}, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-stop:
		return false
	case <-ctx.Done():
		return false
	}
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}
