package report

import (
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"codeberg.org/go-fonts/liberation/liberationsansregular"

	"github.com/dblat/dblat/internal/analysis"
	"github.com/dblat/dblat/internal/results"
)

// WriteHTML writes r as one self-contained HTML page: inline CSS, the charts as inline SVG
// drawn by gonum/plot, the chart font embedded once as a data URL, no scripts and no
// external URLs, so that it reads offline and prints. Every value is escaped by
// html/template. Like the other writers it reads nothing but r, so the same report gives
// the same bytes.
//
// The page opens with the answer: the study's question, the headline chart (throughput
// against RTT, or the first chart the factors give), the verdict and the second throughput
// chart; then the findings (knees, the headline table, the credibility check); then the
// details (response times, the latency model, every table, the configuration, the runs,
// the method and the study file).
func WriteHTML(w io.Writer, r *Report) error {
	v := htmlView{Report: r}
	if r.Analysis != nil {
		sec, err := AnalysisHTML(r.Analysis)
		if err != nil {
			return err
		}
		v.AnalysisHTML = sec
	}
	for i := range r.Charts {
		ch := &r.Charts[i]
		svg, err := renderSVG(ch)
		if err != nil {
			return err
		}
		hc := htmlChart{Chart: ch, SVG: template.HTML(svg)} // vgsvg escapes the text it draws
		switch ch.Kind {
		case ChartThroughput:
			v.Throughput = append(v.Throughput, hc)
		case ChartRate:
			v.RateCharts = append(v.RateCharts, hc)
		case ChartPredicted:
			v.PredictedCharts = append(v.PredictedCharts, hc)
		case ChartTimeline:
			v.Timelines = append(v.Timelines, hc)
		default:
			v.Percentiles = append(v.Percentiles, hc)
		}
	}
	for i := range r.AtRate {
		rs := &r.AtRate[i]
		sec := rateSection{Title: rateTitle(rs, len(r.AtRate) > 1), Series: rs}
		for j := range v.RateCharts {
			if v.RateCharts[j].ID == fmt.Sprintf("%s-%d", ChartRate, i+1) {
				sec.Chart = &v.RateCharts[j]
			}
		}
		for _, p := range rs.Points {
			for k, t := range p.Types {
				row := rateRow{Point: p, Type: t, First: k == 0, Span: len(p.Types)}
				sec.Rows = append(sec.Rows, row)
			}
		}
		v.Rates = append(v.Rates, sec)
	}
	for i := range r.Observed {
		sec := newObservedSection(&r.Observed[i], !r.ObservedOnly() || len(r.Observed) > 1)
		for j := range v.PredictedCharts {
			if v.PredictedCharts[j].ID == r.Observed[i].Chart {
				sec.Chart = &v.PredictedCharts[j]
			}
		}
		v.ObservedSecs = append(v.ObservedSecs, sec)
	}
	for _, typ := range r.TxTypes {
		t := txTable{Type: typ}
		for i := range r.Cells {
			if tx := findTx(&r.Cells[i], typ); tx != nil {
				t.Rows = append(t.Rows, txRow{Levels: r.Cells[i].Levels, Tx: tx})
			}
		}
		v.Tx = append(v.Tx, t)
	}
	if err := page().Execute(w, v); err != nil {
		return fmt.Errorf("report: write html: %w", err)
	}
	return nil
}

// Disturbed reports whether a timeline the page draws shows a disturbance.
func (v htmlView) Disturbed() bool {
	for _, t := range v.Timelines {
		for _, pn := range t.Panels {
			for _, s := range pn.Series {
				if s.Stat == StatDisturbed {
					return true
				}
			}
		}
	}
	return false
}

// PageTitle names a page of observed applications alone: the observation's title, or the
// runs when there are several.
func (v htmlView) PageTitle() string {
	if len(v.Observed) == 1 {
		return v.Observed[0].Title
	}
	runs := make([]int64, len(v.Observed))
	for i, o := range v.Observed {
		runs[i] = o.Run
	}
	return "Observed applications: runs " + runList(runs)
}

type htmlView struct {
	*Report
	Throughput, Percentiles, RateCharts []htmlChart
	PredictedCharts, Timelines          []htmlChart
	Tx                                  []txTable
	// ObservedSecs are the observed applications' sections, one per Report.Observed.
	ObservedSecs []*observedSection
	// Rates are the response-time-at-a-fixed-rate sections, one per Report.AtRate series.
	Rates []rateSection
	// AnalysisHTML holds the latency-model, pool-sizing and response-limit sections.
	AnalysisHTML template.HTML
}

type htmlChart struct {
	*Chart
	SVG template.HTML
}

// rateSection is one series' response time against RTT at its fixed rate: its chart, and
// one table row per RTT level and transaction type.
type rateSection struct {
	Title  string
	Series *analysis.RateSeries
	Chart  *htmlChart
	Rows   []rateRow
}

