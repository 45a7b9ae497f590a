package results

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/spec"
)

// TestGroup: cells ordered by their levels, the first factor slowest, levels numerically
// (10 after 9, 100µs before 1ms); runs in ID order whatever the input's; only finished runs
// in Finished; factors inferred when none are given; the same grouping for the same runs in
// another order.
func TestGroup(t *testing.T) {
	run := func(id int64, rtt time.Duration, terminals int, st Status) Run {
		return Run{ID: id, Status: st, Params: Params{Workload: "tpcc", Drive: spec.Drive{Terminals: terminals}, RTT: rtt}}
	}
	ms := time.Millisecond
	runs := []Run{
		run(6, ms, 10, StatusFinished), run(1, 100*time.Microsecond, 9, StatusFinished),
		run(3, ms, 9, StatusFailed), run(2, ms, 9, StatusFinished), run(5, 100*time.Microsecond, 10, StatusFinished),
		run(4, ms, 10, StatusFinished),
	}
	type cell struct {
		key      string
		runs     []int64
		finished []int64
	}
	summary := func(g *Grouping) []cell {
		var out []cell
		for _, c := range g.Cells {
			x := cell{key: c.Key, finished: c.FinishedIDs()}
			for _, r := range c.Runs {
				x.runs = append(x.runs, r.ID)
			}
			for f, l := range c.Levels {
				if g.Levels[f][c.Index[f]] != l {
					t.Errorf("%s: level %q at index %d of %v", c.Key, l, c.Index[f], g.Levels[f])
				}
			}
			out = append(out, x)
		}
		return out
	}
	want := []cell{
		{"rtt=100µs terminals=9", []int64{1}, []int64{1}},
		{"rtt=100µs terminals=10", []int64{5}, []int64{5}},
		{"rtt=1ms terminals=9", []int64{2, 3}, []int64{2}},
		{"rtt=1ms terminals=10", []int64{4, 6}, []int64{4, 6}},
	}
	for _, factors := range [][]string{{FactorRTT, FactorTerminals}, nil} {
		g := Group(runs, factors)
		if !slices.Equal(g.Factors, []string{FactorRTT, FactorTerminals}) ||
			!reflect.DeepEqual(g.Levels, [][]string{{"100µs", "1ms"}, {"9", "10"}}) {
			t.Errorf("factors %v: grouped by %v, levels %v", factors, g.Factors, g.Levels)
		}
		if got := summary(g); !reflect.DeepEqual(got, want) {
			t.Errorf("factors %v: cells\n%v\nwant\n%v", factors, got, want)
		}
		reversed := slices.Clone(runs)
		slices.Reverse(reversed)
		if got := summary(Group(reversed, factors)); !reflect.DeepEqual(got, want) {
			t.Errorf("factors %v, runs reversed: cells\n%v\nwant\n%v", factors, got, want)
		}
	}
	// Without factors, and none to infer, one cell holds every run under the key "".
	g := Group(runs[:1], nil)
	if len(g.Factors) != 0 || len(g.Cells) != 1 || g.Cells[0].Key != "" || len(g.Cells[0].Runs) != 1 {
		t.Errorf("one run: %+v", g)
	}
}
