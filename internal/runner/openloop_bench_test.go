package runner_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/runner"
	"github.com/dblat/dblat/internal/spec"
	"github.com/dblat/dblat/internal/workload"
	"github.com/dblat/dblat/internal/workload/simple"
)

// The figures of the open-loop issue, on select-only (pgbench -S's one primary-key SELECT)
// against a managed PostgreSQL on this machine. Run them one at a time:
//
//	go test ./internal/runner -run '^$' -bench 'OpenLoop' -benchtime 1x -timeout 30m

// selectOnly loads pgbench's tables at scale 1 into a fresh database and returns a target
// on it (and its DSN, for a second session).
func selectOnly(b *testing.B) (workload.Target, string) {
	b.Helper()
	dsn := pgtest.NewDatabase(b)
	tg := open(b, dsn)
	if err := simple.Load(context.Background(), tg, simple.LoadConfig{Workload: "select-only", Scale: 1}); err != nil {
		b.Fatal(err)
	}
	return tg, dsn
}

// runSelect runs select-only on tg with cfg and returns the result.
func runSelect(b *testing.B, tg workload.Target, cfg runner.Config) *runner.Result {
	b.Helper()
	w, err := simple.New(tg, simple.Config{Workload: "select-only", Seed: cfg.Seed})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	res, err := runner.Run(context.Background(), tg, w, cfg)
	if err != nil {
		b.Fatal(err)
	}
	return res
}

// lagP99 is the schedule lag's 99th percentile of a one-type run, in µs.
func lagP99(b *testing.B, res *runner.Result) int64 {
	h, err := results.DecodeHist(res.Tx[0].LagHist)
	if err != nil {
		b.Fatal(err)
	}
	return h.ValueAtQuantile(99)
}

// BenchmarkOpenLoopRate: select-only at 1,000 and 10,000 arrivals per second (constant and
// Poisson) for 20 s after 2 s of warm-up, on 32 terminals. Targets: the achieved rate
// within 1 % of the target, and the schedule lag's p99 at most 1 ms while unsaturated.
// Reported per rate and process: achieved/target, lag p99 and p50 in µs, response p99.
func BenchmarkOpenLoopRate(b *testing.B) {
	tg, _ := selectOnly(b)
	for b.Loop() {
		for _, rate := range []float64{1000, 10000} {
			for _, arrival := range spec.Arrivals {
				res := runSelect(b, tg, runner.Config{Drive: spec.Drive{Terminals: 32, Warmup: 2 * time.Second, Duration: 20 * time.Second, Rate: rate, Arrival: arrival, Seed: 1}})
				s, tx := res.Summary, res.Tx[0]
				h, err := results.DecodeHist(tx.LagHist)
				if err != nil {
					b.Fatal(err)
				}
				name := spec.FormatRate(rate) + "-" + arrival
				b.ReportMetric(s.AchievedRate/rate, name+"-achieved/target")
				b.ReportMetric(float64(s.Offered)/20/rate, name+"-offered/target")
				b.ReportMetric(float64(h.ValueAtQuantile(99)), name+"-lag-p99-us")
				b.ReportMetric(float64(h.ValueAtQuantile(50)), name+"-lag-p50-us")
				b.ReportMetric(float64(tx.RespP99Us), name+"-resp-p99-us")
				b.Logf("%s/s %s: offered %d, achieved %.1f/s (%.4f of target), skipped %d, backlog %d, overload %v; lag p50 %d µs p99 %d µs max %d µs; response p99 %d µs; service p99 %d µs; client CPU %.2f s",
					spec.FormatRate(rate), arrival, s.Offered, s.AchievedRate, s.AchievedRate/rate, s.Skipped, s.Backlog, s.Overload,
					h.ValueAtQuantile(50), h.ValueAtQuantile(99), h.Max(), tx.RespP99Us, tx.P99Us, res.CPUSeconds)
			}
		}
	}
}

// BenchmarkOpenLoopPacing is the schedule's own precision, without a server's variance:
// transactions that do nothing, at 1,000 and 10,000 arrivals per second on 32 terminals for
// 10 s. Reported: the achieved rate over the target and the schedule lag's p50 and p99 in
// µs, which here is only how late the terminals woke and picked their arrivals up.
func BenchmarkOpenLoopPacing(b *testing.B) {
	tg := open(b, pgtest.NewDatabase(b))
	for b.Loop() {
		for _, rate := range []float64{1000, 10000} {
			w := &probe{types: []workload.TxType{{Name: "noop"}}, next: func(int, int) int { return 0 }}
			res, err := runner.Run(context.Background(), tg, w, runner.Config{Drive: spec.Drive{Terminals: 32, Warmup: time.Second, Duration: 10 * time.Second, Rate: rate, Arrival: spec.ArrivalPoisson, Seed: 1}})
			if err != nil {
				b.Fatal(err)
			}
			h, err := results.DecodeHist(res.Tx[0].LagHist)
			if err != nil {
				b.Fatal(err)
			}
			name := spec.FormatRate(rate)
			b.ReportMetric(res.Summary.AchievedRate/rate, name+"-achieved/target")
			b.ReportMetric(float64(h.ValueAtQuantile(50)), name+"-lag-p50-us")
			b.ReportMetric(float64(h.ValueAtQuantile(99)), name+"-lag-p99-us")
			b.Logf("%s/s: achieved %.1f/s, lag p50 %d µs, p99 %d µs, p99.9 %d µs, max %d µs; client CPU %.2f s",
				name, res.Summary.AchievedRate, h.ValueAtQuantile(50), h.ValueAtQuantile(99), h.ValueAtQuantile(99.9), h.Max(), res.CPUSeconds)
		}
	}
}

