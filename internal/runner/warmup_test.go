package runner_test

import (
	"context"
	"database/sql"
	"sync"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/runner"
	"github.com/dblat/dblat/internal/spec"
	"github.com/dblat/dblat/internal/workload"
)

// ramp is a workload whose transactions take slow until ramp has passed since the first,
// then fast: a run whose throughput settles after ramp.
type ramp struct {
	once       sync.Once
	t0         time.Time
	ramp       time.Duration
	slow, fast time.Duration
}

func (r *ramp) Name() string                               { return "ramp" }
func (r *ramp) TxTypes() []workload.TxType                 { return []workload.TxType{{Name: "t"}} }
func (r *ramp) Prepare(context.Context, *sql.DB) error     { return nil }
func (r *ramp) NewTerminal(int) workload.Terminal          { return r }
func (r *ramp) Next() (int, workload.Pause)                { return 0, workload.Pause{} }
func (r *ramp) Run(ctx context.Context, _ *sql.Conn) error { return r.sleep(ctx) }

func (r *ramp) sleep(ctx context.Context) error {
	r.once.Do(func() { r.t0 = time.Now() })
	d := r.fast
	if time.Since(r.t0) < r.ramp {
		d = r.slow
	}
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TestAutoWarmupEndsWhenSteady: an automatic warm-up ends once throughput has settled —
// after a slow start of 3 s, twice that later at the earliest, and at its ceiling at the
// latest: a busy machine's noise can keep the series from settling, and where a machine
// is quiet it ends well before (the rule's own test, TestMSERTruncationPoint, has the
// figures) — and the samples it held back are stored with offsets from the window's real
// start.
func TestAutoWarmupEndsWhenSteady(t *testing.T) {
	tg := target(t)
	for _, tc := range []struct {
		ramp, min time.Duration
	}{
		{3 * time.Second, 6 * time.Second},
	} {
		// Sleeps long enough that a busy machine's late wake-ups (tenths of a millisecond)
		// are a small part of them: the throughput after the ramp is steady anywhere.
		w := &ramp{ramp: tc.ramp, slow: 20 * time.Millisecond, fast: 5 * time.Millisecond}
		var mu sync.Mutex
		var samples []results.Sample
		cfg := runner.Config{Drive: spec.Drive{Terminals: 2, Warmup: 30 * time.Second, WarmupAuto: true, Duration: 2 * time.Second},
			Hooks: runner.Hooks{Samples: func(s []results.Sample) {
				mu.Lock()
				samples = append(samples, s...)
				mu.Unlock()
			}}}
		res, err := runner.Run(context.Background(), tg, w, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if res.Warmup < tc.min || res.Warmup > cfg.Warmup {
			t.Errorf("slow start of %v: auto warm-up %v, want %v to its ceiling %v", tc.ramp, res.Warmup, tc.min, cfg.Warmup)
		}
		t.Logf("slow start of %v: auto warm-up %v (ceiling %v)", tc.ramp, res.Warmup, cfg.Warmup)
		var before, in int
		for _, s := range samples {
			switch {
			case s.Type != "":
			case s.Offset < 0:
				before++
			case s.Offset > 500*time.Millisecond:
				in++
			}
		}
		if want := int(res.Warmup / time.Second); before < want-1 || in < 2 {
			t.Errorf("samples: %d in the warm-up (want about %d), %d in the window", before, want, in)
		}
		if res.Summary.Elapsed < 2*time.Second || res.Summary.Committed == 0 {
			t.Errorf("window %v with %d commits", res.Summary.Elapsed, res.Summary.Committed)
		}
	}
	// A fixed warm-up is what it says.
	w := &ramp{fast: time.Millisecond, slow: time.Millisecond}
	res, err := runner.Run(context.Background(), tg, w, runner.Config{Drive: spec.Drive{Terminals: 1, Warmup: 300 * time.Millisecond, Duration: 300 * time.Millisecond}})
	if err != nil || res.Warmup != 300*time.Millisecond {
		t.Errorf("fixed warm-up: %v %v", res.Warmup, err)
	}
}