// rateRow is one transaction type at one RTT level; First marks the level's first row,
// which carries the level's own figures over Span rows.
type rateRow struct {
	Point analysis.RatePoint
	Type  analysis.RateType
	First bool
	Span  int
}

type txTable struct {
	Type string
	Rows []txRow
}

type txRow struct {
	Levels []string
	Tx     *TxCell
}

var (
	pageOnce sync.Once
	pageTmpl *template.Template
)

func page() *template.Template {
	pageOnce.Do(func() {
		pageTmpl = template.Must(template.New("report").Funcs(template.FuncMap{
			"css": func() template.CSS { return template.CSS(fontCSS() + pageCSS) }, // constant, and base64
			"ms":  msText,
			"txms": func(t *TxCell, us int64) string {
				if !t.Done() {
					return "–"
				}
				return msText(us)
			},
			"f1":         func(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) },
			"f0":         func(f float64) string { return strconv.FormatFloat(f, 'f', 0, 64) },
			"f3":         func(f float64) string { return strconv.FormatFloat(f, 'f', 3, 64) },
			"runlist":    runList,
			"none":       orNone,
			"counts":     countsText,
			"metric":     metricDesc,
			"time":       func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") },
			"join":       strings.Join,
			"est":        estText,
			"rtt":        msText2,
			"mean":       meanText,
			"rttLevel":   func(l string) string { return columnLabel(results.FactorRTT, l) },
			"knee":       kneeCell,
			"series":     func(c Config) string { return seriesHeading(c) },
			"dms":        func(d time.Duration) string { return msText(d.Microseconds()) },
			"rttns":      func(ns int64) string { return msText2(time.Duration(ns)) },
			"msText2":    msText2,
			"share":      func(f float64) string { return fmt.Sprintf("%.0f %%", 100*f) },
			"us":         func(d time.Duration) int64 { return d.Microseconds() },
			"rate":       func(f float64) string { return fmtNum(f) },
			"pct":        pctText,
			"overload":   overloadText,
			"reason":     runReason,
			"msn":        msNumber,
			"add":        func(a, b int) int { return a + b },
			"secs":       func(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) },
			"phaseNames": func() []string { return phaseNames },
			"phaseCells": phaseCells,
		}).Parse(pageHTML))
	})
	return pageTmpl
}

// kneeCell describes one knee in the findings table: the quoted value, and the measured
// one beside the model's.
func kneeCell(measured time.Duration, between []time.Duration, model time.Duration, k KneeRow) string {
	switch {
	case k.Fits && model > 0 && measured > 0:
		return msText2(model) + " (measured " + msText2(measured) + ")"
	case k.Fits && model > 0 && len(between) == 2:
		return msText2(model) + " (measured: between " + msText2(between[0]) + " and " + msText2(between[1]) + ")"
	case k.Fits && model > 0:
		return msText2(model)
	case measured > 0:
		return msText2(measured)
	case len(between) == 2:
		return "between " + msText2(between[0]) + " and " + msText2(between[1]) + " (levels too far apart to place it)"
	}
	return "not reached up to " + msText2(k.MaxRTT)
}

// fontCSS declares Liberation Sans from the bytes gonum/plot measured the chart text with.
// Without it a browser lacking the font substitutes one with other metrics and labels that
// were laid out side by side can collide. About 550 kB, once per page.
func fontCSS() string {
	return `@font-face{font-family:"` + fontFamily + `";font-style:normal;font-weight:normal;src:url(data:font/ttf;base64,` +
		base64.StdEncoding.EncodeToString(liberationsansregular.TTF) + `) format("truetype");}` + "\n"
}

