package latency

import (
	"sync"
	"time"
)

// Sleeper sleeps until given instants with the precision of the link's own timers: on Linux
// a timerfd in the Go netpoller, which wakes the goroutine within tens of microseconds,
// where Go's timers round a sleep below 1 ms up to about 1 ms when the process is otherwise
// idle (golang/go#53824). It never busy-waits. Package runner paces open-loop arrivals and
// think times with it, so that a schedule is kept to well under a millisecond.
//
// A Sleeper is for one goroutine's waits; Close may be called by any goroutine, any number
// of times, and ends a wait in progress.
type Sleeper struct {
	clk clock
	t   timer
}

var (
	sleepClockOnce sync.Once
	sleepClock     clock
	sleepClockErr  error
)

// NewSleeper returns a Sleeper holding one timer (a file descriptor on Linux) until Close.
func NewSleeper() (*Sleeper, error) {
	sleepClockOnce.Do(func() { sleepClock, sleepClockErr = newRealClock(true) })
	if sleepClockErr != nil {
		return nil, sleepClockErr
	}
	t, err := sleepClock.newTimer()
	if err != nil {
		return nil, err
	}
	return &Sleeper{clk: sleepClock, t: t}, nil
}

// Until blocks until the monotonic clock reaches t (at once when t has passed) and reports
// true, or false when the Sleeper was closed first.
func (s *Sleeper) Until(t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return true
	}
	return s.t.wait(s.clk.now()+int64(d), false) == nil
}

// Close releases the timer and ends a wait in progress, which returns false.
func (s *Sleeper) Close() { s.t.close() }
