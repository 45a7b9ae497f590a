package analysis

import (
	"strconv"
	"strings"
	"time"

	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/stats"
)

// EnoughFraction is how close to the best throughput a pool size must come to be "enough":
// within 5 %, half the 10 % variation between repeats that Check accepts (DefaultMaxCV), so a
// smaller pool that close to the best is not one the study can tell apart from it.
const EnoughFraction = 0.95

// PoolLevel is one pool size at one RTT: its finished runs and their mean throughput.
type PoolLevel struct {
	Size int     `json:"size"`
	Runs int     `json:"runs"`
	Mean float64 `json:"mean"`
}

// Gain is what going from one measured pool size to the next bought.
type Gain struct {
	From int `json:"from"`
	To   int `json:"to"`
	// PerConnection is the change of the mean throughput (in PoolAdvice.Metric) per
	// terminal added: (X_to − X_from)/(To − From).
	PerConnection float64 `json:"per_connection"`
	// Efficiency is PerConnection over the throughput per terminal at From, X_from/From: 1
	// when the added terminals do as much as the ones before them (linear scaling), 0 when
	// they add nothing, negative when they cost throughput.
	Efficiency float64 `json:"efficiency"`
}

// PoolAdvice is the pool size that pays at one RTT in one series (seed 000: "as network
// latency increases the connection pool can and must be increased", until the server
// saturates).
type PoolAdvice struct {
	// Series names the levels of the other factors ("set.ServerMode=Classic"), or "all runs".
	Series string `json:"series"`
	// RTT is the requested RTT (results.Params.RTT); Level as the study writes it.
	RTT   time.Duration `json:"rtt"`
	Level string        `json:"level"`
	// Factor is the factor that sizes the pool: terminals, or connections when the study
	// varies connections and not terminals.
	Factor string `json:"factor"`
	// Metric is the unit of the means and gains: NOPM for TPC-C, else TPS (as the report).
	Metric string      `json:"metric"`
	Levels []PoolLevel `json:"levels"`
	// Best is the size with the highest mean; AtEdge is set when it is the largest size
	// measured (and above the one before it): a larger pool may do better still.
	Best   int  `json:"best"`
	AtEdge bool `json:"at_edge"`
	// Enough is the smallest size whose mean is within EnoughFraction of the best's.
	Enough int    `json:"enough"`
	Gains  []Gain `json:"gains"`
}

// PoolSizing returns, for each series and RTT level, the pool size that maximises
// throughput and what each step between measured sizes bought. The pool factor is
// terminals, or connections when only that is varied; nil when neither is among the factors
// (factors empty: inferred as report.Build does). Only finished runs count; a size without
// one is left out, and a series/RTT with fewer than two sizes gives no advice. Ordered by
// the levels of the other factors (the RTT among them), in the order the factors are given.
func PoolSizing(runs []results.Run, factors []string) []PoolAdvice {
	g := group(runs, factors)
	pf := results.FactorTerminals
	if g.factorIndex(pf) < 0 {
		pf = results.FactorConnections
	}
	if g.factorIndex(pf) < 0 {
		return nil
	}
	rttIdx := g.factorIndex(results.FactorRTT)
	var out []PoolAdvice
	for _, s := range g.seriesOf(pf) {
		a := PoolAdvice{Factor: pf, Metric: g.metric, Levels: []PoolLevel{}, Gains: []Gain{}}
		c0 := s.cells[0]
		a.Series = g.nameWithout(c0, pf, results.FactorRTT)
		if rttIdx >= 0 {
			a.Level = c0.Levels[rttIdx]
		}
		for _, c := range s.cells {
			if len(c.Finished) == 0 {
				continue
			}
			a.RTT = c.Finished[0].Params.RTT
			if rttIdx < 0 {
				a.Level = results.FactorValue(c.Finished[0], results.FactorRTT)
			}
			size, err := strconv.Atoi(c.Levels[g.factorIndex(pf)])
			if err != nil {
				continue
			}
			xs := make([]float64, len(c.Finished))
			for i, r := range c.Finished {
				xs[i] = results.MetricValue(r, g.metric)
			}
			m, _ := stats.MeanSD(xs)
			a.Levels = append(a.Levels, PoolLevel{Size: size, Runs: len(c.Finished), Mean: round(m, 3)})
		}
		if len(a.Levels) < 2 {
			continue
		}
		best := a.Levels[0]
		for _, l := range a.Levels[1:] {
			if l.Mean > best.Mean {
				best = l
			}
		}
		a.Best = best.Size
		last := a.Levels[len(a.Levels)-1]
		a.AtEdge = best.Size == last.Size && last.Mean > a.Levels[len(a.Levels)-2].Mean
		for _, l := range a.Levels {
			if l.Mean >= EnoughFraction*best.Mean {
				a.Enough = l.Size
				break
			}
		}
		for i := 1; i < len(a.Levels); i++ {
			p, q := a.Levels[i-1], a.Levels[i]
			gn := Gain{From: p.Size, To: q.Size}
			if q.Size != p.Size {
				gn.PerConnection = round((q.Mean-p.Mean)/float64(q.Size-p.Size), 3)
			}
			if p.Mean > 0 && p.Size > 0 {
				gn.Efficiency = round(gn.PerConnection/(p.Mean/float64(p.Size)), 3)
			}
			a.Gains = append(a.Gains, gn)
		}
		out = append(out, a)
	}
	return out
}

// nameWithout names the levels of c's factors other than exclude, "all runs" when none is
// left.
func (g *grouping) nameWithout(c *results.Cell, exclude ...string) string {
	var parts []string
	for f, key := range g.Factors {
		skip := false
		for _, e := range exclude {
			if key == e {
				skip = true
			}
		}
		if !skip {
			parts = append(parts, key+"="+c.Levels[f])
		}
	}
	if len(parts) == 0 {
		return allRuns
	}
	return strings.Join(parts, ", ")
}
