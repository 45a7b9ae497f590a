package analysis_test

import (
	"os"
	"time"

	"github.com/dblat/dblat/internal/analysis"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/spec"
)

// Two pool sizes under a network-bound TPC-C-like load: 20 round trips per transaction and
// 5 ms of server time, X = N/(20·r + 5 ms), one run per cell, 2 s of warm-up.
func Example() {
	var runs []results.Run
	id := int64(0)
	for _, n := range []int{4, 16} {
		for _, rtt := range []time.Duration{0, time.Millisecond, 5 * time.Millisecond} {
			id++
			tps := float64(n) / (20*rtt.Seconds() + 0.005)
			runs = append(runs, results.Run{
				ID: id, Status: results.StatusFinished,
				Params:  results.Params{Drive: spec.Drive{Terminals: n, Duration: time.Minute, Warmup: 2 * time.Second}, Workload: "tpcb", RTT: rtt},
				Link:    &results.Link{Kind: "proxy", RTT: rtt, AchievedP50: rtt, Samples: 200},
				Server:  results.Server{Engine: "postgres", Version: "PostgreSQL 15.18"},
				Summary: results.Summary{Elapsed: time.Minute, Committed: int64(tps * 60), TPS: tps},
				Tx:      []results.TxSummary{{Type: "tpcb", Committed: int64(tps * 60), RoundTrips: 20}},
			})
		}
	}
	a := analysis.Analyze(runs, analysis.CheckOptions{Factors: []string{results.FactorRTT, results.FactorTerminals}})
	if err := analysis.WriteText(os.Stdout, a); err != nil {
		panic(err)
	}
	// Output:
	// Latency model (throughput in completed transactions per second)
	//   terminals=4: N = 4, R = 20.0 round trips (measured), s = 5ms, model network, max error 0 %
	//     rtt  achieved  runs  round trips  measured  predicted  error
	//     0    0         1     20.0         800.0     800.0      +0.0 %
	//     1ms  1ms       1     20.0         160.0     160.0      +0.0 %
	//     5ms  5ms       1     20.0         38.1      38.1       +0.0 %
	//     knee −10 %: between 0 and 1ms (levels too far apart to place it), 28µs model; knee −50 %: between 0 and 1ms (levels too far apart to place it), 250µs model
	//     N/(R·r + s) with R = 20.0 round trips (measured) and s = 5ms is within 0 % of every point: the network bounds throughput over the whole range
	//   terminals=16: N = 16, R = 20.0 round trips (measured), s = 5ms, model network, max error 0 %
	//     rtt  achieved  runs  round trips  measured  predicted  error
	//     0    0         1     20.0         3200.0    3200.0     +0.0 %
	//     1ms  1ms       1     20.0         640.0     640.0      +0.0 %
	//     5ms  5ms       1     20.0         152.4     152.4      +0.0 %
	//     knee −10 %: between 0 and 1ms (levels too far apart to place it), 28µs model; knee −50 %: between 0 and 1ms (levels too far apart to place it), 250µs model
	//     N/(R·r + s) with R = 20.0 round trips (measured) and s = 5ms is within 0 % of every point: the network bounds throughput over the whole range
	//
	// Pool sizing (TPS by terminals)
	//   rtt 0: best 16 (the largest size measured: more may help); smallest within 5 % of it: 16
	//     TPS by size: 4: 800.0, 16: 3200.0
	//     each step: 4→16 +200.0 per terminal (efficiency 1.00)
	//   rtt 1ms: best 16 (the largest size measured: more may help); smallest within 5 % of it: 16
	//     TPS by size: 4: 160.0, 16: 640.0
	//     each step: 4→16 +40.0 per terminal (efficiency 1.00)
	//   rtt 5ms: best 16 (the largest size measured: more may help); smallest within 5 % of it: 16
	//     TPS by size: 4: 38.1, 16: 152.4
	//     each step: 4→16 +9.5 per terminal (efficiency 1.00)
	//
	// Credibility: 0 errors, 2 warnings, 0 notes
	//   [warning] few-repeats: 6 cells have fewer than 5 finished repeats: their means have wide or no confidence intervals (seed 000 runs every configuration at least five times)
	//       evidence: rtt=0 terminals=4: 1 finished; rtt=0 terminals=16: 1 finished; rtt=1ms terminals=4: 1 finished; rtt=1ms terminals=16: 1 finished; rtt=5ms terminals=4: 1 finished; rtt=5ms terminals=16: 1 finished
	//       cells: rtt=0 terminals=4; rtt=0 terminals=16; rtt=1ms terminals=4; rtt=1ms terminals=16; rtt=5ms terminals=4; rtt=5ms terminals=16
	//       runs: 1, 2, 3, 4, 5, 6
	//       fix: run the study again: `dblat study run` resumes and adds the missing repeats (5 per cell)
	//   [warning] warmup: warm-up too short for the caches to fill and the statements to be prepared before the window starts: the first seconds of the window are not steady state
	//       evidence: warm-up 2s before a 1m0s window (at least 10s wanted) in 6 runs (1, 2, 3, 4, 5, 6)
	//       runs: 1, 2, 3, 4, 5, 6
	//       fix: lengthen the warm-up (at least 10s, and at least 10 % of the window, is a safe rule of thumb)
}