// BenchmarkOpenLoopCoordinatedOmission stalls the server for 1 s (another session locks
// pgbench_accounts, the table select-only reads) 4 s into a 10 s window of select-only at
// 1,000 per second on 16 terminals, and then into a closed-loop run of the same terminals.
// Reported: each mode's response and service p99 and maximum, in ms. The open loop's
// response p99 reflects the stall (≥ 1 s for the arrivals it held up); its service p99 and
// the closed loop's figures need not.
func BenchmarkOpenLoopCoordinatedOmission(b *testing.B) {
	tg, dsn := selectOnly(b)
	locker := open(b, dsn).DB
	for b.Loop() {
		for _, rate := range []float64{1000, 0} {
			stalled := make(chan error, 1)
			time.AfterFunc(5*time.Second, func() { // 1 s warm-up + 4 s of window
				tx, err := locker.BeginTx(context.Background(), nil)
				if err == nil {
					_, err = tx.Exec("LOCK TABLE pgbench_accounts IN ACCESS EXCLUSIVE MODE")
					time.Sleep(time.Second)
					err = errors.Join(err, tx.Commit())
				}
				stalled <- err
			})
			res := runSelect(b, tg, runner.Config{Drive: spec.Drive{Terminals: 16, Warmup: time.Second, Duration: 10 * time.Second, Rate: rate}})
			if err := <-stalled; err != nil {
				b.Fatal(err)
			}
			tx := res.Tx[0]
			mode := "open"
			if rate == 0 {
				mode = "closed"
			}
			ms := func(us int64) float64 { return float64(us) / 1000 }
			b.ReportMetric(ms(tx.RespP99Us), mode+"-resp-p99-ms")
			b.ReportMetric(ms(tx.RespMaxUs), mode+"-resp-max-ms")
			b.ReportMetric(ms(tx.P99Us), mode+"-service-p99-ms")
			b.ReportMetric(ms(tx.MaxUs), mode+"-service-max-ms")
			b.Logf("%s loop: %d transactions; response p50 %.2f p99 %.1f max %.1f ms; service p50 %.2f p99 %.2f max %.1f ms; lag p99 %.1f ms",
				mode, tx.Committed, ms(tx.RespP50Us), ms(tx.RespP99Us), ms(tx.RespMaxUs), ms(tx.P50Us), ms(tx.P99Us), ms(tx.MaxUs), ms(lagP99(b, res)))
		}
	}
}

// BenchmarkOpenLoopOverload measures select-only's closed-loop capacity on 4 terminals,
// then offers twice that for 20 s, without a latency limit and with one of 100 ms.
// Targets: the run finishes on time, memory stays flat, skipped and unstarted arrivals are
// counted. Reported per limit: the run's wall time over warm-up + window, the heap's growth
// from the first to the last quarter of the window (MB), and the offered, skipped and
// unstarted arrivals.
func BenchmarkOpenLoopOverload(b *testing.B) {
	tg, _ := selectOnly(b)
	const terminals = 4
	const warmup, window = 2 * time.Second, 20 * time.Second
	for b.Loop() {
		capacity := runSelect(b, tg, runner.Config{Drive: spec.Drive{Terminals: terminals, Warmup: warmup, Duration: 5 * time.Second}}).Summary.TPS
		b.ReportMetric(capacity, "capacity-tps")
		for _, limit := range []time.Duration{0, 100 * time.Millisecond} {
			heap := &heapWatch{}
			stop := heap.start(warmup, window)
			began := time.Now()
			res := runSelect(b, tg, runner.Config{Drive: spec.Drive{Terminals: terminals, Warmup: warmup, Duration: window, Rate: 2 * capacity, LatencyLimit: limit}})
			took := time.Since(began)
			stop()
			s := res.Summary
			name := "no-limit"
			if limit > 0 {
				name = "limit-100ms"
			}
			growth := heap.growth()
			b.ReportMetric(took.Seconds()/(warmup+window).Seconds(), name+"-wall/planned")
			b.ReportMetric(growth/(1<<20), name+"-heap-growth-MB")
			b.ReportMetric(float64(s.Skipped), name+"-skipped")
			b.ReportMetric(float64(s.Backlog), name+"-unstarted")
			b.Logf("%s: offered %.0f/s (%d in the window), achieved %.0f/s; skipped %d, unstarted %d, late %d; overload %v; run took %v for %v planned; heap %.1f MB in the first quarter, %+.2f MB by the last; response p99 %d ms",
				name, 2*capacity, s.Offered, s.AchievedRate, s.Skipped, s.Backlog, s.Late, s.Overload, took.Round(time.Millisecond),
				warmup+window, heap.first/(1<<20), growth/(1<<20), res.Tx[0].RespP99Us/1000)
		}
	}
}

// heapWatch samples the live heap every 50 ms during a run's window and compares its first
// and last quarters.
type heapWatch struct {
	mu          sync.Mutex
	first, last float64 // the largest HeapAlloc of each quarter
}

func (h *heapWatch) start(warmup, window time.Duration) (stop func()) {
	done := make(chan struct{})
	began := time.Now()
	go func() {
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		var m runtime.MemStats
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			off := time.Since(began) - warmup
			if off < 0 || off > window {
				continue
			}
			runtime.ReadMemStats(&m)
			h.mu.Lock()
			switch {
			case off < window/4:
				h.first = max(h.first, float64(m.HeapAlloc))
			case off > window*3/4:
				h.last = max(h.last, float64(m.HeapAlloc))
			}
			h.mu.Unlock()
		}
	}()
	return func() { close(done) }
}

func (h *heapWatch) growth() float64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.last - h.first
}
