package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/disturb"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/signals"
)

// TestTimelines: a study's report draws the timeline of a disturbed run (throughput,
// stalls, the host's signals, the disturbance between dashed lines) and not those of its
// quiet runs; its HTML section names what disturbed the runs. A report of one run draws
// that run's timeline, quiet or not.
func TestTimelines(t *testing.T) {
	runs := fixture(t)[:6]
	for i := range runs {
		r := &runs[i]
		r.Status, r.Summary.Elapsed = results.StatusFinished, 5*time.Second
		for k := -1; k <= 5; k++ {
			r.Samples = append(r.Samples, results.Sample{Offset: time.Duration(k) * time.Second, Committed: 1000, StallUs: 4000})
			for q := 1; q <= 4 && k > 0; q++ {
				at := time.Duration(k-1)*time.Second + time.Duration(q)*250*time.Millisecond
				for name, v := range map[string]float64{signals.HostIOFull: 0.02, signals.HostBusy: 1.9, signals.DblatCPU: 0.7, signals.ServerCPU: 1.1, signals.DblatStall: 0.001} {
					r.Signals = append(r.Signals, results.Signal{Offset: at, Span: 250 * time.Millisecond, Name: name, Value: v})
				}
			}
		}
	}
	runs[2].Samples[3].Committed, runs[2].Samples[3].StallUs = 450, 600_000
	runs[2].Disturbances = []results.Disturbance{{Cause: disturb.CauseDisk, From: time.Second, To: 2 * time.Second, Lost: 550 * time.Millisecond,
		Evidence: "from 1.0 s to 2.0 s: IO pressure full 96 %"}}

	rep, err := Build(Input{Study: "s", Runs: runs, Factors: []string{"rtt"}})
	if err != nil {
		t.Fatal(err)
	}
	var tl []Chart
	for _, ch := range rep.Charts {
		if ch.Kind == ChartTimeline {
			tl = append(tl, ch)
		}
	}
	if len(tl) != 1 || tl[0].ID != fmt.Sprintf("timeline-%d", runs[2].ID) {
		t.Fatalf("timelines %v, want the disturbed run's only", tl)
	}
	ch := tl[0]
	if len(ch.Panels) != 3 {
		t.Fatalf("%d panels", len(ch.Panels))
	}
	tps := ch.Panels[0].Series[0].Points
	if len(tps) != 5 || tps[1].Y != 450 || tps[0].Y != 1000 {
		t.Errorf("throughput %v", tps)
	}
	marks := 0
	for _, pn := range ch.Panels {
		for _, s := range pn.Series {
			if s.Stat == StatDisturbed {
				marks++
			}
		}
	}
	if marks != 6 || !strings.Contains(ch.Note, "the host's disk took 550ms") {
		t.Errorf("%d disturbance lines, note %q", marks, ch.Note)
	}
	var b bytes.Buffer
	if err := WriteHTML(&b, rep); err != nil {
		t.Fatal(err)
	}
	if html := b.String(); !strings.Contains(html, "What disturbed the runs") || !strings.Contains(html, `id="timeline-`) {
		t.Error("the HTML has no section of disturbed runs")
	}

	one, err := Build(Input{Study: "1", Runs: runs[:1]})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ch := range one.Charts {
		if ch.Kind == ChartTimeline {
			n++
		}
	}
	if n != 1 {
		t.Errorf("a report of one quiet run drew %d timelines", n)
	}
}
