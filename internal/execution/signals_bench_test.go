package execution

import (
	"context"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
	"github.com/dblat/dblat/internal/spec"
)

// BenchmarkSignalsCost is issue 41's cost target: TPC-C on the shared test PostgreSQL (2
// warehouses, 4 terminals, RTT 0, 3 s warm-up, 8 s windows), runs with the host's, dblat's
// and the server's signals sampled beside them and runs without (Core.NoSignals),
// alternating for five rounds: dblat's CPU per transaction (its process's, over the window,
// the sampler's goroutines included) and TPS, the median of each, and their ratios (target:
// CPU per transaction with signals ≤ 1.02 × without). Run it alone: the figures are CPU
// times on a machine nothing else should use.
//
//	go test ./internal/execution -run '^$' -bench SignalsCost -benchtime 1x -v
func BenchmarkSignalsCost(b *testing.B) {
	dsn := pgtest.NewDatabase(b)
	c := benchCore(b)
	ctx := context.Background()
	if err := c.Load(ctx, dsn, LoadSpec{Workload: "tpcc", Scale: 2, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	run := func(signals bool) (cpu, tps float64) {
		c.NoSignals = !signals
		r, err := c.Run(ctx, nil, spec.Run{Target: dsn, Params: spec.Params{Workload: "tpcc",
			Drive: spec.Drive{Terminals: 4, Duration: 8 * time.Second, Warmup: 3 * time.Second, Seed: 1, MaxTries: 1}}})
		if err != nil {
			b.Fatal(err)
		}
		if signals && len(r.Signals) == 0 {
			b.Fatal("a run with signals recorded none")
		}
		return cpuPerTx(r), r.Summary.TPS
	}
	var on, off, onTPS, offTPS []float64
	for b.Loop() {
		for round := range 5 {
			for _, with := range []bool{round%2 == 0, round%2 == 1} {
				cpu, tps := run(with)
				if with {
					on, onTPS = append(on, cpu), append(onTPS, tps)
				} else {
					off, offTPS = append(off, cpu), append(offTPS, tps)
				}
				b.Logf("round %d, signals %-5v: %.1f µs CPU per transaction, %.0f TPS", round+1, with, cpu, tps)
			}
		}
	}
	ratio := medianOf(on) / medianOf(off)
	b.Logf("medians of 5 runs each:\n"+
		"  client CPU per transaction: with signals %.1f µs, without %.1f µs: %.3f× (target ≤ 1.02)\n"+
		"  TPS: with signals %.0f, without %.0f: %.3f×",
		medianOf(on), medianOf(off), ratio, medianOf(onTPS), medianOf(offTPS), medianOf(onTPS)/medianOf(offTPS))
	b.ReportMetric(ratio, "cpu-ratio")
	b.ReportMetric(medianOf(on), "cpu-us/tx-signals")
	b.ReportMetric(medianOf(off), "cpu-us/tx-without")
}
