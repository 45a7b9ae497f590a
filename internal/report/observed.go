package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/dblat/dblat/internal/observe"
	"github.com/dblat/dblat/internal/replay"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/words"
)

// ChartPredicted is the kind of an observed application's prediction (Report.Observed):
// two panels against the added RTT, the mean response time (all transactions and the
// shapes that take most of the time) and the throughput with where it falls by 10 % and by
// half.
const ChartPredicted = "predicted"

// StatPredicted is the stat of a ChartPredicted's lines: model output, not measurement.
const StatPredicted = "predicted"

// Markers of a ChartPredicted's throughput panel: vertical lines at the added RTTs where the
// predicted throughput has fallen by 10 % and by half (Observed.Fall10, Fall50).
const (
	StatFall10 = "throughput −10 %"
	StatFall50 = "throughput −50 %"
)

// HeadlineRTT is the added RTT at which an observed application's verdict, what would help
// and the shapes' ranking are read: a few milliseconds, a database in another data centre
// of the same region. The prediction table and chart give every other RTT.
const HeadlineRTT = 5 * time.Millisecond

// How much of an observation the first screen shows.
const (
	// chartShapes is how many shapes a ChartPredicted draws beside all transactions, the
	// ones that take most of the time at HeadlineRTT (Observed.Top), each at least
	// minChartShare of it: a line for a shape of less is not one a reader acts on.
	chartShapes   = 4
	minChartShare = 0.03
	// oneShapeShare: when the busiest shape takes this share of the time, it is the
	// application (pgbench's one script, an API of one query), and the report speaks of
	// "a transaction" rather than of shapes.
	oneShapeShare = 0.9
	// detailShapes is how many shapes the shape table shows before the rest, collapsed.
	detailShapes = 8
)

// Observed is what a report says about one observation of an application (a run of
// workload results.WorkloadObserved, stored by dblat proxy --observe): what was seen,
// what package observe predicts a farther database would cost it, and the sentences that
// say so. Build fills it from the stored observation alone.
type Observed struct {
	Run      int64  `json:"run"`
	Protocol string `json:"protocol"`
	Upstream string `json:"upstream,omitempty"`
	// Started is when the observation started; Duration how long it ran (0 when unknown);
	// Window the time from the first transaction's start to the last one's end, which TPS
	// is measured over (JSON: nanoseconds).
	Started      time.Time     `json:"started"`
	Duration     time.Duration `json:"duration"`
	Window       time.Duration `json:"window"`
	Transactions int64         `json:"transactions"`
	TPS          float64       `json:"tps"`
	// Clients is the closed loop's population the predictions assume: the observed mean
	// number of clients, rounded.
	Clients int `json:"clients"`
	// RoundTrips and LatencyMs are a transaction's means as observed (LatencyMs as the
	// application saw it, to compare with the predictions).
	RoundTrips float64 `json:"round_trips"`
	LatencyMs  float64 `json:"latency_ms"`
	// ObservedRTT is the RTT the proxy added while observing (JSON: nanoseconds).
	ObservedRTT time.Duration `json:"observed_rtt"`
	// Title names the observation (protocol, upstream, when, how long, how many clients);
	// Question is what its report answers and Verdict the answer in a sentence, read at
	// HeadlineRTT.
	Title    string `json:"title"`
	Question string `json:"question"`
	Verdict  string `json:"verdict"`
	// HeadlineRTT is the RTT the verdict, the ranking and Losers are read at;
	// HeadlineTPS and HeadlineMs the predicted throughput and mean response time there.
	HeadlineRTT time.Duration `json:"headline_rtt"`
	HeadlineTPS float64       `json:"headline_tps"`
	HeadlineMs  float64       `json:"headline_ms"`
	// Shapes are the observed shapes, the most frequent first, as labelled in the run's
	// transaction types; Ranked their indexes by their share of the time at HeadlineRTT,
	// largest first, and Top how many of Ranked the chart and the prediction table show.
	Shapes []ObservedShape `json:"shapes"`
	Ranked []int           `json:"ranked"`
	Top    int             `json:"top"`
	// Predictions are the forecasts at ObservedRTTs' levels for Clients clients.
	Predictions []observe.Prediction `json:"predictions"`
	// Fall10 and Fall50 are the added RTTs at which throughput falls by 10 % and 50 % (0:
	// not within an hour).
	Fall10 time.Duration `json:"fall_10pct"`
	Fall50 time.Duration `json:"fall_50pct"`
	// UpperBound says the predicted throughput is an upper bound, LowerBound a lower bound
	// (see Caveats); with both it is neither.
	UpperBound bool `json:"upper_bound,omitempty"`
	LowerBound bool `json:"lower_bound,omitempty"`
	// Losers are the shapes that lose most at HeadlineRTT, with what would help; Notes and
	// Caveats what the prediction assumes and where it is a bound (the same, in parts).
	Losers  []observe.Loser  `json:"losers,omitempty"`
	Notes   []string         `json:"notes,omitempty"`
	Caveats []observe.Caveat `json:"caveats,omitempty"`
	// Chart is the ID of its ChartPredicted.
	Chart string `json:"chart"`
	// Replay is, for the observation of a replay (dblat replay), the replay set against its
	// capture; nil otherwise.
	Replay *replay.Result `json:"replay,omitempty"`
}

