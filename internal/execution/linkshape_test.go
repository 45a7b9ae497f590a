package execution

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
	"github.com/dblat/dblat/internal/report"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/study"
)

// TestLinkShapeStudy: a study of bandwidth 1mbit and unlimited × jitter 0 and 500µs at RTT
// 1 ms (TPC-C, managed PostgreSQL) plans, runs and reports: every run stores its shape as
// set (the cell's levels) and as achieved (the delays applied, the jitter they stand for,
// the bandwidth it used, which at 1mbit never exceeds the cable's), TPC-C at 1 Mbit/s is
// slower than without a limit, and the report has an axis for each.
func TestLinkShapeStudy(t *testing.T) {
	t.Parallel()
	pgtest.Server(t)
	c, store := newCore(t)
	st, err := study.Parse("shape.yaml", []byte(`study: link-shape
server: {engine: postgres}
repeat: 1
between_runs: keep
base: {workload: tpcc, warehouses: 1, terminals: 4, duration: 3s, warmup: 1s, rtt: 1ms}
factors:
  bandwidth: [1mbit, unlimited]
  jitter: [0, 500us]
`))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.RunStudy(ctx, nil, st); err != nil {
		t.Fatal(err)
	}
	runs, err := store.List(ctx, results.Filter{Study: st.Name})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 4 {
		t.Fatalf("%d runs, want 4", len(runs))
	}
	nopm := map[string]float64{}
	for _, r := range runs {
		bw, jit := results.FactorValue(&r, "bandwidth"), results.FactorValue(&r, "jitter")
		l := r.Link
		if r.Status != results.StatusFinished || l == nil || l.Achieved == nil || r.Params.RTT != time.Millisecond {
			t.Fatalf("run %d (%s, %s): %s %q, link %+v", r.ID, bw, jit, r.Status, r.Reason, l)
		}
		nopm[bw+" "+jit] = r.Summary.NOPM
		for name, w := range map[string]results.LinkWay{"up": l.Achieved.Up, "down": l.Achieved.Down} {
			shaped := bw != "unlimited" || jit != "0"
			if w.Delay.Measured != shaped || w.Delay.N == 0 || w.Bytes == 0 || w.PeakRate <= 0 {
				t.Errorf("run %d (%s, %s) %s: achieved %+v", r.ID, bw, jit, name, w)
			}
			// The cable serialises at 125,000 bytes a second: no 100 ms of it carries more
			// (the interval is timed as it lasted, so a late tick adds nothing).
			if bw == "1mbit" && w.PeakRate > 125_000*1.01 {
				t.Errorf("run %d %s: peak %.0f B/s through a 1mbit link", r.ID, name, w.PeakRate)
			}
			if jit == "500µs" && bw == "unlimited" && (w.Jitter < 400*time.Microsecond || w.Jitter > 600*time.Microsecond) {
				t.Errorf("run %d %s: jitter achieved %v of 500µs asked (%d chunks)", r.ID, name, w.Jitter, w.Delay.N)
			}
		}
		var b strings.Builder
		if err := report.WriteRunSummary(&b, &r); err != nil {
			t.Fatal(err)
		}
		if want := "path rtt 1ms, "; (bw != "unlimited" || jit != "0") && !strings.Contains(b.String(), want) ||
			!strings.Contains(b.String(), "link up: delay ") || !strings.Contains(b.String(), "at the peak") {
			t.Errorf("run %d's summary does not show its shape:\n%s", r.ID, b.String())
		}
	}
	for _, jit := range []string{"0", "500µs"} {
		if slow, fast := nopm["1mbit "+jit], nopm["unlimited "+jit]; slow >= fast {
			t.Errorf("jitter %s: NOPM %.0f at 1mbit, %.0f unlimited: a narrow link should be slower", jit, slow, fast)
		}
	}
	t.Logf("NOPM: %v", nopm)
	rep, err := report.Build(report.Input{Study: st.Name, Factors: []string{"bandwidth", "jitter"}, Runs: runs})
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	if err := report.Write(&text, rep, "text"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "link used up/down mean (peak), jitter, lost") || !strings.Contains(text.String(), " Mbit/s, jitter ") {
		t.Errorf("the report's cells do not say what the link did:\n%s", text.String())
	}
	axes := map[string]bool{}
	for _, ch := range rep.Charts {
		axes[ch.Kind+" "+ch.X.Key] = true
	}
	for _, want := range []string{"throughput bandwidth", "throughput jitter", "percentiles jitter"} {
		if !axes[want] {
			t.Errorf("no %s chart: %v", want, axes)
		}
	}
}