const pageCSS = `
:root{--ink:#1a1a1a;--muted:#555;--rule:#d4d4d4;--band:#f4f6f8;--bad:#a8200d;--warn:#8a5a00}
*{box-sizing:border-box}
body{margin:0;color:var(--ink);background:#fff;font:15px/1.45 "Liberation Sans",Arial,Helvetica,sans-serif}
main{max-width:1000px;margin:0 auto;padding:14px 20px 48px}
h1{font-size:24px;margin:0 0 2px}
h2{font-size:20px;margin:34px 0 8px;padding-bottom:4px;border-bottom:2px solid var(--ink)}
h3{font-size:16px;margin:22px 0 6px}
p{margin:6px 0}
p.question{font-size:17px;margin:0 0 2px}
.desc{color:var(--muted);font-size:13px;margin:0}
p.verdict{font-size:16px;background:var(--band);border-left:4px solid #0072b2;padding:8px 12px;margin:4px 0 14px}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:10px 0}
dl.facts dt{font-weight:bold}
dl.facts dd{margin:0}
nav ul{list-style:none;padding:0;margin:12px 0;display:flex;flex-wrap:wrap;gap:4px 16px;font-size:14px}
nav a{color:#0b5cad}
figure.chart{margin:10px 0 20px;break-inside:avoid;page-break-inside:avoid}
figure.chart svg{display:block;width:100%;height:auto;max-width:960px}
figcaption{color:var(--muted);font-size:13px;margin-top:4px}
table{border-collapse:collapse;margin:8px 0 14px;font-size:13px}
th,td{padding:3px 9px;text-align:left;border-bottom:1px solid var(--rule);vertical-align:top}
th{background:var(--band);border-bottom:1px solid #aaa}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
tr.failed td,tr.aborted td,tr.running td{color:var(--bad)}
.status{font-weight:bold}
.name{white-space:nowrap}
.scroll{overflow-x:auto}
ul.findings{list-style:none;padding:0}
ul.findings li{margin:6px 0;padding-left:10px;border-left:4px solid var(--rule)}
ul.findings li.error{border-color:var(--bad)}
ul.findings li.warning{border-color:#e69f00}
.sev{font-weight:bold;text-transform:uppercase;font-size:12px;margin-right:6px}
li.error .sev{color:var(--bad)}
li.warning .sev{color:var(--warn)}
details{margin:2px 0}
summary{cursor:pointer;color:var(--muted);font-size:13px}
details p{font-size:13px}
pre{background:var(--band);padding:10px;overflow-x:auto;font-size:12px}
table.shapes td.shape{max-width:300px}
table.shapes td.shape summary{color:var(--ink);font-size:13px}
table.shapes td.shape small{display:block;word-break:break-word;color:var(--muted)}
table.shapes td.shape em{display:block;font-size:12px}
div.observed p.question{margin-top:-4px}
ul.notes li{margin:4px 0}
@media print{
 body{font-size:11px}
 main{max-width:none;padding:0}
 nav{display:none}
 h2{break-after:avoid}
 table{font-size:10px}
 .scroll{overflow:visible}
 details>*{display:block}
}
`

const pageHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{if .ObservedOnly}}{{.PageTitle}}{{else}}dblat report{{with .Study}}: {{.}}{{end}}{{end}}</title>
<style>{{css}}</style>
</head>
<body>
<main>
{{if .ObservedOnly}}
<header>
<h1>{{.PageTitle}}</h1>
{{if eq (len .ObservedSecs) 1}}<p class="question">{{.Headline.Question}}</p>{{end}}
</header>
<section id="observed">
{{range .ObservedSecs}}{{template "observed" .}}{{end}}
</section>
{{else}}
<header>
<h1>{{with .Study}}{{.}}{{else}}dblat report{{end}}</h1>
<p class="question">{{.Headline.Question}}</p>
{{with .Description}}<p class="desc">{{.}}</p>{{end}}
</header>

<section id="headline">
{{with .Throughput}}{{with index . 0}}
<figure class="chart" id="{{.ID}}">
{{.SVG}}
<figcaption>{{.Note}}</figcaption>
</figure>
{{end}}{{else}}
<p>No finished runs: nothing to chart.</p>
{{end}}
<p class="verdict">{{.Headline.Verdict}}</p>
{{range $i, $c := .Throughput}}{{if $i}}
<figure class="chart" id="{{$c.ID}}">
{{$c.SVG}}
<figcaption>{{$c.Note}}</figcaption>
</figure>
{{end}}{{end}}
</section>

<nav><ul>
<li><a href="#findings">Findings</a></li>
{{if .Percentiles}}<li><a href="#response">{{if eq .Latency "response"}}Response time{{else}}Service time{{end}}</a></li>{{end}}
{{if .Rates}}<li><a href="#at-rate">At a fixed rate</a></li>{{end}}
{{if .ObservedSecs}}<li><a href="#observed">Farther database</a></li>{{end}}
{{if .Analysis}}{{if .Analysis.Fits}}<li><a href="#latency-model">Latency model</a></li>{{end}}{{end}}
<li><a href="#cells">Cells</a></li>
{{if .Tx}}<li><a href="#transactions">Transactions</a></li>{{end}}
<li><a href="#config">Configuration</a></li>
<li><a href="#runs">Runs</a></li>
{{if .Agents}}<li><a href="#agents">Agents</a></li>{{end}}
<li><a href="#method">Method</a></li>
{{if .Source}}<li><a href="#source">Study file</a></li>{{end}}
</ul></nav>

