package report

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/dblat/dblat/internal/observe"
	"github.com/dblat/dblat/internal/results"
)

// ChartPredicted is the kind of an observed application's predicted response time against
// the added RTT (Report.Observed): one line per transaction shape and one for all of them.
const ChartPredicted = "predicted"

// StatPredicted is the stat of a ChartPredicted's lines: model output, not measurement.
const StatPredicted = "predicted"

// predictedShapes is how many shapes a ChartPredicted draws (the most frequent); the line
// of all transactions covers the rest.
const predictedShapes = 6

// Observed is what a report says about one observation of an application (a run of
// workload results.WorkloadObserved, stored by dblat proxy --observe): what was seen, and
// what package observe predicts a farther database would cost it.
type Observed struct {
	Run          int64   `json:"run"`
	Protocol     string  `json:"protocol"`
	Transactions int64   `json:"transactions"`
	TPS          float64 `json:"tps"`
	Clients      int     `json:"clients"`
	// ObservedRTT is the RTT the proxy added while observing (JSON: nanoseconds).
	ObservedRTT time.Duration `json:"observed_rtt"`
	// Shapes are the observed shapes, the most frequent first, as labelled in the run's
	// transaction types.
	Shapes []ObservedShape `json:"shapes"`
	// Predictions are the forecasts at ObservedRTTs' levels for Clients clients.
	Predictions []observe.Prediction `json:"predictions"`
	// Fall10 and Fall50 are the added RTTs at which throughput falls by 10 % and 50 %.
	Fall10 time.Duration `json:"fall_10pct"`
	Fall50 time.Duration `json:"fall_50pct"`
	// Losers and Notes are the forecast's at 20 ms.
	Losers []observe.Loser `json:"losers,omitempty"`
	Notes  []string        `json:"notes,omitempty"`
	// Chart is the ID of its ChartPredicted.
	Chart string `json:"chart"`
}

// ObservedShape is one shape of an observation.
type ObservedShape struct {
	Label      string  `json:"label"`
	Text       string  `json:"text"`
	Count      int64   `json:"count"`
	RoundTrips float64 `json:"round_trips"`
	Statements float64 `json:"statements"`
	LatencyMs  float64 `json:"latency_ms"`
	// Serial describes its serial section, "" without one.
	Serial string `json:"serial,omitempty"`
}

// ObservedRTTs are the added RTTs a report's prediction table shows; the chart samples
// chartRTTs.
var (
	ObservedRTTs = []time.Duration{0, time.Millisecond, 5 * time.Millisecond, 20 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond}
	chartRTTs    = []time.Duration{0, 500 * time.Microsecond, time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond,
		10 * time.Millisecond, 20 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond}
	// adviceRTT is the RTT at which the report names the shapes that lose most.
	adviceRTT = 20 * time.Millisecond
)

// observed builds the Observed sections and their charts from the finished runs that hold
// an observation. A run whose observation does not decode is an error naming it.
func (r *Report) observed(runs []results.Run) ([]Observed, []Chart, error) {
	var out []Observed
	var charts []Chart
	for i := range runs {
		run := &runs[i]
		if run.Status != results.StatusFinished || len(run.Observation) == 0 {
			continue
		}
		o, err := observe.FromRun(run)
		if err != nil {
			return nil, nil, fmt.Errorf("report: run %d: %w", run.ID, err)
		}
		if o.Transactions == 0 || len(o.Shapes) == 0 {
			continue
		}
		sec := Observed{Run: run.ID, Protocol: o.Protocol, Transactions: o.Transactions, TPS: o.TPS,
			Clients: o.ClientsDefault(), ObservedRTT: time.Duration(o.RTTNs), Chart: fmt.Sprintf("%s-%d", ChartPredicted, run.ID)}
		for j, s := range o.Shapes {
			sh := ObservedShape{Label: observe.TypeLabel(j, s), Text: s.Shape, Count: s.Count, RoundTrips: s.RoundTripsMean,
				Statements: s.StatementsMean, LatencyMs: s.LatencyMsMean}
			if s.Serial != nil {
				sh.Serial = fmt.Sprintf("one at a time from round trip %d to the end (%d round trips held)", s.Serial.FromRoundTrip, s.Serial.RoundTripsHeld)
			}
			sec.Shapes = append(sec.Shapes, sh)
		}
		if sec.Predictions, err = observe.Curve(o, ObservedRTTs, 0); err != nil {
			return nil, nil, fmt.Errorf("report: run %d: %w", run.ID, err)
		}
		f, err := observe.Predict(o, adviceRTT, 0)
		if err != nil {
			return nil, nil, fmt.Errorf("report: run %d: %w", run.ID, err)
		}
		sec.Fall10, sec.Fall50 = time.Duration(f.Fall10RTTNs), time.Duration(f.Fall50RTTNs)
		sec.Losers, sec.Notes = f.Losers, f.Notes
		curve, err := observe.Curve(o, chartRTTs, 0)
		if err != nil {
			return nil, nil, fmt.Errorf("report: run %d: %w", run.ID, err)
		}
		charts = append(charts, r.predictedChart(sec, curve))
		out = append(out, sec)
	}
	return out, charts, nil
}

