package report

import (
	"bytes"
	"fmt"
	"html/template"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dblat/dblat/internal/analysis"
	"github.com/dblat/dblat/internal/spec"
)

// This file connects package analysis to the report through the hooks the report already
// has: credibility findings become Report.Warnings, the analysis' method notes join
// Report.Notes. The analysis sections themselves (latency model, pool sizing,
// response-time limits) are rendered by analysis.WriteText for text and by AnalysisHTML
// for HTML, for the report writers to place.

// BuildWithAnalysis builds the report of in (Build) and runs package analysis over the same
// runs, grouped by the same factors (the report's, given or inferred): the findings are
// appended to the report's Warnings (WarningOf) and the analysis' notes to its Notes. opt's
// Factors are ignored in favour of the report's. It fails where Build fails.
func BuildWithAnalysis(in Input, opt analysis.CheckOptions) (*Report, *analysis.Analysis, error) {
	r, err := Build(in)
	if err != nil {
		return nil, nil, err
	}
	opt.Factors = make([]string, len(r.Factors))
	for i, f := range r.Factors {
		opt.Factors[i] = f.Key
	}
	a := analysis.Analyze(in.Runs, opt)
	r.Analysis = a
	r.AddFindings(a.Findings) // after setting Analysis: the verdict then speaks of the check
	r.Notes = append(r.Notes, a.Notes...)
	r.Agents = AgentRows(in.Runs, opt.Parts, r.Metric)
	return r, a, nil
}

// AddFindings appends one Warning per finding, in the findings' order (errors first), and
// rewrites the headline verdict, which ends with what the findings amount to.
func (r *Report) AddFindings(fs []analysis.Finding) {
	for _, f := range fs {
		r.Warnings = append(r.Warnings, WarningOf(f))
	}
	if r.ObservedOnly() {
		return // the verdict is the observations', which the findings do not judge
	}
	r.Headline.Verdict = r.verdict(r.Headline.Knees)
}

// WarningOf maps a credibility finding to a report Warning: the rule is the check; message,
// evidence and fix are kept apart, so that a reader sees the message first.
func WarningOf(f analysis.Finding) Warning {
	return Warning{Check: f.Rule, Severity: f.Severity.String(), Message: f.Message, Evidence: f.Evidence, Fix: f.Fix,
		Cells: append([]string(nil), f.Cells...), Runs: append([]int64(nil), f.Runs...)}
}

// AnalysisHTML renders the sections of a as an HTML fragment for the report page: "Latency
// model" (predicted against measured throughput per series, knees, capacity), "Pool
// sizing" and "Response-time limits", each only when it has content, with the page's own
// classes (section, h2, table, td.num). Every value is escaped by html/template; like the
// other writers it reads nothing but a. A nil a renders nothing.
func AnalysisHTML(a *analysis.Analysis) (template.HTML, error) {
	if a == nil {
		return "", nil
	}
	var b bytes.Buffer
	if err := analysisPage().Execute(&b, a); err != nil {
		return "", fmt.Errorf("report: write analysis html: %w", err)
	}
	return template.HTML(b.String()), nil // html/template escaped every value
}

var (
	analysisOnce sync.Once
	analysisTmpl *template.Template
)

func analysisPage() *template.Template {
	analysisOnce.Do(func() {
		analysisTmpl = template.Must(template.New("analysis").Funcs(template.FuncMap{
			"dur":        func(d time.Duration) string { return spec.FormatDuration(d.Round(time.Microsecond)) },
			"f1":         func(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) },
			"f2":         func(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) },
			"pct":        func(f float64) string { return fmt.Sprintf("%+.1f %%", f) },
			"ms":         func(d time.Duration) string { return msText(d.Microseconds()) },
			"knee":       kneeHTML,
			"limitTypes": func() []string { return limitTypes },
			"limitRows":  limitRows,
			"unpooled": func(ls []analysis.ResponseLimit) bool {
				for _, l := range ls {
					if !l.Pooled {
						return true
					}
				}
				return false
			},
			"none": orNone,
			"join": strings.Join,
		}).Parse(analysisHTML))
	})
	return analysisTmpl
}

// kneeHTML describes one knee of a fit: measured (interpolated) and model crossings, or
// "not reached up to".
func kneeHTML(measured time.Duration, between []time.Duration, model time.Duration, f analysis.Fit) string {
	if len(f.Points) < 2 {
		return "-"
	}
	d := func(x time.Duration) string { return spec.FormatDuration(x.Round(time.Microsecond)) }
	s := analysis.MeasuredKnee(measured, between, f.MaxRTT, d)
	if model > 0 {
		s += ", " + d(model) + " model"
	}
	return s
}

// limitTypes are TPC-C's transaction types in the spec's order (clause 2), the columns of
// the response-time table.
var limitTypes = []string{"new_order", "payment", "order_status", "delivery", "stock_level"}

// limitRow is one cell of the response-time table: its p90 per type ("–" where the cell
// completed none) and the verdict.
type limitRow struct {
	Cell    string
	P90     []string
	Verdict string
	Over    bool
}

