package report

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/analysis"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/spec"
)

// TestHeadlineFixture checks the headline of the synthetic study against the numbers it
// was made from. Every series keeps 80 % of its NOPM at 1 ms and 25 % at 10 ms, so the
// measured knees are, interpolated in time per transaction: −10 % at 0.444 ms (1/0.9 is
// 4/9 of the way from 1 to 1/0.8) and −50 % only between 1 and 10 ms (a line in NOPM
// would say 5.9 ms, one in time per transaction 3.5 ms: too far apart). The fewest terminals first keep ≤ 50 % at
// 10 ms, where both terminal counts keep 25 %. At RTT 0 and 20 terminals Classic leads
// (3600) by 7 % over SuperClassic (3360) and 50 % over SuperServer (1800), intervals apart.
func TestHeadlineFixture(t *testing.T) {
	r := buildFixture(t)
	h := r.Headline
	if !strings.HasPrefix(h.Question, "What does added network round-trip time (up to 100 ms) cost NOPM at 10 and 20 terminals for each ServerMode") {
		t.Errorf("question: %s", h.Question)
	}
	if len(h.Knees) != 6 {
		t.Fatalf("%d knee rows, want 6", len(h.Knees))
	}
	for _, k := range h.Knees {
		// −50 % lies between 1 ms (80 %) and 10 ms (25 %): too far apart to place it.
		if k.Knee10 != 444*time.Microsecond || k.Knee50 != 0 || !slices.Equal(k.Knee50Between, []time.Duration{time.Millisecond, 10 * time.Millisecond}) ||
			k.BaseLevel != "0" || k.MaxRTT != 100*time.Millisecond {
			t.Errorf("%s: knees %v, %v (between %v) from %s to %v", k.Series, k.Knee10, k.Knee50, k.Knee50Between, k.BaseLevel, k.MaxRTT)
		}
	}
	for _, want := range []string{
		"At 10 ms of added RTT, 10 terminals keep 25 % and 20 terminals keep 25 % of their NOPM at 0 (range over ServerMode).",
		"At RTT 0 and 20 terminals, ServerMode=Classic leads with 3,600 NOPM; ServerMode=SuperClassic 7 % lower and ServerMode=SuperServer 50 % lower.",
	} {
		if !strings.Contains(h.Verdict, want) {
			t.Errorf("verdict lacks %q:\n%s", want, h.Verdict)
		}
	}
	// The headline table: series of the first chart (terminals × mode) by RTT level.
	tb := h.Table
	if tb.Corner != "terminals, ServerMode \\ RTT" || strings.Join(tb.Columns, ",") != "0,1 ms,10 ms,100 ms" || len(tb.Rows) != 6 {
		t.Fatalf("table %q %q, %d rows", tb.Corner, tb.Columns, len(tb.Rows))
	}
	if row := tb.Rows[0]; row.Name != "10 terminals, ServerMode=Classic" || row.Cells[1].Mean != 2400 {
		t.Errorf("first row %s: %+v", row.Name, row.Cells[1])
	}
	if e := tb.Rows[5].Cells[3]; e == nil || e.N != 1 || estText(e) != "62" {
		t.Errorf("SuperServer, 20 terminals, 100 ms: %+v", e)
	}
}

// TestKneeTextStored: the knees of the stored quickstart are inside the measured range,
// and the verdict names each series' or says it is not reached.
func TestKneeTextStored(t *testing.T) {
	r := storedReport(t, "quickstart")
	if len(r.Headline.Knees) != 3 {
		t.Fatalf("%d knee rows", len(r.Headline.Knees))
	}
	for _, k := range r.Headline.Knees {
		for _, d := range []time.Duration{k.Knee10, k.Knee50, k.ModelKnee10, k.ModelKnee50} {
			if d < 0 || d > k.MaxRTT {
				t.Errorf("%s: knee %v outside 0…%v", k.Series, d, k.MaxRTT)
			}
		}
		if k.Knee10 > 0 && k.Knee50 > 0 && k.Knee10 > k.Knee50 {
			t.Errorf("%s: −10 %% at %v after −50 %% at %v", k.Series, k.Knee10, k.Knee50)
		}
		if !strings.Contains(r.Headline.Verdict, k.Series) {
			t.Errorf("verdict does not name %s: %s", k.Series, r.Headline.Verdict)
		}
	}
}

