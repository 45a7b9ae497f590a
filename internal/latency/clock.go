package latency

import (
	"errors"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// A clock gives the delay line its notion of "now" and a way to sleep until an instant.
// Times are nanoseconds on a monotonic scale private to the clock. Isolating it lets the
// delay-line, jitter and bandwidth logic run under testing/synctest with goClock, while the
// real link uses preciseClock.
type clock interface {
	// now returns the current time.
	now() int64
	// newTimer returns a timer for one goroutine's exclusive use.
	newTimer() (timer, error)
	// fromWall converts a CLOCK_REALTIME instant in ns (a kernel receive timestamp) to the
	// clock's scale; ok is false when the clock cannot (goClock under synctest).
	fromWall(ns int64) (t int64, ok bool)
}

// A timer sleeps until an instant. wait must only be called by the goroutine that owns the
// timer; close may be called by any goroutine, any number of times, and makes a blocked or
// later wait return errTimerClosed.
type timer interface {
	// wait blocks until the clock reads at least t. precise asks for the best accuracy the
	// clock can give (it may spend CPU on it); without it waking a little late is fine. A
	// wait past the timer's deadline returns os.ErrDeadlineExceeded.
	wait(t int64, precise bool) error
	// setDeadline bounds waits by the wall-clock instant d (zero: no bound), including one
	// in progress, as a net.Conn's read deadline bounds its Read. Any goroutine may call it.
	setDeadline(d time.Time) error
	close()
}

var errTimerClosed = errors.New("latency: timer closed")

// goClock uses the Go runtime's clock and timers. Under testing/synctest its time is the
// bubble's fake time, which makes delay-line tests exact and instant. Outside a bubble its
// sleeps are rounded up to about 1 ms below 1 ms (golang/go#53824), so the real link does
// not use it.
type goClock struct{ epoch time.Time }

func newGoClock() *goClock { return &goClock{epoch: time.Now()} }

func (c *goClock) now() int64 { return int64(time.Since(c.epoch)) }

func (c *goClock) fromWall(int64) (int64, bool) { return 0, false }

func (c *goClock) newTimer() (timer, error) {
	t := &goTimer{c: c, t: time.NewTimer(time.Hour), done: make(chan struct{}), dlChanged: make(chan struct{}, 1)}
	return t, nil
}

type goTimer struct {
	c    *goClock
	t    *time.Timer
	done chan struct{}
	once sync.Once

	mu        sync.Mutex
	deadline  time.Time
	dlChanged chan struct{}
}

func (t *goTimer) setDeadline(d time.Time) error {
	t.mu.Lock()
	t.deadline = d
	t.mu.Unlock()
	select {
	case t.dlChanged <- struct{}{}:
	default:
	}
	return nil
}

func (t *goTimer) wait(until int64, _ bool) error {
	for {
		d := until - t.c.now()
		if d <= 0 {
			return nil
		}
		t.mu.Lock()
		dl := t.deadline
		t.mu.Unlock()
		if !dl.IsZero() {
			left := time.Until(dl)
			if left <= 0 {
				return os.ErrDeadlineExceeded
			}
			d = min(d, int64(left))
		}
		t.t.Reset(time.Duration(d))
		select {
		case <-t.t.C:
		case <-t.dlChanged:
			t.t.Stop()
		case <-t.done:
			t.t.Stop()
			return errTimerClosed
		}
	}
}

func (t *goTimer) close() { t.once.Do(func() { close(t.done) }) }

// spinner shares the busy-wait budget of preciseClock between all its timers.
//
// Why spin at all: a goroutine woken by a timerfd through the netpoller is late by the time
// the kernel needs to wake an idle CPU. On the 2-vCPU Firecracker VM this package was tuned
// on that is 30-85 µs at p50 and up to 0.5 ms at p99 for a lone waiter (longer sleeps let
// the vCPU halt deeper), see the Clock section of the package documentation. Arming the
// timerfd `lead` early and busy-waiting the rest brings the p50 error to ~0.1 µs.
//
// Budget: at most GOMAXPROCS−1 goroutines spin at once, so at least one P stays free to run
// the netpoller and other goroutines (a spinner does not yield: yielding would put it on the
// global run queue ahead of netpoll, which then only runs when both queues are empty). With
// GOMAXPROCS=1 nothing spins. Spinning also draws on a bucket of CPU time refilled at
// `share` CPUs, where share follows the machine's idle CPU time (three quarters of it,
// counting this process's own spinning as idle, between minShare and the CPU count; read
// from /proc/stat every sampleEvery). So the spin uses CPU that would otherwise halt, and
// gives way when the database server or anything else needs the CPUs: a busy CPU does not
// halt, so the timerfd alone is then on time anyway. The lead adapts to the observed wake-up
// latency (see lead).
//
// Measured (BenchmarkAccuracy, 1 connection, 0.1 ms RTT): with a fixed budget of a quarter
// CPU the bucket runs dry (two 50 µs waits per 0.15 ms round trip need 0.67 CPU) and the
// p50 error was +66 µs; with a whole CPU +5 µs; without spinning +59 µs.
type spinner struct {
	slots   atomic.Int32 // free spin slots
	latency atomic.Int64 // running estimate of the median timerfd wake-up latency, ns
	spun    atomic.Int64 // total time spent spinning, ns

	mu     sync.Mutex
	tokens int64   // spin time available, ns
	last   int64   // time of the last refill, on the callers' clock
	share  float64 // refill rate, in CPUs

	// sample reads the machine's cumulative idle and total CPU time (any unit); nil keeps
	// share fixed. The fields after it belong to resample.
	sample    func() (idle, total uint64, ok bool)
	ncpu      float64
	sampling  atomic.Bool
	sampledAt time.Time
	idle0     uint64
	total0    uint64
	spun0     int64
}

const (
	// Bounds of the spin lead. 10 µs is above the wake-up latency of an otherwise busy CPU
	// (the netpoller is polled by a running scheduler), 250 µs is above the p90 wake-up
	// latency of an idle vCPU measured here (~150 µs after a 10 ms sleep) and caps the CPU a
	// spin can cost per precise wait.
	minLead = 10 * time.Microsecond
	maxLead = 250 * time.Microsecond
	// initialLatency seeds the estimate with the median measured on the 2-vCPU VM this
	// package was tuned on, with the CPUs held out of deep idle states (31 µs).
	initialLatency = 30 * time.Microsecond
	// latencyStep is the step of the streaming median: each sample above the estimate
	// raises it by one step, each one below lowers it by one step. 1 µs steps track a
	// change of 100 µs within ~100-200 waits.
	latencyStep = int64(time.Microsecond)

	// initialShare is the refill rate until the first idle sample, and the fixed one
	// where the idle time cannot be read: a quarter CPU.
	initialShare = 0.25
	// minShare keeps a twentieth of a CPU for spinning on a saturated machine, enough for
	// one connection at a 10 ms RTT (two ~0.1 ms spins per 10 ms = 2 %).
	minShare = 0.05
	// idleShare is the part of the idle CPU time spinning may take; the rest absorbs what
	// wakes up between two samples.
	idleShare = 0.75
	// sampleEvery: /proc/stat counts in 10 ms ticks, so 100 ms gives 10 ticks per CPU,
	// enough to tell idle from busy, and follows a change of load within a tenth of a second.
	sampleEvery = 100 * time.Millisecond
	// spinBurst is the bucket's depth: 10 ms lets a burst of ~100 precise waits through.
	spinBurst = int64(10 * time.Millisecond)
)

func newSpinner(sample func() (uint64, uint64, bool)) *spinner {
	s := &spinner{tokens: spinBurst, share: initialShare, sample: sample, ncpu: float64(runtime.NumCPU())}
	s.slots.Store(int32(max(0, runtime.GOMAXPROCS(0)-1)))
	s.latency.Store(int64(initialLatency))
	return s
}

// lead is how long before the deadline a precise waiter arms its timer: the median wake-up
// latency, within [minLead, maxLead]. Half the wake-ups then come early and spin the few
// microseconds left, half come late by the spread above the median. Aiming at the median
// rather than a high percentile keeps the spin short: on the VM this was tuned on, with the
// CPUs held out of deep idle states, the wake-up latency is 31 µs at p50, 41 at p90 and 60
// at p99 (a timer interrupt delivered to a virtual CPU), so a p90 lead spun ~15 µs per
// wait where the median spins ~4; without the hold the spread is too wide (p90 ~350 µs)
// for any lead to be both precise and cheap.
func (s *spinner) lead() int64 {
	return min(max(s.latency.Load(), int64(minLead)), int64(maxLead))
}

// observe feeds one timerfd wake-up latency (ns) into the estimate. Races between
// concurrent observers lose an update at worst.
func (s *spinner) observe(late int64) {
	est := s.latency.Load()
	if late > est {
		est += latencyStep
	} else {
		est -= latencyStep
	}
	s.latency.Store(min(max(est, 0), int64(2*maxLead)))
}

// tryAcquire takes a spin slot and d ns of spin budget at time now, if both are available;
// the caller then spins and calls release with the time it spun.
func (s *spinner) tryAcquire(now, d int64) bool {
	for {
		n := s.slots.Load()
		if n <= 0 {
			return false
		}
		if s.slots.CompareAndSwap(n, n-1) {
			break
		}
	}
	s.mu.Lock()
	if now > s.last {
		s.tokens = min(s.tokens+int64(float64(now-s.last)*s.share), spinBurst)
		s.last = now
	}
	ok := s.tokens >= d
	if ok {
		s.tokens -= d
	}
	stale := s.sample != nil && time.Since(s.sampledAt) >= sampleEvery
	s.mu.Unlock()
	if stale && s.sampling.CompareAndSwap(false, true) {
		go s.resample() // reading /proc/stat takes tens of µs: not on a waiter's time
	}
	if !ok {
		s.slots.Add(1)
	}
	return ok
}

// resample updates share from the machine's idle time since the previous sample.
func (s *spinner) resample() {
	defer s.sampling.Store(false)
	idle, total, ok := s.sample()
	now, spun := time.Now(), s.spun.Load()
	s.mu.Lock()
	defer s.mu.Unlock()
	if ok && s.total0 != 0 && total > s.total0 {
		idleCPUs := s.ncpu * float64(idle-s.idle0) / float64(total-s.total0)
		spinCPUs := float64(spun-s.spun0) / float64(now.Sub(s.sampledAt))
		s.share = min(max(idleShare*(idleCPUs+spinCPUs), minShare), s.ncpu)
	}
	s.sampledAt, s.idle0, s.total0, s.spun0 = now, idle, total, spun
}

// release returns the spin slot after spinning for spun ns.
func (s *spinner) release(spun int64) {
	s.spun.Add(spun)
	s.slots.Add(1)
}

// spinUntil busy-waits until now() >= t. It does not yield (see spinner).
func spinUntil(now func() int64, t int64) {
	for now() < t {
	}
}

// timerPool lends timers to goroutines that wait only now and then (in-process conns'
// reads), so that a link holds as many timers as waits are in progress rather than one per
// connection. Safe for concurrent use.
type timerPool struct {
	clk    clock
	mu     sync.Mutex
	free   []timer
	closed bool
}

// maxFreeTimers bounds the timers a pool keeps for reuse; more are closed when returned.
const maxFreeTimers = 256

// get returns a timer from the pool, or a new one.
func (p *timerPool) get() (timer, error) {
	p.mu.Lock()
	if n := len(p.free); n > 0 {
		t := p.free[n-1]
		p.free = p.free[:n-1]
		p.mu.Unlock()
		return t, nil
	}
	p.mu.Unlock()
	return p.clk.newTimer()
}

// put returns a timer got from the pool (its deadline cleared).
func (p *timerPool) put(t timer) {
	p.mu.Lock()
	if p.closed || len(p.free) >= maxFreeTimers {
		p.mu.Unlock()
		t.close()
		return
	}
	p.free = append(p.free, t)
	p.mu.Unlock()
}

// close closes the pooled timers; timers returned later are closed then.
func (p *timerPool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for _, t := range p.free {
		t.close()
	}
	p.free = nil
}