// limitRows lays the response limits out one row per cell, in their order.
func limitRows(ls []analysis.ResponseLimit) []limitRow {
	var rows []limitRow
	idx := map[string]int{}
	for _, l := range ls {
		i, ok := idx[l.Cell]
		if !ok {
			i = len(rows)
			idx[l.Cell] = i
			p90 := make([]string, len(limitTypes))
			for j := range p90 {
				p90[j] = "–"
			}
			rows = append(rows, limitRow{Cell: l.Cell, P90: p90, Verdict: "ok"})
		}
		r := &rows[i]
		if j := slices.Index(limitTypes, l.TxType); j >= 0 {
			r.P90[j] = msText(l.P90.Microseconds())
			if !l.Pooled {
				r.P90[j] += "*"
			}
		}
		if !l.OK {
			if !r.Over {
				r.Verdict = "over: " + l.TxType
			} else {
				r.Verdict += ", " + l.TxType
			}
			r.Over = true
		}
	}
	return rows
}

const analysisHTML = `{{if .Fits}}
<section id="latency-model">
<h2>Latency model</h2>
<p>Throughput in completed transactions per second against the added RTT the link achieved, with the fit of X(r) = min(N/(R·r + s), C): R round trips per transaction (measured), s the time per transaction that is not added RTT, C the server's capacity where a plateau shows. A series that does not fit says why instead of a number.</p>
{{range .Fits}}
<h3>{{.Series}}</h3>
<p>N = {{.N}}{{if .R}}, R = {{f1 .R}} round trips ({{if .RMeasured}}measured{{else}}fitted{{end}}){{end}}{{if .Fits}}, s = {{dur .S}}, model {{.Model}}, largest error {{f1 .MaxErrPct}} %{{if .Capacity}}, capacity {{f1 .Capacity}} tx/s up to {{dur .Crossover}}{{end}}{{else}}{{if and .EffectiveR .RMeasured}}, effective R {{f1 .EffectiveR}}{{end}}: <strong>does not fit</strong>{{end}}.</p>
<div class="scroll"><table>
<tr><th>RTT</th><th class="num">achieved</th><th class="num">runs</th><th class="num">round trips</th><th class="num">measured</th><th class="num">predicted</th><th class="num">error</th></tr>
{{$fits := .Fits}}{{range .Points}}<tr><td>{{none .Level}}</td><td class="num">{{dur .RTT}}</td><td class="num">{{.Runs}}</td><td class="num">{{f1 .RoundTrips}}</td><td class="num">{{f1 .Measured}}</td>{{if $fits}}<td class="num">{{f1 .Predicted}}</td><td class="num">{{pct .ErrPct}}</td>{{else}}<td class="num">–</td><td class="num">–</td>{{end}}</tr>
{{end}}</table></div>
<p>Knee −10 %: {{knee .Knee10 .Knee10Between .ModelKnee10 .}}; knee −50 %: {{knee .Knee50 .Knee50Between .ModelKnee50 .}}.</p>
<p>{{.Why}}</p>
{{end}}
</section>
{{end}}
{{if .Pool}}
<section id="pool-sizing">
<h2>Pool sizing</h2>
<p>The pool size with the highest mean throughput at each RTT, the smallest within 5 % of it, and what each step between measured sizes bought per added terminal (efficiency 1 = as much as the terminals before it).</p>
<div class="scroll"><table>
<tr><th>series</th><th>RTT</th><th class="num">best</th><th class="num">within 5 %</th><th>{{.Metric}} by size</th><th>each step</th></tr>
{{range .Pool}}<tr><td>{{.Series}}</td><td>{{none .Level}}</td><td class="num">{{.Best}}{{if .AtEdge}} (largest measured: more may help){{end}}</td><td class="num">{{.Enough}}</td><td>{{range $i, $l := .Levels}}{{if $i}}, {{end}}{{$l.Size}}: {{f1 $l.Mean}}{{end}}</td><td>{{range $i, $g := .Gains}}{{if $i}}; {{end}}{{$g.From}}→{{$g.To}}: {{f1 $g.PerConnection}}/terminal ({{f2 $g.Efficiency}}){{end}}</td></tr>
{{end}}</table></div>
</section>
{{end}}
{{if .Limits}}
<section id="response-limits">
<h2>Response-time limits</h2>
<p>TPC-C clause 5.2.5.3: the 90th percentile of each transaction type within 5 s (Stock-Level 20 s), from the runs' histograms merged per cell, in milliseconds. Response time from each transaction's intended start in cells of open-loop runs or with think times (what the user waited); service time otherwise, without a wait for a pooled connection.</p>
<div class="scroll"><table>
<tr><th>cell</th>{{range limitTypes}}<th class="num">{{.}}</th>{{end}}<th>verdict</th></tr>
{{range limitRows .Limits}}<tr{{if .Over}} class="failed"{{end}}><td>{{none .Cell}}</td>{{range .P90}}<td class="num">{{.}}</td>{{end}}<td>{{.Verdict}}</td></tr>
{{end}}</table></div>
{{if unpooled .Limits}}<p>* the mean of the runs' own p90s: a run had no histogram.</p>{{end}}
</section>
{{end}}
`