<section id="findings">
<h2>Findings</h2>
{{if .Headline.Knees}}
<h3>Knees: where added RTT costs 10 % and 50 % of {{.Metric}}</h3>
<div class="scroll"><table>
<thead><tr><th>series</th><th class="num">{{.Metric}} at lowest RTT</th><th class="num">−10 % at</th><th class="num">−50 % at</th><th>latency model</th></tr></thead>
<tbody>
{{range .Headline.Knees}}<tr><td>{{.Series}}</td><td class="num">{{mean .Base}} at {{rttLevel .BaseLevel}}</td><td class="num">{{knee .Knee10 .Knee10Between .ModelKnee10 .}}</td><td class="num">{{knee .Knee50 .Knee50Between .ModelKnee50 .}}</td><td>{{if .Fits}}fits within {{f1 .MaxErrPct}} %{{else}}does not fit{{end}}</td></tr>
{{end}}</tbody>
</table></div>
<p class="desc">Achieved RTTs. Where the latency model fits, its smooth curve gives the knee (the measured one beside it, interpolated between levels in time per transaction); nothing is extrapolated beyond the highest RTT measured.</p>
{{end}}
{{with .Headline.Table}}{{if .Rows}}
<h3>{{$.Metric}} by {{.Corner}}</h3>
<div class="scroll"><table>
<thead><tr><th>{{.Corner}}</th>{{range .Columns}}<th class="num">{{.}}</th>{{end}}</tr></thead>
<tbody>
{{range .Rows}}<tr><td>{{.Name}}</td>{{range .Cells}}<td class="num">{{est .}}</td>{{end}}</tr>
{{end}}</tbody>
</table></div>
<p class="desc">Mean of the finished repeats, ± the half-width of its 95 % interval as a share of the mean where there are two or more.</p>
{{end}}{{end}}
<h3>Credibility</h3>
{{if .Warnings}}
<ul class="findings">{{range .Warnings}}<li class="{{.Severity}}"><span class="sev">{{.Severity}}</span>{{.Message}} <small>({{.Check}})</small>
{{if or .Evidence .Fix .Cells .Runs}}<details><summary>evidence and fix</summary>
{{with .Evidence}}<p>Evidence: {{.}}</p>{{end}}
{{with .Fix}}<p>Fix: {{.}}</p>{{end}}
{{with .Cells}}<p>Cells: {{join . "; "}}</p>{{end}}
{{with .Runs}}<p>Runs: {{range $i, $r := .}}{{if $i}}, {{end}}{{$r}}{{end}}</p>{{end}}
</details>{{end}}</li>
{{end}}</ul>
{{else}}
<p>{{if .Analysis}}The credibility check found nothing to report.{{else}}Not checked: this report was built without the credibility check.{{end}}</p>
{{end}}
</section>

{{if .Percentiles}}
<section id="response">
{{if eq .Latency "response"}}<h2>Response time</h2>
<p>What a user of each transaction waits for: the median and the 99th percentile of the response time, from each transaction's intended start.</p>{{else}}<h2>Service time</h2>
<p>How long each transaction took from the connection checkout to its end: the median and the 99th percentile of the service time (closed-loop runs: no wait for a pooled connection, no schedule).</p>{{end}}
{{range .Percentiles}}
<figure class="chart" id="{{.ID}}">
{{.SVG}}
<figcaption>{{.Note}}</figcaption>
</figure>
{{end}}
</section>
{{end}}

{{if .Rates}}
<section id="at-rate">
<h2>Response time at a fixed rate</h2>
<p>Open-loop runs offer the same load at every RTT: what a user waits as the RTT grows, and the RTT at which the offered rate can no longer be sustained (the saturation RTT). Times from each transaction's intended start; "service" runs from the connection checkout; the model is R·r + s plus M/M/N's wait for a free terminal.</p>
{{range .Rates}}
{{with .Chart}}<figure class="chart" id="{{.ID}}">
{{.SVG}}
<figcaption>{{.Note}}</figcaption>
</figure>{{else}}<h3>{{.Title}}</h3>{{end}}
{{with .Series}}<p class="desc">{{if .R}}Model: R = {{f1 .R}} round trips, s = {{dms .S}} ms{{if .ModelSaturation}}, saturation at r* = {{rtt .ModelSaturation}}{{end}}. {{end}}{{if .Saturated}}Measured: {{if .SustainedLevel}}sustained up to RTT {{rttLevel .SustainedLevel}}, not at {{rttLevel .SaturationLevel}}{{else}}not sustained at any RTT measured{{end}}.{{else}}Measured: sustained at every RTT.{{end}}</p>{{end}}
<div class="scroll"><table>
<thead><tr><th>RTT</th><th class="num">offered /s</th><th class="num">achieved /s</th><th class="num">overload</th><th class="num">service (ms)</th><th class="num">response (ms)</th><th class="num">model (ms)</th><th class="num">ρ</th><th>type</th><th class="num">p50</th><th class="num">p90</th><th class="num">p99</th></tr></thead>
<tbody>
{{range .Rows}}<tr>{{if .First}}<td rowspan="{{.Span}}">{{rttLevel .Point.Level}}</td><td class="num" rowspan="{{.Span}}">{{rate .Point.Offered}}</td><td class="num" rowspan="{{.Span}}">{{rate .Point.Achieved}}</td><td class="num" rowspan="{{.Span}}">{{if .Point.Overloaded}}{{.Point.Overloaded}} of {{.Point.Runs}}{{else}}no{{end}}</td><td class="num" rowspan="{{.Span}}">{{dms .Point.Service}}</td><td class="num" rowspan="{{.Span}}">{{dms .Point.Response}}</td><td class="num" rowspan="{{.Span}}">{{if .Point.Model}}{{dms .Point.Model}}{{else}}–{{end}}</td><td class="num" rowspan="{{.Span}}">{{if .Point.Utilisation}}{{printf "%.2f" .Point.Utilisation}}{{else}}–{{end}}</td>{{end}}<td>{{.Type.Type}}</td><td class="num">{{dms .Type.P50}}</td><td class="num">{{dms .Type.P90}}</td><td class="num">{{dms .Type.P99}}</td></tr>
{{end}}</tbody>
</table></div>
{{with .Series.Departures}}<p>Where the measurement departs from the model:</p>
<ul class="notes">{{range .}}<li>{{.}}</li>
{{end}}</ul>{{end}}
{{end}}
</section>
{{end}}

