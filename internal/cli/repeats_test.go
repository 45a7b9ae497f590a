package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/results/storetest"
	"github.com/dblat/dblat/internal/study"
)

// TestStudyStatusIntervals: `study status` of a study with sequential repeats shows each
// cell's 95 % interval against its precision and what is left to run, and `study plan`
// expects each cell's runs from its own variation. The runs are written to the store
// directly: no server runs.
func TestStudyStatusIntervals(t *testing.T) {
	e := newEnv(t)
	file := filepath.Join(e.dir, "seq.yaml")
	src := `study: seq
repeat: 2..4
precision: 10%
server: {engine: postgres}
base: {workload: tpcc, warehouses: 1, duration: 5s, warmup: 1s}
factors:
  terminals: [1, 2]
`
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := study.Parse(file, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	store, err := results.Open(ctx, e.resultsPath())
	if err != nil {
		t.Fatal(err)
	}
	if err := store.SaveStudy(ctx, results.Study{Name: "seq", File: file, Source: src, Factors: []string{"terminals"}}); err != nil {
		t.Fatal(err)
	}
	cells := st.Cells()
	for i, values := range [][]float64{{1000, 1010, 1005}, {1000, 1500}} {
		for _, v := range values {
			r := results.Run{Study: "seq", CellKey: cells[i].Key, Started: time.Now(), Params: results.Params{Workload: "tpcc"},
				Server: results.Server{Engine: "postgres"}, Summary: results.Summary{Metric: results.MetricNOPM, NOPM: v, Elapsed: 5 * time.Second}}
			storetest.Write(t, store, &r, results.StatusFinished, nil)
		}
	}
	store.Close()
	out := e.must("study", "status", "seq")
	// The first cell's runs differ by a standard deviation of 5 NOPM, less than counting
	// can tell in a 5 s window (60/5 NOPM per New-Order, a terminal's half of one at each
	// edge: 6 NOPM), so its interval is 4.303 · 6 / √3 = ±14.9, ±1.5 %.
	for _, want := range []string{"NOPM 95% CI", "3/3", "1005 ±1.5 % ok", "2/2..4", "1250 ±254 % > 10%",
		"at least 1 run remaining", "1 of 2 cells within ±10%",
		"a fixed design meeting ±10% in every cell, from the variation measured, needs repeat"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	plan := e.must("study", "plan", file)
	for _, want := range []string{"repeat 2..4 to ±10%", "this cell (cv 28 %)", "about 2 runs to go", "1 if every cell meets its precision as soon as it can, 2 if every cell needs 4"} {
		if !strings.Contains(plan, want) {
			t.Errorf("plan lacks %q:\n%s", want, plan)
		}
	}
}
