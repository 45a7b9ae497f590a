package latency

import (
	"slices"
	"testing"
	"time"
)

// TestSleeper: Until never returns before its instant, returns at once for one that has
// passed, and Close ends a wait in progress and every later one.
func TestSleeper(t *testing.T) {
	s, err := NewSleeper()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []time.Duration{-time.Second, 0, 200 * time.Microsecond, 3 * time.Millisecond} {
		at := time.Now().Add(d)
		if !s.Until(at) {
			t.Fatalf("Until %v returned false on an open sleeper", d)
		}
		if late := time.Since(at); late < 0 {
			t.Errorf("Until %v returned %v early", d, -late)
		}
	}
	done := make(chan bool)
	go func() { done <- s.Until(time.Now().Add(time.Hour)) }()
	time.Sleep(20 * time.Millisecond)
	s.Close()
	select {
	case ok := <-done:
		if ok {
			t.Error("a wait ended by Close reported true")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end the wait")
	}
	if s.Until(time.Now().Add(time.Millisecond)) {
		t.Error("Until on a closed sleeper reported true")
	}
	s.Close() // twice is harmless
}

// BenchmarkSleeperLateness compares how late a Sleeper and time.Sleep wake for waits of
// 200 µs and 2 ms, the gaps between arrivals at 5,000 and 500 per second: the medians and
// 99th percentiles in µs. Go's timers round sub-millisecond sleeps up to about 1 ms when the
// process is otherwise idle (golang/go#53824); the Sleeper's timerfd does not.
//
//	go test ./internal/latency -run '^$' -bench SleeperLateness -benchtime 1x
func BenchmarkSleeperLateness(b *testing.B) {
	s, err := NewSleeper()
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	for b.Loop() {
		for _, d := range []time.Duration{200 * time.Microsecond, 2 * time.Millisecond} {
			for _, way := range []struct {
				name string
				wait func(time.Time)
			}{
				{"sleeper", func(t time.Time) { s.Until(t) }},
				{"time.Sleep", func(t time.Time) { time.Sleep(time.Until(t)) }},
			} {
				late := make([]time.Duration, 500)
				for i := range late {
					at := time.Now().Add(d)
					way.wait(at)
					late[i] = time.Since(at)
				}
				slices.Sort(late)
				name := way.name + "-" + d.String()
				b.ReportMetric(float64(late[len(late)/2].Microseconds()), name+"-p50-us")
				b.ReportMetric(float64(late[len(late)*99/100].Microseconds()), name+"-p99-us")
			}
		}
	}
}
