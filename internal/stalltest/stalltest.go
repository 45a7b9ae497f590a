// Package stalltest measures how long a test's process goes without a CPU, for tests whose
// bound on a duration must be what the machine gave them rather than one machine's figure.
package stalltest

import "time"

// Stalls is what Watch measured: how much later than every millisecond a ticking
// goroutine woke, at worst and in all.
type Stalls struct {
	Longest time.Duration
	Total   time.Duration
}

// Watch starts a goroutine that wakes every millisecond and keeps how late it woke; the
// returned function stops it and returns what it measured.
func Watch() func() Stalls {
	done := make(chan struct{})
	out := make(chan Stalls)
	go func() {
		var s Stalls
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		last := time.Now()
		add := func(late time.Duration) {
			if late > 0 {
				s.Longest = max(s.Longest, late)
				s.Total += late
			}
		}
		for {
			select {
			case now := <-tick.C:
				add(now.Sub(last) - time.Millisecond)
				last = now
			case <-done:
				add(time.Since(last) - time.Millisecond)
				out <- s
				return
			}
		}
	}()
	return func() Stalls {
		close(done)
		return <-out
	}
}
