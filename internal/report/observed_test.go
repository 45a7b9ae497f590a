package report_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/observe"
	"github.com/dblat/dblat/internal/report"
	"github.com/dblat/dblat/internal/results"
)

// observedRun is a stored observation: two shapes, one with a serial section.
func observedRun(t *testing.T) *observe.Observation {
	t.Helper()
	return &observe.Observation{Version: observe.FormatVersion, Protocol: "PostgreSQL", Transactions: 1000, Clients: 4, TPS: 800,
		BetweenMsMean: 0.2, LatencyMsMean: 4.8, Started: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
		Ended: time.Date(2025, 1, 2, 3, 5, 5, 0, time.UTC), WindowNs: int64(time.Minute),
		Shapes: []observe.Shape{
			{Shape: "BEGIN; UPDATE a SET x = x + ? WHERE id = ?; UPDATE b SET y = y + ? WHERE id = ?; END", Hash: "01", Count: 900,
				RoundTripsMean: 4, RoundTripsP50: 4, RoundTripsMax: 4, StatementsMean: 4, LatencyMsMean: 5,
				Serial: &observe.Serial{FromRoundTrip: 3, RoundTripsHeld: 1, HeldMsMean: 1, WaitMsMean: 0.5}},
			{Shape: "SELECT x FROM a WHERE id = ?", Hash: "02", Count: 100, RoundTripsMean: 1, RoundTripsP50: 1, RoundTripsMax: 1,
				StatementsMean: 1, LatencyMsMean: 3},
		}}
}

// TestObservedSection: a run that stores an observation gets its predictions (table and
// chart of response time against added RTT per shape) in every format.
func TestObservedSection(t *testing.T) {
	r, err := observedRun(t).Run("postgres", observe.RunSourceOf(observe.SourceProxy))
	if err != nil {
		t.Fatal(err)
	}
	r.ID = 7
	rep, err := report.Build(report.Input{Study: "7", Runs: []results.Run{*r}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Observed) != 1 {
		t.Fatalf("observed sections: %+v", rep.Observed)
	}
	o := rep.Observed[0]
	if o.Run != 7 || o.Clients != 4 || len(o.Predictions) != len(report.ObservedRTTs) || len(o.Shapes) != 2 || o.Shapes[0].Serial == "" {
		t.Errorf("section: %+v", o)
	}
	// Throughput falls as the RTT grows; each shape takes longer.
	for i := 1; i < len(o.Predictions); i++ {
		a, b := o.Predictions[i-1], o.Predictions[i]
		if b.TPS >= a.TPS || b.Shapes[1].LatencyMs <= a.Shapes[1].LatencyMs {
			t.Errorf("prediction %d: %.1f TPS after %.1f, %.3f ms after %.3f", i, b.TPS, a.TPS, b.Shapes[1].LatencyMs, a.Shapes[1].LatencyMs)
		}
	}
	var chart *report.Chart
	for i := range rep.Charts {
		if rep.Charts[i].Kind == report.ChartPredicted {
			chart = &rep.Charts[i]
		}
	}
	// Response time (all transactions and the shapes that matter) beside throughput.
	if chart == nil || len(chart.Panels) != 2 || len(chart.Panels[0].Series) != 1+o.Top || chart.Panels[0].Y == nil || chart.Panels[1].Y == nil {
		t.Fatalf("chart: %+v", chart)
	}
	if !rep.ObservedOnly() || len(rep.Charts) != 1 || rep.Headline.Question != o.Question || rep.Headline.Verdict != o.Verdict {
		t.Errorf("an observation's report: %d charts, headline %+v", len(rep.Charts), rep.Headline)
	}
	var html, text bytes.Buffer
	if err := report.WriteHTML(&html, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`id="observed"`, "<h1>PostgreSQL application", "What would help at +5 ms", "Caveats",
		"one at a time from round trip 3"} {
		if !strings.Contains(html.String(), want) {
			t.Errorf("the HTML lacks %q", want)
		}
	}
	if err := report.WriteText(&text, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(text.String(), o.Title+"\n") || !strings.Contains(text.String(), "+20 ms") {
		t.Errorf("text:\n%s", text.String())
	}
}

// TestObservedBesideRuns: in a report of runs dblat drove, an observation is a section of
// its own after the study's figures, which keep their headline.
func TestObservedBesideRuns(t *testing.T) {
	r, err := observedRun(t).Run("postgres", observe.RunSourceOf(observe.SourceProxy))
	if err != nil {
		t.Fatal(err)
	}
	r.ID = 7
	drove := results.Run{ID: 8, Status: results.StatusFinished, Started: r.Started.Add(time.Hour),
		Params: results.Params{Workload: "select-only"}, Summary: results.Summary{TPS: 100, Elapsed: time.Second}}
	rep, err := report.Build(report.Input{Study: "7,8", Runs: []results.Run{*r, drove}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.ObservedOnly() || len(rep.Observed) != 1 || rep.Headline.Verdict == rep.Observed[0].Verdict {
		t.Fatalf("mixed report: observed only %v, %d sections, verdict %q", rep.ObservedOnly(), len(rep.Observed), rep.Headline.Verdict)
	}
	var html, text bytes.Buffer
	if err := report.WriteHTML(&html, rep); err != nil {
		t.Fatal(err)
	}
	page := html.String()
	if h, o := strings.Index(page, `id="headline"`), strings.Index(page, `<h2>`+rep.Observed[0].Title); h < 0 || o < h {
		t.Errorf("the observation's section (at %d) does not follow the study's headline (at %d)", o, h)
	}
	if err := report.WriteSummary(&text, rep, ""); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "Verdict\n") || !strings.Contains(text.String(), rep.Observed[0].Title) {
		t.Errorf("summary:\n%s", text.String())
	}
}
