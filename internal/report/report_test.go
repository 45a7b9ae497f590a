package report

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/spec"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("%s differs at line %d:\n got: %s\nwant: %s\n(run go test -update if the change is intended)", name, i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("%s differs in length: got %d lines, want %d (run go test -update if intended)", name, len(gl), len(wl))
	}
}

func buildFixture(t *testing.T) *Report {
	t.Helper()
	r, err := Build(fixInput(t))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestGolden(t *testing.T) {
	r := buildFixture(t)
	for _, tc := range []struct {
		file  string
		write func(*bytes.Buffer, *Report) error
	}{
		{"latency.json.golden", func(b *bytes.Buffer, r *Report) error { return WriteJSON(b, r) }},
		{"latency.txt.golden", func(b *bytes.Buffer, r *Report) error { return WriteText(b, r) }},
		{"latency.csv.golden", func(b *bytes.Buffer, r *Report) error { return WriteCSV(b, r) }},
	} {
		t.Run(tc.file, func(t *testing.T) {
			var b bytes.Buffer
			if err := tc.write(&b, r); err != nil {
				t.Fatal(err)
			}
			golden(t, tc.file, b.Bytes())
		})
	}
}

// TestBuildDeterministic checks that the order of the stored runs does not matter.
func TestBuildDeterministic(t *testing.T) {
	in := fixInput(t)
	var a bytes.Buffer
	r, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&a, r); err != nil {
		t.Fatal(err)
	}
	rev := append([]results.Run(nil), in.Runs...)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	in.Runs = rev
	r2, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteJSON(&b, r2); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("Build depends on the order of the runs")
	}
}

func TestEstimate(t *testing.T) {
	for _, tc := range []struct {
		name           string
		xs             []float64
		mean, sd, half float64
		ci             bool
	}{
		{"none", nil, 0, 0, 0, false},
		{"one run: no interval", []float64{1490}, 1490, 0, 0, false},
		// sd = 14.1421, t(1) = 12.7062: half = 12.7062 × 14.1421 / √2 = 127.062.
		{"two runs", []float64{2230, 2250}, 2240, 14.1421, 127.0620, true},
		// sd = 10, t(2) = 4.30265: half = 4.30265 × 10 / √3 = 24.8414.
		{"three runs", []float64{2990, 3000, 3010}, 3000, 10, 24.8414, true},
		// sd = 1.5811, t(4) = 2.77645: half = 2.77645 × 1.5811 / √5 = 1.9632.
		{"five runs", []float64{1, 2, 3, 4, 5}, 3, 1.5811, 1.9632, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := estimate(tc.xs)
			if e.N != len(tc.xs) || e.Mean != tc.mean || e.SD != tc.sd || (e.CI != nil) != tc.ci {
				t.Fatalf("estimate(%v) = %+v, want mean %v sd %v interval %v", tc.xs, e, tc.mean, tc.sd, tc.ci)
			}
			if e.CI != nil && (e.CI.Half != tc.half || e.CI.Low != round(tc.mean-tc.half, 4) || e.CI.High != round(tc.mean+tc.half, 4)) {
				t.Errorf("interval %+v, want %v ± %v", *e.CI, tc.mean, tc.half)
			}
		})
	}
}

// TestCellMeans checks every cell of the fixture against the numbers it was made from: one
// table of hand-derivable means and intervals.
func TestCellMeans(t *testing.T) {
	r := buildFixture(t)
	if got, want := len(r.Cells), 3*4*2; got != want {
		t.Fatalf("%d cells, want %d", got, want)
	}
	cells := map[string]*Cell{}
	for i := range r.Cells {
		cells[r.Cells[i].Key] = &r.Cells[i]
	}
	for _, mode := range fixModes {
		for _, term := range fixTerms {
			for _, rtt := range fixRTTs {
				key := "rtt=" + spec.FormatDuration(rtt) + " terminals=" + itoa(term) + " set.ServerMode=" + mode
				c := cells[key]
				if c == nil {
					t.Fatalf("no cell %q", key)
				}
				mean, n, half, runs := fixMean(mode, rtt, term), 3, 24.8414, 3
				switch {
				case mode == "SuperClassic" && rtt == time.Millisecond && term == 10:
					n, half, runs = 2, 127.062, 2
				case mode == "SuperServer" && rtt == 100*time.Millisecond && term == 20:
					n, runs, mean = 1, 1, mean-10
				case mode == "Classic" && rtt == 10*time.Millisecond && term == 20:
					runs = 4 // the failed run is counted, not averaged
				case mode == "SuperServer" && rtt == 0 && term == 10:
					runs = 4 // so is the aborted one
				}
				e := c.Throughput
				if e.N != n || c.Runs != runs || math.Abs(e.Mean-mean) > 1e-9 {
					t.Errorf("%s: n=%d runs=%d mean=%v, want n=%d runs=%d mean=%v", key, e.N, c.Runs, e.Mean, n, runs, mean)
					continue
				}
				if n == 1 {
					if e.CI != nil {
						t.Errorf("%s: interval %+v for a single run", key, *e.CI)
					}
					continue
				}
				if e.CI == nil || math.Abs(e.CI.Half-half) > 0.001 {
					t.Errorf("%s: interval %+v, want ± %v", key, e.CI, half)
				}
			}
		}
	}
	if c := r.Counts; c != (Counts{Runs: 71, Finished: 69, Failed: 1, Aborted: 1}) {
		t.Errorf("counts %+v", c)
	}
}

