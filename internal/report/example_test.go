package report_test

import (
	"fmt"
	"os"
	"time"

	"github.com/dblat/dblat/internal/report"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/spec"
)

// Two RTTs, two repeats each, and a failed run that enters no mean: with n = 2 the 95 %
// interval is mean ± 12.706 × sd / √2.
func ExampleBuild() {
	run := func(id int64, rtt time.Duration, nopm float64, status results.Status) results.Run {
		return results.Run{ID: id, Status: status, Started: time.Date(2026, 1, 1, 0, int(id), 0, 0, time.UTC),
			Params: results.Params{Drive: spec.Drive{Terminals: 10}, Workload: "tpcc", RTT: rtt}, Summary: results.Summary{NOPM: nopm}}
	}
	r, err := report.Build(report.Input{
		Study:   "rtt",
		Factors: []string{results.FactorRTT},
		Runs: []results.Run{
			run(1, 0, 3000, results.StatusFinished), run(2, 10*time.Millisecond, 800, results.StatusFinished),
			run(3, 0, 3100, results.StatusFinished), run(4, 10*time.Millisecond, 840, results.StatusFinished),
			run(5, 10*time.Millisecond, 12, results.StatusFailed),
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := report.WriteCSV(os.Stdout, r); err != nil {
		fmt.Println(err)
	}
	for _, c := range r.Charts {
		fmt.Println(c.Title)
	}
	// Output:
	// rtt,runs,n,nopm_mean,nopm_sd,nopm_ci95_low,nopm_ci95_high,nopm_ci95_half
	// 0,2,2,3050,70.7107,2414.6898,3685.3102,635.3102
	// 10ms,3,2,820,28.2843,565.8759,1074.1241,254.1241
	// NOPM vs added RTT
}

// A closed-loop run straight to the server: what `dblat run` prints when it ends.
func ExampleWriteRunSummary() {
	r := &results.Run{ID: 7, Status: results.StatusFinished,
		Params: results.Params{Workload: "select-only", Scale: 1,
			Drive: spec.Drive{Terminals: 4, Connections: 4, Duration: 10 * time.Second, Warmup: 2 * time.Second}},
		Server:  results.Server{Target: "pg1", Version: "PostgreSQL 17.2 (Debian 17.2-1) on x86_64-pc-linux-gnu"},
		Summary: results.Summary{Elapsed: 10 * time.Second, Committed: 52000, TPS: 5200, TPM: 312000},
		Tx: []results.TxSummary{{Type: "select-only", Committed: 52000, P50Us: 640, P90Us: 910, P99Us: 1730, MaxUs: 9120,
			WaitMeanUs: 3, RoundTrips: 1, BytesUp: 120, BytesDown: 310}},
	}
	if err := report.WriteRunSummary(os.Stdout, r); err != nil {
		fmt.Println(err)
	}
	fmt.Println(report.RunLine(r))
	// Output:
	// run 7  finished  select-only on pg1 (PostgreSQL 17.2)
	//   scale 1, 4 terminals, 4 connections, window 10.0 s after 2s warm-up
	//   path direct; no options
	//   TPS 5200.0   TPM 312000   committed 52000   rolled back 0   errors 0
	//          type  committed  rollback  errors  retries  p50 ms  p90 ms  p99 ms  max ms  wait ms  round trips  bytes up  bytes down
	//   select-only      52000         0       0        0    0.64    0.91    1.73    9.12    0.003          1.0       120         310
	// TPS 5200.0  select-only p90 0.91 ms, 1.0 round trips
}
