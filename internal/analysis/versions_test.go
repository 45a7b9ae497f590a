package analysis

import (
	"slices"
	"strings"
	"testing"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/results"
)

// testdata/pg-versions.json holds a short real study exported with `dblat results export
// --format json` (stats and histograms removed, settings cut to the ones that matter):
// managed PostgreSQL 13, 14 and 17 fetched by `dblat server install`, TPC-C, 1 warehouse,
// 2 terminals, 3 s windows after 1 s of warm-up, rtt [0, 1ms], one run per cell, on a
// 2-vCPU VM shared with other work. Factors: server.version, rtt.

var versionFactors = []string{results.FactorVersion, results.FactorRTT}

// versionRules are the rules that judge whether the versions compare like for like.
var versionRules = []string{RuleMixedServer, RuleMixedBuild, RuleVersionSettings, RuleMixedSettings, RuleMixedParams}

// TestVersionStudyIsLikeForLike: the real version study passes every like-for-like rule,
// and with its RTT-0 runs alone (the 1 ms runs met a late link on the shared machine)
// the check finds no error at all.
func TestVersionStudyIsLikeForLike(t *testing.T) {
	runs := loadRuns(t, "testdata/pg-versions.json")
	for _, f := range Check(runs, CheckOptions{Factors: versionFactors, Repeat: 1}) {
		if slices.Contains(versionRules, f.Rule) {
			t.Errorf("real version study: %s %s: %s (%s)", f.Severity, f.Rule, f.Message, f.Evidence)
		}
	}
	var local []results.Run
	for _, r := range runs {
		if r.Params.RTT == 0 {
			local = append(local, r)
		}
	}
	if fs := Check(local, CheckOptions{Factors: versionFactors, Repeat: 1}); HasErrors(fs) {
		t.Errorf("RTT-0 runs of the real version study: %+v", fs)
	}
}

// TestVersionStudyPlanted plants seed 002's mistakes in the real version study, one at a
// time, and expects the check to refuse each.
func TestVersionStudyPlanted(t *testing.T) {
	level := func(runs []results.Run, v string, fn func(r *results.Run)) []results.Run {
		for i := range runs {
			if runs[i].Params.Options[results.FactorVersion] == v {
				fn(&runs[i])
			}
		}
		return runs
	}
	for _, tc := range []struct {
		name    string
		factors []string
		plant   func([]results.Run) []results.Run
		rule    string
		msg     string
	}{
		{"a 32-bit build of one version (seed 002)", versionFactors, func(runs []results.Run) []results.Run {
			return level(runs, "13", func(r *results.Run) {
				r.Server.Settings[engine.SettingBits], r.Server.Settings[engine.SettingArch] = "32", "i686"
			})
		}, RuleMixedBuild, "server build (word size and instruction set) differs"},
		{"another page size for one version (seed 002: 16 KB against 32 KB)", versionFactors, func(runs []results.Run) []results.Run {
			return level(runs, "17", func(r *results.Run) { r.Server.Settings["block_size"] = "32768" })
		}, RuleVersionSettings, "the page size (block_size) differs between the levels of server.version"},
		{"another cache for one version", versionFactors, func(runs []results.Run) []results.Run {
			return level(runs, "14", func(r *results.Run) { r.Server.Settings["shared_buffers"] = "16384 8kB" })
		}, RuleVersionSettings, "the cache size (shared_buffers) differs between the levels of server.version"},
		{"versions differ when version is not the factor", []string{results.FactorRTT}, func(runs []results.Run) []results.Run {
			return runs
		}, RuleMixedServer, "server version differs"},
		{"a 32-bit build, even as the factor's own level", []string{results.FactorVersion}, func(runs []results.Run) []results.Run {
			return level(runs, "17", func(r *results.Run) { r.Server.Settings[engine.SettingBits] = "32" })
		}, RuleMixedBuild, "server build"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runs := tc.plant(loadRuns(t, "testdata/pg-versions.json"))
			fs := only(Check(runs, CheckOptions{Factors: tc.factors, Repeat: 1}), tc.rule)
			if len(fs) == 0 || fs[0].Severity != Error || !strings.Contains(fs[0].Message, tc.msg) {
				t.Errorf("findings of %s: %+v, want an error saying %q", tc.rule, fs, tc.msg)
			}
		})
	}
}

// TestVersionLevelDisagreesWithItself: a page size that differs inside one version's runs
// is a like-for-like error of its own (mixed-settings), not a difference between versions.
func TestVersionLevelDisagreesWithItself(t *testing.T) {
	runs := loadRuns(t, "testdata/pg-versions.json")
	for _, r := range slices.Clone(runs) {
		if r.Params.Options[results.FactorVersion] == "17" && r.Params.RTT == 0 {
			// A second repeat of the cell, on a database with other pages.
			again := loadRuns(t, "testdata/pg-versions.json")[slices.IndexFunc(runs, func(x results.Run) bool { return x.ID == r.ID })]
			again.ID = 100
			again.Server.Settings["block_size"] = "16384"
			runs = append(runs, again)
		}
	}
	fs := Check(runs, CheckOptions{Factors: versionFactors, Repeat: 1})
	if got := only(fs, RuleVersionSettings); len(got) != 0 {
		t.Errorf("version-settings findings %+v", got)
	}
	if got := only(fs, RuleMixedSettings); len(got) != 1 || got[0].Severity != Error || !strings.Contains(got[0].Message, "block_size") {
		t.Errorf("mixed-settings findings %+v, want the block_size error", got)
	}
}

// TestReadConsistencyConflicts: seed 002's Firebird 4 runs, many update conflicts with
// ReadConsistency on, get the Firebird engine's explanation; the same conflicts on 3.0,
// or with ReadConsistency off, do not.
func TestReadConsistencyConflicts(t *testing.T) {
	run := func(id int64, version, rc string) results.Run {
		r := cleanRun(id, 0, 10, 100)
		r.Server.Engine, r.Server.Version = "firebird", version
		r.Server.Settings = map[string]string{"PageSize": "16384", "DefaultDbCachePages": "8192", "ServerMode": "Super"}
		if rc != "" {
			r.Server.Settings["ReadConsistency"] = rc
		}
		r.Params.Options = map[string]string{results.FactorVersion: strings.Fields(version)[1][:1]}
		r.Summary.Errors = map[string]int64{engine.ClassRetryable.String(): r.Summary.Committed / 10}
		return r
	}
	runs := []results.Run{run(1, "Firebird 3.0.11", ""), run(2, "Firebird 4.0.5", "true"), run(3, "Firebird 4.0.5", "false")}
	fs := only(Check(runs, CheckOptions{Factors: []string{results.FactorVersion}}), RuleConflicts)
	if len(fs) != 1 || !slices.Equal(fs[0].Runs, []int64{2}) || !strings.Contains(fs[0].Message, "ReadConsistency") ||
		fs[0].Severity != Warning {
		t.Errorf("conflict findings %+v, want one warning for run 2", fs)
	}
	// A low conflict rate is no finding.
	runs[1].Summary.Errors[engine.ClassRetryable.String()] = 1
	if fs := only(Check(runs, CheckOptions{Factors: []string{results.FactorVersion}}), RuleConflicts); len(fs) != 0 {
		t.Errorf("findings at a low conflict rate: %+v", fs)
	}
}