func itoa(n int) string {
	return results.FactorValue(&results.Run{Params: results.Params{Drive: spec.Drive{Terminals: n}}}, "terminals")
}

// TestPooledPercentiles checks that percentiles come from the merged distribution, not the
// average of the runs' percentiles: one run of 300 fast transactions and one of 100 slow
// ones pool to a median that is fast, while averaging medians would give a value nobody saw.
func TestPooledPercentiles(t *testing.T) {
	mk := func(n int, us int64) *results.TxSummary {
		h := hdrhistogram.New(1, 600_000_000, 3)
		for range n {
			_ = h.RecordValue(us)
		}
		s, err := results.EncodeHist(h)
		if err != nil {
			t.Fatal(err)
		}
		return &results.TxSummary{Type: "x", Committed: int64(n), P50Us: us, P90Us: us, P99Us: us, MaxUs: us, Hist: s,
			RoundTrips: float64(us / 1000), BytesUp: 10}
	}
	fast, slow := mk(300, 1000), mk(100, 9000)
	c, err := poolTx("x", []txOf{{1, fast}, {2, slow}}, false)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Pooled || c.P50Us < 999 || c.P50Us > 1001 || c.P90Us < 8990 || c.P90Us > 9010 {
		t.Errorf("pooled p50 %d p90 %d, want ≈1000 and ≈9000", c.P50Us, c.P90Us)
	}
	// Round trips are weighted by committed transactions: (300×1 + 100×9) / 400 = 3.
	if c.RoundTrips != 3 || c.Committed != 400 {
		t.Errorf("round trips %v committed %d, want 3 and 400", c.RoundTrips, c.Committed)
	}
	// Without histograms, the runs' own percentiles are averaged and Pooled says so.
	slow.Hist = ""
	c, err = poolTx("x", []txOf{{1, fast}, {2, slow}}, false)
	if err != nil {
		t.Fatal(err)
	}
	if c.Pooled || c.P50Us != 5000 {
		t.Errorf("fallback: pooled %v p50 %d, want false and 5000", c.Pooled, c.P50Us)
	}
	// A corrupt histogram is an error naming its run.
	slow.Hist = "not a histogram"
	fast.Hist = "also not"
	if _, err := poolTx("x", []txOf{{1, fast}, {2, slow}}, false); err == nil || !strings.Contains(err.Error(), "run 1") {
		t.Errorf("corrupt histogram: err = %v", err)
	}
}

