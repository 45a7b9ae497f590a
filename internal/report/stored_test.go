package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/dblat/dblat/internal/analysis"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/study"
)

// Stored real studies, exported with `dblat results export --format json --study NAME`
// (the servers' cumulative counters removed) next to the study file they ran:
//   - quickstart: examples/quickstart.yaml as of this test data (RTT 0/1/5/20 ms × 1/4/16
//     terminals, 1 warehouse, 10 s windows after 2 s of warm-up, one run per cell) on
//     managed PostgreSQL 15;
//   - fb-three-arch: Firebird 3 as Classic, SuperClassic and Super × 2/4 terminals × RTT
//     0/1 ms, 1 warehouse, 5 s windows after 3 s of warm-up, 2 repeats, data kept between
//     runs.
//
// Both ran on a 2-vCPU VM shared with other work: their figures are real but noisy, and
// tests assert what must hold for any study, not the figures.
var storedStudies = []string{"quickstart", "fb-three-arch"}

// storedStudy returns the input of a stored study with its study file's factors, source
// and description, and the CheckOptions the CLI would use.
func storedStudy(t testing.TB, name string) (Input, analysis.CheckOptions) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := study.Parse(name+".yaml", src)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join("testdata", name+"-runs.json"))
	if err != nil {
		t.Fatal(err)
	}
	var runs []results.Run
	if err := json.Unmarshal(b, &runs); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	in := Input{Study: st.Name, Description: st.Description, Source: string(src), Runs: runs}
	for _, f := range st.Factors {
		in.Factors = append(in.Factors, f.Key)
	}
	return in, analysis.CheckOptions{Factors: in.Factors, Repeat: st.Repeat}
}

func storedReport(t testing.TB, name string) *Report {
	t.Helper()
	in, opt := storedStudy(t, name)
	r, _, err := BuildWithAnalysis(in, opt)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