// TestMetricTPS: a study of a non-TPC-C workload reports TPS everywhere — charts, table,
// summary — and never NOPM.
func TestMetricTPS(t *testing.T) {
	var runs []results.Run
	for i, term := range []int{1, 4, 16} {
		for rep := range 2 {
			runs = append(runs, results.Run{ID: int64(i*2 + rep + 1), Status: results.StatusFinished,
				Params:  results.Params{Drive: spec.Drive{Terminals: term, Connections: term}, Workload: "select-only"},
				Summary: results.Summary{TPS: float64(1000*term + 10*rep)}})
		}
	}
	r, _, err := BuildWithAnalysis(Input{Study: "pgbench", Factors: []string{"terminals"}, Runs: runs}, analysis.CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var txt, sum, html bytes.Buffer
	if err := WriteText(&txt, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteSummary(&sum, r, "x.html"); err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(&html, r); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]string{"text": txt.String(), "summary": sum.String(), "html": html.String()} {
		if strings.Contains(s, "NOPM") || !strings.Contains(s, "TPS") {
			t.Errorf("%s: NOPM in a select-only report, or no TPS", name)
		}
	}
	if y := r.Charts[0].Y.Label; y != "TPS (transactions per second)" {
		t.Errorf("Y label %q", y)
	}
	if !strings.Contains(r.Headline.Verdict, "TPS ranges from 1,005 (1 terminal) to 16,005 (16 terminals)") {
		t.Errorf("verdict: %s", r.Headline.Verdict)
	}
}

// TestNoTransactionsDash: a cell whose runs completed no transaction of a type shows "–"
// for its latencies and wire cost in every writer, not 0.000, and enters no chart.
func TestNoTransactionsDash(t *testing.T) {
	runs := only(time.Millisecond, 20, "Classic")(fixture(t))
	for i := range runs {
		tx := append([]results.TxSummary(nil), runs[i].Tx...)
		tx[1] = results.TxSummary{Type: tx[1].Type} // payment: none completed, no histogram
		runs[i].Tx = tx
	}
	r, err := Build(Input{Study: "none", Runs: runs})
	if err != nil {
		t.Fatal(err)
	}
	tx := findTx(&r.Cells[0], "payment")
	if tx == nil || tx.Done() || !findTx(&r.Cells[0], "new_order").Pooled {
		t.Fatalf("payment %+v", tx)
	}
	var txt, html, csv bytes.Buffer
	for _, w := range []func() error{
		func() error { return WriteText(&txt, r) },
		func() error { return WriteHTML(&html, r) },
		func() error { return WriteCSV(&csv, r) },
	} {
		if err := w(); err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range strings.Split(txt.String(), "\n") {
		if strings.Contains(l, "0.000") {
			t.Errorf("text shows 0.000: %s", l)
		}
	}
	if !strings.Contains(txt.String(), "Transaction payment") || !strings.Contains(html.String(), `<td class="num">–</td>`) {
		t.Error("no dash for the payment row")
	}
	if strings.Contains(csv.String(), ",0,0,0,") {
		t.Errorf("csv writes zeros for no transactions:\n%s", csv.String())
	}
	for _, ch := range r.Charts {
		for _, pn := range ch.Panels {
			if pn.TxType == "payment" {
				t.Errorf("chart %s has a payment panel", ch.ID)
			}
		}
	}
}

// TestConfigHeading: the configuration section's heading names the series' factors, and
// none when there are none (no "Configuration by series ((none))").
func TestConfigHeading(t *testing.T) {
	if got := seriesHeading(buildFixture(t).Config); got != "Configuration by ServerMode" {
		t.Errorf("fixture: %q", got)
	}
	r := storedReport(t, "quickstart")
	var b bytes.Buffer
	if err := WriteText(&b, r); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "(none)") || !strings.Contains(b.String(), "\nConfiguration\n") {
		t.Errorf("quickstart text:\n%s", b.String())
	}
}

// TestAchievedRTTAxis: on the stored quickstart the throughput-vs-RTT points sit at the
// RTT the link achieved (0 where none was asked for), the ticks mark the requested levels,
// and the model is drawn only for series it fits, over their measured range.
func TestAchievedRTTAxis(t *testing.T) {
	in, opt := storedStudy(t, "quickstart")
	r, a, err := BuildWithAnalysis(in, opt)
	if err != nil {
		t.Fatal(err)
	}
	ch := r.Charts[0]
	if ch.X.Key != results.FactorRTT || ch.X.Label != "added RTT, achieved (ms)" {
		t.Fatalf("first chart %s: x %+v", ch.ID, ch.X)
	}
	var ticks []string
	for _, tk := range ch.X.Ticks {
		ticks = append(ticks, tk.Label)
	}
	if strings.Join(ticks, ",") != "0,1,5,20" {
		t.Errorf("ticks %v", ticks)
	}
	achieved := map[string]float64{}
	for _, c := range r.Cells {
		achieved[c.Key] = float64(c.AchievedRTT) / float64(time.Millisecond)
	}
	models := 0
	for _, s := range ch.Panels[0].Series {
		if s.Stat == StatModel {
			models++
			var fit *analysis.Fit
			for i := range a.Fits {
				if a.Fits[i].Series == "terminals="+strings.Fields(s.Group)[0] {
					fit = &a.Fits[i]
				}
			}
			if fit == nil || !fit.Fits {
				t.Errorf("model drawn for %s, which does not fit", s.Group)
				continue
			}
			first, last := s.Points[0], s.Points[len(s.Points)-1]
			if first.X != 0 || math.Abs(last.X-float64(fit.MaxRTT)/1e6) > 1e-6 || last.Y <= 0 || first.Y <= last.Y {
				t.Errorf("%s model from %+v to %+v", s.Group, first, last)
			}
			continue
		}
		for _, p := range s.Points {
			key := "rtt=" + p.Level + " terminals=" + strings.Fields(s.Group)[0]
			want := achieved[key]
			if p.Level == "0" {
				want = 0
			}
			if p.X != want || want < 0 {
				t.Errorf("%s at %s: x %v, want %v", s.Group, p.Level, p.X, want)
			}
		}
	}
	fits := 0
	for _, f := range a.Fits {
		if f.Fits {
			fits++
		}
	}
	if models != fits {
		t.Errorf("%d model lines for %d fitting series", models, fits)
	}
}

// TestNiceTicks: readable ticks — steps of 1, 2, 2.5 or 5 × 10ⁿ, thousands separated, a
// value axis ending on a tick at or above its data; log ticks at 1, 2, 5 × 10ⁿ from a
// labelled tick below the data to one above, "0" at the floor.
func TestNiceTicks(t *testing.T) {
	for _, tc := range []struct {
		name string
		a    Axis
		zero bool
		want string
	}{
		{"NOPM to 25,300", Axis{Scale: ScaleLinear, Max: 25300}, true, "0,10,000,20,000,30,000"},
		{"a small TPS", Axis{Scale: ScaleLinear, Max: 0.73}, true, "0,0.2,0.4,0.6,0.8"},
		{"2.5 steps", Axis{Scale: ScaleLinear, Max: 11}, true, "0,2.5,5,7.5,10,12.5"},
		{"log over 1.5 decades", Axis{Scale: ScaleLog, Min: 54, Max: 8178}, false, "50,100,200,500,1,000,2,000,5,000,10,000"},
		{"log with a zero", Axis{Scale: ScaleLog, Min: 0, Max: 20, Floor: 0.25}, false, "0,1,2,5,10,20"},
		{"log over 4 decades", Axis{Scale: ScaleLog, Min: 0.9, Max: 12000}, false, "0.1,1,10,100,1,000,10,000,100,000"},
	} {
		var got []string
		for _, tk := range niceTicks(tc.a, tc.zero) {
			got = append(got, tk.Label)
		}
		if strings.Join(got, ",") != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, strings.Join(got, ","), tc.want)
		}
	}
	for v, want := range map[float64]string{0: "0", 1000: "1,000", 25000: "25,000", 1234567: "1,234,567", 0.3: "0.3", 2.5: "2.5", -1500: "−1,500"} {
		if got := fmtNum(v); got != want {
			t.Errorf("fmtNum(%v) = %q, want %q", v, got, want)
		}
	}
}