// predictedChart draws an observation's predicted mean response time against the added
// RTT: one line per frequent shape and one for all transactions.
func (r *Report) predictedChart(sec Observed, curve []observe.Prediction) Chart {
	ch := Chart{ID: sec.Chart, Kind: ChartPredicted, Lines: true, Cols: 1,
		Title: fmt.Sprintf("Predicted response time against added RTT (observed run %d, %s)", sec.Run, count(sec.Clients, "client"))}
	var xs, ys []float64
	for _, p := range curve {
		xs = append(xs, float64(p.RTTNs)/1e6)
	}
	pn := Panel{}
	add := func(name string, y func(p observe.Prediction) float64) {
		s := Series{Name: name, Group: name, Stat: StatPredicted}
		for _, p := range curve {
			v := y(p)
			s.Points = append(s.Points, Point{X: float64(p.RTTNs) / 1e6, Y: v})
			ys = append(ys, v)
		}
		pn.Series = append(pn.Series, s)
	}
	add("all transactions", func(p observe.Prediction) float64 { return p.LatencyMs })
	for j := range min(predictedShapes, len(sec.Shapes)) {
		add(clipLabel(sec.Shapes[j].Label, 40), func(p observe.Prediction) float64 { return p.Shapes[j].LatencyMs })
	}
	pn.YMin, pn.YMax = minOf(ys), maxOf(ys)
	ch.Panels = []Panel{pn}
	ch.X = valueAxis("added RTT (ms)", xs, r.Options.XScale)
	ch.Y = valueAxis("mean response time (ms)", ys, r.Options.YScale)
	ch.Note = fmt.Sprintf("Predicted by dblat predict's model from the observation alone, for %s in a closed loop: each transaction takes its observed time plus its round trips times the RTT added beyond the %s it was observed at; serial sections (a lock all of a shape's transactions take) are queues whose holding time grows with the round trips they span. One line per shape (the %d most frequent, labelled as the run's transaction types) and one for all transactions. %s",
		count(sec.Clients, "client"), fmtDuration(sec.ObservedRTT), predictedShapes, axisNote(ch.X, ch.Y))
	return ch
}

func clipLabel(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && (s[n]&0xC0) == 0x80 {
		n--
	}
	return s[:n] + "…"
}

func minOf(v []float64) float64 {
	m := math.Inf(1)
	for _, x := range v {
		m = math.Min(m, x)
	}
	return m
}

func maxOf(v []float64) float64 {
	m := math.Inf(-1)
	for _, x := range v {
		m = math.Max(m, x)
	}
	return m
}

func fmtDuration(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	return d.String()
}

// writeObservedText writes the Observed sections as text.
func writeObservedText(b *strings.Builder, obs []Observed) {
	for _, o := range obs {
		fmt.Fprintf(b, "Observed application, run %d (%s): %d transactions, %.1f TPS, %s; observed at %s added RTT\n",
			o.Run, o.Protocol, o.Transactions, o.TPS, count(o.Clients, "client"), fmtDuration(o.ObservedRTT))
		fmt.Fprintf(b, "  %-10s %10s %14s\n", "added RTT", "TPS", "mean resp. ms")
		for _, p := range o.Predictions {
			bound := ""
			if p.UpperBound {
				bound = " (at most)"
			}
			fmt.Fprintf(b, "  %-10s %10.1f %14.3f%s\n", fmtDuration(time.Duration(p.RTTNs)), p.TPS, p.LatencyMs, bound)
		}
		if o.Fall10 > 0 {
			fmt.Fprintf(b, "  throughput falls 10 %% at %s and 50 %% at %s added RTT\n", fmtDuration(o.Fall10.Round(time.Microsecond)), fmtDuration(o.Fall50.Round(time.Microsecond)))
		}
		for _, s := range o.Shapes[:min(len(o.Shapes), 10)] {
			fmt.Fprintf(b, "  %s: %d, %.1f round trips", s.Label, s.Count, s.RoundTrips)
			if s.Serial != "" {
				fmt.Fprintf(b, "; %s", s.Serial)
			}
			b.WriteString("\n")
		}
		for _, l := range o.Losers {
			fmt.Fprintf(b, "  at %s, %s loses +%.1f ms a transaction: %s\n", adviceRTT, clipLabel(l.Shape, 60), l.AddedMs, l.Advice)
		}
		for _, n := range o.Notes {
			fmt.Fprintf(b, "  note: %s\n", n)
		}
	}
}