// TestChartLayout checks which figures a study gets, by the factors it varies: one figure
// per question, the other factors as lines or as panels of the same figure.
func TestChartLayout(t *testing.T) {
	all := fixture(t)
	type fig struct {
		title  string
		panels []string
		lines  []string // the series groups of the first panel
	}
	modes := []string{"ServerMode=Classic", "ServerMode=SuperClassic", "ServerMode=SuperServer"}
	for _, tc := range []struct {
		name    string
		factors []string
		runs    func([]results.Run) []results.Run
		figs    []fig
	}{
		{"rtt, terminals and mode", fixFactors, nil, []fig{
			{"NOPM vs added RTT, by ServerMode", []string{"10 terminals", "20 terminals"}, modes},
			{"NOPM vs terminals, by RTT", modes, []string{"RTT 0 ms", "RTT 1 ms", "RTT 10 ms", "RTT 100 ms"}},
			{"Service time vs added RTT, by transaction type",
				[]string{"new_order — 10 terminals", "new_order — 20 terminals", "payment — 10 terminals", "payment — 20 terminals"}, modes},
		}},
		{"rtt and terminals: one line per terminals level", []string{"rtt", "terminals"}, func(rs []results.Run) []results.Run {
			var out []results.Run
			for _, r := range rs {
				if r.Params.Options["set.ServerMode"] == "Classic" {
					out = append(out, r)
				}
			}
			return out
		}, []fig{
			{"NOPM vs added RTT, by terminals", []string{""}, []string{"10 terminals", "20 terminals"}},
			{"NOPM vs terminals, by RTT", []string{""}, []string{"RTT 0 ms", "RTT 1 ms", "RTT 10 ms", "RTT 100 ms"}},
			{"Service time vs added RTT, by transaction type", []string{"new_order", "payment"}, []string{"10 terminals", "20 terminals"}},
		}},
		{"mode only: points per level", []string{"set.ServerMode"}, only(0, 10), []fig{
			{"NOPM vs ServerMode", []string{""}, []string{""}},
			{"Service time vs ServerMode, by transaction type", []string{"new_order", "payment"}, []string{""}},
		}},
		{"terminals and mode", []string{"terminals", "set.ServerMode"}, only(0, 0), []fig{
			{"NOPM vs terminals, by ServerMode", []string{""}, modes},
			{"Service time vs terminals, by transaction type", []string{"new_order", "payment"}, modes},
		}},
		{"nothing varied", []string{}, only(time.Millisecond, 20, "Classic"), []fig{
			{"NOPM", []string{""}, []string{""}},
			{"Service time, by transaction type", []string{"new_order", "payment"}, []string{""}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runs := all
			if tc.runs != nil {
				runs = tc.runs(all)
			}
			r, err := Build(Input{Factors: tc.factors, Runs: runs})
			if err != nil {
				t.Fatal(err)
			}
			var got []fig
			for _, c := range r.Charts {
				f := fig{title: c.Title}
				for _, pn := range c.Panels {
					f.panels = append(f.panels, pn.Title)
					if len(pn.Series) == 0 {
						t.Errorf("chart %q panel %q is empty", c.Title, pn.Title)
					}
					for _, s := range pn.Series {
						if len(s.Points) == 0 {
							t.Errorf("chart %q series %q is empty", c.Title, s.Name)
						}
					}
				}
				for _, s := range c.Panels[0].Series {
					if !slices.Contains(f.lines, s.Group) && s.Stat != StatModel {
						f.lines = append(f.lines, s.Group)
					}
				}
				got = append(got, f)
			}
			if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", tc.figs) {
				t.Errorf("charts:\n%q\nwant:\n%q", got, tc.figs)
			}
		})
	}
}

// only keeps the finished runs with the given RTT and terminals (and modes, if any).
func only(rtt time.Duration, term int, modes ...string) func([]results.Run) []results.Run {
	return func(runs []results.Run) []results.Run {
		var out []results.Run
		for _, r := range runs {
			if r.Params.RTT != rtt || (term != 0 && r.Params.Terminals != term) || r.Status != results.StatusFinished {
				continue
			}
			if len(modes) > 0 && r.Params.Options["set.ServerMode"] != modes[0] {
				continue
			}
			out = append(out, r)
		}
		return out
	}
}

// TestAxisChoice checks the RTT axis on seed 000's level sets: numeric, placed at the
// achieved RTT (here the requested one: no link), linear unless the positive levels span more
// than 10^LogSpan, with the requested levels as ticks; Options force a scale.
func TestAxisChoice(t *testing.T) {
	for _, tc := range []struct {
		levels []string
		force  string
		scale  string
		second string // the second tick's label
	}{
		{[]string{"0", "500µs", "1ms", "1.5ms", "2ms", "2.5ms", "3ms"}, "", ScaleLinear, "0.5"},
		{[]string{"0", "100µs", "200µs", "300µs", "400µs", "500µs"}, "", ScaleLinear, "0.1"},
		{[]string{"0", "5ms", "10ms", "25ms", "50ms", "100ms", "150ms", "200ms"}, "", ScaleLog, "5"},
		{[]string{"0", "1ms", "10ms", "100ms"}, "", ScaleLog, "1"},
		{[]string{"0", "1ms", "10ms", "100ms"}, ScaleLinear, ScaleLinear, "20"}, // 0, 1 and 10 crowd: nice ticks
		{[]string{"0", "1ms", "5ms", "20ms"}, "", ScaleLinear, "1"},
		{[]string{"0", "1ms", "5ms", "20ms"}, ScaleLog, ScaleLog, "1"},
		{[]string{"5ms"}, "", ScaleCategorical, "5"},
	} {
		var runs []results.Run
		for i, l := range tc.levels {
			d, err := time.ParseDuration(l)
			if err != nil {
				t.Fatal(err)
			}
			runs = append(runs, results.Run{ID: int64(i + 1), Status: results.StatusFinished,
				Params: results.Params{Workload: "tpcc", RTT: d}, Summary: results.Summary{NOPM: 100}})
		}
		r, err := Build(Input{Factors: []string{"rtt"}, Runs: runs, Options: Options{XScale: tc.force}})
		if err != nil {
			t.Fatal(err)
		}
		x := r.Charts[0].X
		if x.Scale != tc.scale {
			t.Errorf("%v %s: scale %s, want %s", tc.levels, tc.force, x.Scale, tc.scale)
		}
		if got := x.Ticks[min(1, len(x.Ticks)-1)].Label; got != tc.second {
			t.Errorf("%v %s: second tick %q, want %q", tc.levels, tc.force, got, tc.second)
		}
		if x.Scale == ScaleLog && (x.Floor <= 0 || x.Ticks[0].Label != "0") {
			t.Errorf("%v: a log axis with RTT 0 needs a floor and a \"0\" tick: %+v", tc.levels, x)
		}
	}
	if _, err := Build(Input{Options: Options{YScale: "logarithmic"}}); err == nil || !strings.Contains(err.Error(), "use auto, linear or log") {
		t.Errorf("unknown scale: %v", err)
	}
}