{{if .ObservedSecs}}
<section id="observed">
{{range .ObservedSecs}}{{template "observed" .}}{{end}}
</section>
{{end}}

{{.AnalysisHTML}}

{{if .Operations}}
<section id="operations">
<h2>Operations during the window</h2>
<p>What dblat started on the server during each run's window, when it ran (seconds into the window) and how it ended, and the run's throughput and typical response times before, during and after it: transactions per second, and the median over the phase's seconds of each second's median and 99th percentile of the service time (ms).</p>
<div class="scroll"><table>
<thead><tr><th class="num">run</th>{{range .Factors}}<th>{{.Label}}</th>{{end}}<th>operation</th><th class="num">asked at</th><th class="num">started</th><th class="num">ended</th><th>outcome</th>{{range phaseNames}}<th class="num">{{.}} tx/s</th><th class="num">{{.}} p50</th><th class="num">{{.}} p99</th>{{end}}</tr></thead>
<tbody>
{{range .Operations}}<tr><td class="num">{{.Run}}</td>{{range .Levels}}<td>{{none .}}</td>{{end}}<td>{{.Operation.Name}} <small>{{.Operation.Tool}}</small></td><td class="num">{{secs .Operation.At}}</td>{{if ne .Operation.Outcome "not started"}}<td class="num">{{secs .Operation.Started}}</td><td class="num">{{secs .Operation.Ended}}</td>{{else}}<td class="num">–</td><td class="num">–</td>{{end}}<td>{{.Operation.Outcome}}{{with .Operation.Error}}: {{.}}{{else}}{{with .Operation.Detail}}: {{.}}{{end}}{{end}}</td>{{range phaseCells .Phases}}<td class="num">{{.}}</td>{{end}}</tr>
{{end}}</tbody>
</table></div>
</section>
{{end}}

{{if .Timelines}}
<section id="timelines">
<h2>{{if .Disturbed}}What disturbed the runs{{else}}Second by second{{end}}</h2>
{{if .Disturbed}}<p>The runs whose windows lost time to something besides their workload, second by second, beside what the machine and the server were doing: the dashed lines bound each stretch the check names.</p>{{end}}
{{range .Timelines}}<figure class="chart" id="{{.ID}}">{{.SVG}}<figcaption>{{.Note}}</figcaption></figure>
{{end}}
</section>
{{end}}

<section id="about">
<h2>About this study</h2>
<dl class="facts">
<dt>Metric</dt><dd>{{metric .Metric}}</dd>
<dt>Workload</dt><dd>{{none (join .Workloads ", ")}}</dd>
<dt>Runs</dt><dd>{{counts .Counts}}</dd>
{{range .Factors}}<dt>{{.Label}}</dt><dd>{{range $i, $l := .Levels}}{{if $i}}, {{end}}{{none $l}}{{end}}</dd>
{{else}}<dt>Factors</dt><dd>none: every run is one cell</dd>
{{end}}</dl>
</section>

