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