// ObservedShape is one shape of an observation.
type ObservedShape struct {
	// Label names it as the run's transaction types do (observe.TypeLabel), Name in few
	// words (observe.ShortLabel); Text is its statements, normalised.
	Label string `json:"label"`
	Name  string `json:"name"`
	Text  string `json:"text"`
	Count int64  `json:"count"`
	// Share is its share of the transactions, TimeShare its share of the time the clients
	// spend in transactions at the headline RTT.
	Share      float64 `json:"share"`
	TimeShare  float64 `json:"time_share"`
	RoundTrips float64 `json:"round_trips"`
	Statements float64 `json:"statements"`
	// LatencyMs is the observed mean response time, P99Ms the observed 99th percentile at
	// the proxy; HeadlineMs the predicted mean at the headline RTT.
	LatencyMs  float64 `json:"latency_ms"`
	P99Ms      float64 `json:"p99_ms"`
	HeadlineMs float64 `json:"headline_ms"`
	// Queue says its serial section is modelled as a queue; Serial describes it, "" without
	// one.
	Queue  bool   `json:"queue,omitempty"`
	Serial string `json:"serial,omitempty"`
}

// ObservedRTTs are the added RTTs a report's prediction table shows.
var ObservedRTTs = []time.Duration{0, time.Millisecond, HeadlineRTT, 20 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond}

// ObservedOnly reports whether every run of the report is an observed application's, and
// at least one has transactions to predict from: the report then answers what a farther
// database would cost it, and leaves out what only applies to runs dblat drove.
func (r *Report) ObservedOnly() bool {
	return len(r.Observed) > 0 && len(r.Workloads) == 1 && r.Workloads[0] == results.WorkloadObserved
}

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
		sec, curve, err := observedOf(run.ID, o)
		if err != nil {
			return nil, nil, fmt.Errorf("report: run %d: %w", run.ID, err)
		}
		charts = append(charts, r.predictedChart(&sec, curve))
		out = append(out, sec)
	}
	return out, charts, nil
}

// observedOf predicts one observation: the table's levels, the forecast at HeadlineRTT,
// the shapes ranked by their share of the time there, the sentences, and the curve the
// chart draws.
func observedOf(id int64, o *observe.Observation) (Observed, []observe.Prediction, error) {
	sec := Observed{Run: id, Protocol: o.Protocol, Upstream: o.Upstream, Started: o.Started.UTC(),
		Window: time.Duration(o.WindowNs), Transactions: o.Transactions, TPS: o.TPS, Clients: o.ClientsDefault(),
		RoundTrips: o.RoundTripsMean, ObservedRTT: time.Duration(o.RTTNs), HeadlineRTT: HeadlineRTT,
		Chart: fmt.Sprintf("%s-%d", ChartPredicted, id)}
	if o.Ended.After(o.Started) {
		sec.Duration = o.Ended.Sub(o.Started)
	}
	rp, err := replay.FromObservation(o)
	if err != nil {
		return Observed{}, nil, err
	}
	sec.Replay = rp
	if sec.Predictions, err = observe.Curve(o, ObservedRTTs, 0); err != nil {
		return Observed{}, nil, err
	}
	f, err := observe.Predict(o, HeadlineRTT, 0)
	if err != nil {
		return Observed{}, nil, err
	}
	sec.LatencyMs, sec.HeadlineTPS, sec.HeadlineMs = f.ObservedLatencyMs, f.TPS, f.LatencyMs
	sec.Fall10, sec.Fall50 = time.Duration(f.Fall10RTTNs), time.Duration(f.Fall50RTTNs)
	sec.UpperBound, sec.LowerBound, sec.Losers, sec.Notes, sec.Caveats = f.UpperBound, f.LowerBound, f.Losers, f.Notes, f.Caveats
	sec.Shapes = observedShapes(o, f)
	sec.Ranked, sec.Top = rankShapes(sec.Shapes)
	sec.Title, sec.Question = observedTitle(&sec, len(o.Shapes)), observedQuestion(&sec)
	sec.Verdict = observedVerdict(&sec)
	curve, err := observe.Curve(o, chartRTTs(sec.Fall10), 0)
	return sec, curve, err
}

