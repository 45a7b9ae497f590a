package analysis

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/spec"
	"github.com/dblat/dblat/internal/words"
)

// Analysis is everything package analysis says about one study's runs: the sections of
// `dblat analyze` and of the report. It is JSON-serialisable; durations are nanoseconds.
type Analysis struct {
	// Metric is the report's throughput metric (NOPM for TPC-C, else TPS): the unit of the
	// pool sizing. The latency model always works in TPS.
	Metric string `json:"metric"`
	// Factors are the factors the runs were grouped by (given or inferred).
	Factors []string `json:"factors"`
	// Fits is nil when RTT is not a factor; Pool when neither terminals nor connections is;
	// Limits when no cell is TPC-C.
	Fits   []Fit           `json:"latency_model"`
	Pool   []PoolAdvice    `json:"pool_sizing"`
	Limits []ResponseLimit `json:"response_limits"`
	// Rates is the response time against RTT of each series of open-loop runs at a fixed
	// offered rate (ResponseAtRate); nil without such runs or without RTT as a factor.
	Rates    []RateSeries `json:"response_at_rate,omitempty"`
	Findings []Finding    `json:"findings"`
	// Notes explain how the figures were computed.
	Notes []string `json:"notes"`
}

// Analyze runs FitLatency, PoolSizing, ResponseLimits and Check over runs, grouped by
// opt.Factors (inferred when empty by results.InferFactors, as report.Build infers them). A
// pure function.
func Analyze(runs []results.Run, opt CheckOptions) *Analysis {
	factors := opt.Factors
	if len(factors) == 0 {
		factors = results.InferFactors(runs)
	}
	opt.Factors = factors
	a := &Analysis{
		Metric:   results.MetricOf(runs),
		Factors:  append([]string{}, factors...),
		Fits:     FitLatency(runs, factors),
		Pool:     PoolSizing(runs, factors),
		Limits:   ResponseLimits(runs, factors),
		Rates:    ResponseAtRate(runs, factors),
		Findings: Check(runs, opt),
	}
	if a.Findings == nil {
		a.Findings = []Finding{}
	}
	a.Notes = Notes()
	return a
}

// Notes explain the methods behind the sections, for the report's method section.
func Notes() []string {
	return []string{
		fmt.Sprintf("Latency model: X(r) = min(N/(R·r + s), C) in completed transactions per second, with N the terminals (or the pool when smaller), R the round trips per transaction measured on the client's connections at each RTT level (weighted by each type's completed transactions), r the added RTT the link's calibration measured, and s (and C, where throughput shows a plateau) fitted by least squares on N/X weighted by 1/(N/X)², i.e. on relative error. A series fits when the curve is within %.0f %% of every level; otherwise it is said not to fit, and why, instead of forcing a number.", FitTolerance*100),
		"Knees are the smallest RTTs at which throughput has fallen to 90 % and 50 % of its value at the lowest RTT measured: from the measured means, interpolated between the two levels that bracket the crossing along a straight line in time per transaction (N/X, which grows by one RTT per round trip where the network bounds throughput), and from the fitted curve; neither is extrapolated beyond the highest RTT measured.",
		fmt.Sprintf("Pool sizing compares the mean throughput of the pool sizes measured at each RTT; \"enough\" is the smallest size within %.0f %% of the best, and each step's efficiency is its gain per added terminal over the throughput per terminal before it (1 = linear scaling).", (1-EnoughFraction)*100),
		"Response-time limits are TPC-C's (clause 5.2.5.3): the 90th percentile of each type within 5 s, Stock-Level within 20 s, read from the runs' HDR histograms merged per cell. In open-loop runs and under think times they are response times, from each transaction's intended start (what the user waited); otherwise service times, without a wait for a pooled connection.",
		fmt.Sprintf("Response time at a fixed rate: below saturation a transaction's service time is R·r + s (R round trips measured at the lowest RTT, s from its service time there) and its response time that plus the wait for a free terminal, taken as M/M/N's (Erlang C: exact for Poisson arrivals and exponential service, an upper bound for constant arrivals). The terminals saturate where λ·(R·r + s) = N, at r* = (N/λ − s)/R; measured, saturation is the lowest RTT whose runs did not sustain the rate (overload points). Departures are levels where the measured mean response differs from the model by more than %.0f %% and 1 ms, with the likely cause.", ModelTolerance*100),
	}
}

// WriteText writes a as plain-text sections for a terminal: latency model, pool sizing,
// response-time limits (each only when it has content) and the credibility findings.
func WriteText(w io.Writer, a *Analysis) error {
	ew := words.NewWriter(w, "analysis: write text")
	if len(a.Fits) > 0 {
		ew.Printf("Latency model (throughput in completed transactions per second)\n")
		for i := range a.Fits {
			writeFit(ew, &a.Fits[i])
		}
		ew.Printf("\n")
	}
	if len(a.Pool) > 0 {
		ew.Printf("Pool sizing (%s by %s)\n", a.Metric, a.Pool[0].Factor)
		for _, p := range a.Pool {
			writePool(ew, &p)
		}
		ew.Printf("\n")
	}
	if len(a.Limits) > 0 {
		writeLimits(ew, a.Limits)
		ew.Printf("\n")
	}
	for i := range a.Rates {
		WriteRate(ew, &a.Rates[i])
		ew.Printf("\n")
	}
	if err := ew.Err(); err != nil {
		return err
	}
	return WriteFindings(w, a.Findings)
}

