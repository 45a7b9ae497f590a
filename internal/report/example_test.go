package report_test

import (
	"fmt"
	"os"
	"time"

	"github.com/dblat/dblat/internal/observe"
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

// An application observed through dblat proxy --observe, stored as run 7: its summary
// opens with the observation, the verdict and the predictions.
func ExampleWriteSummary_observed() {
	o := &observe.Observation{Version: observe.FormatVersion, Protocol: "PostgreSQL", Upstream: "db.internal:5432",
		Transactions: 12000, Clients: 4, TPS: 200, BetweenMsMean: 12, LatencyMsMean: 8, RoundTripsMean: 3.25,
		Started: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Ended: time.Date(2026, 1, 2, 3, 5, 5, 0, time.UTC),
		WindowNs: int64(time.Minute),
		Shapes: []observe.Shape{
			{Shape: "BEGIN; SELECT * FROM cart WHERE id = ?; UPDATE cart SET n = ? WHERE id = ?; COMMIT", Hash: "01", Count: 9000,
				RoundTripsMean: 4, RoundTripsP50: 4, RoundTripsMax: 4, StatementsMean: 4, LatencyMsMean: 6},
			{Shape: "SELECT * FROM item WHERE id IN (?)", Hash: "02", Count: 3000, RoundTripsMean: 1, RoundTripsP50: 1,
				RoundTripsMax: 1, StatementsMean: 1, LatencyMsMean: 14},
		}}
	run, err := o.Run("postgres", observe.RunSourceOf(o.Source))
	if err != nil {
		fmt.Println(err)
		return
	}
	run.ID = 7
	r, err := report.Build(report.Input{Study: "7", Runs: []results.Run{*run}})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := report.WriteSummary(os.Stdout, r, ""); err != nil {
		fmt.Println(err)
	}
	// Output:
	// PostgreSQL application at db.internal:5432, observed 2026-01-02 03:04 UTC for 1m0s, 4 clients
	// What would a farther database cost it? Predicted for 4 clients in a closed loop from run 7 alone:
	// 200 TPS observed, 3.2 round trips and 8.00 ms a transaction on average.
	//
	//   At +5 ms of round-trip time the busiest shape, #1 SELECT * FROM cart WHERE id = ?, takes 26.0 ms
	//   instead of 6.00 ms, and a transaction 24.2 ms instead of 8.00 ms on average; throughput falls 10 %
	//   at +0.68 ms and by half at +6.2 ms of added RTT (from 200 TPS with 4 clients).
	//
	// Predicted at added RTT                   0  +1 ms  +5 ms  +20 ms  +50 ms  +100 ms
	//   throughput (TPS)                     200    172    110      47      22       12
	//   mean response time (ms)             8.00   11.2   24.2    73.0     170      333
	//   #1 SELECT * FROM cart WHERE id = ?  6.00   10.0   26.0    86.0     206      406
	//   #2 SELECT * FROM item WHERE id IN…  14.0   15.0   19.0    34.0    64.0      114
	//
	// What would help at +5 ms
	//   #1 SELECT * FROM cart WHERE id = ?: +20.0 ms a transaction, 92 % of the time added. One batch or
	//     procedure, 1 or 2 round trips instead of 4.0, would save about 10.0 ms at 5ms.
	//   #2 SELECT * FROM item WHERE id IN…: +5.00 ms a transaction, 7.7 % of the time added. One round
	//     trip already: only a nearer server or fewer transactions help.
	//
	// Everything, as text: dblat report 7 --format text --full
}
