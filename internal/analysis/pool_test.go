package analysis

import (
	"slices"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/results"
)

// TestPoolSizing: a server that saturates at 2000 tx/s and loses 10 % when overloaded
// (seed 000: "adding too many terminals will see performance start to fall") — at RTT 0 the
// best pool is 16, at 1 ms and 10 ms the largest measured (the pool "can and must be
// increased" as latency grows).
func TestPoolSizing(t *testing.T) {
	rtts := []time.Duration{0, ms, 10 * ms}
	terms := []int{4, 8, 16, 32}
	x := func(n int, r time.Duration) float64 {
		v := modelX(n, r, 2000)
		if r == 0 && n == 32 {
			v = 1800
		}
		return v
	}
	runs := study(rtts, terms, x)
	for i := range runs {
		runs[i].Params.Workload = "tpcb" // metric TPS: the gains read in tx/s
	}
	got := PoolSizing(shuffled(runs), []string{results.FactorRTT, results.FactorTerminals})
	if len(got) != 3 {
		t.Fatalf("%d advices, want one per RTT", len(got))
	}
	want := []struct {
		level        string
		best, enough int
		edge         bool
	}{{"0", 16, 16, false}, {"1ms", 32, 32, true}, {"10ms", 32, 32, true}}
	for i, w := range want {
		a := got[i]
		if a.Level != w.level || a.RTT != rtts[i] || a.Series != allRuns || a.Factor != results.FactorTerminals || a.Metric != MetricTPS {
			t.Errorf("advice %d: %+v", i, a)
		}
		if a.Best != w.best || a.Enough != w.enough || a.AtEdge != w.edge {
			t.Errorf("rtt %s: best %d enough %d edge %v, want %d %d %v", a.Level, a.Best, a.Enough, a.AtEdge, w.best, w.enough, w.edge)
		}
		if len(a.Levels) != 4 || len(a.Gains) != 3 {
			t.Fatalf("rtt %s: levels %+v gains %+v", a.Level, a.Levels, a.Gains)
		}
	}
	// At 1 ms every terminal adds n/(20·1ms + 5ms) = 40 tx/s: linear scaling.
	for _, g := range got[1].Gains {
		within(t, "gain per terminal at 1ms", g.PerConnection, 40, 0.01)
		within(t, "efficiency at 1ms", g.Efficiency, 1, 0.001)
	}
	// At 0: 4→8 linear (+200/terminal), 8→16 (1600→2000) +50 at efficiency 0.25, 16→32 costs.
	g := got[0].Gains
	within(t, "0: 4→8", g[0].PerConnection, 200, 0.01)
	within(t, "0: 8→16", g[1].PerConnection, 50, 0.01)
	within(t, "0: 8→16 efficiency", g[1].Efficiency, 0.25, 0.001)
	if g[2].PerConnection >= 0 || g[2].Efficiency >= 0 {
		t.Errorf("16→32 at RTT 0 should cost: %+v", g[2])
	}
}

// TestPoolSizingEnough: a plateau makes the smallest pool within 5 % of the best "enough".
func TestPoolSizingEnough(t *testing.T) {
	level := map[int]float64{4: 500, 8: 960, 16: 1000, 32: 990}
	runs := study([]time.Duration{0}, []int{4, 8, 16, 32}, func(n int, _ time.Duration) float64 { return level[n] })
	a := PoolSizing(runs, []string{results.FactorTerminals})
	if len(a) != 1 || a[0].Best != 16 || a[0].Enough != 8 || a[0].AtEdge || a[0].Metric != MetricNOPM {
		t.Errorf("%+v", a)
	}
}

// TestPoolSizingSeries: other factors make series; connections is the pool factor when
// terminals is not varied; no pool factor → nil; one size → no advice.
func TestPoolSizingSeries(t *testing.T) {
	var runs []results.Run
	id := int64(0)
	for _, mode := range []string{"Classic", "Super"} {
		for _, c := range []int{2, 4} {
			id++
			r := cleanRun(id, ms, 8, float64(c*100))
			r.Params.Connections = c
			r.Params.Options["set.ServerMode"] = mode
			runs = append(runs, r)
		}
	}
	factors := []string{"set.ServerMode", results.FactorConnections, results.FactorRTT}
	a := PoolSizing(runs, factors)
	if len(a) != 2 || a[0].Series != "set.ServerMode=Classic" || a[0].Factor != results.FactorConnections ||
		a[0].Level != "1ms" || a[0].Best != 4 || !slices.Equal([]int{a[0].Levels[0].Size, a[0].Levels[1].Size}, []int{2, 4}) {
		t.Errorf("%+v", a)
	}
	if got := PoolSizing(runs, []string{"set.ServerMode"}); got != nil {
		t.Errorf("no pool factor: %+v", got)
	}
	if got := PoolSizing(runs[:1], factors); got != nil {
		t.Errorf("one size: %+v", got)
	}
}
