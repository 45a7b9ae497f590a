package analysis

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/spec"
)

// TestWarmupAuto: automatic warm-ups are judged by the warm-up each run had. With samples,
// as any run: a slow start after a 6 s automatic warm-up is flagged and says so. Without
// samples the rule of thumb does not second-guess the steady-state rule, except for a
// warm-up that reached its ceiling before throughput was steady. Runs whose automatic
// warm-ups of one ceiling differed in length still compare like for like.
func TestWarmupAuto(t *testing.T) {
	auto := func(id int64, had time.Duration, perSecond []int64) results.Run {
		r := results.Run{ID: id, Status: results.StatusFinished,
			Params:  results.Params{Drive: spec.Drive{Terminals: 4, Duration: 20 * time.Second, Warmup: 30 * time.Second, WarmupAuto: true}, Workload: "tpcc"},
			Summary: results.Summary{Elapsed: 20 * time.Second, Warmup: had}}
		for s, n := range perSecond {
			r.Summary.Committed += n
			r.Samples = append(r.Samples, results.Sample{Offset: time.Duration(s+1)*time.Second + 30*time.Microsecond, Committed: n})
		}
		return r
	}
	flat := slices.Repeat([]int64{1000}, 20)
	cold := append([]int64{600, 600}, slices.Repeat([]int64{1000}, 18)...)
	runs := []results.Run{
		auto(1, 6*time.Second, flat),
		auto(2, 6*time.Second, cold),
		auto(3, 7*time.Second, nil),  // no samples, steady in time: not judged
		auto(4, 30*time.Second, nil), // no samples, cut off at its ceiling
	}
	var found []Finding
	for _, f := range Check(runs, CheckOptions{Factors: []string{"seed"}}) {
		switch {
		case f.Rule == RuleWarmup:
			found = append(found, f)
		case strings.Contains(f.Evidence, "warmup"):
			t.Errorf("automatic warm-ups of one ceiling do not compare: %+v", f)
		}
	}
	if len(found) != 1 || !slices.Equal(found[0].Runs, []int64{2, 4}) ||
		!strings.Contains(found[0].Evidence, "after a 6s automatic warm-up the window's first 2s ran at 60 % of the rest") ||
		!strings.Contains(found[0].Evidence, "reached its ceiling of 30s") {
		t.Errorf("warm-up findings %+v, want one for runs 2 (slow start) and 4 (ceiling)", found)
	}
}
