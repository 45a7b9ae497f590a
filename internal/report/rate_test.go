package report

import (
	"bytes"
	"encoding/csv"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/spec"
)

// rateFixture is seed 000's question asked open-loop: TPC-C at 200 arrivals per second on 10
// terminals, RTT 0, 1, 5 and 20 ms, two repeats. New-Order makes 14 round trips and Payment
// 7 over a base of 2 and 1 ms; the response time adds a schedule lag that grows with the
// terminals' load; at 20 ms the terminals cannot keep up (10 / 200 = 50 ms per terminal and
// transaction, against 2 + 14 × 20 = 282 ms for a New-Order), so those runs are overload
// points. Payment retries one transaction in fifty.
func rateFixture(t testing.TB) []results.Run {
	enc := func(v int64) string {
		h := hdrhistogram.New(1, 10*60*1_000_000, 3)
		for i := range 100 {
			_ = h.RecordValue(v + v*int64(i)/200)
		}
		s, err := results.EncodeHist(h)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	var runs []results.Run
	id := int64(0)
	for rep := range 2 {
		for _, rtt := range []time.Duration{0, time.Millisecond, 5 * time.Millisecond, 20 * time.Millisecond} {
			id++
			r := fixRun(t, id, "SuperServer", rtt, 10)
			r.Study = "at-rate"
			r.Params.Options = map[string]string{}
			r.Params.Rate, r.Params.Arrival, r.Params.MaxTries = 200, spec.ArrivalPoisson, 3
			overload := rtt == 20*time.Millisecond
			r.Summary = results.Summary{Elapsed: 90 * time.Second, Offered: 18000, AchievedRate: 200, Committed: 17800, Rollbacks: 180,
				Retried: 160, Retries: 170}
			if overload {
				r.Summary.AchievedRate, r.Summary.Backlog, r.Summary.Overload = 60, 12600, true
			}
			r.Summary.TPS = r.Summary.AchievedRate
			r.Summary.NOPM = r.Summary.TPS * 0.45 * 60
			lag := int64(100 + 100*rep)
			if overload {
				lag = 20_000_000
			}
			for _, ty := range []struct {
				name    string
				base, n int64
			}{{"new_order", 2000, 14}, {"payment", 1000, 7}} {
				svc := ty.base + ty.n*rtt.Microseconds()
				tx := results.TxSummary{Type: ty.name, Committed: 8900, Rollbacks: 90, MeanUs: float64(svc), P50Us: svc, P99Us: svc,
					Hist: enc(svc), RoundTrips: float64(ty.n), RespMeanUs: float64(svc + lag), RespHist: enc(svc + lag),
					LagHist: enc(lag), LagP99Us: lag}
				if ty.name == "payment" {
					tx.Retried, tx.Retries = 160, 170
				}
				r.Tx = append(r.Tx, tx)
			}
			runs = append(runs, r)
		}
	}
	return runs
}

func TestReportAtRate(t *testing.T) {
	r, err := Build(Input{Study: "at-rate", Factors: []string{results.FactorRTT}, Runs: rateFixture(t)})
	if err != nil {
		t.Fatal(err)
	}
	if r.Latency != LatencyResponse {
		t.Errorf("latency %q, want response time for open-loop runs", r.Latency)
	}
	last := r.Cells[len(r.Cells)-1]
	if last.Overloaded != 2 || last.Achieved != 60 || last.Offered != 200 || r.Cells[0].Overloaded != 0 {
		t.Errorf("cells: first %+v, last %+v", r.Cells[0], last)
	}
	if got := r.Cells[0].RetryRate; got < 0.0088 || got > 0.0091 {
		t.Errorf("retry rate %v, want 160 of 17,980", got)
	}
	// Response times, the service time and lag beside them.
	no := findTx(&r.Cells[1], "new_order")
	if no.P50Us <= no.ServiceP50Us || no.LagP99Us == 0 || no.Retries != 0 {
		t.Errorf("new_order at 1 ms: %+v", no)
	}
	if len(r.AtRate) != 1 {
		t.Fatalf("%d fixed-rate series, want 1", len(r.AtRate))
	}
	rs := r.AtRate[0]
	if !rs.Saturated || rs.SustainedLevel != "5ms" || rs.SaturationLevel != "20ms" || rs.ModelSaturation == 0 {
		t.Errorf("series %+v", rs)
	}
	var rate *Chart
	for i := range r.Charts {
		if r.Charts[i].Kind == ChartRate {
			rate = &r.Charts[i]
		}
	}
	if rate == nil || len(rate.Panels) != 2 || rate.Panels[0].TxType != "new_order" {
		t.Fatalf("rate chart %+v", rate)
	}
	var stats []string
	for _, s := range rate.Panels[0].Series {
		stats = append(stats, s.Stat)
	}
	if !slices.Equal(stats, []string{"p50", StatP90, "p99", StatSaturation, StatModelSaturation}) {
		t.Errorf("rate panel series %v", stats)
	}
	if !strings.Contains(r.Headline.Verdict, "At 200 per second the rate holds up to RTT 5ms and not at 20ms") ||
		!strings.Contains(r.Headline.Verdict, "0.89 % of the transactions were retried") {
		t.Errorf("verdict %q", r.Headline.Verdict)
	}

	var text, sum, html, c bytes.Buffer
	for _, w := range []struct {
		b *bytes.Buffer
		f func(*bytes.Buffer) error
	}{
		{&text, func(b *bytes.Buffer) error { return WriteText(b, r) }},
		{&sum, func(b *bytes.Buffer) error { return WriteSummary(b, r, "") }},
		{&html, func(b *bytes.Buffer) error { return WriteHTML(b, r) }},
		{&c, func(b *bytes.Buffer) error { return WriteCSV(b, r) }},
	} {
		if err := w.f(w.b); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range map[string][]string{
		"text":    {"Response time against RTT at 200 per second (poisson arrivals, 10 terminals", "measured saturation: the rate was sustained up to RTT 5ms and not at 20ms", "service p99", "lag p99", "overload point: the offered rate was not sustained", "2 of 2"},
		"summary": {"Response time against RTT at 200 per second", "OVERLOAD (2 of 2 runs)", "sustained"},
		"html":    {`id="at-rate"`, "Response time at a fixed rate", "saturation", "lag p99", "offered /s", "They are response times"},
	} {
		for _, s := range want {
			b := map[string]*bytes.Buffer{"text": &text, "summary": &sum, "html": &html}[name]
			if !strings.Contains(b.String(), s) {
				t.Errorf("%s lacks %q", name, s)
			}
		}
	}
	rows, err := csv.NewReader(&c).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(rows[0], "new_order_response_p99_ms") || !slices.Contains(rows[0], "overloaded_runs") || !slices.Contains(rows[0], "retry_rate") {
		t.Errorf("csv header %v", rows[0])
	}

	// Service time on request.
	s, err := Build(Input{Study: "at-rate", Factors: []string{results.FactorRTT}, Runs: rateFixture(t), Options: Options{Latency: LatencyService}})
	if err != nil {
		t.Fatal(err)
	}
	if tx := findTx(&s.Cells[1], "new_order"); s.Latency != LatencyService || tx.P50Us != no.ServiceP50Us {
		t.Errorf("service latency: %q, p50 %d, want %d", s.Latency, tx.P50Us, no.ServiceP50Us)
	}
	if _, err := Build(Input{Runs: rateFixture(t), Options: Options{Latency: "wall"}}); err == nil {
		t.Error("latency wall accepted")
	}
}