// observedShapes describes the shapes with the forecast's figures at its RTT.
func observedShapes(o *observe.Observation, f *observe.Forecast) []ObservedShape {
	out := make([]ObservedShape, 0, len(o.Shapes))
	for j, s := range o.Shapes {
		p := f.Shapes[j]
		sh := ObservedShape{Label: observe.TypeLabel(j, s), Name: observe.ShortLabel(j, s), Text: s.Shape, Count: s.Count,
			Share: p.Share, RoundTrips: s.RoundTripsMean, Statements: s.StatementsMean, LatencyMs: p.ObservedMs,
			P99Ms: s.LatencyMsP99, HeadlineMs: p.LatencyMs, Queue: p.Serial}
		if f.LatencyMs > 0 {
			sh.TimeShare = p.Share * p.LatencyMs / f.LatencyMs
		}
		if s.Serial != nil {
			sh.Serial = fmt.Sprintf("one at a time from round trip %d to the end (%d round trips held)", s.Serial.FromRoundTrip, s.Serial.RoundTripsHeld)
		}
		out = append(out, sh)
	}
	return out
}

// rankShapes orders the shapes by their share of the time (ties: observation order) and
// says how many of them to draw: those among the first chartShapes that take at least
// minChartShare of the time, none when one shape is nearly all of it (the line of all
// transactions is then its line).
func rankShapes(shapes []ObservedShape) ([]int, int) {
	idx := make([]int, len(shapes))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(shapes[b].TimeShare, shapes[a].TimeShare) })
	top := 0
	for _, i := range idx[:min(chartShapes, len(idx))] {
		if shapes[i].TimeShare < minChartShare {
			break
		}
		top++
	}
	if top == 1 && shapes[idx[0]].TimeShare >= oneShapeShare {
		top = 0
	}
	return idx, top
}

// observedTitle names an observation: "PostgreSQL application at 127.0.0.1:5432, observed
// 2025-01-02 03:04 UTC for 1m0s, 4 clients".
func observedTitle(sec *Observed, shapes int) string {
	t := "Application"
	if sec.Protocol != "" {
		t = sec.Protocol + " application"
	}
	if sec.Upstream != "" {
		t += " at " + sec.Upstream
	}
	if sec.Replay != nil {
		t += ", replayed by dblat replay"
	} else {
		t += ", observed"
	}
	if !sec.Started.IsZero() {
		t += " " + sec.Started.Format("2006-01-02 15:04 UTC")
	}
	d := sec.Duration
	if d == 0 {
		d = sec.Window
	}
	if d > 0 {
		t += " for " + spanText(d)
	}
	return t + ", " + words.Count(sec.Clients, "client")
}

// observedQuestion is what an observation's report answers, and from what.
func observedQuestion(sec *Observed) string {
	return fmt.Sprintf("What would a farther database cost it? Predicted for %s in a closed loop from run %d alone: %s TPS observed, %.1f round trips and %s a transaction on average.",
		words.Count(sec.Clients, "client"), sec.Run, meanText(sec.TPS), sec.RoundTrips, msValue(sec.LatencyMs))
}

// observedVerdict answers the question in a sentence, at HeadlineRTT: what the busiest
// shape (or the one shape) and the average transaction take there instead of what they
// took, and where throughput falls by 10 % and by half.
func observedVerdict(sec *Observed) string {
	at := "At +" + msText2(sec.HeadlineRTT) + " of round-trip time"
	b := sec.Shapes[sec.Ranked[0]]
	var s string
	if b.TimeShare >= oneShapeShare {
		s = fmt.Sprintf("%s a transaction (%s) takes %s instead of %s", at, b.Name, msValue(b.HeadlineMs), msValue(b.LatencyMs))
	} else {
		s = fmt.Sprintf("%s the busiest shape, %s, takes %s instead of %s, and a transaction %s instead of %s on average",
			at, b.Name, msValue(b.HeadlineMs), msValue(b.LatencyMs), msValue(sec.HeadlineMs), msValue(sec.LatencyMs))
	}
	return s + "; " + fallPhrase(sec) + "."
}