<section id="cells">
<h2>Cells</h2>
<p>{{.Metric}} per cell: mean of the finished repeats with its 95 % confidence interval, and the RTT the link achieved.</p>
<div class="scroll"><table>
{{$open := .OpenLoop}}{{$retried := .Retried}}{{$shaped := .Shaped}}{{$cached := .Cached}}
<thead><tr>{{range .Factors}}<th>{{.Label}}</th>{{end}}<th class="num">achieved RTT</th><th class="num">runs</th><th class="num">n</th><th class="num">mean</th><th class="num">± 95 %</th><th class="num">low</th><th class="num">high</th><th class="num">sd</th>{{if $retried}}<th class="num">retried</th>{{end}}{{if $open}}<th class="num">offered /s</th><th class="num">achieved /s</th><th class="num">overload</th>{{end}}{{if $shaped}}<th>link used up/down mean (peak), jitter, lost</th>{{end}}{{if $cached}}<th>server memory, its cache's hits and reads, disk reads</th>{{end}}</tr></thead>
<tbody>
{{range .Cells}}<tr>{{range .Levels}}<td>{{none .}}</td>{{end}}<td class="num">{{if .Throughput.N}}{{rtt .AchievedRTT}}{{else}}–{{end}}</td><td class="num">{{.Runs}}</td><td class="num">{{.Throughput.N}}</td>
{{- if eq .Throughput.N 0}}<td class="num" colspan="5">no finished run</td>
{{- else if .Throughput.CI}}<td class="num">{{f1 .Throughput.Mean}}</td><td class="num">{{f1 .Throughput.CI.Half}}</td><td class="num">{{f1 .Throughput.CI.Low}}</td><td class="num">{{f1 .Throughput.CI.High}}</td><td class="num">{{f1 .Throughput.SD}}</td>
{{- else}}<td class="num">{{f1 .Throughput.Mean}}</td><td class="num" colspan="4">n = 1: no interval</td>{{end}}{{if $retried}}<td class="num">{{pct .RetryRate}}</td>{{end}}{{if $open}}<td class="num">{{rate .Offered}}</td><td class="num">{{rate .Achieved}}</td><td class="num">{{overload .}}</td>{{end}}{{if $shaped}}<td>{{.Link.Text}}</td>{{end}}{{if $cached}}<td>{{.Cache.Text}}</td>{{end}}</tr>
{{end}}</tbody>
</table></div>
</section>