func TestInferFactors(t *testing.T) {
	r, err := Build(Input{Runs: fixture(t)})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, f := range r.Factors {
		keys = append(keys, f.Key)
	}
	// Target differs with the mode in the fixture, so it is inferred too.
	if got := strings.Join(keys, ","); got != "rtt,terminals,connections,target,set.ServerMode" {
		t.Errorf("inferred %s", got)
	}
}

func TestBuildErrors(t *testing.T) {
	for _, f := range [][]string{{"rtt", "rtt"}, {""}} {
		if _, err := Build(Input{Factors: f}); err == nil {
			t.Errorf("factors %q: no error", f)
		}
	}
	r, err := Build(Input{Study: "empty", Factors: []string{"rtt"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Charts) != 0 || r.Metric != MetricTPS {
		t.Errorf("empty study: %d charts, metric %s", len(r.Charts), r.Metric)
	}
	for _, f := range Formats {
		if err := Write(&bytes.Buffer{}, r, f); err != nil {
			t.Errorf("empty study, %s: %v", f, err)
		}
	}
	if err := Write(&bytes.Buffer{}, r, "pdf"); err == nil || !strings.Contains(err.Error(), "html, text, json, csv") {
		t.Errorf("unknown format: %v", err)
	}
}

func TestConfig(t *testing.T) {
	cfg := buildFixture(t).Config
	if strings.Join(cfg.Series, ",") != "ServerMode=Classic,ServerMode=SuperClassic,ServerMode=SuperServer" {
		t.Errorf("series %v", cfg.Series)
	}
	differ := map[string][]string{}
	for _, it := range cfg.Differ {
		differ[it.Name] = it.Values
	}
	if got := strings.Join(differ["DefaultDbCachePages"], ","); got != "256,256,2048" {
		t.Errorf("DefaultDbCachePages: %s", got)
	}
	if _, ok := differ["terminals"]; ok {
		t.Error("terminals varies within a series and must not be listed")
	}
	common := map[string]string{}
	for _, it := range cfg.Common {
		common[it.Name] = it.Values[0]
	}
	if common["TcpRemoteBufferSize"] != "8192" || common["version"] != "WI-V3.0.6.33328 Firebird 3.0" {
		t.Errorf("common: %v", common)
	}
}

// TestHTMLSelfContained checks the page needs nothing from outside: no scripts, no URLs but
// the SVG namespaces, and the same report gives the same bytes.
func TestHTMLSelfContained(t *testing.T) {
	r := buildFixture(t)
	r.Warnings = []Warning{{Check: "test", Severity: "warning", Message: "a <b>warning</b> & more", Runs: []int64{1, 2}}}
	var a, b bytes.Buffer
	if err := WriteHTML(&a, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(&b, r); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("WriteHTML is not deterministic")
	}
	page := a.String()
	if strings.Contains(strings.ToLower(page), "<script") {
		t.Error("page has a script")
	}
	urls := regexp.MustCompile(`(?i)(https?|ftp)://[^"'\s)]*`).FindAllString(page, -1)
	for _, u := range urls {
		if u != "http://www.w3.org/2000/svg" && u != "http://www.w3.org/1999/xlink" {
			t.Errorf("external URL %q", u)
		}
	}
	if strings.Contains(page, "<?xml") {
		t.Error("XML prolog left in inline SVG")
	}
	if !strings.Contains(page, "a &lt;b&gt;warning&lt;/b&gt; &amp; more") {
		t.Error("warning not rendered escaped")
	}
	if n := strings.Count(page, "<svg "); n != len(r.Charts) {
		t.Errorf("%d svg elements, want %d", n, len(r.Charts))
	}
}