// boundMark is what a predicted throughput is written after: "≤ " for an upper bound,
// "≥ " for a lower one, "≈ " for a figure that is both, "" for neither.
func boundMark(upper, lower bool) string {
	switch {
	case upper && lower:
		return "≈ "
	case upper:
		return "≤ "
	case lower:
		return "≥ "
	}
	return ""
}

// fallPhrase says where the predicted throughput falls by 10 % and by half.
func fallPhrase(sec *Observed) string {
	base := fmt.Sprintf("%s TPS with %s", meanText(sec.Predictions[0].TPS), words.Count(sec.Clients, "client"))
	at, late := "at", ""
	switch {
	case sec.UpperBound && sec.LowerBound:
		base = "about " + base + ": see the caveats"
	case sec.UpperBound:
		base = "at most " + base + ": see the caveats"
		at, late = "by", " at the latest"
	case sec.LowerBound:
		base = "at least " + base + ": see the caveats"
		late = " at the earliest"
	}
	switch {
	case sec.Fall10 == 0:
		return fmt.Sprintf("throughput stays within 10 %% of its %s up to an hour of added RTT", base)
	case sec.Fall50 == 0:
		return fmt.Sprintf("throughput falls 10 %% %s +%s of added RTT%s, and not by half within an hour (from %s)",
			at, msText2(sec.Fall10), late, base)
	}
	return fmt.Sprintf("throughput falls 10 %% %s +%s and by half %s +%s of added RTT%s (from %s)",
		at, msText2(sec.Fall10), at, msText2(sec.Fall50), late, base)
}

// chartRTTs are the added RTTs a ChartPredicted samples: 0, then 1, 2 and 5 × 10ⁿ ms from
// below where throughput falls by 10 % (at most 0.1 ms) to 100 ms, so that the fall is
// drawn however early it comes.
func chartRTTs(fall10 time.Duration) []time.Duration {
	lo := 0.1 // ms
	if f := float64(fall10) / float64(time.Millisecond); f > 0 && f/2 < lo {
		lo = math.Pow(10, math.Floor(math.Log10(f/2)))
	}
	out := []time.Duration{0}
	for e := math.Floor(math.Log10(lo)); e <= 2; e++ {
		for _, m := range []float64{1, 2, 5} {
			v := m * math.Pow(10, e)
			if v >= lo*(1-1e-9) && v <= 100*(1+1e-9) {
				out = append(out, time.Duration(math.Round(v*float64(time.Millisecond))))
			}
		}
	}
	return out
}

