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
)

// WriteHTML writes r as one self-contained HTML page: inline CSS, the charts as inline SVG
// drawn by gonum/plot, the chart font embedded once as a data URL, no scripts and no
// external URLs, so that it reads offline and prints. Every value is escaped by
// html/template. Like the other writers it reads nothing but r, so the same report gives
// the same bytes.
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
		if ch.Kind == ChartThroughput {
			v.Throughput = append(v.Throughput, hc)
		} else {
			v.Percentiles = append(v.Percentiles, hc)
		}
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

type htmlView struct {
	*Report
	Throughput, Percentiles []htmlChart
	Tx                      []txTable
	// AnalysisHTML holds the latency-model, pool-sizing and response-limit sections.
	AnalysisHTML template.HTML
}

type htmlChart struct {
	*Chart
	SVG template.HTML
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
			"css":    func() template.CSS { return template.CSS(fontCSS() + pageCSS) }, // constant, and base64
			"ms":     msText,
			"f1":     func(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) },
			"f0":     func(f float64) string { return strconv.FormatFloat(f, 'f', 0, 64) },
			"none":   orNone,
			"counts": countsText,
			"metric": metricDesc,
			"time":   func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") },
			"join":   strings.Join,
		}).Parse(pageHTML))
	})
	return pageTmpl
}

// fontCSS declares Liberation Sans from the bytes gonum/plot measured the chart text with.
// Without it a browser lacking the font substitutes one with other metrics and labels that
// were laid out side by side can collide. About 550 kB, once per page.
func fontCSS() string {
	return `@font-face{font-family:"` + fontFamily + `";font-style:normal;font-weight:normal;src:url(data:font/ttf;base64,` +
		base64.StdEncoding.EncodeToString(liberationsansregular.TTF) + `) format("truetype");}` + "\n"
}

const pageCSS = `
:root{--ink:#1a1a1a;--muted:#5a5a5a;--rule:#d4d4d4;--band:#f4f6f8;--bad:#a8200d}
*{box-sizing:border-box}
body{margin:0;color:var(--ink);background:#fff;font:15px/1.45 "Liberation Sans",Arial,Helvetica,sans-serif}
main{max-width:1000px;margin:0 auto;padding:24px 20px 48px}
h1{font-size:26px;margin:0 0 4px}
h2{font-size:20px;margin:36px 0 8px;padding-bottom:4px;border-bottom:2px solid var(--ink)}
h3{font-size:16px;margin:22px 0 6px}
p{margin:6px 0}
.desc{color:var(--muted);margin-bottom:10px}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:10px 0}
dl.facts dt{font-weight:bold}
dl.facts dd{margin:0}
nav ul{list-style:none;padding:0;margin:12px 0;display:flex;flex-wrap:wrap;gap:4px 16px}
nav a{color:#0b5cad}
figure.chart{margin:18px 0 26px;break-inside:avoid;page-break-inside:avoid}
figure.chart svg{display:block;width:100%;height:auto;max-width:960px}
figcaption{color:var(--muted);font-size:13px;margin-top:4px}
table{border-collapse:collapse;margin:8px 0 14px;font-size:13px}
th,td{padding:3px 9px;text-align:left;border-bottom:1px solid var(--rule);vertical-align:top}
th{background:var(--band);border-bottom:1px solid #aaa}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
tr.failed td,tr.aborted td,tr.running td{color:var(--bad)}
.status{font-weight:bold}
.scroll{overflow-x:auto}
section.warnings{border-left:4px solid var(--bad);padding:2px 14px;background:#fdf3f1}
pre{background:var(--band);padding:10px;overflow-x:auto;font-size:12px}
ul.notes li{margin:4px 0}
@media print{
 body{font-size:11px}
 main{max-width:none;padding:0}
 nav{display:none}
 h2{break-after:avoid}
 table{font-size:10px}
 .scroll{overflow:visible}
}
`

const pageHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>dblat report{{with .Study}}: {{.}}{{end}}</title>
<style>{{css}}</style>
</head>
<body>
<main>
<header>
<h1>{{with .Study}}{{.}}{{else}}dblat report{{end}}</h1>
{{with .Description}}<p class="desc">{{.}}</p>{{end}}
<dl class="facts">
<dt>Metric</dt><dd>{{metric .Metric}}</dd>
<dt>Workload</dt><dd>{{none (join .Workloads ", ")}}</dd>
<dt>Runs</dt><dd>{{counts .Counts}}</dd>
{{range .Factors}}<dt>{{.Label}}</dt><dd>{{range $i, $l := .Levels}}{{if $i}}, {{end}}{{none $l}}{{end}}</dd>
{{else}}<dt>Factors</dt><dd>none: every run is one cell</dd>
{{end}}</dl>
</header>
<nav><ul>
{{if .Warnings}}<li><a href="#warnings">Warnings</a></li>{{end}}
<li><a href="#throughput">Throughput</a></li>
{{if .Percentiles}}<li><a href="#response">Response time</a></li>{{end}}
<li><a href="#cells">Cells</a></li>
{{if .Tx}}<li><a href="#transactions">Transactions</a></li>{{end}}
<li><a href="#config">Configuration</a></li>
<li><a href="#runs">Runs</a></li>
<li><a href="#method">Method</a></li>
{{if .Source}}<li><a href="#source">Study file</a></li>{{end}}
</ul></nav>

