package execution

import (
	"context"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
	"github.com/dblat/dblat/internal/latency"
	"github.com/dblat/dblat/internal/spec"
	"github.com/dblat/dblat/internal/stats"
)

// BenchmarkSignalsCost is issue 41's cost target: TPC-C on the shared test PostgreSQL (2
// warehouses, 4 terminals, 3 s warm-up, 8 s windows), runs with the host's, dblat's and
// the server's signals sampled beside them and runs without (Core.NoSignals), alternating
// for five rounds, at RTT 0 (target: CPU per transaction with signals ≤ 1.02 × without)
// and at 5 ms through the link: dblat's CPU per transaction (its process's, over the
// window, the sampler's goroutines included) and TPS, the median of each, and their
// ratios. Sampling costs a few milliseconds of CPU a second, mostly the wake-ups of an
// otherwise idle Go process: nothing beside a busy client's, a visible share of an idle
// one's. Run it alone: the figures are CPU times on a machine nothing else should use.
//
//	go test ./internal/execution -run '^$' -bench SignalsCost -benchtime 1x -v
func BenchmarkSignalsCost(b *testing.B) {
	dsn := pgtest.NewDatabase(b)
	c := benchCore(b)
	ctx := context.Background()
	if err := c.Load(ctx, dsn, LoadSpec{Workload: "tpcc", Scale: 2, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	run := func(signals bool, rtt time.Duration) (cpu, tps float64) {
		c.NoSignals = !signals
		r, err := c.Run(ctx, nil, spec.Run{Target: dsn, Link: &latency.Config{RTT: rtt, DelayConnect: true}, Params: spec.Params{Workload: "tpcc", RTT: rtt,
			Drive: spec.Drive{Terminals: 4, Duration: 8 * time.Second, Warmup: 3 * time.Second, Seed: 1, MaxTries: 1}}})
		if err != nil {
			b.Fatal(err)
		}
		if signals && len(r.Signals) == 0 {
			b.Fatal("a run with signals recorded none")
		}
		return cpuPerTx(r), r.Summary.TPS
	}
	for b.Loop() {
		for _, rtt := range []time.Duration{0, 5 * time.Millisecond} {
			var on, off, onTPS, offTPS []float64
			for round := range 5 {
				for _, with := range []bool{round%2 == 0, round%2 == 1} {
					cpu, tps := run(with, rtt)
					if with {
						on, onTPS = append(on, cpu), append(onTPS, tps)
					} else {
						off, offTPS = append(off, cpu), append(offTPS, tps)
					}
					b.Logf("RTT %v, round %d, signals %-5v: %.1f µs CPU per transaction, %.0f TPS", rtt, round+1, with, cpu, tps)
				}
			}
			ratio := stats.Median(on) / stats.Median(off)
			b.Logf("RTT %v, medians of 5 runs each:\n"+
				"  client CPU per transaction: with signals %.1f µs, without %.1f µs: %.3f×%s\n"+
				"  TPS: with signals %.0f, without %.0f: %.3f×",
				rtt, stats.Median(on), stats.Median(off), ratio, map[bool]string{true: " (target ≤ 1.02)"}[rtt == 0], stats.Median(onTPS), stats.Median(offTPS), stats.Median(onTPS)/stats.Median(offTPS))
			if rtt == 0 {
				b.ReportMetric(ratio, "cpu-ratio")
			} else {
				b.ReportMetric(ratio, "cpu-ratio-5ms")
			}
		}
	}
}
