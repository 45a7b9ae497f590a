package latency

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestCalibrateAccuracy checks end to end, with real sockets, that the link adds the RTT it
// was asked for, as a test that must pass on a busy CI machine: the tolerance at the median
// is 800 µs, loose enough for a machine running other tests, tight enough to fail a wrong
// unit and the ~1 ms rounding of Go timers (a 0.1 ms RTT made of two time.Sleep(50µs) comes
// out near 2.1 ms). The link's accuracy itself is measured by BenchmarkAccuracy. A busy
// neighbour can spoil one run, so each RTT gets three attempts; a systematic error fails
// all three. Timing under the race detector says nothing about the link: skipped there.
func TestCalibrateAccuracy(t *testing.T) {
	if raceEnabled {
		t.Skip("timing is meaningless under the race detector")
	}
	for _, c := range []struct {
		rtt     time.Duration
		samples int
	}{
		{100 * time.Microsecond, 400},
		{5 * time.Millisecond, 60},
	} {
		tol := 800 * time.Microsecond
		var errs []time.Duration
		for range 3 {
			cal, err := Calibrate(context.Background(), Config{RTT: c.rtt}, CalibrateOptions{Samples: c.samples})
			if err != nil {
				t.Fatal(err)
			}
			t.Log(cal)
			if cal.Linked.N != c.samples || cal.Requested != c.rtt {
				t.Fatalf("calibration %+v", cal)
			}
			errs = append(errs, cal.Error.P50)
			if e := cal.Error.P50; e <= tol && e >= -tol {
				break
			}
		}
		if e := errs[len(errs)-1]; e > tol || e < -tol {
			t.Errorf("rtt %v: error p50 %v in %d attempts, want within ±%v", c.rtt, errs, len(errs), tol)
		}
	}
}

// TestCalibrateJitter: with uniform jitter the median added RTT stays near the requested one
// and the spread shows up. Three attempts, and a loose median, as in TestCalibrateAccuracy.
func TestCalibrateJitter(t *testing.T) {
	if raceEnabled {
		t.Skip("timing is meaningless under the race detector")
	}
	cfg := Config{RTT: 4 * time.Millisecond, Jitter: time.Millisecond, Seed: 1}
	var problem string
	for range 3 {
		cal, err := Calibrate(context.Background(), cfg, CalibrateOptions{Samples: 300, Conns: 2})
		if err != nil {
			t.Fatal(err)
		}
		t.Log(cal, "| added", cal.Added)
		// Two independent U(-1,1) ms jitters: the added RTT is triangular on 4±2 ms, so its
		// median is 4 ms, its 90th percentile 5.1 ms, and nothing can come below 2 ms (upper
		// quantiles are left loose: a busy neighbour only ever adds).
		switch e := cal.Added.P50 - cfg.AddedRTT(); {
		case e > 800*time.Microsecond || e < -200*time.Microsecond:
			problem = "median added " + cal.Added.P50.String() + ", want 4ms (-0.2, +0.8 ms)"
		case cal.Added.Min < 1950*time.Microsecond || cal.Added.P90 < 4800*time.Microsecond:
			problem = "added RTT spread " + cal.Added.String() + ", want a minimum near 2 ms and a p90 near 5.1 ms"
		default:
			return
		}
	}
	t.Error(problem)
}

func TestCalibrateOptions(t *testing.T) {
	o := CalibrateOptions{}.withDefaults()
	if o != (CalibrateOptions{Conns: 1, Samples: 1000, Size: 1, Warmup: 10, MaxRate: 10_000}) {
		t.Errorf("defaults %+v", o)
	}
	for _, c := range []struct {
		conns     int
		rtt, want time.Duration
	}{{1, 0, 100 * time.Microsecond}, {1, time.Millisecond, time.Millisecond}, {32, 100 * time.Microsecond, 3200 * time.Microsecond},
		{32, 10 * time.Millisecond, 10 * time.Millisecond}} {
		if got := (CalibrateOptions{Conns: c.conns}).Interval(c.rtt); got != c.want {
			t.Errorf("%d conns at %v: interval %v, want %v", c.conns, c.rtt, got, c.want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Calibrate(ctx, Config{}, CalibrateOptions{}); err == nil {
		t.Error("cancelled calibration succeeded")
	}
	cal, err := Calibrate(context.Background(), Config{}, CalibrateOptions{Samples: 50, Size: 300, Conns: 3})
	if err != nil {
		t.Fatal(err)
	}
	if cal.Linked.N != 51 || !strings.Contains(cal.String(), "conns 3") {
		t.Errorf("%d samples, %s", cal.Linked.N, cal)
	}
}
