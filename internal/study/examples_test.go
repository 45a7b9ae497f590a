package study

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/latency"
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
		"seed001-memory.yaml":           {2, 6, 15 * time.Minute},
		"seed001-encryption.yaml":       {2, 6, 8 * time.Minute},
		"seed001-backup.yaml":           {6, 12, 27 * time.Minute},
		"seed003-pgbench.yaml":          {3, 15, 6*time.Minute + 43*time.Second},
		"seed004-interconnects.yaml":    {7, 21, 10*time.Minute + 30*time.Second},
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

// TestSeed004Networks checks that the seed-004 study asks the seed's questions: its three
// networks at the seed's figures, the 100 Mb network's RTT with and without its bandwidth
// limit, and the Unix socket against TCP on one host.
func TestSeed004Networks(t *testing.T) {
	s, err := Load("../../examples/seed004-interconnects.yaml")
	if err != nil {
		t.Fatal(err)
	}
	links := map[string]*latency.Config{}
	for _, c := range s.Cells() {
		links[s.Label(c)] = c.Params.Link
	}
	mbit := func(n int64) int64 { return n * 1e6 / 8 }
	for label, want := range map[string]*latency.Config{
		"profile=same-host bandwidth=unlimited opt.transport=tcp":           {},
		"profile=dolphin bandwidth=unlimited opt.transport=tcp":             {RTT: 300 * time.Microsecond},
		"profile=lan-1gbe bandwidth=1gbit opt.transport=tcp":                {RTT: 1100 * time.Microsecond, BandwidthUp: mbit(1000), BandwidthDown: mbit(1000)},
		"profile=lan-100mbit-loaded bandwidth=100mbit opt.transport=tcp":    {RTT: 3500 * time.Microsecond, Jitter: 250 * time.Microsecond, BandwidthUp: mbit(100), BandwidthDown: mbit(100)},
		"profile=lan-100mbit-latency bandwidth=unlimited opt.transport=tcp": {RTT: 3500 * time.Microsecond, Jitter: 250 * time.Microsecond},
		"profile=same-host bandwidth=100mbit opt.transport=tcp":             {BandwidthUp: mbit(100), BandwidthDown: mbit(100)},
		"profile=same-host bandwidth=unlimited opt.transport=unix":          nil,
	} {
		got, ok := links[label]
		if want != nil {
			want.DelayConnect, want.Seed = true, 1 // base.seed, the terminals' (seed: 4 orders the runs)
		}
		if !ok || (got == nil) != (want == nil) || (got != nil && *got != *want) {
			t.Errorf("%s: link %+v, want %+v (cells: %v)", label, got, want, labels(s, s.Cells()))
		}
	}
	if len(links) != 7 || s.Base.Engine != "mariadb" || s.Base.Workload != "tpcc" {
		t.Errorf("%d cells on %s running %s", len(links), s.Base.Engine, s.Base.Workload)
	}
}
