package results

import (
	"maps"
	"slices"
	"sort"
	"strings"
)

// Grouping is runs grouped into cells by their levels of a study's factors: the one grouping
// that reports and analyses share, so that a finding's cells are the report's cells.
type Grouping struct {
	// Factors are the factor keys, as given to Group or inferred by it.
	Factors []string
	// Levels holds, for each factor, the levels its runs have, ordered by SortFactorValues.
	Levels [][]string
	// Cells are the combinations of levels that have runs, ordered by their levels'
	// indexes, the first factor slowest.
	Cells []*Cell
}

// Cell is one combination of factor levels and its runs.
type Cell struct {
	// Key names the cell: "factor=level" pairs in factor order, separated by spaces
	// ("rtt=1ms terminals=8"); "" without factors.
	Key string
	// Levels holds the cell's level of each factor, Index each level's index in
	// Grouping.Levels.
	Levels []string
	Index  []int
	// Runs are the cell's runs, ascending by ID; Finished those of them that finished and
	// count, the only runs that figures are computed from; SetAside those that finished
	// but a study set aside as disturbed (Run.SetAside), kept with their evidence.
	Runs     []*Run
	Finished []*Run
	SetAside []*Run
}

// FinishedIDs returns the IDs of the cell's finished runs, ascending.
func (c *Cell) FinishedIDs() []int64 {
	ids := make([]int64, len(c.Finished))
	for i, r := range c.Finished {
		ids[i] = r.ID
	}
	return ids
}

// Group groups runs into cells by their levels of factors (FactorValue); with no factors,
// by those InferFactors finds. The cells point into runs. The same runs in any order give
// the same grouping.
func Group(runs []Run, factors []string) *Grouping {
	if len(factors) == 0 {
		factors = InferFactors(runs)
	}
	g := &Grouping{Factors: slices.Clone(factors)}
	for _, key := range g.Factors {
		seen := map[string]bool{}
		for i := range runs {
			seen[FactorValue(&runs[i], key)] = true
		}
		levels := slices.Sorted(maps.Keys(seen))
		SortFactorValues(levels)
		g.Levels = append(g.Levels, levels)
	}
	byKey := map[string]*Cell{}
	for i := range runs {
		r := &runs[i]
		c := &Cell{Levels: make([]string, len(g.Factors)), Index: make([]int, len(g.Factors))}
		parts := make([]string, len(g.Factors))
		for f, key := range g.Factors {
			c.Levels[f] = FactorValue(r, key)
			c.Index[f] = slices.Index(g.Levels[f], c.Levels[f])
			parts[f] = key + "=" + c.Levels[f]
		}
		c.Key = strings.Join(parts, " ")
		if have := byKey[c.Key]; have != nil {
			c = have
		} else {
			byKey[c.Key] = c
			g.Cells = append(g.Cells, c)
		}
		c.Runs = append(c.Runs, r)
	}
	for _, c := range g.Cells {
		sort.Slice(c.Runs, func(i, j int) bool { return c.Runs[i].ID < c.Runs[j].ID })
		for _, r := range c.Runs {
			switch {
			case r.Status != StatusFinished:
			case r.SetAside != "":
				c.SetAside = append(c.SetAside, r)
			default:
				c.Finished = append(c.Finished, r)
			}
		}
	}
	sort.Slice(g.Cells, func(i, j int) bool { return slices.Compare(g.Cells[i].Index, g.Cells[j].Index) < 0 })
	return g
}