// TestScaleRule: the automatic log rule and its override.
func TestScaleRule(t *testing.T) {
	for _, tc := range []struct {
		vals  []float64
		force string
		want  string
	}{
		{[]float64{100, 3000}, "", ScaleLinear},          // 30×
		{[]float64{100, 3200}, "", ScaleLog},             // 32× > 10^1.5
		{[]float64{0, 1, 20}, "", ScaleLinear},           // zero does not count: 20×
		{[]float64{0, 0.1, 20}, "", ScaleLog},            // 200×
		{[]float64{100, 3200}, ScaleLinear, ScaleLinear}, // forced
		{[]float64{100, 300}, ScaleLog, ScaleLog},        // forced
		{[]float64{0, 0}, ScaleLog, ScaleLinear},         // nothing positive to log
	} {
		if got := chooseScale(tc.vals, tc.force); got != tc.want {
			t.Errorf("chooseScale(%v, %q) = %s, want %s", tc.vals, tc.force, got, tc.want)
		}
	}
}

// TestPctText: shares read with two significant digits, never a float's long tail (seed
// 000's retry rate 0.1331 printed as 13.309999999999999 %).
func TestPctText(t *testing.T) {
	for f, want := range map[float64]string{0: "–", 0.1331: "13 %", 0.0089: "0.89 %", 0.025: "2.5 %", 1: "100 %", 0.00012: "0.012 %"} {
		if got := pctText(f); got != want {
			t.Errorf("pctText(%v) = %q, want %q", f, got, want)
		}
	}
}
