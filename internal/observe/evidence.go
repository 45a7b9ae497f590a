package observe

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/words"
	"github.com/dblat/dblat/internal/workload"
)

// evidenceRuns is how many of the newest finished runs RoundTripEvidence looks through.
const evidenceRuns = 2000

// evidenceQuotes is how many groups of runs RoundTripEvidence quotes: those at the largest
// RTTs, where round trips cost most.
const evidenceQuotes = 2

// RoundTripEvidence quotes stored runs that show what fewer round trips buy, for
// Forecast.Evidence: for each registered workload that declares round-trip modes
// (workload.Definition.RoundTripModes), finished runs through a link on one engine at one
// RTT and number of terminals that differ in their mode, the newest of each mode. Without
// such runs, or with store nil, it says how to measure them (RoundTripModes.Hint); an error
// reading the store is told the same way. It reads the store and changes nothing.
func RoundTripEvidence(ctx context.Context, store results.Store) []string {
	defs := modeDefinitions()
	var hints []string
	for _, d := range defs {
		hints = append(hints, d.RoundTripModes.Hint)
	}
	if store == nil || len(defs) == 0 {
		return hints
	}
	runs, err := store.List(ctx, results.Filter{Status: results.StatusFinished, Limit: evidenceRuns})
	if err != nil {
		return hints
	}
	var out []string
	for _, d := range defs {
		out = append(out, modeEvidence(d, runs)...)
	}
	if len(out) == 0 {
		return hints
	}
	return out
}

// modeDefinitions are the registered workloads that declare round-trip modes.
func modeDefinitions() []*workload.Definition {
	var out []*workload.Definition
	for _, n := range workload.Names() {
		if d, err := workload.Lookup(n); err == nil && d.RoundTripModes != nil {
			out = append(out, d)
		}
	}
	return out
}

// modeGroup is the runs of one workload at one RTT, number of terminals and engine.
type modeGroup struct {
	rtt       time.Duration
	terminals int
	engine    string
}

// modeEvidence quotes d's runs among runs (newest first) that differ in their mode alone.
func modeEvidence(d *workload.Definition, runs []results.Run) []string {
	m := d.RoundTripModes
	opt, _ := d.Options.Lookup(m.Option)
	groups := map[modeGroup]map[string]results.Run{}
	for _, r := range runs {
		mode := r.Params.Options[m.Option]
		metric := results.MetricOf([]results.Run{r})
		if r.Params.Workload != d.Name || mode == "" || r.Params.RTT <= 0 || results.MetricValue(&r, metric) <= 0 {
			continue
		}
		k := modeGroup{r.Params.RTT, r.Params.Terminals, r.Server.Engine}
		if groups[k] == nil {
			groups[k] = map[string]results.Run{}
		}
		if _, ok := groups[k][mode]; !ok { // the newest
			groups[k][mode] = r
		}
	}
	var keys []modeGroup
	for k, g := range groups {
		if len(g) >= 2 {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(x, y modeGroup) int {
		return cmp.Or(cmp.Compare(y.rtt, x.rtt), cmp.Compare(x.engine, y.engine), cmp.Compare(x.terminals, y.terminals))
	})
	var out []string
	for _, k := range keys[:min(evidenceQuotes, len(keys))] {
		var parts []string
		for _, mode := range opt.Values {
			r, ok := groups[k][mode]
			if !ok {
				continue
			}
			rt := ""
			for _, t := range r.Tx {
				if t.Type == d.Metric.TxType && t.RoundTrips > 0 {
					rt = fmt.Sprintf(", %s in %.0f round trips", m.TxTitle, t.RoundTrips)
				}
			}
			metric := results.MetricOf([]results.Run{r})
			parts = append(parts, fmt.Sprintf("%s %.0f %s (run %d%s)", mode, results.MetricValue(&r, metric), metric, r.ID, rt))
		}
		out = append(out, fmt.Sprintf("stored %s runs on %s at %s added RTT, %s: %s", m.Title, k.engine, k.rtt,
			words.Count(k.terminals, "terminal"), strings.Join(parts, "; ")))
	}
	return out
}
