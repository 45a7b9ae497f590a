package runner

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"sync/atomic"
	"time"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/latency"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/workload"
)

// driver is what every terminal of one run shares.
type driver struct {
	ctx context.Context
	// quiet is ctx never canceled, carrying its cancellation (workload.WithStopping): the
	// context a transaction on a metered connection runs on (see run).
	quiet    context.Context
	cfg      *Config
	eng      engine.Engine
	db       *sql.DB
	pool     chan pooled
	rec      *recorder
	examples *errorExamples
	// stop is closed when terminals must not start another transaction.
	stop <-chan struct{}
	// windowStart is when the measurement window starts (Unix nanoseconds: an automatic
	// warm-up moves it earlier when throughput settles); windowEnd its length so far (moved
	// earlier by a drain), in nanoseconds.
	windowStart *atomic.Int64
	windowEnd   *atomic.Int64
	// sched is the open-loop schedule; nil in a closed-loop run.
	sched *schedule
	// Arrivals of the window (by intended start) that terminals started or skipped.
	started, skipped atomic.Int64
}

// start is when the measurement window starts (or, during an automatic warm-up, would
// start at the latest).
func (d *driver) start() time.Time { return time.Unix(0, d.windowStart.Load()) }

// inWindow reports whether t falls in the measurement window.
func (d *driver) inWindow(t time.Time) bool {
	off := t.Sub(d.start())
	return off >= 0 && int64(off) < d.windowEnd.Load()
}

// windowOver reports whether the window has ended by t. A terminal starts no transaction
// then, even before the run's goroutine closes stop (it may be late on a busy machine):
// such a transaction would count in no figure, yet load the server during others' drain,
// so at most one transaction per terminal runs past the window's end.
func (d *driver) windowOver(t time.Time) bool {
	return int64(t.Sub(d.start())) >= d.windowEnd.Load()
}

// pause sleeps a terminal until an instant: on a latency.Sleeper where the system has one
// (precise to tens of microseconds), else on a Go timer (about 1 ms). Either ends early
// when the run stops.
type pause struct {
	s    *latency.Sleeper
	stop <-chan struct{}
	done chan struct{}
}

// newPause returns a terminal's pause; close releases it.
func newPause(stop <-chan struct{}) *pause {
	p := &pause{stop: stop}
	if s, err := latency.NewSleeper(); err == nil {
		p.s = s
		p.done = make(chan struct{})
		go func() {
			select {
			case <-stop:
			case <-p.done:
			}
			s.Close()
		}()
	}
	return p
}

func (p *pause) close() {
	if p.done != nil {
		close(p.done)
	}
}

// until sleeps until t; it reports whether to go on (false: the run stops).
func (p *pause) until(t time.Time) bool {
	select {
	case <-p.stop:
		return false
	default:
	}
	if p.s != nil {
		return p.s.Until(t)
	}
	d := time.Until(t)
	if d <= 0 {
		return true
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-p.stop:
		return false
	}
}

// terminal runs one terminal until the run stops. In an open-loop run it takes the next
// arrival of the schedule, waits for its intended start, skips it if it is already later
// than the latency limit, and runs it; in a closed-loop run it runs its next transaction
// when the last one has ended and its think and keying times have passed.
func (d *driver) terminal(id int, term workload.Terminal, p *pause) {
	// ready is when a closed-loop terminal's next cycle begins: the end of its last
	// transaction plus the think time that followed it, as scheduled.
	ready := time.Now()
	for {
		select {
		case <-d.stop:
			return
		default:
		}
		var (
			txType   int
			intended time.Time
			think    time.Duration
			counted  bool // an arrival of the window, counted as started
		)
		if d.sched != nil {
			due := d.sched.take()
			if !p.until(due) {
				return
			}
			if lim := d.cfg.LatencyLimit; lim > 0 && time.Since(due) > lim {
				if d.inWindow(due) {
					d.skipped.Add(1)
				}
				continue
			}
			if counted = d.inWindow(due); counted {
				d.started.Add(1)
			}
			txType, _ = term.Next() // think times do not apply to arrivals
			intended = due
		} else {
			var ps workload.Pause
			txType, ps = term.Next()
			think = ps.Think
			if ps.Keying > 0 || ready.After(time.Now()) {
				// Under keying and think times the user submits at the end of the keying
				// time: the intended start, however late the terminal wakes.
				intended = ready.Add(ps.Keying)
				if !p.until(intended) {
					return
				}
			} else {
				intended = time.Now()
			}
		}
		var o outcome
		ok := !d.windowOver(time.Now())
		if ok {
			o, ok = d.run(id, term, txType, intended)
		}
		if !ok {
			if counted {
				d.started.Add(-1) // the window ended or the run stopped before it had a connection: not started
			}
			return
		}
		if o.class == engine.ClassConnection && o.failed && o.svc == 0 {
			// No connection could be had: back off before the next transaction.
			if !p.until(time.Now().Add(100 * time.Millisecond)) {
				return
			}
		}
		ready = time.Now().Add(think)
	}
}

