package analysis

import (
	"fmt"
	"math"
	"time"

	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/spec"
)

// RateSeries is the response time of one series of open-loop runs at one offered rate,
// against the RTT the link added: seed 000's open question ("how does the user experience
// the latency?") answered at a load that stays the same while the RTT grows.
//
// The model: below saturation every arrival is served, so a transaction's service time is
// S(r) = R·r + s (R round trips over an added RTT r, and s for everything else), and its
// response time is S(r) plus the wait for a free terminal. With N terminals and λ arrivals
// per second the terminals are busy a share ρ = λ·S(r)/N of the time; the wait is taken as
// M/M/N's (Erlang C), exact for Poisson arrivals and exponential service and an upper bound
// for constant arrivals, which queue less. The terminals are saturated where ρ reaches 1:
// at r* = (N/λ − s)/R. Past it the rate cannot be sustained and the runs are overload
// points.
type RateSeries struct {
	// Series names the levels of the factors besides RTT ("terminals=16"), or "all runs".
	Series string `json:"series"`
	// Rate is the offered rate (per second) and Arrival its process; Terminals the
	// transactions that can be under way at once (terminals, or the pool when smaller).
	Rate      float64 `json:"rate"`
	Arrival   string  `json:"arrival"`
	Terminals int     `json:"terminals"`
	// R is the round trips per transaction (the mix's mean, measured at the lowest RTT;
	// 0 when the connections were not metered) and S the time per transaction besides the
	// added RTT, from the service time at the lowest sustained RTT r₀: s = S(r₀) − R·r₀.
	R float64       `json:"round_trips"`
	S time.Duration `json:"s"`
	// ModelSaturation is r* = (N/λ − s)/R, where the model's terminals are busy all the
	// time; 0 when R is unknown or s alone saturates them.
	ModelSaturation time.Duration `json:"model_saturation_rtt"`
	// Saturated is set when some RTT level's runs were overload points: Saturation is the
	// lowest such level's achieved RTT (SaturationLevel as requested), LastSustained the
	// highest level below it whose runs kept the rate (SustainedLevel; "" when none did).
	Saturated       bool          `json:"saturated"`
	Saturation      time.Duration `json:"saturation_rtt,omitempty"`
	SaturationLevel string        `json:"saturation_level,omitempty"`
	LastSustained   time.Duration `json:"last_sustained_rtt,omitempty"`
	SustainedLevel  string        `json:"sustained_level,omitempty"`
	// Points are the RTT levels, ascending.
	Points []RatePoint `json:"points"`
	// Departures say, level by level, where the measured mean response time departs from
	// the model by more than ModelTolerance (and 1 ms), and why.
	Departures []string `json:"departures,omitempty"`
}

// RatePoint is one RTT level of a RateSeries: its finished runs' figures.
type RatePoint struct {
	// Level is the RTT as requested, RTT as the link achieved it (mean over the runs).
	Level string        `json:"level"`
	RTT   time.Duration `json:"rtt"`
	// Runs are the finished runs; Overloaded those that were overload points.
	Runs       int `json:"runs"`
	Overloaded int `json:"overloaded"`
	// Offered is the arrivals due per second of the window, Achieved those started (means).
	Offered  float64 `json:"offered"`
	Achieved float64 `json:"achieved"`
	// Service and Response are the measured means over every transaction (all types);
	// Lag is their difference, the wait from intended start to connection checkout.
	Service  time.Duration `json:"service"`
	Response time.Duration `json:"response"`
	// ModelService is R·r + s, Utilisation ρ = λ·ModelService/N, and Model the response time
	// the model predicts (ModelService plus M/M/N's wait); Model is 0 where ρ ≥ 1 or the
	// model has no R.
	ModelService time.Duration `json:"model_service,omitempty"`
	Utilisation  float64       `json:"utilisation,omitempty"`
	Model        time.Duration `json:"model,omitempty"`
	// Types are the response-time percentiles per transaction type, from the runs' pooled
	// HDR histograms (the means of their own percentiles where a histogram is missing).
	Types []RateType `json:"types"`
}

// RateType is one transaction type's response time at one RTT level.
type RateType struct {
	Type  string        `json:"type"`
	Count int64         `json:"count"`
	P50   time.Duration `json:"p50"`
	P90   time.Duration `json:"p90"`
	P99   time.Duration `json:"p99"`
}

// ModelTolerance is how far the measured mean response time may stray from the model before
// a departure is reported: the latency model's 15 % (FitLatency).
const ModelTolerance = 0.15

// ResponseAtRate returns one RateSeries per series of finished open-loop runs that share an
// offered rate, when RTT is a factor: the runs grouped by every factor besides RTT (as
// FitLatency groups them). Series whose runs are closed-loop, or mix rates, are left out;
// nil when RTT is not a factor.
func ResponseAtRate(runs []results.Run, factors []string) []RateSeries {
	g := group(runs, factors)
	if g.factorIndex(results.FactorRTT) < 0 {
		return nil
	}
	var out []RateSeries
	for _, s := range g.seriesOf(results.FactorRTT) {
		if rs, ok := rateSeries(s); ok {
			out = append(out, rs)
		}
	}
	return out
}