// WriteFindings writes the credibility findings, errors first, each with its evidence,
// runs and fix; "no findings" when there are none.
func WriteFindings(w io.Writer, fs []Finding) error {
	ew := words.NewWriter(w, "analysis: write text")
	var n [3]int
	for _, f := range fs {
		n[f.Severity]++
	}
	ew.Printf("Credibility: %s, %s, %s\n", words.Count(n[Error], "error"), words.Count(n[Warning], "warning"), words.Count(n[Info], "note"))
	if len(fs) == 0 {
		ew.Printf("  no findings\n")
	}
	for _, f := range fs {
		ew.Printf("  [%s] %s: %s\n", f.Severity, f.Rule, f.Message)
		if f.Evidence != "" {
			ew.Printf("      evidence: %s\n", f.Evidence)
		}
		if len(f.Cells) > 0 {
			ew.Printf("      cells: %s\n", strings.Join(f.Cells, "; "))
		}
		if len(f.Runs) > 0 {
			ew.Printf("      runs: %s\n", idList(f.Runs, 20))
		}
		ew.Printf("      fix: %s\n", f.Fix)
	}
	return ew.Err()
}

func writeFit(ew *words.Writer, f *Fit) {
	head := fmt.Sprintf("  %s: N = %d", f.Series, f.N)
	if f.R > 0 {
		src := "measured"
		if !f.RMeasured {
			src = "fitted"
		}
		head += fmt.Sprintf(", R = %.1f round trips (%s)", f.R, src)
	}
	if f.Fits {
		head += fmt.Sprintf(", s = %s, model %s, max error %.0f %%", fmtDur(f.S), f.Model, f.MaxErrPct)
		if f.Capacity > 0 {
			head += fmt.Sprintf(", capacity %.1f tx/s up to %s", f.Capacity, fmtDur(f.Crossover))
		}
	} else {
		if f.EffectiveR > 0 && f.RMeasured {
			head += fmt.Sprintf(", effective R %.1f", f.EffectiveR)
		}
		head += ": does not fit"
	}
	ew.Printf("%s\n", head)
	tw := ew.Table("    ")
	tw.Row("rtt", "achieved", "runs", "round trips", "measured", "predicted", "error")
	for _, p := range f.Points {
		pred, e := "-", "-"
		if f.Fits {
			pred, e = fmt.Sprintf("%.1f", p.Predicted), fmt.Sprintf("%+.1f %%", p.ErrPct)
		}
		tw.Row(p.Level, fmtDur(p.RTT), strconv.Itoa(p.Runs), fmt.Sprintf("%.1f", p.RoundTrips),
			fmt.Sprintf("%.1f", p.Measured), pred, e)
	}
	tw.Flush()
	ew.Printf("    knee −10 %%: %s; knee −50 %%: %s\n", kneeText(f.Knee10, f.Knee10Between, f.ModelKnee10, f),
		kneeText(f.Knee50, f.Knee50Between, f.ModelKnee50, f))
	ew.Printf("    %s\n", f.Why)
}

func kneeText(measured time.Duration, between []time.Duration, model time.Duration, f *Fit) string {
	if len(f.Points) < 2 {
		return "-"
	}
	s := MeasuredKnee(measured, between, f.MaxRTT, fmtDur)
	if model > 0 {
		s += ", " + fmtDur(model) + " model"
	}
	return s
}

func writePool(ew *words.Writer, p *PoolAdvice) {
	parts := make([]string, len(p.Levels))
	for i, l := range p.Levels {
		parts[i] = fmt.Sprintf("%d: %.1f", l.Size, l.Mean)
	}
	series := ""
	if p.Series != allRuns {
		series = p.Series + ", "
	}
	ew.Printf("  %srtt %s: best %d", series, orNone(p.Level), p.Best)
	if p.AtEdge {
		ew.Printf(" (the largest size measured: more may help)")
	}
	ew.Printf("; smallest within %.0f %% of it: %d", (1-EnoughFraction)*100, p.Enough)
	ew.Printf("\n    %s by size: %s\n", p.Metric, strings.Join(parts, ", "))
	gains := make([]string, len(p.Gains))
	for i, g := range p.Gains {
		gains[i] = fmt.Sprintf("%d→%d %+.1f per terminal (efficiency %.2f)", g.From, g.To, g.PerConnection, g.Efficiency)
	}
	ew.Printf("    each step: %s\n", strings.Join(gains, "; "))
}

