//go:build linux

package latency

import (
	"container/heap"
	"math"
	"os"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// preciseReleaser writes the message-completing chunks of every delay line of a link at
// their release time, from one goroutine that sleeps on its own timerfd and busy-waits the
// last microseconds (within the spinner's budget), then writes each due chunk with one
// non-blocking write.
//
// Why one goroutine: when each writer goroutine timed its own chunk, concurrent connections
// competed for the one spin slot of a 2-CPU machine, and those that lost slept on their
// timerfd alone and left as late as the VM takes to wake a halted vCPU: with 32 connections
// the in-band lateness was 33-74 µs at p50 and the added RTT 94-236 µs too long from 0.1 to
// 10 ms. One goroutine spins once for however many chunks fall due together, and the chunk
// leaves from the CPU that is awake, instead of being handed to a writer that must be woken.
// The writer goroutine waits meanwhile (it is woken late, which costs nothing) and writes
// whatever the socket did not take.
type preciseReleaser struct {
	clk *preciseClock
	f   *os.File // the timerfd
	rc  syscall.RawConn
	exp *expiry // reads the timerfd

	mu     sync.Mutex
	jobs   jobHeap
	armed  int64 // the timerfd's expiry on the clock's scale; math.MaxInt64 when disarmed
	spec   unix.ItimerSpec
	setFn  func(fd uintptr) // r.set, bound once so that arming does not allocate
	closed bool
	// earliest is jobs[0].release (math.MaxInt64 when empty), read without mu by the spin.
	earliest atomic.Int64
	exited   chan struct{}
	// busy is the time the loop spent between waking up and sleeping again, less its
	// writes, ns: the CPU its timing took (it never blocks in between), spinning included.
	busy atomic.Int64
}

// newReleaser starts a releaser on clk, or returns nil when clk is not a preciseClock.
func newReleaser(clk clock) (releaser, error) {
	pc, ok := clk.(*preciseClock)
	if !ok {
		return nil, nil
	}
	f, rc, err := newTimerfd()
	if err != nil {
		return nil, err
	}
	r := &preciseReleaser{clk: pc, f: f, rc: rc, exp: newExpiry(nil), armed: math.MaxInt64, exited: make(chan struct{})}
	r.earliest.Store(math.MaxInt64)
	r.setFn = r.set
	go r.loop()
	return r, nil
}

// arm sets the timerfd to expire at t (math.MaxInt64 disarms it). Called with mu held, so
// that the releaser and submitters agree on r.armed.
func (r *preciseReleaser) arm(t int64) {
	r.spec.Value = unix.Timespec{}
	if t != math.MaxInt64 {
		// An expiry already past fires at once: the wake-up latency loop observes is
		// measured from now, not from t.
		t = max(t, r.clk.now())
		r.spec.Value = unix.NsecToTimespec(max(t+r.clk.monoBase, 1))
	}
	r.armed = t
	_ = r.rc.Control(r.setFn)
}

func (r *preciseReleaser) set(fd uintptr) {
	_ = settime(fd, &r.spec)
}

// sleep parks until the timerfd expires (or is closed).
func (r *preciseReleaser) sleep() error { return r.exp.wait(r.rc, 0) }

// wakeEarly decides, without spinning, whether the job due at t leaves now: it does when t
// is within the predicted wake-up latency of now and the loop has just woken up for it (a
// timer armed that early fired), or within half of it otherwise; so do all jobs due by the
// cutoff it returns (at least half the predicted latency ahead: one wake-up for them all). Otherwise it arms the timerfd at t
// less the predicted latency (or less half of it, when that is already past) and reports
// false. A lone release is then early when the wake-up came sooner than predicted and late
// when it came later: its median error is the error of the prediction, at no CPU, where
// sleeping exactly to t makes every release late by the whole wake-up latency. Called with
// mu held.
func (r *preciseReleaser) wakeEarly(now, t int64, woken bool) (cutoff int64, ok bool) {
	predicted := r.clk.spin.lead()
	half := predicted / 2
	if t-now <= half || woken && t-now <= predicted {
		return now + max(t-now, half), true
	}
	a := t - predicted
	if a <= now {
		a = t - half
	}
	r.arm(a)
	return 0, false
}

// lead is how long before a release the loop wakes to spin (0 without spinning).
func (r *preciseReleaser) lead() int64 {
	if r.clk.noSpin {
		return 0
	}
	return r.clk.spin.lead()
}

func (r *preciseReleaser) submit(j *releaseJob) bool {
	lead := r.lead()
	if r.clk.noSpin {
		lead = r.clk.spin.lead() // wakeEarly's arming
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	heap.Push(&r.jobs, j)
	r.earliest.Store(r.jobs[0].release)
	if w := j.release - lead; w < r.armed {
		r.arm(w)
	}
	return true
}

func (r *preciseReleaser) cancel(j *releaseJob) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if j.index < 0 {
		return false
	}
	heap.Remove(&r.jobs, j.index)
	r.setEarliest()
	return true
}

func (r *preciseReleaser) setEarliest() {
	if len(r.jobs) == 0 {
		r.earliest.Store(math.MaxInt64)
	} else {
		r.earliest.Store(r.jobs[0].release)
	}
}

func (r *preciseReleaser) close() {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.closed = true
	r.mu.Unlock()
	r.f.Close() // wakes the loop's sleep
	<-r.exited
}

// loop sleeps until the earliest job is within the spin lead, spins to its release time,
// takes every job due by then and writes them.
func (r *preciseReleaser) loop() {
	defer close(r.exited)
	s, clk := r.clk.spin, r.clk
	var due []*releaseJob
	woke := clk.now()
	woken := false // without spinning: the last sleep ended on the timer just now
	for {
		r.mu.Lock()
		if r.closed {
			r.mu.Unlock()
			return
		}
		now := clk.now()
		lead := r.lead()
		var cutoff int64 // jobs due by then leave on this pass; every branch below sets it
		if len(r.jobs) > 0 && r.clk.noSpin {
			// Without spinning: wake early by the predicted wake-up latency and release on
			// waking (see wakeEarly).
			var ok bool
			if cutoff, ok = r.wakeEarly(now, r.jobs[0].release, woken); !ok {
				if !r.park(&woke, true) {
					return
				}
				woken = true
				continue
			}
			woken = false
		} else if len(r.jobs) == 0 || r.jobs[0].release-now > lead {
			if len(r.jobs) == 0 {
				r.arm(math.MaxInt64)
			} else {
				r.arm(r.jobs[0].release - lead)
			}
			if !r.park(&woke, lead > 0 || r.clk.noSpin) {
				return
			}
			woken = r.clk.noSpin // idle until a submit armed the timer for its job
			continue
		} else if t := r.jobs[0].release; t > now {
			// Within the lead: spin to t if the budget allows, else sleep exactly to t.
			if lead == 0 || !s.tryAcquire(now, t-now) {
				r.arm(t)
				if !r.park(&woke, false) {
					return
				}
				continue
			}
			r.mu.Unlock()
			start := now
			for now < min(t, r.earliest.Load()) { // a job submitted meanwhile may be due earlier
				now = clk.now()
			}
			s.release(now - start)
			r.mu.Lock()
			cutoff = clk.now()
		} else {
			cutoff = clk.now()
		}
		for len(r.jobs) > 0 && r.jobs[0].release <= cutoff {
			due = append(due, heap.Pop(&r.jobs).(*releaseJob))
		}
		r.setEarliest()
		r.mu.Unlock()
		// The writes are not timing: a direct client makes them too.
		r.busy.Add(clk.now() - woke)
		for i, j := range due {
			r.write(j)
			due[i] = nil
		}
		woke = clk.now()
		due = due[:0]
	}
}

// park releases mu, which the caller holds with the timerfd armed, and sleeps until the
// timerfd fires, adding the time since *woke to the busy time and setting *woke to the
// wake-up; with observe it feeds the wake-up's lateness to the spinner's estimate. It
// reports false when the releaser was closed.
func (r *preciseReleaser) park(woke *int64, observe bool) bool {
	r.mu.Unlock()
	r.busy.Add(r.clk.now() - *woke)
	if r.sleep() != nil {
		return false
	}
	*woke = r.clk.now()
	if observe {
		r.mu.Lock()
		if armed := r.armed; armed != math.MaxInt64 {
			if late := *woke - armed; late >= 0 {
				r.clk.spin.observe(late)
			}
		}
		r.mu.Unlock()
	}
	return true
}

// write makes the job's one non-blocking write and signals its owner (or calls its then).
func (r *preciseReleaser) write(j *releaseJob) {
	if j.lateness != nil {
		j.lateness.record(r.clk.now() - j.release)
	}
	j.n, j.err = 0, nil
	if err := j.raw.Write(j.writeFn); err != nil && j.err == nil {
		j.err = err
	}
	if j.then != nil {
		j.then()
		return
	}
	j.done <- struct{}{}
}

// newReleaseJob returns a job that writes to rc and records its lateness in h.
func newReleaseJob(rc syscall.RawConn, h *histogram) *releaseJob {
	j := &releaseJob{raw: rc, lateness: h, index: -1, done: make(chan struct{}, 1)}
	j.writeFn = j.writeOnce
	return j
}

// writeOnce is the RawConn.Write callback: one non-blocking write, never a wait.
func (j *releaseJob) writeOnce(fd uintptr) bool {
	n, errno := sysWrite(fd, j.buf)
	switch errno {
	case 0:
		j.n = n
	case unix.EAGAIN:
	default:
		j.err = errno
	}
	return true
}

// timingCPU is the releaser's busy time, ns.
func (r *preciseReleaser) timingCPU() int64 { return r.busy.Load() }