func rateSeries(s *series) (RateSeries, bool) {
	var rs RateSeries
	first := true
	for _, c := range s.cells {
		for _, r := range c.Finished {
			if !r.Params.OpenLoop() {
				return RateSeries{}, false
			}
			if first {
				rs = RateSeries{Series: s.name, Rate: r.Params.Rate, Arrival: r.Params.Arrival, Terminals: concurrency(&r.Params)}
				first = false
			} else if r.Params.Rate != rs.Rate || concurrency(&r.Params) != rs.Terminals {
				return RateSeries{}, false
			}
		}
	}
	if first {
		return RateSeries{}, false
	}
	type level struct {
		p  RatePoint
		rt float64 // round trips per transaction, 0 unknown
	}
	var levels []level
	for _, c := range s.cells {
		if len(c.Finished) == 0 {
			continue
		}
		lv := level{p: RatePoint{Level: results.FactorValue(c.Finished[0], results.FactorRTT), Runs: len(c.Finished)}}
		var rtt, offered, achieved, svc, resp, n, rtSum, rtW float64
		byType := map[string][]*results.TxSummary{}
		var order []string
		for _, r := range c.Finished {
			rtt += float64(AchievedRTT(r))
			if r.Summary.Overload {
				lv.p.Overloaded++
			}
			if el := r.Summary.Elapsed.Seconds(); el > 0 {
				offered += float64(r.Summary.Offered) / el
			}
			achieved += r.Summary.AchievedRate
			if x, w := roundTrips(r); w > 0 {
				rtSum += x * w
				rtW += w
			}
			for i := range r.Tx {
				t := &r.Tx[i]
				k := float64(t.Committed + t.Rollbacks)
				if k == 0 {
					continue
				}
				svc += t.MeanUs * k
				resp += t.RespMeanUs * k
				n += k
				if _, ok := byType[t.Type]; !ok {
					order = append(order, t.Type)
				}
				byType[t.Type] = append(byType[t.Type], t)
			}
		}
		m := float64(len(c.Finished))
		lv.p.RTT = roundUs(rtt / m)
		lv.p.Offered, lv.p.Achieved = round(offered/m, 1), round(achieved/m, 1)
		if n > 0 {
			lv.p.Service, lv.p.Response = roundUs(svc/n*1e3), roundUs(resp/n*1e3)
		}
		if rtW > 0 {
			lv.rt = rtSum / rtW
		}
		for _, typ := range txTypeOrder(order) {
			lv.p.Types = append(lv.p.Types, rateType(typ, byType[typ]))
		}
		levels = append(levels, lv)
	}
	if len(levels) == 0 {
		return RateSeries{}, false
	}
	// The model's s from the lowest RTT that kept the rate.
	base := -1
	for i, lv := range levels {
		if lv.p.Overloaded == 0 && lv.p.Service > 0 {
			base = i
			break
		}
	}
	if base >= 0 && levels[base].rt > 0 {
		rs.R = round(levels[base].rt, 3)
		r0 := levels[base].p.RTT.Seconds()
		sec := levels[base].p.Service.Seconds() - rs.R*r0
		rs.S = durationOf(max(sec, 0))
		if rs.R > 0 {
			if x := (float64(rs.Terminals)/rs.Rate - rs.S.Seconds()) / rs.R; x > 0 {
				rs.ModelSaturation = durationOf(x)
			}
		}
	}
	for i := range levels {
		p := &levels[i].p
		if rs.R > 0 {
			svc := rs.R*p.RTT.Seconds() + rs.S.Seconds()
			p.ModelService = durationOf(svc)
			p.Utilisation = round(rs.Rate*svc/float64(rs.Terminals), 3)
			if wait, ok := erlangCWait(rs.Terminals, rs.Rate, svc); ok {
				p.Model = durationOf(svc + wait)
			}
		}
		if p.Overloaded > 0 && !rs.Saturated {
			rs.Saturated, rs.Saturation, rs.SaturationLevel = true, p.RTT, p.Level
			if i > 0 && levels[i-1].p.Overloaded == 0 {
				rs.LastSustained, rs.SustainedLevel = levels[i-1].p.RTT, levels[i-1].p.Level
			}
		}
		rs.Points = append(rs.Points, *p)
	}
	rs.Departures = departures(&rs)
	return rs, true
}