{{if .Warnings}}
<section id="warnings" class="warnings">
<h2>Warnings</h2>
<ul>{{range .Warnings}}<li><strong>{{.Severity}}</strong> ({{.Check}}): {{.Message}}{{with .Cells}} — cells: {{join . "; "}}{{end}}{{with .Runs}} — runs: {{range $i, $r := .}}{{if $i}}, {{end}}{{$r}}{{end}}{{end}}</li>
{{end}}</ul>
</section>
{{end}}

{{.AnalysisHTML}}
<section id="throughput">
<h2>Throughput</h2>
{{range .Throughput}}
<figure class="chart" id="{{.ID}}">
{{.SVG}}
<figcaption>{{.Note}}</figcaption>
</figure>
{{else}}
<p>No finished runs: nothing to chart.</p>
{{end}}
</section>

{{if .Percentiles}}
<section id="response">
<h2>Response time</h2>
<p>What a user of each transaction waits for, at p50, p90 and p99.</p>
{{range .Percentiles}}
<figure class="chart" id="{{.ID}}">
{{.SVG}}
<figcaption>{{.Note}}</figcaption>
</figure>
{{end}}
</section>
{{end}}

<section id="cells">
<h2>Cells</h2>
<p>{{.Metric}} per cell: mean of the finished repeats with its 95 % confidence interval.</p>
<div class="scroll"><table>
<thead><tr>{{range .Factors}}<th>{{.Label}}</th>{{end}}<th class="num">runs</th><th class="num">n</th><th class="num">mean</th><th class="num">± 95 %</th><th class="num">low</th><th class="num">high</th><th class="num">sd</th></tr></thead>
<tbody>
{{range .Cells}}<tr>{{range .Levels}}<td>{{none .}}</td>{{end}}<td class="num">{{.Runs}}</td><td class="num">{{.Throughput.N}}</td>
{{- if eq .Throughput.N 0}}<td class="num" colspan="5">no finished run</td>
{{- else if .Throughput.CI}}<td class="num">{{f1 .Throughput.Mean}}</td><td class="num">{{f1 .Throughput.CI.Half}}</td><td class="num">{{f1 .Throughput.CI.Low}}</td><td class="num">{{f1 .Throughput.CI.High}}</td><td class="num">{{f1 .Throughput.SD}}</td>
{{- else}}<td class="num">{{f1 .Throughput.Mean}}</td><td class="num" colspan="4">n = 1: no interval</td>{{end}}</tr>
{{end}}</tbody>
</table></div>
</section>

{{if .Tx}}
<section id="transactions">
<h2>Transactions</h2>
<p>Per transaction type and cell: pooled response-time percentiles (ms, service time), p99 wait for a pooled connection (ms), and the wire cost per committed transaction — round trips and bytes sent up to the server and down to the client.</p>
{{$f := .Factors}}
{{range .Tx}}
<h3>{{.Type}}</h3>
<div class="scroll"><table>
<thead><tr>{{range $f}}<th>{{.Label}}</th>{{end}}<th class="num">n</th><th class="num">p50</th><th class="num">p90</th><th class="num">p99</th><th class="num">max</th><th class="num">wait p99</th><th class="num">round trips</th><th class="num">bytes up</th><th class="num">bytes down</th></tr></thead>
<tbody>
{{range .Rows}}<tr>{{range .Levels}}<td>{{none .}}</td>{{end}}<td class="num">{{.Tx.Runs}}</td><td class="num">{{ms .Tx.P50Us}}</td><td class="num">{{ms .Tx.P90Us}}</td><td class="num">{{ms .Tx.P99Us}}</td><td class="num">{{ms .Tx.MaxUs}}</td><td class="num">{{ms .Tx.WaitP99Us}}</td><td class="num">{{f1 .Tx.RoundTrips}}</td><td class="num">{{f0 .Tx.BytesUp}}</td><td class="num">{{f0 .Tx.BytesDown}}</td></tr>
{{end}}</tbody>
</table></div>
{{end}}
</section>
{{end}}

<section id="config">
<h2>Configuration</h2>
<p>As the servers and the client reported it for the finished runs of each series{{with .Config.SeriesFactors}} (series: combinations of {{join . ", "}}){{end}}. Settings are read back from the server, not echoed from the study.</p>
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
<h3>Same in every series</h3>
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
<thead><tr><th class="num">id</th><th>started</th><th>status</th>{{range .Factors}}<th>{{.Label}}</th>{{end}}<th class="num">{{.Metric}}</th><th class="num">elapsed (s)</th><th>reason</th></tr></thead>
<tbody>
{{range .Runs}}<tr class="{{.Status}}"><td class="num">{{.ID}}</td><td>{{time .Started}}</td><td class="status">{{.Status}}</td>{{range .Levels}}<td>{{none .}}</td>{{end}}<td class="num">{{f1 .Throughput}}</td><td class="num">{{f1 .ElapsedS}}</td><td>{{.Reason}}</td></tr>
{{end}}</tbody>
</table></div>
</section>

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
`
