package report

import (
	"strings"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/results"
)

// TestShapeAxes: a study of the link's shape is drawn along each of its fields: throughput
// against jitter (in ms, numeric), against bandwidth (categorical where unlimited is a
// level, its levels in order) and against profile, and response-time percentiles against
// jitter.
func TestShapeAxes(t *testing.T) {
	var runs []results.Run
	id := int64(0)
	for _, bw := range []int64{0, 125_000, 12_500_000} {
		for _, jit := range []time.Duration{0, 500 * time.Microsecond, 2 * time.Millisecond} {
			for _, prof := range []string{"lan-1gbe", "cross-az"} {
				id++
				r := fixRun(t, id, "Classic", time.Millisecond, 10)
				r.Study, r.Params.Bandwidth, r.Params.Jitter, r.Params.Profile = "shape", bw, jit, prof
				r.Summary.NOPM = 1000 - float64(jit/time.Millisecond)*100
				r.Tx = fixTx(t, "Classic", time.Millisecond+jit, 0)
				runs = append(runs, r)
			}
		}
	}
	rep, err := Build(Input{Study: "shape", Factors: []string{"bandwidth", "jitter", "profile"}, Runs: runs})
	if err != nil {
		t.Fatal(err)
	}
	x := map[string]Axis{}
	for _, ch := range rep.Charts {
		x[ch.Kind+" "+ch.X.Key] = ch.X
	}
	for key, want := range map[string]string{
		"throughput jitter":    "jitter of each one-way delay (ms) linear 0 0.5 2",
		"throughput bandwidth": "bandwidth each way categorical 1mbit 100mbit unlimited",
		"throughput profile":   "network profile categorical cross-az lan-1gbe",
		"percentiles jitter":   "jitter of each one-way delay (ms) linear 0 0.5 2",
	} {
		a, ok := x[key]
		var ticks []string
		for _, tk := range a.Ticks {
			ticks = append(ticks, tk.Label)
		}
		if got := strings.Join(append([]string{a.Label, a.Scale}, ticks...), " "); !ok || got != want {
			t.Errorf("%s: axis %q, want %q (charts: %v)", key, got, want, keys(x))
		}
	}
	if _, ok := x["percentiles bandwidth"]; ok {
		t.Error("response-time percentiles drawn against bandwidth, not jitter")
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
