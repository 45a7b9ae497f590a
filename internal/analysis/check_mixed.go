package analysis

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/spec"
)

const (
	// RuleMixedServer: runs in one chart ran on another engine, server version or build, or
	// target (seed 002: mismatched builds).
	RuleMixedServer = "mixed-server"
	// RuleMixedBuild: runs in one chart ran on server builds of different word size or
	// instruction set (engine.SettingBits, SettingArch), whatever the factors (seed 002:
	// Firebird 2.5 and 3.0 in 32-bit builds against 4.0 in a 64-bit one).
	RuleMixedBuild = "mixed-build"
	// RuleMixedClient: runs in one chart ran on another client machine or dblat build.
	RuleMixedClient = "mixed-client"
	// RuleMixedParams: runs in one chart ran with other run parameters (the workload, every
	// parameter of spec.Fields, the mix, the requested settings and options, the link)
	// that are not factors.
	RuleMixedParams = "mixed-params"
	// RuleMixedSettings: runs in one chart ran with other values of a server setting that
	// matters (the engine's Comparison.KeySettings) that is not a factor (seed 002:
	// different page sizes, misleading cache settings).
	RuleMixedSettings = "mixed-settings"
)

var mixedRule = rule{
	names: []string{RuleMixedServer, RuleMixedBuild, RuleMixedClient, RuleMixedParams, RuleMixedSettings},
	check: (*checker).mixed,
}

// mixed applies the like-for-like rules: for each item, the finished runs that report it
// must agree, except between levels of the item's exempt factors. A difference inside a
// cell, or one that follows a factor that does not explain it (the RTT, the terminals),
// confounds the chart: its severity is the item's. A difference that follows only the
// levels of a setting or option factor the item is soft on is a warning: the factor may
// legitimately change it (an engine default), but the chart credits the factor with its
// effect.
func (c *checker) mixed() {
	for _, it := range c.items() {
		var exempt, soft []int
		for f, key := range c.g.Factors {
			switch {
			case slices.Contains(it.exempt, key):
				exempt = append(exempt, f)
			case it.soft(key):
				soft = append(soft, f)
			}
		}
		// Values by run, within each partition of the exempt factors' levels.
		type part struct{ vals map[string][]int64 }
		parts := map[string]*part{}
		all := map[string][]int64{}
		finer := map[string]map[string]bool{} // exempt+soft levels → values
		for _, r := range c.fin {
			v := it.get(r)
			if v == "" {
				continue // not reported: unknown, not different
			}
			pk := c.levelsKey(r, exempt)
			p := parts[pk]
			if p == nil {
				p = &part{vals: map[string][]int64{}}
				parts[pk] = p
			}
			p.vals[v] = append(p.vals[v], r.ID)
			all[v] = append(all[v], r.ID)
			fk := c.levelsKey(r, append(slices.Clone(exempt), soft...))
			if finer[fk] == nil {
				finer[fk] = map[string]bool{}
			}
			finer[fk][v] = true
		}
		differs := false
		for _, p := range parts {
			if len(p.vals) > 1 {
				differs = true
			}
		}
		if !differs {
			continue
		}
		explained := len(soft) > 0
		for _, vs := range finer {
			if len(vs) > 1 {
				explained = false
			}
		}
		sev, msg := it.sev, fmt.Sprintf("%s differs between runs that are compared: %s", it.name, it.why)
		fix := fmt.Sprintf("rerun the odd runs with the same %s, or make it a factor of the study so that it is varied on purpose", it.name)
		if explained {
			names := make([]string, len(soft))
			for i, f := range soft {
				names[i] = c.g.Factors[f]
			}
			sev = Warning
			msg = fmt.Sprintf("%s changes with %s although it is not a factor: the charts credit %s with its effect", it.name, strings.Join(names, ", "), strings.Join(names, ", "))
			fix = fmt.Sprintf("if the difference is the engine's default for each level, say so where the figures are quoted; else set %s explicitly to one value", it.name)
		}
		c.add(Finding{Rule: it.rule, Severity: sev, Message: msg, Evidence: valuesEvidence(all),
			Runs: minority(all), Fix: fix})
	}
}