// predictedChart draws an observation's prediction: mean response time (all transactions
// and the Top shapes) beside throughput, against the added RTT, with where throughput has
// fallen by 10 % and by half.
func (r *Report) predictedChart(sec *Observed, curve []observe.Prediction) Chart {
	ch := Chart{ID: sec.Chart, Kind: ChartPredicted, Lines: true, Cols: 2,
		Title: fmt.Sprintf("Predicted against added RTT, %s (run %d)", words.Count(sec.Clients, "client"), sec.Run)}
	var xs []float64
	for _, p := range curve {
		xs = append(xs, float64(p.RTTNs)/1e6)
	}
	series := func(name string, y func(p observe.Prediction) float64) (Series, []float64) {
		s := Series{Name: name, Group: name, Stat: StatPredicted}
		var ys []float64
		for _, p := range curve {
			s.Points = append(s.Points, Point{X: float64(p.RTTNs) / 1e6, Y: y(p)})
			ys = append(ys, y(p))
		}
		return s, ys
	}
	const all = "all transactions"
	var resp, tps Panel
	var respYs []float64
	s, ys := series(all, func(p observe.Prediction) float64 { return p.LatencyMs })
	resp.Series, respYs = append(resp.Series, s), append(respYs, ys...)
	for _, j := range sec.Ranked[:sec.Top] {
		s, ys := series(sec.Shapes[j].Name, func(p observe.Prediction) float64 { return p.Shapes[j].LatencyMs })
		resp.Series, respYs = append(resp.Series, s), append(respYs, ys...)
	}
	s, tpsYs := series(all, func(p observe.Prediction) float64 { return p.TPS })
	tps.Series = append(tps.Series, s)
	ry := valueAxis("mean response time (ms)", respYs, r.Options.YScale)
	ty := valueAxis("throughput (TPS)", tpsYs, r.Options.YScale)
	resp.Y, resp.YMin, resp.YMax = &ry, ry.Min, ry.Max
	tps.Y, tps.YMin, tps.YMax = &ty, ty.Min, ty.Max
	ch.X = valueAxis("added RTT (ms)", xs, r.Options.XScale)
	for _, m := range []struct {
		stat string
		at   time.Duration
	}{{StatFall10, sec.Fall10}, {StatFall50, sec.Fall50}} {
		if x := float64(m.at) / 1e6; x > 0 && x <= ch.X.Max {
			tps.Series = append(tps.Series, vline(m.stat, x, ty.Min, ty.Max))
		}
	}
	ch.Panels = []Panel{resp, tps}
	shapes := "all transactions"
	if sec.Top > 0 {
		share := 0.0
		for _, j := range sec.Ranked[:sec.Top] {
			share += sec.Shapes[j].TimeShare
		}
		shapes += fmt.Sprintf(" and the %s that take most of the time at +%s (%s of it together)",
			words.Count(sec.Top, "shape"), msText2(sec.HeadlineRTT), pctText(share))
	}
	ch.Note = fmt.Sprintf("The model (see Method): each transaction takes its observed time plus its round trips times the RTT added beyond the %s it was observed at; %s run in a closed loop with their observed time between transactions. Lines: %s; vertical lines: where throughput has fallen by 10 %% and by half. %s",
		fmtDuration(sec.ObservedRTT), words.Count(sec.Clients, "client"), shapes, axisNote(ch.X, logOf(ry, ty)))
	return ch
}

// logOf returns the first of the axes that is logarithmic (for axisNote), else the first.
func logOf(axes ...Axis) Axis {
	for _, a := range axes {
		if a.Scale == ScaleLog {
			return a
		}
	}
	return axes[0]
}

// spanText writes how long an observation ran: "20.5 s", "3m12s".
func spanText(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	return d.Round(time.Second).String()
}

// msValue writes a mean time in milliseconds to three significant figures: "0.269 ms",
// "5.27 ms", "64.3 ms", "450 ms".
func msValue(ms float64) string {
	switch a := math.Abs(ms); {
	case a >= 100:
		return fmt.Sprintf("%.0f ms", ms)
	case a >= 10:
		return fmt.Sprintf("%.1f ms", ms)
	case a >= 1:
		return fmt.Sprintf("%.2f ms", ms)
	}
	return fmt.Sprintf("%.3f ms", ms)
}

func fmtDuration(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	return d.String()
}

// observedHeadline is a report's headline when it holds observed applications alone: the
// first one's question, their verdicts, and no knees or table (nothing was measured
// against a factor).
func (r *Report) observedHeadline() Headline {
	h := Headline{Question: r.Observed[0].Question}
	for i, o := range r.Observed {
		if i > 0 {
			h.Verdict += " "
		}
		if len(r.Observed) > 1 {
			h.Verdict += fmt.Sprintf("Run %d: ", o.Run)
		}
		h.Verdict += o.Verdict
	}
	return h
}

// observedNotes explains how an observation's figures were computed.
func observedNotes() []string {
	return []string{
		"Observed by dblat proxy --observe: a transaction runs from its first request to its last answer as the proxy saw them, and its shape is the statements it ran, literals and parameters removed. Times are means over a shape's transactions; the response time adds the last answer's way back to the application.",
		"Predicted by dblat predict's model from the observation alone: each transaction takes its observed time plus its round trips times the RTT added beyond the one it was observed at; each client waits its observed time between transactions, in a closed loop of as many clients as were observed on average. Where a shape's transactions ran one at a time from some round trip to their end while the rest of them overlapped (a lock they all take), that section is a queue whose holding time grows by one RTT per round trip it spans, solved by mean-value analysis. The server is assumed to answer each request as fast as it did; the caveats say where that is doubtful and the throughput only an upper bound.",
		fmt.Sprintf("Shapes are ranked by their share of the time the clients spend in transactions at +%s of added RTT: frequent shapes and shapes of many round trips first. What would help is read at the same RTT.", msText2(HeadlineRTT)),
	}
}
