package study

import (
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestExamples parses every study file in examples/ and checks the sizes their comments state.
func TestExamples(t *testing.T) {
	want := map[string]struct {
		cells, runs int
		estimate    time.Duration // without per-run overhead or restarts
	}{
		"quickstart.yaml": {10, 20, 220 * time.Second}, // at least 2 runs of a 6 s warm-up (the ceiling) and 5 s

		"pg-versions.yaml":              {6, 30, 35*time.Minute + 58*time.Second},
		"seed000-firebird.yaml":         {84, 420, 11*time.Hour + 39*time.Minute + 50*time.Second},
		"seed000-microseconds.yaml":     {72, 360, 9*time.Hour + 59*time.Minute + 50*time.Second},
		"seed001-ofat.yaml":             {11, 55, 2*time.Hour + 26*time.Minute + 30*time.Second},
		"seed003-pgbench.yaml":          {3, 15, 6*time.Minute + 43*time.Second},
		"seed000-response-at-rate.yaml": {6, 18, 12*time.Minute + 34*time.Second},
		"seed000-reduced.yaml":          {24, 48, 11*time.Minute + 11*time.Second},
		"seed002-vendor-test.yaml":      {12, 36, 21 * time.Minute},
		"tpcb-postgres.yaml":            {6, 18, 7*time.Minute + 30*time.Second},
		"tpcb-mariadb.yaml":             {6, 18, 7*time.Minute + 30*time.Second},
		"tpcb-firebird.yaml":            {6, 18, 7*time.Minute + 30*time.Second},
	}
	files, err := filepath.Glob("../../examples/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			s, err := Load(f)
			if err != nil {
				t.Fatal(err)
			}
			w, ok := want[name]
			if !ok {
				t.Fatalf("add %s to this test's table", name)
			}
			plan := s.Plan(nil)
			if got := len(s.Cells()); got != w.cells {
				t.Errorf("%d cells, want %d", got, w.cells)
			}
			if len(plan) != w.runs {
				t.Errorf("%d runs, want %d", len(plan), w.runs)
			}
			if got := s.Estimate(plan, Overhead{}); got != w.estimate {
				t.Errorf("estimate %v, want %v", got, w.estimate)
			}
		})
	}
	// The quickstart study promises to finish in about 7 minutes: its budget of 7 minutes
	// holds its minimum of runs, even with generous overheads: 5 s per run (restore,
	// connect, store) and 20 s to start the server. Runs set aside as disturbed and run
	// again are paid from what is left, the widest intervals first.
	s, err := Load("../../examples/quickstart.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if est := s.Estimate(s.Plan(nil), Overhead{Run: 5 * time.Second, Restart: 20 * time.Second}); est >= s.Budget || s.Budget > 7*time.Minute {
		t.Errorf("quickstart's minimum takes %v, its budget %v", est, s.Budget)
	}
}

// TestSeed000Levels checks that the seed-000 studies cover the seed's grid exactly.
func TestSeed000Levels(t *testing.T) {
	s, err := Load("../../examples/seed000-firebird.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, f := range s.Factors {
		got[f.Key] = f.Levels
	}
	for key, want := range map[string][]string{
		"terminals":      {"10", "20", "50", "100"},
		"rtt":            {"0", "500µs", "1ms", "1.5ms", "2ms", "2.5ms", "3ms"},
		"set.ServerMode": {"Classic", "SuperClassic", "Super"},
	} {
		if !slices.Equal(got[key], want) {
			t.Errorf("%s levels %v, want %v", key, got[key], want)
		}
	}
	if s.Base.Scale != 10 || s.Repeat < 5 || s.Base.Engine != "firebird" {
		t.Errorf("base %+v, repeat %d", s.Base, s.Repeat)
	}
}