// item is one thing every run in a chart must agree on unless a factor varies it.
type item struct {
	rule, name string
	get        func(*results.Run) string
	// exempt are the factors between whose levels the item may differ by design (the
	// engine's version between engines; a setting between the levels of its own factor).
	exempt []string
	// soft says whether a factor that the item varies along with makes the difference a
	// warning rather than an error (another setting factor, whose levels may change an
	// engine default: Firebird's page buffers depend on ServerMode).
	soft func(factor string) bool
	// sev is the severity of a difference that no soft factor explains.
	sev Severity
	// why is added to the message: what the difference does.
	why string
}

func noSoft(string) bool { return false }

// settingFactor reports whether key is a server-setting or option factor.
func settingFactor(key string) bool {
	return strings.HasPrefix(key, results.SettingPrefix) || strings.HasPrefix(key, results.OptionPrefix)
}

// binariesFactors are the factors that run each level on other server binaries.
var binariesFactors = []string{results.FactorVersion, results.FactorInstall}

// ownServerFactors are the factors whose levels run on servers of their own: the binaries',
// and encryption at rest (an encrypted server's data is its own).
var ownServerFactors = append(slices.Clone(binariesFactors), results.FactorEncryption)

// binariesFactor reports whether key varies the server's version or installation.
func binariesFactor(key string) bool { return slices.Contains(binariesFactors, key) }