{{if .Tx}}
<section id="transactions">
<h2>Transactions</h2>
{{if eq .Latency "response"}}<p>Per transaction type and cell: pooled response-time percentiles (ms, from each transaction's intended start), the service time's p50 and p99 (ms, from the connection checkout) and the schedule lag's p99 (ms, intended start to checkout){{if .Retried}}, the retries{{end}}, and the wire cost per committed transaction — round trips and bytes sent up to the server and down to the client. "–": the cell completed no transaction of the type.</p>
{{else}}<p>Per transaction type and cell: pooled service-time percentiles (ms, from the connection checkout), p99 wait for a pooled connection (ms){{if .Retried}}, the retries{{end}}, and the wire cost per committed transaction — round trips and bytes sent up to the server and down to the client. "–": the cell completed no transaction of the type.</p>
{{end}}{{if .Conflicted}}<p>Retries/tx and conflicts/tx: the retries, and the tries that failed with a serialization failure, deadlock or update conflict (retried or not), per transaction that ended.</p>
{{end}}{{$f := .Factors}}{{$resp := eq .Latency "response"}}{{$retried := .Retried}}{{$conflicts := .Conflicted}}
{{range .Tx}}
<h3>{{.Type}}</h3>
<div class="scroll"><table>
<thead><tr>{{range $f}}<th>{{.Label}}</th>{{end}}<th class="num">n</th><th class="num">p50</th><th class="num">p90</th><th class="num">p99</th><th class="num">max</th>{{if $resp}}<th class="num">service p50</th><th class="num">service p99</th><th class="num">lag p99</th>{{else}}<th class="num">wait p99</th>{{end}}{{if $retried}}<th class="num">retries</th>{{end}}{{if $conflicts}}<th class="num">retries/tx</th><th class="num">conflicts/tx</th>{{end}}<th class="num">round trips</th><th class="num">bytes up</th><th class="num">bytes down</th></tr></thead>
<tbody>
{{range .Rows}}<tr>{{range .Levels}}<td>{{none .}}</td>{{end}}<td class="num">{{.Tx.Runs}}</td>{{if .Tx.Done}}<td class="num">{{ms .Tx.P50Us}}</td><td class="num">{{ms .Tx.P90Us}}</td><td class="num">{{ms .Tx.P99Us}}</td><td class="num">{{ms .Tx.MaxUs}}</td>{{if $resp}}<td class="num">{{ms .Tx.ServiceP50Us}}</td><td class="num">{{ms .Tx.ServiceP99Us}}</td><td class="num">{{ms .Tx.LagP99Us}}</td>{{else}}<td class="num">{{ms .Tx.WaitP99Us}}</td>{{end}}{{if $retried}}<td class="num">{{.Tx.Retries}}</td>{{end}}{{if $conflicts}}<td class="num">{{f3 .Tx.RetriesPerTx}}</td><td class="num">{{f3 .Tx.ConflictsPerTx}}</td>{{end}}<td class="num">{{f1 .Tx.RoundTrips}}</td><td class="num">{{f0 .Tx.BytesUp}}</td><td class="num">{{f0 .Tx.BytesDown}}</td>{{else}}<td class="num">–</td><td class="num">–</td><td class="num">–</td><td class="num">–</td>{{if $resp}}<td class="num">–</td><td class="num">–</td><td class="num">–</td>{{else}}<td class="num">–</td>{{end}}{{if $retried}}<td class="num">–</td>{{end}}{{if $conflicts}}<td class="num">–</td><td class="num">–</td>{{end}}<td class="num">–</td><td class="num">–</td><td class="num">–</td>{{end}}</tr>
{{end}}</tbody>
</table></div>
{{end}}
</section>
{{end}}

{{end}}

<section id="config">
<h2>{{series .Config}}</h2>
<p>As the servers and the client reported it for the finished runs{{with .Config.SeriesFactors}} of each series (the combinations of {{join . ", "}}){{end}}. Settings are read back from the server, not echoed from the study.</p>
{{if .Config.Differ}}
<h3>Differs between series</h3>
<div class="scroll"><table>
<thead><tr><th>kind</th><th>item</th>{{range .Config.Series}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>
{{range .Config.Differ}}<tr><td>{{.Kind}}</td><td>{{.Name}}</td>{{range .Values}}<td>{{none .}}</td>{{end}}</tr>
{{end}}</tbody>
</table></div>
{{end}}
{{if .Config.Common}}
<h3>{{if .Config.SeriesFactors}}Same in every series{{else}}Every run{{end}}</h3>
<div class="scroll"><table>
<thead><tr><th>kind</th><th>item</th><th>value</th></tr></thead>
<tbody>
{{range .Config.Common}}<tr><td>{{.Kind}}</td><td>{{.Name}}</td><td>{{none (index .Values 0)}}</td></tr>
{{end}}</tbody>
</table></div>
{{end}}
</section>

<section id="runs">
<h2>Runs</h2>
<p>Every run of the study by start time (UTC). Only finished runs enter the figures above.</p>
<div class="scroll"><table>
<thead><tr><th class="num">id</th><th>started</th><th>status</th>{{range .Factors}}<th>{{.Label}}</th>{{end}}<th class="num">{{.Metric}}</th><th class="num">warm-up (s)</th><th class="num">elapsed (s)</th><th>reason</th></tr></thead>
<tbody>
{{range .Runs}}<tr class="{{.Status}}"><td class="num">{{.ID}}</td><td>{{time .Started}}</td><td class="status">{{.Status}}</td>{{range .Levels}}<td>{{none .}}</td>{{end}}<td class="num">{{f1 .Throughput}}</td><td class="num">{{f1 .WarmupS}}{{if .WarmupAuto}} auto{{end}}</td><td class="num">{{f1 .ElapsedS}}</td><td>{{reason .}}</td></tr>
{{end}}</tbody>
</table></div>
</section>

{{if .Agents}}
<section id="agents">
<h2>Agents</h2>
<p>Runs that several agents drove together: each agent's part as it measured it. The runs' figures above merge them exactly (counts summed, histograms merged).</p>
<div class="scroll"><table>
<thead><tr><th class="num">run</th><th>agent</th><th>state</th><th class="num">terminals</th><th class="num">committed</th><th class="num">{{.Metric}}</th><th class="num">client CPU (µs/tx)</th><th class="num">link (ms)</th><th class="num">late p99 up / down (µs)</th><th class="num">started after announced (ms)</th></tr></thead>
<tbody>
{{range .Agents}}<tr><td class="num">{{.RunID}}</td><td class="name">{{.Agent}}</td><td>{{.State}}{{if .Reason}}: {{.Reason}}{{end}}</td>{{if .Terminals}}<td class="num">{{.Terminals}}</td><td class="num">{{.Committed}}</td><td class="num">{{f1 .Throughput}}</td>{{else}}<td class="num">–</td><td class="num">–</td><td class="num">–</td>{{end}}<td class="num">{{if .ClientCPUPerTxUs}}{{f0 .ClientCPUPerTxUs}}{{else}}–{{end}}</td><td class="num">{{if .LinkP50}}{{dms .LinkP50}}{{else}}–{{end}}</td><td class="num">{{if .LinkP50}}{{us .LateUpP99}} / {{us .LateDownP99}}{{else}}–{{end}}</td><td class="num">{{if .Started}}{{dms .StartedAfter}}{{else}}–{{end}}</td></tr>
{{end}}</tbody>
</table></div>
</section>
{{end}}

{{if .Scripts}}
<section id="scripts">
<h2>Scripts</h2>
<p>The texts the runs ran, as each run's engine ran them, with their SHA-256: runs that name the same file but ran another text show as another line.</p>
{{range .Scripts}}<details><summary>{{.Kind}} <span class="name">{{.Path}}</span>{{if ne .Kind "init"}} (transaction type {{.Name}}, weight {{.Weight}}){{end}}, sha256 {{.SHA256}}, runs {{runlist .Runs}}</summary>
<pre>{{.Text}}</pre></details>
{{end}}</section>
{{end}}

<section id="method">
<h2>Method</h2>
<ul class="notes">{{range .Notes}}<li>{{.}}</li>
{{end}}</ul>
</section>

{{if .Source}}
<section id="source">
<h2>Study file</h2>
<pre>{{.Source}}</pre>
</section>
{{end}}
</main>
</body>
</html>
{{define "observed"}}<div class="observed" id="observed-{{.Run}}">
{{if .Heading}}<h2>{{.Title}}</h2>
<p class="question">{{.Question}}</p>{{end}}
{{with .Replayed}}<h3>The replay against its capture</h3>
<p class="desc">{{.Line}}</p>
<div class="scroll"><table>
<thead><tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>
{{range .Rows}}<tr>{{range .}}<td class="num">{{.}}</td>{{end}}</tr>
{{end}}</tbody>
</table></div>
{{with .Predicted}}<p class="desc">{{.}}</p>{{end}}
{{with .Diverged}}<ul class="findings">{{range .}}<li class="warning">{{.}}</li>
{{end}}</ul>{{end}}{{end}}
<p class="verdict">{{.Verdict}}</p>
{{with .Chart}}<figure class="chart" id="{{.ID}}">
{{.SVG}}
<figcaption>{{.Note}}</figcaption>
</figure>{{end}}
{{with .Help}}<h3>What would help at +{{rtt $.HeadlineRTT}}</h3>
<ul class="notes">{{range .}}<li><b>{{.Name}}</b>: {{.Text}}{{with .More}}<details><summary>how</summary><p>{{.}}</p></details>{{end}}</li>
{{end}}</ul>{{end}}
{{with .Caveats}}<h3>Caveats</h3>
<ul class="findings">{{range .}}<li{{if .Bound}} class="warning"{{end}}>{{with .Name}}<b>{{.}}</b>: {{end}}{{.Text}}</li>
{{end}}</ul>{{end}}
<h3>Predicted at each added RTT</h3>
<div class="scroll"><table>
<thead><tr><th>added RTT</th><th class="num">throughput (TPS)</th><th class="num">mean response (ms)</th>{{range .ShapeHeads}}<th class="num">{{.}} (ms)</th>{{end}}</tr></thead>
<tbody>
{{range .Rows}}<tr><td>{{.RTT}}</td><td class="num">{{.TPS}}</td><td class="num">{{.Mean}}</td>{{range .Shapes}}<td class="num">{{.}}</td>{{end}}</tr>
{{end}}</tbody>
</table></div>
<h3 id="shapes-{{.Run}}">Shapes</h3>
<p class="desc">{{len .Shapes | add (len .More)}} shapes, by their share of the time in transactions at +{{rtt .HeadlineRTT}}{{if .More}} (the {{len .Shapes}} below: {{pct .ShownShare}}){{end}}; times in ms, observed at the proxy and predicted for {{.Clients}} clients. Open a shape for its statements.</p>
{{template "shape-table" .}}
{{if .More}}<details><summary>{{len .More}} more shapes, {{pct .MoreShare}} of the time at +{{rtt .HeadlineRTT}}</summary>
{{template "shape-table-more" .}}
</details>{{end}}
</div>
{{end}}
{{define "shape-head"}}<thead><tr><th>shape</th><th class="num">transactions</th><th class="num">time share</th><th class="num">round trips</th><th class="num">observed</th><th class="num">p99</th>{{range .RTTHeads}}<th class="num">{{.}}</th>{{end}}</tr></thead>{{end}}
{{define "shape-row"}}<tr><td class="shape"><details><summary>{{.Name}}</summary><small>{{.Text}}</small></details>{{with .Serial}}<em>{{.}}</em>{{end}}</td><td class="num">{{.Count}}</td><td class="num">{{pct .TimeShare}}</td><td class="num">{{printf "%.1f" .RoundTrips}}</td><td class="num">{{msn .LatencyMs}}</td><td class="num">{{msn .P99Ms}}</td>{{range .Predicted}}<td class="num">{{.}}</td>{{end}}</tr>
{{end}}
{{define "shape-table"}}<div class="scroll"><table class="shapes">
{{template "shape-head" .}}
<tbody>
{{range .Shapes}}{{template "shape-row" .}}{{end}}</tbody>
</table></div>{{end}}
{{define "shape-table-more"}}<div class="scroll"><table class="shapes">
{{template "shape-head" .}}
<tbody>
{{range .More}}{{template "shape-row" .}}{{end}}</tbody>
</table></div>{{end}}
`