// WriteRate writes one series' response time against RTT at its fixed rate: the model's
// parameters, the saturation RTT (measured and modelled), a table per RTT level and the
// departures from the model.
func WriteRate(ew *words.Writer, rs *RateSeries) {
	ew.Printf("Response time against RTT at %s per second (%s arrivals, %s; %s)\n",
		spec.FormatRate(rs.Rate), rs.Arrival, words.Count(rs.Terminals, "terminal"), rs.Series)
	if rs.R > 0 {
		ew.Printf("  model: response ≈ R·r + s plus the wait for a terminal, R = %.1f round trips, s = %s; saturation at r* = %s\n",
			rs.R, fmtMs(rs.S), orNone(fmtDurOr(rs.ModelSaturation)))
	} else {
		ew.Printf("  model: no round-trip counts (unmetered connections), no model\n")
	}
	switch {
	case rs.Saturated && rs.SustainedLevel != "":
		ew.Printf("  measured saturation: the rate was sustained up to RTT %s and not at %s\n", rs.SustainedLevel, rs.SaturationLevel)
	case rs.Saturated:
		ew.Printf("  measured saturation: the rate was not sustained at any RTT measured (from %s)\n", rs.SaturationLevel)
	default:
		ew.Printf("  measured saturation: none; the rate was sustained at every RTT measured\n")
	}
	tw := ew.Table("    ")
	tw.Row("rtt", "offered/s", "achieved/s", "overload", "service", "response", "model", "ρ", "type", "p50", "p90", "p99")
	for _, p := range rs.Points {
		over := "-"
		if p.Overloaded > 0 {
			over = fmt.Sprintf("%d of %d", p.Overloaded, p.Runs)
		}
		model, rho := "-", "-"
		if p.Model > 0 {
			model = fmtMs(p.Model)
		}
		if p.Utilisation > 0 {
			rho = fmt.Sprintf("%.2f", p.Utilisation)
		}
		for i, t := range p.Types {
			if i == 0 {
				tw.Row(p.Level, trimNum(p.Offered), trimNum(p.Achieved), over, fmtMs(p.Service), fmtMs(p.Response), model, rho,
					t.Type, fmtMs(t.P50), fmtMs(t.P90), fmtMs(t.P99))
				continue
			}
			tw.Row("", "", "", "", "", "", "", "", t.Type, fmtMs(t.P50), fmtMs(t.P90), fmtMs(t.P99))
		}
	}
	tw.Flush()
	for _, d := range rs.Departures {
		ew.Printf("  departs: %s\n", d)
	}
}

func fmtDurOr(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return fmtDur(d)
}

func writeLimits(ew *words.Writer, ls []ResponseLimit) {
	fails, unpooled := 0, false
	var cells []string
	byCell := map[string]map[string]ResponseLimit{}
	for _, l := range ls {
		if !l.OK {
			fails++
		}
		unpooled = unpooled || !l.Pooled
		if byCell[l.Cell] == nil {
			byCell[l.Cell] = map[string]ResponseLimit{}
			cells = append(cells, l.Cell)
		}
		byCell[l.Cell][l.TxType] = l
	}
	ew.Printf("Response-time limits, p90 per type (TPC-C 5.2.5.3: 5 s; Stock-Level 20 s): %d of %d over the limit\n", fails, len(ls))
	tw := ew.Table("    ")
	tw.Row(append(append([]string{"cell"}, limitOrder...), "verdict")...)
	for _, c := range cells {
		row := []string{orAll(c)}
		var over []string
		for _, typ := range limitOrder {
			l, ok := byCell[c][typ]
			if !ok {
				row = append(row, "-")
				continue
			}
			v := fmtMs(l.P90)
			if !l.Pooled {
				v += "*"
			}
			if !l.OK {
				over = append(over, typ)
			}
			row = append(row, v)
		}
		verdict := "ok"
		if len(over) > 0 {
			verdict = "OVER: " + strings.Join(over, ", ")
		}
		tw.Row(append(row, verdict)...)
	}
	tw.Flush()
	if unpooled {
		ew.Printf("    * mean of the runs' own p90s: a run had no histogram\n")
	}
}

func fmtMs(d time.Duration) string {
	ms := float64(d) / float64(time.Millisecond)
	switch {
	case ms < 10:
		return fmt.Sprintf("%.3f ms", ms)
	case ms < 1000:
		return fmt.Sprintf("%.1f ms", ms)
	}
	return fmt.Sprintf("%.2f s", ms/1000)
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// MeasuredKnee says where a measured knee is, with durations written by format: "1.2ms
// measured", "between 0 and 20ms (levels too far apart to place it)" (KneeAt), or "not
// reached up to 20ms".
func MeasuredKnee(measured time.Duration, between []time.Duration, maxRTT time.Duration, format func(time.Duration) string) string {
	switch {
	case measured > 0:
		return format(measured) + " measured"
	case len(between) == 2:
		return "between " + format(between[0]) + " and " + format(between[1]) + " (levels too far apart to place it)"
	}
	return "not reached up to " + format(maxRTT)
}
