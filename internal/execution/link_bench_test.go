package execution

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
	"github.com/dblat/dblat/internal/latency"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/spec"
	"github.com/dblat/dblat/internal/stats"
)

// The benchmarks in this file measure the latency link inside real runs, through the
// execution core, and print the figures the link is judged by next to their targets. They
// hold the CPUs out of deep idle states, as runs do by default (Core.HoldCPULatency).
//
//	go test ./internal/execution -run '^$' -bench Link -benchtime 1x

func usOf(d time.Duration) float64 { return float64(d) / 1e3 }

// cpuPerTx is the client CPU per completed transaction of a run, in µs.
func cpuPerTx(r *results.Run) float64 {
	done := r.Summary.Committed + r.Summary.Rollbacks
	if done == 0 {
		return 0
	}
	return r.Client.CPUSeconds / float64(done) * 1e6
}

// benchCore is newCore for benchmarks, holding the CPU latency as runs do.
func benchCore(b *testing.B) *Core {
	c, _ := newCore(b)
	c.HoldCPULatency = true
	return c
}

// BenchmarkLinkInRunTPCC: TPC-C on the managed PostgreSQL, 10 terminals on one warehouse,
// RTT 1 ms, 20 s windows, three runs: the link's in-run release lateness per direction
// (target p50 ≤ 15 µs, p99 ≤ 100 µs) and the run's calibration (target within ±25 µs of
// 1 ms).
func BenchmarkLinkInRunTPCC(b *testing.B) {
	dsn := pgtest.NewDatabase(b)
	c := benchCore(b)
	ctx := context.Background()
	if err := c.Load(ctx, dsn, LoadSpec{Workload: "tpcc", Scale: 1, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	var upP50, upP99, downP50, downP99, calErr, cpu, linkCPU []float64
	for b.Loop() {
		for range 3 {
			r, err := c.Run(ctx, nil, spec.Run{Params: spec.Params{Drive: spec.Drive{MaxTries: 1, Terminals: 10, Duration: 20 * time.Second, Warmup: 5 * time.Second, Seed: 1}, Workload: "tpcc", RTT: time.Millisecond}, Target: dsn, Link: &latency.Config{DelayConnect: true}})
			if err != nil {
				b.Fatal(err)
			}
			l := r.Link
			upP50, upP99 = append(upP50, usOf(l.LatenessUp.P50)), append(upP99, usOf(l.LatenessUp.P99))
			downP50, downP99 = append(downP50, usOf(l.LatenessDown.P50)), append(downP99, usOf(l.LatenessDown.P99))
			calErr = append(calErr, usOf(l.AchievedP50-l.RTT))
			cpu = append(cpu, cpuPerTx(r))
			if done := r.Summary.Committed + r.Summary.Rollbacks; done > 0 {
				linkCPU = append(linkCPU, l.CPUSeconds/float64(done)*1e6)
			}
			b.Logf("run %d: NOPM %.0f, lateness up p50 %.1f p99 %.1f µs, down p50 %.1f p99 %.1f µs, calibrated %+.1f µs, client CPU %.1f µs/tx (link %.1f)",
				r.ID, r.Summary.NOPM, usOf(l.LatenessUp.P50), usOf(l.LatenessUp.P99), usOf(l.LatenessDown.P50),
				usOf(l.LatenessDown.P99), usOf(l.AchievedP50-l.RTT), cpuPerTx(r), l.CPUSeconds/float64(max(1, r.Summary.Committed))*1e6)
		}
	}
	b.Logf("medians of 3 runs:\n"+
		"  in-run lateness up   p50 %6.1f µs (target ≤ 15)   p99 %7.1f µs (target ≤ 100)\n"+
		"  in-run lateness down p50 %6.1f µs (target ≤ 15)   p99 %7.1f µs (target ≤ 100)\n"+
		"  calibration error        %+6.1f µs (target within ±25)\n"+
		"  client CPU %.1f µs per transaction, of which the link's timing %.1f",
		stats.Median(upP50), stats.Median(upP99), stats.Median(downP50), stats.Median(downP99), stats.Median(calErr), stats.Median(cpu), stats.Median(linkCPU))
	b.ReportMetric(stats.Median(upP50), "late-up-p50-us")
	b.ReportMetric(stats.Median(downP50), "late-down-p50-us")
	b.ReportMetric(stats.Median(upP99), "late-up-p99-us")
	b.ReportMetric(stats.Median(downP99), "late-down-p99-us")
}

// BenchmarkLinkCPU: select-only, 10 terminals, 8 s windows, three rounds alternating the
// paths direct, RTT 0 through the link, 0.1 ms, 1 ms and 10 ms: client CPU per transaction
// (target ≤ 2× direct through the link), the in-run lateness at the same time, and TPS at
// RTT 0 against direct (target ≥ 0.97). Direct and 1 ms run again with the runtime held to
// one P (1P): the ratio without the second thread the runtime wakes on every wake-up from
// idle, of which a delayed round trip has three (the releaser's, the answer's arrival, the
// answer's release) where a direct one has one.
//
// "direct paced" runs direct again, open-loop at the rate the round's 1 ms run reached
// (constant arrivals, the same 10 terminals): the same transactions per second, so the
// client goes idle between them as it does at 1 ms, and each arrival is a timed wake-up
// of the runner's schedule. Beside it the 1 ms run's ratio is the link's own cost; beside
// a saturated direct run it is also the cost of waking from idle, which any client pays
// when its server is far.
func BenchmarkLinkCPU(b *testing.B) {
	dsn := pgtest.NewDatabase(b)
	c := benchCore(b)
	ctx := context.Background()
	if err := c.Load(ctx, dsn, LoadSpec{Workload: "select-only", Scale: 1}); err != nil {
		b.Fatal(err)
	}
	type path struct {
		name string
		rtt  time.Duration
		link bool
		spin bool
		oneP bool // the runtime held to one P (see BenchmarkClientCPU's -1p figures)
	}
	paths := []path{{"direct", 0, false, false, false}, {"rtt 0", 0, true, false, false}, {"0.1 ms", 100 * time.Microsecond, true, false, false}, {"0.1 ms spin", 100 * time.Microsecond, true, true, false},
		{"1 ms", time.Millisecond, true, false, false}, {"1 ms spin", time.Millisecond, true, true, false}, {"10 ms", 10 * time.Millisecond, true, false, false}, {"10 ms spin", 10 * time.Millisecond, true, true, false},
		{"direct 1P", 0, false, false, true}, {"1 ms 1P", time.Millisecond, true, false, true}, {name: "direct paced"}}
	cpu, tps, late50, late99 := map[string][]float64{}, map[string][]float64{}, map[string][]float64{}, map[string][]float64{}
	for b.Loop() {
		for round := range 3 {
			for _, p := range paths {
				s := spec.Run{Params: spec.Params{Drive: spec.Drive{MaxTries: 1, Terminals: 10, Duration: 8 * time.Second, Warmup: 2 * time.Second, Seed: int64(round)}, Workload: "select-only"}, Target: dsn}
				if p.link {
					s.RTT, s.Link = p.rtt, &latency.Config{DelayConnect: true, Spin: p.spin}
				}
				if p.name == "direct paced" {
					s.Rate = tps["1 ms"][round]
				}
				procs := runtime.GOMAXPROCS(0)
				if p.oneP {
					runtime.GOMAXPROCS(1)
				}
				r, err := c.Run(ctx, nil, s)
				runtime.GOMAXPROCS(procs)
				if err != nil {
					b.Fatal(err)
				}
				cpu[p.name] = append(cpu[p.name], cpuPerTx(r))
				tps[p.name] = append(tps[p.name], r.Summary.TPS)
				if l := r.Link; l != nil && l.LatenessDown != nil {
					late50[p.name] = append(late50[p.name], usOf(l.LatenessUp.P50+l.LatenessDown.P50))
					late99[p.name] = append(late99[p.name], usOf(max(l.LatenessUp.P99, l.LatenessDown.P99)))
				}
			}
		}
	}
	var t strings.Builder
	fmt.Fprintf(&t, "%-12s %10s %14s %10s %22s %16s\n", "path", "TPS", "CPU µs/tx", "× direct", "lateness p50 up+down", "lateness p99")
	direct := stats.Median(cpu["direct"])
	for _, p := range paths {
		l50, l99 := "–", "–"
		if v := late50[p.name]; len(v) > 0 {
			l50, l99 = fmt.Sprintf("%.1f µs", stats.Median(v)), fmt.Sprintf("%.1f µs", stats.Median(late99[p.name]))
		}
		fmt.Fprintf(&t, "%-12s %10.0f %14.1f %10.2f %22s %16s\n", p.name, stats.Median(tps[p.name]), stats.Median(cpu[p.name]),
			stats.Median(cpu[p.name])/direct, l50, l99)
	}
	fmt.Fprintf(&t, "TPS at RTT 0 through the link: %.3f of direct (target ≥ 0.97); CPU through the link: target ≤ 2× direct",
		stats.Median(tps["rtt 0"])/stats.Median(tps["direct"]))
	b.Logf("select-only, 10 terminals, medians of 3 rounds:\n%s", t.String())
	b.ReportMetric(stats.Median(tps["rtt 0"])/stats.Median(tps["direct"]), "rtt0/direct")
	b.ReportMetric(stats.Median(cpu["1 ms"])/direct, "cpu-1ms/direct")
	b.ReportMetric(stats.Median(cpu["1 ms 1P"])/stats.Median(cpu["direct 1P"]), "cpu-1ms/direct-1P")
	b.ReportMetric(stats.Median(cpu["1 ms"])/stats.Median(cpu["direct paced"]), "cpu-1ms/direct-paced")
}

// rssKB reads a field of /proc/self/status in kB ("VmRSS", "VmHWM").
func rssKB(field string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// rssObserver records the process's resident memory when the window starts and ends.
type rssObserver struct {
	NopObserver
	atStart int64
}

func (o *rssObserver) RunStarted(*results.Run) { o.atStart = rssKB("VmRSS") }

// BenchmarkLinkManyTerminals: select-only with 2000 terminals at RTT 200 ms on a managed
// PostgreSQL with max_connections 2100, 20 s window: throughput against the bound
// N / (r + s), s measured at RTT 0 with 10 terminals (target ≥ 0.98), client CPU per
// transaction (target ≤ 25 µs) and resident memory per connection (target ≤ 100 KB).
func BenchmarkLinkManyTerminals(b *testing.B) {
	pgtest.Server(b)
	c := benchCore(b)
	ctx := context.Background()
	if _, err := c.StartServer(ctx, "postgres", "many", 0, map[string]string{"max_connections": "2100",
		"shared_buffers": "256MB"}); err != nil {
		b.Fatal(err)
	}
	if err := c.Load(ctx, "many", LoadSpec{Workload: "select-only", Scale: 1}); err != nil {
		b.Fatal(err)
	}
	const terminals, rtt = 2000, 200 * time.Millisecond
	for b.Loop() {
		base, err := c.Run(ctx, nil, spec.Run{Params: spec.Params{Drive: spec.Drive{MaxTries: 1, Terminals: 10, Duration: 5 * time.Second, Warmup: time.Second}, Workload: "select-only"}, Target: "many"})
		if err != nil {
			b.Fatal(err)
		}
		s := time.Duration(float64(time.Second) * 10 / base.Summary.TPS) // mean service time at 10 terminals
		obs := &rssObserver{}
		c.Observer = obs
		before := rssKB("VmRSS")
		r, err := c.Run(ctx, nil, spec.Run{Params: spec.Params{Drive: spec.Drive{MaxTries: 1, Terminals: terminals, Duration: 20 * time.Second, Warmup: 10 * time.Second}, Workload: "select-only", RTT: rtt}, Target: "many", Link: &latency.Config{DelayConnect: true}})
		c.Observer = nil
		if err != nil {
			b.Fatal(err)
		}
		bound := float64(terminals) / (rtt + s).Seconds()
		perConn := float64(rssKB("VmHWM")-before) / terminals
		b.Logf("2000 terminals at 200 ms: %.0f TPS against a bound of %.0f (s = %v at RTT 0): %.3f of it (target ≥ 0.98); "+
			"client CPU %.1f µs per transaction (target ≤ 25); resident memory %.0f KB per connection (target ≤ 100; %d MB before the pool, %d MB at the window's start); lateness p50 up %.0f down %.0f µs",
			r.Summary.TPS, bound, s.Round(time.Microsecond), r.Summary.TPS/bound, cpuPerTx(r), perConn, before/1024, obs.atStart/1024,
			usOf(r.Link.LatenessUp.P50), usOf(r.Link.LatenessDown.P50))
		b.ReportMetric(r.Summary.TPS/bound, "of-bound")
		b.ReportMetric(cpuPerTx(r), "cpu-us/tx")
		b.ReportMetric(perConn, "KB/conn")
	}
}