func (c *checker) items() []item {
	p := func(name string, sev Severity, why string, get func(*results.Run) string, exempt ...string) item {
		return item{rule: RuleMixedParams, name: name, get: get, exempt: exempt, soft: noSoft, sev: sev, why: why}
	}
	cl := func(name string, sev Severity, get func(*results.Run) string) item {
		return item{rule: RuleMixedClient, name: name, get: get, soft: noSoft, sev: sev,
			why: "the client's machine and build are part of every measured response time"}
	}
	its := []item{
		{rule: RuleMixedServer, name: "engine", get: func(r *results.Run) string { return r.Server.Engine },
			exempt: []string{results.FactorEngine}, soft: noSoft, sev: Error, why: "different products in one comparison"},
		{rule: RuleMixedServer, name: "server version", get: func(r *results.Run) string { return r.Server.Version },
			exempt: append([]string{results.FactorEngine, results.FactorTarget}, binariesFactors...), soft: noSoft, sev: Error,
			why: "another version or build of the server (seed 002: 32- against 64-bit builds)"},
		{rule: RuleMixedServer, name: "target", get: func(r *results.Run) string { return r.Server.Target },
			exempt: append([]string{results.FactorEngine, results.FactorTarget}, ownServerFactors...), soft: settingFactor, sev: Error,
			why: "another server"},
		{rule: RuleMixedBuild, name: "server build (word size and instruction set)", get: buildText, soft: noSoft, sev: Error,
			why: "builds of different word size or instruction set differ in pointer size, memory reach and code generation, whatever else is compared (seed 002: Firebird 2.5 and 3.0 in 32-bit builds against 4.0 in a 64-bit one)"},
		cl("client OS", Error, func(r *results.Run) string { return strings.TrimSpace(r.Client.OS + " " + r.Client.Kernel) }),
		cl("client CPU", Error, func(r *results.Run) string {
			if r.Client.CPUModel == "" && r.Client.Cores == 0 {
				return ""
			}
			return fmt.Sprintf("%s × %d", r.Client.CPUModel, r.Client.Cores)
		}),
		cl("Go runtime threads (GOMAXPROCS: fewer make the client cheaper and queue its terminals)", Warning, func(r *results.Run) string {
			if r.Client.Procs == 0 {
				return ""
			}
			return strconv.Itoa(r.Client.Procs)
		}),
		cl("client memory", Error, func(r *results.Run) string {
			if r.Client.MemoryBytes == 0 {
				return ""
			}
			return engine.FormatBytes(float64(r.Client.MemoryBytes))
		}),
		cl("client host", Warning, func(r *results.Run) string { return r.Client.Hostname }),
		cl("CPU latency hold (idle CPUs polling instead of halting: every process wakes faster, the server too)", Error,
			func(r *results.Run) string { return strconv.FormatBool(r.Client.CPULatencyHold) }),
		cl("dblat version", Warning, func(r *results.Run) string { return r.Client.DblatVersion }),
		cl("Go version", Warning, func(r *results.Run) string { return r.Client.GoVersion }),
		p("workload", Error, "different benchmarks", func(r *results.Run) string { return r.Params.Workload }),
		p("mix", Error, "a different transaction mix", func(r *results.Run) string { return mixText(r.Params.Mix) },
			mixFactors()...),
		p("link", Error, "a different way of adding latency (a run without the link skips its socket hops and CPU)", linkText,
			results.OptionFactor(spec.OptionTransport)), // a Unix socket cannot go through the link
	}
	its = append(its, paramItems()...)
	// Requested settings and options that are not factors.
	opts := map[string]bool{}
	for _, r := range c.fin {
		for k := range r.Params.Options {
			if k != "mix" {
				opts[k] = true
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(opts)) {
		its = append(its, p("requested "+k, Error, "a different requested configuration",
			func(r *results.Run) string { return r.Params.Options[k] }, results.OptionFactor(k)))
	}
	// Settings read back that matter, per engine.
	engines := map[string]bool{}
	for _, r := range c.fin {
		engines[r.Server.Engine] = true
	}
	keys := map[string]bool{}
	for e := range engines {
		for _, k := range comparison(e).KeySettings {
			keys[k] = true
		}
	}
	// What the version factor's own rule (versionSettings) judges, or the version fixes;
	// what encryption at rest sets.
	byVersion, byEncryption := map[string]bool{}, map[string]bool{}
	for e := range engines {
		cmp := comparison(e)
		for _, k := range cmp.EncryptionSettings {
			byEncryption[strings.ToLower(k)] = true
		}
		for _, k := range cmp.VersionSettings {
			byVersion[strings.ToLower(k)] = true
		}
		for _, r := range c.fin {
			if r.Server.Engine != e {
				continue
			}
			if cmp.PageSize != nil {
				if name, _, ok := cmp.PageSize(r.Server.Settings); ok {
					byVersion[strings.ToLower(name)] = true
				}
			}
			if cmp.Cache != nil {
				if name, _, _, ok := cmp.Cache(r.Server.Settings); ok {
					byVersion[strings.ToLower(name)] = true
				}
			}
			break
		}
	}
	soft := func(f string) bool { return settingFactor(f) || binariesFactor(f) }
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		exempt := []string{results.FactorEngine}
		for _, f := range c.g.Factors {
			if name, ok := strings.CutPrefix(f, results.SettingPrefix); ok && governs(engines, name, k) {
				exempt = append(exempt, f)
			}
			if binariesFactor(f) && byVersion[strings.ToLower(k)] {
				exempt = append(exempt, f)
			}
			if f == results.FactorEncryption && byEncryption[strings.ToLower(k)] {
				exempt = append(exempt, f)
			}
		}
		its = append(its, item{rule: RuleMixedSettings, name: k, exempt: exempt, soft: soft, sev: Error,
			why: "a server setting that changes what is measured (seed 002: different page sizes, misleading cache settings)",
			get: func(r *results.Run) string {
				v, _ := engine.LookupSetting(r.Server.Settings, k)
				return v
			}})
	}
	return its
}

// mixFactors are the factors that vary the mix: the mix option itself, and the run fields
// whose values are the transaction types and their weights (spec.Field.Weighs: a study of
// scripts varies the mix with them).
func mixFactors() []string {
	out := []string{results.OptionPrefix + "mix"}
	for _, f := range spec.Fields {
		if f.Weighs && f.Factor {
			out = append(out, f.Name)
		}
	}
	return out
}

// paramItems are the items of the run's parameters as the run description declares them
// (spec.Fields): named by their key with spaces for underscores ("max tries"), compared in
// canonical form (Field.Value), an error to differ unless Field.MinorMismatch makes it a
// warning, with Field.Mismatch as what the difference does; an Incidental field, which
// changes no figure, is not compared. A parameter a study may vary
// (Field.Factor) may differ between the levels of its own factor, and a field of the
// link's between the levels of a profile or a transport factor. The pool size is compared
// as the run used it, "one per terminal" when it did not limit the terminals, and so may
// also differ between the levels of terminals.
func paramItems() []item {
	var its []item
	for i := range spec.Fields {
		f := &spec.Fields[i]
		if f.Incidental {
			continue
		}
		it := item{rule: RuleMixedParams, name: strings.ReplaceAll(f.Name, "_", " "), soft: noSoft, sev: Error, why: f.Mismatch,
			get: func(r *results.Run) string { return f.Value(&r.Params) }}
		if f.MinorMismatch {
			it.sev = Warning
		}
		if f.Factor {
			it.exempt = []string{f.Name}
		}
		if f.Link && f.Name != "profile" {
			// A profile sets the link's fields; the transport decides whether there is a
			// link to shape (a Unix socket's runs have none, so their fields are defaults).
			it.exempt = append(it.exempt, "profile", results.OptionFactor(spec.OptionTransport))
		}
		if f.Name == results.FactorConnections {
			it.get = poolText
			it.exempt = append(it.exempt, results.FactorTerminals)
		}
		its = append(its, it)
	}
	return its
}

// poolText is a run's pool size as it limited the terminals: "one per terminal" when it
// did not (0, or at least as many connections as terminals).
func poolText(r *results.Run) string {
	if r.Params.Connections <= 0 || r.Params.Connections >= r.Params.Terminals {
		return "one per terminal"
	}
	return strconv.Itoa(r.Params.Connections)
}

// buildText describes a run's server build as "64-bit x86_64", or "" when not recorded.
func buildText(r *results.Run) string {
	bits, _ := engine.LookupSetting(r.Server.Settings, engine.SettingBits)
	arch, _ := engine.LookupSetting(r.Server.Settings, engine.SettingArch)
	if bits == "" && arch == "" {
		return ""
	}
	if bits != "" {
		bits += "-bit"
	}
	return strings.TrimSpace(bits + " " + arch)
}

func mixText(m map[string]float64) string {
	if len(m) == 0 {
		return ""
	}
	parts := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+"="+strconv.FormatFloat(m[k], 'g', -1, 64))
	}
	return strings.Join(parts, ",")
}

// linkText is how a run added latency: its link's kind and whether connection set-up was
// delayed; "none" without a link. The link's shape (rtt, jitter, bandwidth, loss, ...) is
// run parameters, compared one by one (paramItems), so that a study that varies one of
// them is not a mix.
func linkText(r *results.Run) string {
	l := r.Link
	if l == nil {
		return "none"
	}
	s := l.Kind
	if l.DelayConnect {
		s += " delay-connect"
	}
	return s
}

// governs reports whether the setting factor set.<name> governs the read-back key on one
// of the engines (Comparison.Aliases).
func governs(engines map[string]bool, name, key string) bool {
	n := strings.ToLower(name)
	if n == strings.ToLower(key) {
		return true
	}
	for e := range engines {
		if slices.ContainsFunc(comparison(e).Aliases[n], func(a string) bool { return strings.EqualFold(a, key) }) {
			return true
		}
	}
	return false
}
