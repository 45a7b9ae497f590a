package analysis

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/stats"
)

// Metric names, as in packages results and report.
const (
	MetricNOPM = results.MetricNOPM // TPC-C New-Order transactions committed per minute
	MetricTPS  = results.MetricTPS  // transactions completed per second
)

// allRuns names the single series of a study whose only factors vary within a series.
const allRuns = "all runs"

// grouping is a study's runs grouped into cells as reports group them (results.Group),
// with the throughput metric their figures use.
type grouping struct {
	*results.Grouping
	metric string
}

// group groups runs into cells by their levels of factors, inferred when none are given
// (results.Group).
func group(runs []results.Run, factors []string) *grouping {
	return &grouping{Grouping: results.Group(runs, factors), metric: results.MetricOf(runs)}
}

// factorIndex returns the index of key in the grouping's factors, or -1.
func (g *grouping) factorIndex(key string) int { return slices.Index(g.Factors, key) }

// series is a set of cells that share the levels of every factor except the excluded ones.
type series struct {
	name  string // "set.ServerMode=Classic, terminals=10", or allRuns
	cells []*results.Cell
}

// seriesOf groups the cells by their levels of every factor except those in exclude,
// keeping the cells' order within each series and ordering series by their levels.
func (g *grouping) seriesOf(exclude ...string) []*series {
	var keep []int
	for f, key := range g.Factors {
		if !slices.Contains(exclude, key) {
			keep = append(keep, f)
		}
	}
	type ordered struct {
		idx []int
		s   *series
	}
	bykey := map[string]*ordered{}
	var out []*ordered
	for _, c := range g.Cells {
		idx := make([]int, len(keep))
		parts := make([]string, len(keep))
		for i, f := range keep {
			idx[i] = c.Index[f]
			parts[i] = g.Factors[f] + "=" + c.Levels[f]
		}
		k := fmt.Sprint(idx)
		o := bykey[k]
		if o == nil {
			name := strings.Join(parts, ", ")
			if name == "" {
				name = allRuns
			}
			o = &ordered{idx: idx, s: &series{name: name}}
			bykey[k] = o
			out = append(out, o)
		}
		o.s.cells = append(o.s.cells, c)
	}
	sort.SliceStable(out, func(i, j int) bool { return slices.Compare(out[i].idx, out[j].idx) < 0 })
	ss := make([]*series, len(out))
	for i, o := range out {
		ss[i] = o.s
	}
	return ss
}

// round rounds x to places decimals (stats.Round).
func round(x float64, places int) float64 { return stats.Round(x, places) }
