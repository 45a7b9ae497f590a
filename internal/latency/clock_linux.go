//go:build linux

package latency

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// preciseClock sleeps on a timerfd (CLOCK_MONOTONIC, absolute expiry) registered in the Go
// netpoller, so a waiting goroutine parks like one blocked on a socket and is woken at
// hrtimer precision instead of epoll_wait's millisecond timeout; precise waits add a short
// busy-wait tail (see spinner). Its now() is the Go runtime's monotonic clock (vDSO
// CLOCK_MONOTONIC), offset to the kernel's scale for timerfd_settime.
type preciseClock struct {
	epoch    time.Time
	monoBase int64 // CLOCK_MONOTONIC at epoch, ns
	spin     *spinner
	noSpin   bool
	// spun is the time this clock's timers spent busy-waiting, ns.
	spun atomic.Int64
}

func newPreciseClock(noSpin bool) (*preciseClock, error) {
	c := &preciseClock{epoch: time.Now(), spin: sharedSpinner(), noSpin: noSpin}
	// The offset between the two readings of the same clock is found by bracketing a
	// clock_gettime syscall between two vDSO readings; the tightest of 8 brackets bounds the
	// error by half its width (~0.1 µs).
	best := int64(1 << 62)
	for range 8 {
		var ts unix.Timespec
		t0 := c.now()
		if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
			return nil, err
		}
		t1 := c.now()
		if t1-t0 < best {
			best = t1 - t0
			c.monoBase = ts.Nano() - (t0+t1)/2
		}
	}
	return c, nil
}

var (
	spinnerOnce sync.Once
	theSpinner  *spinner
)

// sharedSpinner is process-wide: the spin budget is about CPUs, not about links.
func sharedSpinner() *spinner {
	spinnerOnce.Do(func() { theSpinner = newSpinner(procStatIdle) })
	return theSpinner
}

// procStatIdle reads the machine's cumulative idle (idle + iowait) and total CPU time, in
// USER_HZ ticks, from the first line of /proc/stat.
func procStatIdle() (idle, total uint64, ok bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 6 || f[0] != "cpu" {
		return 0, 0, false
	}
	for i, v := range f[1:] {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return 0, 0, false
		}
		if i < 8 { // user nice system idle iowait irq softirq steal; guest time is in user
			total += n
		}
		if i == 3 || i == 4 {
			idle += n
		}
	}
	return idle, total, true
}

func (c *preciseClock) now() int64 { return int64(time.Since(c.epoch)) }

// fromWall converts a CLOCK_REALTIME instant. The wall−monotonic offset is read from one
// time.Now (both readings come from the same vDSO call pair), so the conversion is exact
// unless the wall clock is stepped between the kernel's stamp and now.
func (c *preciseClock) fromWall(ns int64) (int64, bool) {
	t := time.Now()
	mono := int64(t.Sub(c.epoch))
	return ns - (t.UnixNano() - mono), true
}

// newTimerfd creates a CLOCK_MONOTONIC timerfd registered with the netpoller.
func newTimerfd() (*os.File, syscall.RawConn, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil, nil, os.NewSyscallError("timerfd_create", err)
	}
	// A non-blocking fd given to os.NewFile is registered with the netpoller, so Read parks
	// the goroutine instead of blocking a thread.
	f := os.NewFile(uintptr(fd), "timerfd")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, rc, nil
}

// settime arms the timerfd fd to fire at spec (absolute CLOCK_MONOTONIC), or disarms it
// (a zero spec). It is made with RawSyscall, as sysWrite and for its reasons: it never
// waits, and as a system call entered by a goroutine that just woke on an idle process it
// woke sysmon to poll every 20 µs again (see sysRead).
func settime(fd uintptr, spec *unix.ItimerSpec) error {
	_, _, e := unix.RawSyscall6(unix.SYS_TIMERFD_SETTIME, fd, unix.TFD_TIMER_ABSTIME, uintptr(unsafe.Pointer(spec)), 0, 0, 0)
	if e != 0 {
		return os.NewSyscallError("timerfd_settime", e)
	}
	return nil
}

// expiry waits for a timerfd to fire: its wait parks in the netpoller until the timer has
// fired. One goroutine uses it at a time.
//
// A wait with a deadline on the clock (timerfd.sleep) tells that the timer fired by the
// clock, not by reading the count: the read was two system calls per wait (one that found
// nothing before parking, one after), on every round trip of a delayed connection. The
// count then stays unread until the next timerfd_settime, which clears it, and edge-triggered
// epoll reports the next expiry all the same. The netpoller keeps an edge that comes after
// the wait began (RawConn.Read resets readiness before calling back, then parks only if the
// callback says not yet), so the clock is read after that reset and a timer that fires in
// between is not missed. Within clockSlack of the deadline the clock cannot tell whether
// the timer fired before that reset (its conversion to the kernel's scale is good to ~0.1
// µs), and a wake-up that the clock does not confirm may be a stale edge: both read the
// count to decide. A wait with no deadline (the releaser's, whose timer other goroutines
// re-arm) reads the count, with sysRead: the os.File's Read is a system call that woke
// sysmon on nearly every wake-up.
type expiry struct {
	buf   [8]byte
	errno syscall.Errno
	fn    func(fd uintptr) bool // read, bound once
	now   func() int64          // the clock, when waits have a deadline
	until int64                 // the deadline of the current wait, on now's scale
	woke  bool                  // the callback has already said not yet once in this wait
}