// rateType pools one type's response times over a level's runs.
func rateType(typ string, txs []*results.TxSummary) RateType {
	rt := RateType{Type: typ}
	for _, t := range txs {
		rt.Count += t.Committed + t.Rollbacks
	}
	us := func(v int64) time.Duration { return time.Duration(v) * time.Microsecond }
	if h, ok := merge(txs, func(t *results.TxSummary) string { return t.RespHist }); ok {
		rt.P50, rt.P90, rt.P99 = us(h.ValueAtQuantile(50)), us(h.ValueAtQuantile(90)), us(h.ValueAtQuantile(99))
		return rt
	}
	var p50, p90, p99 float64
	for _, t := range txs {
		p50 += float64(t.RespP50Us)
		p90 += float64(t.RespP90Us)
		p99 += float64(t.RespP99Us)
	}
	k := float64(len(txs))
	rt.P50, rt.P90, rt.P99 = roundUs(p50/k*1e3), roundUs(p90/k*1e3), roundUs(p99/k*1e3)
	return rt
}

// txTypeOrder puts TPC-C's types in the spec's order first, the others after in the order
// given.
func txTypeOrder(types []string) []string {
	var out []string
	for _, t := range limitOrder {
		for _, x := range types {
			if x == t {
				out = append(out, t)
			}
		}
	}
	for _, x := range types {
		found := false
		for _, t := range limitOrder {
			found = found || x == t
		}
		if !found {
			out = append(out, x)
		}
	}
	return out
}

// erlangCWait is the mean wait for one of n servers when arrivals come at rate per second
// and each holds a server for svc seconds (M/M/n, Erlang's C formula); false when the
// servers are saturated (rate·svc ≥ n). Erlang's B is computed by its recursion
// B(k) = a·B(k−1)/(k + a·B(k−1)), which stays in range for thousands of servers, and
// C = n·B/(n − a·(1 − B)).
func erlangCWait(n int, rate, svc float64) (float64, bool) {
	a := rate * svc
	if n < 1 || a >= float64(n) {
		return 0, false
	}
	b := 1.0
	for k := 1; k <= n; k++ {
		b = a * b / (float64(k) + a*b)
	}
	c := float64(n) * b / (float64(n) - a*(1-b))
	return c * svc / (float64(n) - a), true
}

// departures explains, level by level, where the measured mean response time departs from
// the model.
func departures(rs *RateSeries) []string {
	var out []string
	for _, p := range rs.Points {
		switch {
		case p.Overloaded > 0:
			out = append(out, fmt.Sprintf("RTT %s: %d of %d runs did not sustain %s/s (achieved %s/s): the backlog grows through the window, so the mean response of %s measures how long the window was, not the RTT; the model ends at saturation",
				p.Level, p.Overloaded, p.Runs, spec.FormatRate(rs.Rate), trimNum(p.Achieved), fmtMs(p.Response)))
		case p.Model == 0 && rs.R > 0:
			out = append(out, fmt.Sprintf("RTT %s: the model's terminals are saturated here (ρ = %.2f), yet every run kept the rate: the transactions took less than R·r + s = %s (measured service %s)",
				p.Level, p.Utilisation, fmtMs(p.ModelService), fmtMs(p.Service)))
		case p.Model > 0:
			diff := p.Response - p.Model
			if math.Abs(float64(diff)) <= ModelTolerance*float64(p.Model) || math.Abs(float64(diff)) <= float64(time.Millisecond) {
				continue
			}
			lag, modelWait := p.Response-p.Service, p.Model-p.ModelService
			switch {
			case diff > 0 && float64(p.Service) > (1+ModelTolerance)*float64(p.ModelService):
				out = append(out, fmt.Sprintf("RTT %s: response %s against the model's %s, because the service time itself grew to %s (model R·r + s = %s): a transaction that spans more round trips holds its locks longer, so concurrent ones wait inside the server, a queue the model leaves out",
					p.Level, fmtMs(p.Response), fmtMs(p.Model), fmtMs(p.Service), fmtMs(p.ModelService)))
			case diff > 0:
				out = append(out, fmt.Sprintf("RTT %s: response %s against the model's %s: arrivals waited %s for a free terminal where M/M/%d predicts %s; at ρ = %.2f the queue is very sensitive to bursts and to the spread of service times",
					p.Level, fmtMs(p.Response), fmtMs(p.Model), fmtMs(lag), rs.Terminals, fmtMs(modelWait), p.Utilisation))
			case rs.Arrival == spec.ArrivalConstant && modelWait > 0 && lag < modelWait:
				out = append(out, fmt.Sprintf("RTT %s: response %s, below the model's %s: constant arrivals wait %s for a terminal where the Poisson arrivals of M/M/%d would wait %s",
					p.Level, fmtMs(p.Response), fmtMs(p.Model), fmtMs(lag), rs.Terminals, fmtMs(modelWait)))
			default:
				out = append(out, fmt.Sprintf("RTT %s: response %s, below the model's %s: the service time fell to %s against R·r + s = %s (the server did less per transaction than at the lowest RTT: warmer caches, less contention)",
					p.Level, fmtMs(p.Response), fmtMs(p.Model), fmtMs(p.Service), fmtMs(p.ModelService)))
			}
		}
	}
	return out
}

// trimNum writes a rate without trailing zeros.
func trimNum(x float64) string { return spec.FormatRate(round(x, 1)) }
