//go:build !linux

package latency

// newRealClock returns the Go runtime clock: without timerfd, sub-millisecond delays are
// rounded up to about 1 ms (golang/go#53824). dblat's measurements are made on Linux.
func newRealClock(bool) (clock, error) { return newGoClock(), nil }