// clockSlack is how close to its deadline an expiry reads the timerfd's count rather than
// trust the clock: twenty times the error of the clock's offset to the kernel's.
const clockSlack = 2 * time.Microsecond

func newExpiry(now func() int64) *expiry {
	e := &expiry{now: now}
	e.fn = e.read
	return e
}

// read is the RawConn.Read callback: true when the timer has fired, false to wait for it.
func (e *expiry) read(fd uintptr) bool {
	if e.now != nil {
		left := e.until - e.now()
		if left <= 0 {
			return true
		}
		if !e.woke && left > int64(clockSlack) {
			e.woke = true
			return false
		}
	}
	_, errno := sysRead(fd, e.buf[:])
	for errno == syscall.EINTR { // os.File's Read retried it too
		_, errno = sysRead(fd, e.buf[:])
	}
	if errno == syscall.EAGAIN {
		return false
	}
	e.errno = errno
	return true
}

// wait parks until the timerfd behind rc has fired (for an expiry with a clock: until the
// clock reads until). It returns os.ErrDeadlineExceeded when rc's read deadline passed
// first, and another error when the timerfd was closed.
func (e *expiry) wait(rc syscall.RawConn, until int64) error {
	e.errno, e.until, e.woke = 0, until, false
	if err := rc.Read(e.fn); err != nil {
		return err
	}
	if e.errno != 0 {
		return os.NewSyscallError("read", e.errno)
	}
	return nil
}

func (c *preciseClock) newTimer() (timer, error) {
	f, rc, err := newTimerfd()
	if err != nil {
		return nil, err
	}
	t := &timerfd{c: c, f: f, rc: rc, exp: newExpiry(c.now)}
	t.setFn = t.set
	return t, nil
}

type timerfd struct {
	c     *preciseClock
	f     *os.File
	rc    syscall.RawConn
	spec  unix.ItimerSpec
	err   error
	setFn func(fd uintptr) // t.set, bound once so Control does not allocate a closure per call
	exp   *expiry
	once  sync.Once
}

func (t *timerfd) set(fd uintptr) {
	t.err = settime(fd, &t.spec)
}

// sleep parks on the timerfd until the clock reads t.
func (t *timerfd) sleep(until int64) error {
	t.spec.Value = unix.NsecToTimespec(until + t.c.monoBase)
	if err := t.rc.Control(t.setFn); err != nil {
		return errTimerClosed
	}
	if t.err != nil {
		return t.err
	}
	switch err := t.exp.wait(t.rc, until); {
	case err == nil:
		return nil
	case errors.Is(err, os.ErrDeadlineExceeded):
		return os.ErrDeadlineExceeded
	default:
		return errTimerClosed
	}
}

// setDeadline is the timerfd's read deadline: the netpoller ends a wait at it.
func (t *timerfd) setDeadline(d time.Time) error {
	if err := t.f.SetReadDeadline(d); err != nil {
		return errTimerClosed
	}
	return nil
}

func (t *timerfd) wait(until int64, precise bool) error {
	now := t.c.now()
	if until <= now {
		return nil
	}
	s := t.c.spin
	lead := s.lead()
	if precise && t.c.noSpin {
		// Without spinning: wake early by the predicted wake-up latency and return on
		// waking, early or late by the error of the prediction (see wakeEarly).
		if until-now <= lead/2 {
			return nil
		}
		armed := until - lead
		if armed <= now { // within the lead already: aim at half of it, as wakeEarly does
			armed = until - lead/2
		}
		if err := t.sleep(armed); err != nil {
			return err
		}
		s.observe(t.c.now() - armed)
		return nil
	}
	if !precise {
		return t.sleep(until)
	}
	if until-now > lead {
		armed := until - lead
		if err := t.sleep(armed); err != nil {
			return err
		}
		now = t.c.now()
		s.observe(now - armed)
		if now >= until {
			return nil
		}
	}
	if s.tryAcquire(now, until-now) {
		spinUntil(t.c.now, until)
		spun := t.c.now() - now
		s.release(spun)
		t.c.spun.Add(spun)
		return nil
	}
	return t.sleep(until)
}

func (t *timerfd) close() { t.once.Do(func() { t.f.Close() }) }

// newRealClock returns the clock the link uses: preciseClock on Linux.
func newRealClock(noSpin bool) (clock, error) { return newPreciseClock(noSpin) }

// timingCPU is the CPU its timers spent spinning, ns.
func (c *preciseClock) timingCPU() int64 { return c.spun.Load() }