// run checks out a connection, runs the transaction the terminal drew (again, up to
// MaxTries, after a retryable error) and records its outcome. ok is false when the run is
// stopping and the transaction was not run.
func (d *driver) run(id int, term workload.Terminal, txType int, intended time.Time) (o outcome, ok bool) {
	t0 := time.Now()
	var p pooled
	select {
	case p = <-d.pool:
	case <-d.stop:
		return o, false
	case <-d.ctx.Done():
		return o, false
	}
	if p.conn == nil { // a lost connection not yet replaced
		var err error
		if p, err = dialPooled(d.ctx, d.db); err != nil {
			d.pool <- pooled{}
			o = outcome{txType: txType, failed: true, class: engine.ClassConnection, inWindow: d.inWindow(time.Now())}
			d.rec.record(id, o)
			return o, true
		}
	}
	t1 := time.Now()
	var before latency.Counts
	if p.meter != nil {
		before = p.meter.Counts()
	}
	// The drivers watch a cancelable context for every statement: pgx registers and removes
	// a callback on it, go-sql-driver/mysql hands it to its watcher goroutine and back,
	// firebirdsql starts a goroutine per statement and joins it (a fifth of Firebird's
	// TPC-C client CPU). A transaction on a metered connection runs on a context never
	// canceled instead, and the run's cancellation (DrainTimeout after the window, or the
	// caller's) reaches it by closing its connection, which fails the statement in flight
	// at once, as the drivers' own cancellation does (pgx sets a past deadline, the MySQL
	// driver and firebirdsql's hard drop close the socket).
	ctx, unwatch := d.ctx, func() bool { return true }
	if c, ok := p.meter.(io.Closer); ok {
		ctx = d.quiet
		unwatch = context.AfterFunc(d.ctx, func() { _ = c.Close() })
	}
	var err error
	tries := 0
	for {
		tries++
		err = term.Run(ctx, p.conn)
		if err == nil || errors.Is(err, workload.ErrExpectedRollback) || tries >= d.cfg.Tries() || d.ctx.Err() != nil {
			break
		}
		if d.eng.Classify(err) != engine.ClassRetryable {
			break
		}
		if lim := d.cfg.LatencyLimit; lim > 0 && time.Since(intended) > lim {
			break // pgbench: no retry past the latency limit
		}
	}
	unwatch()
	t2 := time.Now()
	o = outcome{txType: txType, wait: t1.Sub(t0), svc: t2.Sub(t1), resp: t2.Sub(intended), lag: t1.Sub(intended),
		inWindow: d.inWindow(t2), retries: tries - 1, end: t2}
	if lim := d.cfg.LatencyLimit; lim > 0 {
		o.late = o.resp > lim
	}
	if p.meter != nil && (err == nil || errors.Is(err, workload.ErrExpectedRollback)) {
		w := p.meter.Counts().Sub(before)
		o.wire = &w
	}
	switch {
	case err == nil:
	case errors.Is(err, workload.ErrExpectedRollback):
		o.rollback = true
	case d.ctx.Err() != nil:
		// The run was stopped, or the transaction outlived the window by DrainTimeout and
		// was canceled: not an error of the engine's, and after the window.
		d.pool <- p
		return o, false
	default:
		o.failed = true
		o.class = d.eng.Classify(err)
		d.examples.add(o.class, err)
		if o.class == engine.ClassConnection {
			p.conn.Close()
			p = pooled{}
		}
	}
	d.pool <- p
	d.rec.record(id, o)
	return o, true
}

// openLoop adds an open-loop run's arrival figures to s: the arrivals due in the window of
// length elapsed, those skipped and those left unstarted, the achieved rate, and whether
// the run is an overload point (results.IsOverload).
func (d *driver) openLoop(s *results.Summary, elapsed time.Duration) {
	s.Offered = d.sched.count(d.start(), d.start().Add(elapsed))
	s.Skipped = d.skipped.Load()
	started := d.started.Load()
	s.Backlog = max(0, s.Offered-started-s.Skipped)
	if elapsed > 0 {
		s.AchievedRate = float64(started) / elapsed.Seconds()
	}
	s.Overload = results.IsOverload(s.Offered, s.Skipped, s.Backlog)
}
