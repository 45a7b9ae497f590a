package analysis

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/results"
)

// RuleVersionSettings: the levels of a version or installation factor ran with different
// page sizes or cache sizes, so the chart credits the version with their effect (seed
// 002: Firebird 3 with 16 KB pages against Firebird 4 with 32 KB).
const RuleVersionSettings = "version-settings"

var versionSettingsRule = rule{names: []string{RuleVersionSettings}, check: (*checker).versionSettings}

// versionSettings compares the page size and the cache size (Comparison.PageSize, Cache)
// between the levels of a version or installation factor, within each combination of the
// other factors' levels: seed 002 compared Firebird 3 with 16 KB pages against Firebird 4
// with 32 KB, and the same page buffers were twice the cache on 4. Differences inside a
// level are the like-for-like rules' (mixed-settings).
func (c *checker) versionSettings() {
	vf := -1
	for i, f := range c.g.Factors {
		if binariesFactor(f) {
			vf = i
		}
	}
	if vf < 0 {
		return
	}
	var others []int
	for i := range c.g.Factors {
		if i != vf {
			others = append(others, i)
		}
	}
	type measure struct {
		what string
		get  func(engine.Comparison, map[string]string) (string, float64, bool)
	}
	measures := []measure{
		{"page size", func(cmp engine.Comparison, s map[string]string) (string, float64, bool) {
			if cmp.PageSize == nil {
				return "", 0, false
			}
			return cmp.PageSize(s)
		}},
		{"cache size", func(cmp engine.Comparison, s map[string]string) (string, float64, bool) {
			if cmp.Cache == nil {
				return "", 0, false
			}
			name, b, _, ok := cmp.Cache(s)
			return name, b, ok
		}},
	}
	key := c.g.Factors[vf]
	for _, m := range measures {
		// Per combination of the other factors: level → values, and the runs of each.
		groups := map[string]map[string]map[string]bool{}
		names := map[string]bool{}
		all := map[string][]int64{}
		for _, r := range c.fin {
			name, b, ok := m.get(comparison(r.Server.Engine), r.Server.Settings)
			if !ok {
				continue
			}
			names[name] = true
			v, level := engine.FormatBytes(b), results.FactorValue(r, key)
			g := c.levelsKey(r, others)
			if groups[g] == nil {
				groups[g] = map[string]map[string]bool{}
			}
			if groups[g][level] == nil {
				groups[g][level] = map[string]bool{}
			}
			groups[g][level][v] = true
			label := v + " (" + key + "=" + level + ")"
			all[label] = append(all[label], r.ID)
		}
		// A level that disagrees with itself is mixed-settings' to report; here, levels
		// that each agree but not with each other.
		differs := false
		for _, levels := range groups {
			seen := map[string]bool{}
			consistent := true
			for _, vals := range levels {
				consistent = consistent && len(vals) == 1
				for v := range vals {
					seen[v] = true
				}
			}
			differs = differs || (consistent && len(seen) > 1)
		}
		if !differs {
			continue
		}
		var ids []int64
		for _, l := range all {
			ids = append(ids, l...)
		}
		setting := strings.Join(slices.Sorted(maps.Keys(names)), ", ")
		c.add(Finding{Rule: RuleVersionSettings, Severity: Error,
			Message: fmt.Sprintf("the %s (%s) differs between the levels of %s: the chart credits the version with the effect of the %s (seed 002: Firebird 3 with 16 KB pages against Firebird 4 with 32 KB, whose page buffers were then twice the cache)",
				m.what, setting, key, m.what),
			Evidence: valuesEvidence(all), Runs: ids,
			Fix: fmt.Sprintf("set %s to one value for every level of %s (server.settings), and rerun the odd levels", setting, key)})
	}
}
