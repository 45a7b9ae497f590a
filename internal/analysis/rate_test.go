package analysis

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/spec"
	"github.com/dblat/dblat/internal/words"
)

// rateStudy is an open-loop study at 400 arrivals per second on 8 terminals, RTT 0 to 1 ms,
// three repeats per level, whose service time is the model's R·r + s (R = 20, s = 5 ms) and
// whose response time is the model's too, except where a test says otherwise: the
// terminals saturate at r* = (8/400 − 0.005)/20 = 0.75 ms, so the 1 ms runs are overload
// points.
func rateStudy(t *testing.T, svcAt func(time.Duration) time.Duration) []results.Run {
	const rate, n = 400.0, 8
	rtts := []time.Duration{0, 250 * us, 500 * us, ms}
	var runs []results.Run
	id := int64(0)
	for range 3 {
		for _, r := range rtts {
			id++
			run := cleanRun(id, r, n, rate)
			run.Params.Rate, run.Params.Arrival = rate, spec.ArrivalPoisson
			run.Summary.Offered = int64(rate * tEl.Seconds())
			run.Summary.AchievedRate = rate
			svc := svcAt(r)
			resp := svc
			if wait, ok := erlangCWait(n, rate, svc.Seconds()); ok {
				resp += durationOf(wait)
			}
			if r == ms {
				run.Summary.AchievedRate, run.Summary.Backlog, run.Summary.Overload = 330, 4000, true
				resp = 3 * time.Second
			}
			for i := range run.Tx {
				tx := &run.Tx[i]
				tx.MeanUs = float64(svc.Microseconds())
				tx.RespMeanUs = float64(resp.Microseconds())
				tx.RespHist = hist(t, repeat(resp.Microseconds(), 10)...)
			}
			runs = append(runs, run)
		}
	}
	return runs
}

func modelSvc(r time.Duration) time.Duration { return durationOf(tR*r.Seconds() + tS.Seconds()) }

func TestResponseAtRate(t *testing.T) {
	rs := ResponseAtRate(rateStudy(t, modelSvc), []string{results.FactorRTT})
	if len(rs) != 1 {
		t.Fatalf("%d series, want 1", len(rs))
	}
	s := rs[0]
	if s.Rate != 400 || s.Terminals != 8 || s.R != tR || s.S != tS {
		t.Errorf("series %+v: want rate 400, 8 terminals, R 20, s 5 ms", s)
	}
	if want := 750 * us; s.ModelSaturation != want {
		t.Errorf("model saturation %v, want %v", s.ModelSaturation, want)
	}
	if !s.Saturated || s.SaturationLevel != "1ms" || s.SustainedLevel != "500µs" {
		t.Errorf("measured saturation: %v at %q after %q", s.Saturated, s.SaturationLevel, s.SustainedLevel)
	}
	if len(s.Points) != 4 || s.Points[3].Overloaded != 3 || s.Points[3].Achieved != 330 {
		t.Fatalf("points %+v", s.Points)
	}
	// Below saturation the model is the measurement: no departure but the overload point.
	if len(s.Departures) != 1 || !strings.Contains(s.Departures[0], "RTT 1ms: 3 of 3 runs did not sustain 400/s") {
		t.Errorf("departures %q", s.Departures)
	}
	p := s.Points[2] // 0.5 ms: ρ = 400 × 15 ms / 8 = 0.75
	if math.Abs(p.Utilisation-0.75) > 1e-9 || p.Model <= p.ModelService || p.Types[0].Type != "new_order" ||
		math.Abs(float64(p.Types[0].P99-p.Response)) > 0.001*float64(p.Response) { // HDR: 3 significant digits
		t.Errorf("0.5 ms point %+v", p)
	}
	var buf bytes.Buffer
	ew := words.NewWriter(&buf, "test")
	WriteRate(ew, &s)
	for _, want := range []string{"Response time against RTT at 400 per second (poisson arrivals, 8 terminals", "saturation at r* = 750µs",
		"sustained up to RTT 500µs and not at 1ms", "3 of 3"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, buf.String())
		}
	}
}

// TestFitLatencyKnowsAnOpenLoop: the plateau of an open loop's throughput is its rate, and
// the latency model says so rather than blaming the server.
func TestFitLatencyKnowsAnOpenLoop(t *testing.T) {
	fits := FitLatency(rateStudy(t, modelSvc), []string{results.FactorRTT})
	if len(fits) != 1 || !fits[0].OpenLoop || strings.Contains(fits[0].Why, "the server") {
		t.Errorf("fits %+v", fits)
	}
	if fits := FitLatency(cleanStudy(), factorsRT); fits[0].OpenLoop {
		t.Error("a closed-loop series marked open-loop")
	}
}

// TestResponseAtRateDeparts: where the server itself slows down, the departure says so.
func TestResponseAtRateDeparts(t *testing.T) {
	rs := ResponseAtRate(rateStudy(t, func(r time.Duration) time.Duration {
		if r == 500*us {
			return modelSvc(r) * 13 / 10
		}
		return modelSvc(r)
	}), []string{results.FactorRTT})
	var found bool
	for _, d := range rs[0].Departures {
		if strings.HasPrefix(d, "RTT 500µs:") && strings.Contains(d, "the service time itself grew") {
			found = true
		}
	}
	if !found {
		t.Errorf("departures %q lack the 0.5 ms level's grown service time", rs[0].Departures)
	}
}

// TestResponseAtRateLeavesClosedLoopsOut: closed-loop series have no rate to hold.
func TestResponseAtRateLeavesClosedLoopsOut(t *testing.T) {
	if rs := ResponseAtRate(cleanStudy(), factorsRT); len(rs) != 0 {
		t.Errorf("closed-loop study: %+v", rs)
	}
}

func TestErlangC(t *testing.T) {
	// One server: M/M/1's wait is ρ/(1−ρ) × S. Two servers at a = 1: C = 1/3, W = S/3.
	if w, ok := erlangCWait(1, 50, 0.01); !ok || math.Abs(w-0.01) > 1e-12 {
		t.Errorf("M/M/1 at ρ 0.5: wait %v, want 10 ms", w)
	}
	if w, ok := erlangCWait(2, 100, 0.01); !ok || math.Abs(w-0.01/3) > 1e-12 {
		t.Errorf("M/M/2 at a = 1: wait %v, want 3.33 ms", w)
	}
	if _, ok := erlangCWait(4, 400, 0.01); ok {
		t.Error("saturated servers have a finite wait")
	}
}
