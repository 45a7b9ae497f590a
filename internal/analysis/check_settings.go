package analysis

import (
	"fmt"
	"sort"
	"strings"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/words"
)

// RuleSettingNotApplied: a requested server setting was read back with another value
// (Firebird clamps page sizes, a database header overrides DefaultDbCachePages: the
// engine's Comparison.NotApplied says why).
const RuleSettingNotApplied = "setting-not-applied"

var settingNotAppliedRule = rule{names: []string{RuleSettingNotApplied}, check: (*checker).settingsApplied}

// settingsApplied compares each requested setting with its read-back under the same name,
// where both parse to the same kind of value.
func (c *checker) settingsApplied() {
	type key struct{ engine, name, asked, got string }
	found := map[key][]int64{}
	for _, r := range c.fin {
		for k, asked := range r.Params.Options {
			name, ok := strings.CutPrefix(k, results.SettingPrefix)
			if !ok {
				continue
			}
			got, ok := engine.LookupSetting(r.Server.Settings, name)
			if !ok {
				continue
			}
			if same, comparable := engine.SameSetting(asked, got, comparison(r.Server.Engine).Canonical); comparable && !same {
				k := key{r.Server.Engine, name, asked, got}
				found[k] = append(found[k], r.ID)
			}
		}
	}
	keys := make([]key, 0, len(found))
	for k := range found {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		return a.engine+"\x00"+a.name+"\x00"+a.asked+"\x00"+a.got < b.engine+"\x00"+b.name+"\x00"+b.asked+"\x00"+b.got
	})
	for _, k := range keys {
		why, fix := "the server runs with another value than the one the study's labels claim", "check the server's configuration and rerun"
		if adv, ok := comparison(k.engine).NotApplied[strings.ToLower(k.name)]; ok {
			why, fix = adv.Message, adv.Fix
		}
		c.add(Finding{Rule: RuleSettingNotApplied, Severity: Error,
			Message:  fmt.Sprintf("%s was asked as %s but read back as %s: %s", k.name, k.asked, k.got, why),
			Evidence: fmt.Sprintf("requested %s=%s, server reports %s in %s (%s)", k.name, k.asked, k.got, words.Count(len(found[k]), "run"), idList(found[k], 8)),
			Runs:     found[k], Fix: fix})
	}
}

// requested returns the run's requested value of server setting name (Params.Options
// "set.<name>", matched case-insensitively).
func requested(r *results.Run, name string) (string, bool) {
	for k, v := range r.Params.Options {
		if n, ok := strings.CutPrefix(k, results.SettingPrefix); ok && strings.EqualFold(n, name) {
			return v, true
		}
	}
	return "", false
}
