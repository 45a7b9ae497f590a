package analysis

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/spec"
)

// Severity is how much a finding weighs.
type Severity int

// Severities, from least to most severe.
const (
	// Info is worth knowing when reading the figures; nothing to fix.
	Info Severity = iota
	// Warning means the figures may mislead: read them with the finding in mind, or fix it.
	Warning
	// Error means the figures must not be quoted as they are: the comparison is not like
	// for like, or the run did not measure what its labels say.
	Error
)

// String names the severity as reports and JSON write it.
func (s Severity) String() string {
	switch s {
	case Error:
		return "error"
	case Warning:
		return "warning"
	}
	return "info"
}

// MarshalText writes the severity's name.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a severity's name.
func (s *Severity) UnmarshalText(b []byte) error {
	switch string(b) {
	case "error":
		*s = Error
	case "warning":
		*s = Warning
	case "info":
		*s = Info
	default:
		return fmt.Errorf("analysis: unknown severity %q", b)
	}
	return nil
}

// Rules: the checks Check applies, as Finding.Rule names them.
const (
	// RuleMixedServer: runs in one chart ran on another engine, server version or build, or
	// target (seed 002: mismatched builds).
	RuleMixedServer = "mixed-server"
	// RuleMixedBuild: runs in one chart ran on server builds of different word size or
	// instruction set (engine.SettingBits, SettingArch), whatever the factors (seed 002:
	// Firebird 2.5 and 3.0 in 32-bit builds against 4.0 in a 64-bit one).
	RuleMixedBuild = "mixed-build"
	// RuleVersionSettings: the levels of a version or installation factor ran with different
	// page sizes or cache sizes, so the chart credits the version with their effect (seed
	// 002: Firebird 3 with 16 KB pages against Firebird 4 with 32 KB).
	RuleVersionSettings = "version-settings"
	// RuleConflicts: runs with many conflicts on a server whose configuration the engine
	// knows to cause them (seed 002: Firebird 4's ReadConsistency restarting statements).
	RuleConflicts = "conflicts"
	// RuleMixedSettings: runs in one chart ran with other values of a server setting that
	// matters (PostgresKeys, FirebirdKeys, MariaDBKeys) that is not a factor (seed 002:
	// different page sizes, misleading cache settings).
	RuleMixedSettings = "mixed-settings"
	// RuleMixedClient: runs in one chart ran on another client machine or dblat build.
	RuleMixedClient = "mixed-client"
	// RuleMixedParams: runs in one chart ran with other workload parameters (warehouses,
	// seed, mix, duration, warm-up, pool, requested settings, link) that are not factors.
	RuleMixedParams = "mixed-params"
	// RuleSettingNotApplied: a requested server setting was read back with another value
	// (Firebird clamps page sizes, a database header overrides DefaultDbCachePages:
	// engines.md §1.4–1.5, §6 items 5–6).
	RuleSettingNotApplied = "setting-not-applied"
	// RuleClassicBuffers: Firebird Classic or SuperClassic with more than 2048 page buffers
	// (found by the Firebird engine's Comparison.Advise, like every engine's own rules)
	// per connection (seed 002).
	RuleClassicBuffers = "fb-classic-buffers"
	// RuleDefaultCache: the server's own cache left at the engine's default while the
	// database is larger than it.
	RuleDefaultCache = "default-cache"
	// RuleDataInRAM: the database fits in the memory of the machine the server shares with
	// dblat: the runs measure a cached database, not the disk (seed 002 §1).
	RuleDataInRAM = "data-in-ram"
	// RuleErrorRate: errors (conflicts, lost connections, others) per completed transaction
	// above a threshold: the result reflects the test logic (seed 002: update conflicts).
	RuleErrorRate = "error-rate"
	// RuleFewRepeats: cells with fewer finished repeats than needed (seed 000: five).
	RuleFewRepeats = "few-repeats"
	// RuleVariation: repeats of a cell disagree (coefficient of variation above MaxCV).
	RuleVariation = "repeat-variation"
	// RuleClientBound: dblat's own CPU near saturation: the figure measures the tool.
	RuleClientBound = "client-bound"
	// RuleRTT: the achieved RTT differs from the requested one by more than the tolerance,
	// or was not measured.
	RuleRTT = "rtt-off"
	// RuleWarmup: no warm-up, or a short one.
	RuleWarmup = "warmup"
	// RuleLinkLate: during the run, the latency link released data later than the RTT
	// tolerance (its in-run lateness, up and down at p50, added up).
	RuleLinkLate = "link-late"
	// RuleLinkCPU: the latency link's own timing took a large share of a CPU during the
	// window: CPU the database server on the same machine could have used.
	RuleLinkCPU = "link-cpu"
	// RuleOverload: open-loop runs that did not sustain their offered rate (arrivals skipped
	// or left unstarted: results.IsOverload). Their response times measure a growing
	// backlog; a cell that mixes them with runs that kept the rate averages two regimes.
	RuleOverload = "overload"
	// RuleRetryRate: transactions retried after a retryable error (serialization failure,
	// deadlock, update conflict) above a threshold of those completed: not failures, but a
	// share of the response time and of the server's work that the conflicts cost.
	RuleRetryRate = "retry-rate"
	// RuleAgentPart: a run driven by several agents had a part whose own figures fail the
	// client-bound, link-late or rtt-off tests: the merged run hides which agent it was.
	RuleAgentPart = "agent-part"
)

// Finding is one credibility problem with its evidence.
type Finding struct {
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	// Message says what is wrong, in one sentence.
	Message string `json:"message"`
	// Evidence gives the values that show it, by run or cell.
	Evidence string `json:"evidence"`
	// Runs are the IDs of the runs concerned, ascending; Cells the cell keys concerned (as
	// the report writes them), in cell order. Either may be empty for a study-wide finding.
	Runs  []int64  `json:"runs,omitempty"`
	Cells []string `json:"cells,omitempty"`
	// Fix says what to change.
	Fix string `json:"fix"`
}

// Defaults of CheckOptions; each is derived where the field is documented.
const (
	DefaultMinRepeats        = 5
	DefaultMaxCV             = 0.10
	DefaultErrorRateWarning  = 0.01
	DefaultErrorRateError    = 0.05
	DefaultRTTTolerance      = 50 * time.Microsecond
	DefaultRTTToleranceFrac  = 0.02
	DefaultClientCPUWarning  = 0.5
	DefaultClientCPUError    = 0.8
	DefaultMinWarmup         = 10 * time.Second
	DefaultMinWarmupFraction = 0.10
	DefaultRetryRateInfo     = 0.01
	DefaultRetryRateWarning  = 0.05
)

// CheckOptions tune Check. Zero fields take the defaults (Default…).
type CheckOptions struct {
	// Factors are the study's factor keys; runs are grouped into cells by their levels, and
	// only what is not a factor must agree between runs. Empty: inferred as report.Build
	// infers them (every key whose value differs between runs), which makes the mixed-*
	// rules blind: give the study's factors whenever there is a study.
	Factors []string
	// Repeat is the number of finished runs per cell the study asks for (study.Study.Repeat);
	// 0 when unknown. A study asking for fewer than MinRepeats gets one info finding, and
	// its cells are then held to Repeat.
	Repeat int
	// MinRepeats is the finished runs a cell needs [5]: seed 000 runs "each test
	// configuration at least five times to eliminate anomalies"; with five, a 95 % interval
	// of the mean is ±1.24 standard deviations (t = 2.776 for 4 degrees of freedom, /√5).
	MinRepeats int
	// MaxCV is the largest coefficient of variation (sample standard deviation over mean)
	// of the throughput metric over a cell's repeats [0.10]: beyond it the ±95 % interval
	// of five repeats exceeds ±12 % of the mean (1.24 × 10 %), wider than most effects a
	// latency study measures at small RTTs (seed 000: "limited impact" below 0.5 ms).
	MaxCV float64
	// ErrorRateWarning and ErrorRateError bound the errors per completed transaction of a
	// run [0.01, 0.05]. 1 % is TPC-C's own designed rollback rate (clause 2.4.1.4): past it,
	// failures shape the mix and the timings more than the spec's own unhappy path does;
	// at 5 %, one transaction in twenty fails and the figure reflects the test logic, not
	// the engine (seed 002's update conflicts).
	ErrorRateWarning, ErrorRateError float64
	// RTTTolerance and RTTToleranceFrac bound |achieved − requested| added RTT: the larger of
	// the two [50 µs, 2 %]. The link's p50 error is +3 to +21 µs from 0.1 to 10 ms and +143 µs
	// at 200 ms (package latency's BenchmarkAccuracy), so 50 µs or 2 % passes a link that
	// works and fails one that does not deliver the chart's x axis.
	RTTTolerance     time.Duration
	RTTToleranceFrac float64
	// ClientCPUWarning and ClientCPUError bound dblat's CPU use over the window as a
	// fraction of the client's cores, CPUSeconds/(Elapsed × Cores) [0.5, 0.8]. A client at
	// utilisation ρ delays each request by about ρ/(1−ρ) of its own service time (M/M/1):
	// as much again at 0.5, four times at 0.8, and that delay is counted as database time.
	ClientCPUWarning, ClientCPUError float64
	// MinWarmup and MinWarmupFraction: a warm-up shorter than the larger of MinWarmup [10 s,
	// dblat run's default] and MinWarmupFraction of the window [0.10, a rule of thumb] is
	// flagged. A warm-up covers connection set-up, first use of statements (pgx's statement
	// cache costs an extra round trip at first use: engines.md §6 item 9) and filling the
	// caches; a missing one puts all of that in the window.
	MinWarmup         time.Duration
	MinWarmupFraction float64
	// RetryRateInfo and RetryRateWarning bound the transactions retried per completed
	// transaction [0.01, 0.05], with the error rule's reasoning: 1 % is TPC-C's own designed
	// rollback rate; at 5 %, one transaction in twenty runs twice and its conflicts shape
	// the response times as much as the engine does. Retries are not errors: this rule
	// reports them on their own.
	RetryRateInfo, RetryRateWarning float64
	// Parts are the parts of runs that several agents drove, by run id (results.Store's
	// Parts): RuleAgentPart judges each agent's own figures. Runs without an entry are
	// judged as a whole only.
	Parts map[int64][]results.Part
}

func (o CheckOptions) withDefaults() CheckOptions {
	def := func(v *float64, d float64) {
		if *v <= 0 {
			*v = d
		}
	}
	if o.MinRepeats <= 0 {
		o.MinRepeats = DefaultMinRepeats
	}
	def(&o.MaxCV, DefaultMaxCV)
	def(&o.ErrorRateWarning, DefaultErrorRateWarning)
	def(&o.ErrorRateError, DefaultErrorRateError)
	def(&o.RTTToleranceFrac, DefaultRTTToleranceFrac)
	def(&o.ClientCPUWarning, DefaultClientCPUWarning)
	def(&o.ClientCPUError, DefaultClientCPUError)
	def(&o.MinWarmupFraction, DefaultMinWarmupFraction)
	def(&o.RetryRateInfo, DefaultRetryRateInfo)
	def(&o.RetryRateWarning, DefaultRetryRateWarning)
	if o.RTTTolerance <= 0 {
		o.RTTTolerance = DefaultRTTTolerance
	}
	if o.MinWarmup <= 0 {
		o.MinWarmup = DefaultMinWarmup
	}
	return o
}

// Check applies every rule (the Rule… constants) to runs and returns the findings, sorted:
// errors first, then warnings, then info; within a severity by rule, then by the first run
// concerned, then by message. Runs are grouped into cells by opt.Factors; only finished
// runs are judged (the others enter no figure), except that a cell's failed or aborted
// runs count toward nothing and show as missing repeats. A clean study gives no findings.
// Check is a pure function.
func Check(runs []results.Run, opt CheckOptions) []Finding {
	opt = opt.withDefaults()
	g := group(runs, opt.Factors)
	var fin []*results.Run
	for _, c := range g.cells {
		fin = append(fin, c.fin...)
	}
	sort.Slice(fin, func(i, j int) bool { return fin[i].ID < fin[j].ID })
	c := &checker{g: g, opt: opt, fin: fin}
	c.mixed()
	c.versionSettings()
	c.conflicts()
	c.settingsApplied()
	c.engineAdvice()
	c.defaultCache()
	c.dataInRAM()
	c.errorRates()
	c.retryRates()
	c.overload()
	c.repeats()
	c.variation()
	c.clientBound()
	c.rtt()
	c.linkLate()
	c.linkCPU()
	c.warmup()
	c.agentParts()
	sortFindings(c.out)
	return c.out
}

// HasErrors reports whether any finding is an Error: `dblat check` exits non-zero then.
func HasErrors(fs []Finding) bool {
	for _, f := range fs {
		if f.Severity == Error {
			return true
		}
	}
	return false
}

func sortFindings(fs []Finding) {
	first := func(f Finding) int64 {
		if len(f.Runs) == 0 {
			return 0
		}
		return f.Runs[0]
	}
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.Severity != b.Severity {
			return a.Severity > b.Severity
		}
		if a.Rule != b.Rule {
			return a.Rule < b.Rule
		}
		if first(a) != first(b) {
			return first(a) < first(b)
		}
		return a.Message < b.Message
	})
}

type checker struct {
	g   *grouping
	opt CheckOptions
	fin []*results.Run // finished runs, ascending ID
	out []Finding
}

func (c *checker) add(f Finding) {
	slices.Sort(f.Runs)
	f.Runs = slices.Compact(f.Runs)
	c.out = append(c.out, f)
}

func (c *checker) isFactor(key string) bool { return c.g.factorIndex(key) >= 0 }

// cellOf returns the key of the cell run belongs to.
func (c *checker) cellOf(r *results.Run) string {
	parts := make([]string, len(c.g.factors))
	for i, k := range c.g.factors {
		parts[i] = k + "=" + results.FactorValue(r, k)
	}
	return strings.Join(parts, " ")
}

// ---------------------------------------------------------------------------------------
// Like for like.

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
	itoa := strconv.Itoa
	its := []item{
		{rule: RuleMixedServer, name: "engine", get: func(r *results.Run) string { return r.Server.Engine },
			exempt: []string{results.FactorEngine}, soft: noSoft, sev: Error, why: "different products in one comparison"},
		{rule: RuleMixedServer, name: "server version", get: func(r *results.Run) string { return r.Server.Version },
			exempt: append([]string{results.FactorEngine, results.FactorTarget}, binariesFactors...), soft: noSoft, sev: Error,
			why: "another version or build of the server (seed 002: 32- against 64-bit builds)"},
		{rule: RuleMixedServer, name: "target", get: func(r *results.Run) string { return r.Server.Target },
			exempt: append([]string{results.FactorEngine, results.FactorTarget}, binariesFactors...), soft: settingFactor, sev: Error,
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
		p("warehouses", Error, "a different dataset size (seed 001: performance drops heavily as the database grows)",
			func(r *results.Run) string { return itoa(r.Params.Scale) }, results.FactorWarehouses),
		p("terminals", Error, "a different load", func(r *results.Run) string { return itoa(r.Params.Terminals) }, results.FactorTerminals),
		p("connections", Error, "a different pool size", func(r *results.Run) string {
			if r.Params.Connections <= 0 || r.Params.Connections >= r.Params.Terminals {
				return "one per terminal"
			}
			return itoa(r.Params.Connections)
		}, results.FactorConnections, results.FactorTerminals),
		p("rtt", Error, "a different added latency", func(r *results.Run) string { return spec.FormatDuration(r.Params.RTT) }, results.FactorRTT),
		p("think", Error, "pacing on in some runs and off in others", func(r *results.Run) string { return strconv.FormatBool(r.Params.Think) }, results.FactorThink),
		p("mix", Error, "a different transaction mix", func(r *results.Run) string { return mixText(r.Params.Mix) },
			results.OptionPrefix+"mix"),
		p("duration", Warning, "windows of different length average different amounts of noise and background work",
			func(r *results.Run) string { return spec.FormatDuration(r.Params.Duration) }, results.FactorDuration),
		p("warmup", Warning, "warm-ups of different length leave caches in different states",
			func(r *results.Run) string { return spec.FormatWarmup(r.Params.Warmup, r.Params.WarmupAuto) }, results.FactorWarmup),
		p("seed", Warning, "the terminals draw different random sequences",
			func(r *results.Run) string { return strconv.FormatInt(r.Params.Seed, 10) }),
		p("link", Error, "a different way of adding latency (a run without the link skips its socket hops and CPU)", linkText),
		p("rate", Error, "a different offered load (0: a closed loop, which slows down with the server)",
			func(r *results.Run) string { return spec.FormatRate(r.Params.Rate) }, results.FactorRate),
		p("arrival", Error, "arrivals spaced differently (Poisson arrivals queue more than constant ones)",
			func(r *results.Run) string { return r.Params.Arrival }, results.FactorArrival),
		p("latency limit", Error, "a different bound on the backlog (skipped arrivals leave the figures)",
			func(r *results.Run) string { return spec.FormatDuration(r.Params.LatencyLimit) }, results.FactorLatencyLimit),
		p("max tries", Error, "retries on in some runs and off in others (a retried conflict adds response time, a failed one an error)",
			func(r *results.Run) string { return itoa(r.Params.Tries()) }, results.FactorMaxTries),
	}
	// Requested settings and options that are not factors.
	opts := map[string]bool{}
	for _, r := range c.fin {
		for k := range r.Params.Options {
			if k != "mix" {
				opts[k] = true
			}
		}
	}
	for _, k := range sortedKeys(opts) {
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
	// What the version factor's own rule (versionSettings) judges, or the version fixes.
	byVersion := map[string]bool{}
	for e := range engines {
		cmp := comparison(e)
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
	for _, k := range sortedKeys(keys) {
		exempt := []string{results.FactorEngine}
		for _, f := range c.g.factors {
			if name, ok := strings.CutPrefix(f, results.SettingPrefix); ok && governs(engines, name, k) {
				exempt = append(exempt, f)
			}
			if binariesFactor(f) && byVersion[strings.ToLower(k)] {
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

// versionSettings compares the page size and the cache size (Comparison.PageSize, Cache)
// between the levels of a version or installation factor, within each combination of the
// other factors' levels: seed 002 compared Firebird 3 with 16 KB pages against Firebird 4
// with 32 KB, and the same page buffers were twice the cache on 4. Differences inside a
// level are the like-for-like rules' (mixed-settings).
func (c *checker) versionSettings() {
	vf := -1
	for i, f := range c.g.factors {
		if binariesFactor(f) {
			vf = i
		}
	}
	if vf < 0 {
		return
	}
	var others []int
	for i := range c.g.factors {
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
	key := c.g.factors[vf]
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
		setting := strings.Join(sortedKeys(names), ", ")
		c.add(Finding{Rule: RuleVersionSettings, Severity: Error,
			Message: fmt.Sprintf("the %s (%s) differs between the levels of %s: the chart credits the version with the effect of the %s (seed 002: Firebird 3 with 16 KB pages against Firebird 4 with 32 KB, whose page buffers were then twice the cache)",
				m.what, setting, key, m.what),
			Evidence: valuesEvidence(all), Runs: ids,
			Fix: fmt.Sprintf("set %s to one value for every level of %s (server.settings), and rerun the odd levels", setting, key)})
	}
}

// conflicts asks each run's engine for the cause of a high conflict rate
// (Comparison.Conflicts): runs whose retryable errors reach ErrorRateWarning of their
// completed transactions.
func (c *checker) conflicts() {
	type group struct {
		adv   engine.Advice
		ids   []int64
		lines []string
	}
	var order []string
	groups := map[string]*group{}
	for _, r := range c.fin {
		explain := comparison(r.Server.Engine).Conflicts
		done := r.Summary.Committed + r.Summary.Rollbacks
		n := r.Summary.Errors[engine.ClassRetryable.String()]
		if explain == nil || n == 0 {
			continue
		}
		rate := math.Inf(1)
		if done > 0 {
			rate = float64(n) / float64(done)
		}
		if rate < c.opt.ErrorRateWarning {
			continue
		}
		a, ok := explain(r.Server.Version, r.Server.Settings)
		if !ok {
			continue
		}
		g, seen := groups[a.Rule]
		if !seen {
			g = &group{adv: a}
			groups[a.Rule] = g
			order = append(order, a.Rule)
		}
		g.ids = append(g.ids, r.ID)
		g.lines = append(g.lines, fmt.Sprintf("run %d: %s conflicts per completed transaction (%d of %d); %s", r.ID, pct(rate), n, done, a.Detail))
	}
	for _, rule := range order {
		g := groups[rule]
		c.add(Finding{Rule: RuleConflicts, Severity: Warning, Message: g.adv.Message, Evidence: listed(g.lines, 8), Runs: g.ids, Fix: g.adv.Fix})
	}
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

// comparison returns what engine name (results.Server.Engine) says about its settings; the
// zero Comparison for an engine this build does not know.
func comparison(name string) engine.Comparison {
	e, err := engine.Lookup(name)
	if err != nil {
		return engine.Comparison{}
	}
	if c, ok := e.(engine.Comparer); ok {
		return c.Comparison()
	}
	return engine.Comparison{}
}

func mixText(m map[string]float64) string {
	if len(m) == 0 {
		return ""
	}
	parts := make([]string, 0, len(m))
	for _, k := range sortedKeys(m) {
		parts = append(parts, k+"="+strconv.FormatFloat(m[k], 'g', -1, 64))
	}
	return strings.Join(parts, ",")
}

func linkText(r *results.Run) string {
	l := r.Link
	if l == nil {
		return "none"
	}
	s := l.Kind
	if l.Jitter > 0 {
		s += fmt.Sprintf(" jitter %s %s", spec.FormatDuration(l.Jitter), l.Distribution)
	}
	if l.BandwidthUp > 0 || l.BandwidthDown > 0 {
		s += fmt.Sprintf(" bandwidth %d/%d B/s", l.BandwidthUp, l.BandwidthDown)
	}
	if l.DelayConnect {
		s += " delay-connect"
	}
	return s
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
		for f, key := range c.g.factors {
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
				names[i] = c.g.factors[f]
			}
			sev = Warning
			msg = fmt.Sprintf("%s changes with %s although it is not a factor: the charts credit %s with its effect", it.name, strings.Join(names, ", "), strings.Join(names, ", "))
			fix = fmt.Sprintf("if the difference is the engine's default for each level, say so where the figures are quoted; else set %s explicitly to one value", it.name)
		}
		c.add(Finding{Rule: it.rule, Severity: sev, Message: msg, Evidence: valuesEvidence(all),
			Runs: minority(all), Fix: fix})
	}
}

// levelsKey joins run's levels of the factors at idx.
func (c *checker) levelsKey(r *results.Run, idx []int) string {
	parts := make([]string, len(idx))
	for i, f := range idx {
		parts[i] = results.FactorValue(r, c.g.factors[f])
	}
	return strings.Join(parts, "\x00")
}

// byCount orders the values of vals by their number of runs (most first), then by value.
func byCount(vals map[string][]int64) []string {
	ks := sortedKeys(vals)
	sort.SliceStable(ks, func(i, j int) bool { return len(vals[ks[i]]) > len(vals[ks[j]]) })
	return ks
}

// minority returns the runs whose value is not the most common one; every run when the
// most common values tie (there is no odd group then).
func minority(vals map[string][]int64) []int64 {
	order := byCount(vals)
	from := 1
	if len(order) > 1 && len(vals[order[0]]) == len(vals[order[1]]) {
		from = 0
	}
	var out []int64
	for _, v := range order[from:] {
		out = append(out, vals[v]...)
	}
	return out
}

// valuesEvidence writes "“8192” in 10 runs (1, 2, …); “16384” in 2 runs (11, 12)".
func valuesEvidence(vals map[string][]int64) string {
	var parts []string
	for _, v := range byCount(vals) {
		ids := vals[v]
		parts = append(parts, fmt.Sprintf("%q in %s (%s)", v, plural(len(ids), "run"), idList(ids, 8)))
	}
	return strings.Join(parts, "; ")
}

// idList writes up to n IDs, then "… (k more)".
func idList(ids []int64, n int) string {
	s := slices.Clone(ids)
	slices.Sort(s)
	var parts []string
	for i, id := range s {
		if i == n {
			parts = append(parts, fmt.Sprintf("… %d more", len(s)-n))
			break
		}
		parts = append(parts, strconv.FormatInt(id, 10))
	}
	return strings.Join(parts, ", ")
}

// plural writes a count with its noun: "1 warning", "2 warnings", "2 retries".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	if strings.HasSuffix(what, "y") && !strings.HasSuffix(what, "ay") && !strings.HasSuffix(what, "ey") {
		return fmt.Sprintf("%d %sies", n, strings.TrimSuffix(what, "y"))
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// listed joins up to n evidence lines and counts the rest.
func listed(lines []string, n int) string {
	if len(lines) > n {
		return strings.Join(lines[:n], "; ") + fmt.Sprintf("; and %d more", len(lines)-n)
	}
	return strings.Join(lines, "; ")
}

// ---------------------------------------------------------------------------------------
// Engine pitfalls.

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
			Evidence: fmt.Sprintf("requested %s=%s, server reports %s in %s (%s)", k.name, k.asked, k.got, plural(len(found[k]), "run"), idList(found[k], 8)),
			Runs:     found[k], Fix: fix})
	}
}

// engineAdvice adds the engines' own findings about each run's settings
// (Comparison.Advise), grouped by rule.
func (c *checker) engineAdvice() {
	type group struct {
		adv   engine.Advice
		ids   []int64
		lines []string
	}
	var order []string
	groups := map[string]*group{}
	for _, r := range c.fin {
		advise := comparison(r.Server.Engine).Advise
		if advise == nil {
			continue
		}
		for _, a := range advise(r.Server.Settings, concurrency(&r.Params)) {
			g, ok := groups[a.Rule]
			if !ok {
				g = &group{adv: a}
				groups[a.Rule] = g
				order = append(order, a.Rule)
			}
			g.ids = append(g.ids, r.ID)
			g.lines = append(g.lines, fmt.Sprintf("run %d: %s", r.ID, a.Detail))
		}
	}
	for _, rule := range order {
		g := groups[rule]
		sev := Info
		if g.adv.Warning {
			sev = Warning
		}
		c.add(Finding{Rule: rule, Severity: sev, Message: g.adv.Message, Evidence: listed(g.lines, 8), Runs: g.ids, Fix: g.adv.Fix})
	}
}

// defaultCache flags runs whose server cache is at the engine's default and smaller than
// the database, unless the cache is requested explicitly or is a factor.
func (c *checker) defaultCache() {
	var ids []int64
	var lines []string
	for _, r := range c.fin {
		db := float64(r.Server.DatabaseBytes)
		if db <= 0 {
			continue
		}
		cacheOf := comparison(r.Server.Engine).Cache
		if cacheOf == nil {
			continue
		}
		name, size, isDefault, ok := cacheOf(r.Server.Settings)
		var cache float64
		if ok && isDefault {
			cache = size
		}
		if cache == 0 || cache >= db {
			continue
		}
		if _, asked := requested(r, name); asked || c.isFactor(results.SettingPrefix+name) {
			continue
		}
		ids = append(ids, r.ID)
		lines = append(lines, fmt.Sprintf("run %d: %s %s (the default) for a %s database", r.ID, name, engine.FormatBytes(cache), engine.FormatBytes(db)))
	}
	if len(ids) == 0 {
		return
	}
	c.add(Finding{Rule: RuleDefaultCache, Severity: Warning,
		Message:  "the server's own cache was left at the engine's default and is smaller than the database: the figures depend on the OS page cache and describe an untuned server, not a cache-bound configuration (seed 002: misleading cache settings)",
		Evidence: listed(lines, 6), Runs: ids,
		Fix: "size the cache explicitly (shared_buffers, innodb_buffer_pool_size, DefaultDbCachePages) for the claim being made, or vary it as a factor"})
}

// dataInRAM notes runs on a managed (local) server whose database is smaller than the
// client machine's memory.
func (c *checker) dataInRAM() {
	var ids []int64
	var lines []string
	for _, r := range c.fin {
		db, mem := r.Server.DatabaseBytes, r.Client.MemoryBytes
		if !r.Server.Managed || db <= 0 || mem <= 0 || db >= mem {
			continue
		}
		ids = append(ids, r.ID)
		lines = append(lines, fmt.Sprintf("run %d: %s database, %s of RAM", r.ID, engine.FormatBytes(float64(db)), engine.FormatBytes(float64(mem))))
	}
	if len(ids) == 0 {
		return
	}
	c.add(Finding{Rule: RuleDataInRAM, Severity: Info,
		Message:  "the database fits in the memory of the machine the server runs on: these runs measure a cached database, not the disk (seed 002: \"database size should be bigger than RAM\" for a disk test)",
		Evidence: listed(lines, 4), Runs: ids,
		Fix: "for a disk-bound claim use more warehouses than fit in RAM (seed 002: ~50 GB for 32 GB of RAM); for a latency study this is usually what is wanted"})
}

// ---------------------------------------------------------------------------------------
// Run quality.

// errorRates flags runs whose errors per completed transaction exceed the thresholds.
func (c *checker) errorRates() {
	for _, sev := range []Severity{Error, Warning} {
		var ids []int64
		var lines []string
		for _, r := range c.fin {
			var n int64
			for _, v := range r.Summary.Errors {
				n += v
			}
			if n == 0 {
				continue
			}
			done := r.Summary.Committed + r.Summary.Rollbacks
			rate := math.Inf(1)
			if done > 0 {
				rate = float64(n) / float64(done)
			}
			s := Info
			switch {
			case rate >= c.opt.ErrorRateError:
				s = Error
			case rate >= c.opt.ErrorRateWarning:
				s = Warning
			}
			if s != sev {
				continue
			}
			var cls []string
			for _, k := range sortedKeys(r.Summary.Errors) {
				if r.Summary.Errors[k] > 0 {
					cls = append(cls, fmt.Sprintf("%s %d", k, r.Summary.Errors[k]))
				}
			}
			ids = append(ids, r.ID)
			lines = append(lines, fmt.Sprintf("run %d: %s errors per completed transaction (%s; %d completed)", r.ID, pct(rate), strings.Join(cls, ", "), done))
		}
		if len(ids) == 0 {
			continue
		}
		limit := c.opt.ErrorRateWarning
		if sev == Error {
			limit = c.opt.ErrorRateError
		}
		c.add(Finding{Rule: RuleErrorRate, Severity: sev,
			Message:  fmt.Sprintf("errors reach %s of completed transactions: the figures reflect conflicts or failures of the test logic as much as the engine (seed 002: update conflicts; TPC-C's own rollbacks are 1 %%)", pct(limit)),
			Evidence: listed(lines, 8), Runs: ids,
			Fix: "find the cause in the error classes (retryable = conflicts and deadlocks, connection = lost connections): spread the load over more warehouses, fix the isolation or the transaction logic, or raise the server's limits"})
	}
}

// retryRates flags runs whose transactions were retried often, apart from errors: a retried
// transaction committed in the end.
func (c *checker) retryRates() {
	for _, sev := range []Severity{Warning, Info} {
		var ids []int64
		var lines []string
		for _, r := range c.fin {
			if r.Summary.Retried == 0 {
				continue
			}
			done := r.Summary.Committed + r.Summary.Rollbacks
			for _, n := range r.Summary.Errors {
				done += n
			}
			rate := math.Inf(1)
			if done > 0 {
				rate = float64(r.Summary.Retried) / float64(done)
			}
			s := Severity(-1)
			switch {
			case rate >= c.opt.RetryRateWarning:
				s = Warning
			case rate >= c.opt.RetryRateInfo:
				s = Info
			}
			if s != sev {
				continue
			}
			var types []string
			for _, t := range r.Tx {
				if t.Retried > 0 {
					types = append(types, fmt.Sprintf("%s %d", t.Type, t.Retried))
				}
			}
			ids = append(ids, r.ID)
			lines = append(lines, fmt.Sprintf("run %d: %s of %s retried, %s in all (max tries %d; %s)",
				r.ID, pct(rate), plural(int(done), "transaction"), plural(int(r.Summary.Retries), "retry"), r.Params.Tries(), strings.Join(types, ", ")))
		}
		if len(ids) == 0 {
			continue
		}
		limit := c.opt.RetryRateInfo
		if sev == Warning {
			limit = c.opt.RetryRateWarning
		}
		c.add(Finding{Rule: RuleRetryRate, Severity: sev,
			Message:  fmt.Sprintf("%s of transactions or more were retried after a serialization failure, deadlock or update conflict: they committed, so they are not errors, but each retry is response time and server work that the conflicts cost (seed 002: test logic that provokes update conflicts)", pct(limit)),
			Evidence: listed(lines, 8), Runs: ids,
			Fix: "read the retry rate next to the throughput; to lower it, spread the load over more warehouses or rows, shorten the transactions, or compare with max_tries 1 to see what the conflicts cost"})
	}
}

// overload flags open-loop runs that did not sustain their offered rate, and cells that
// average such runs with runs that did.
func (c *checker) overload() {
	var ids []int64
	var lines []string
	for _, r := range c.fin {
		if !r.Params.OpenLoop() || !r.Summary.Overload {
			continue
		}
		ids = append(ids, r.ID)
		lines = append(lines, fmt.Sprintf("run %d (%s): offered %s/s, achieved %.1f/s; %d of %d arrivals skipped, %d not started by the window's end",
			r.ID, orAll(c.cellOf(r)), spec.FormatRate(r.Params.Rate), r.Summary.AchievedRate, r.Summary.Skipped, r.Summary.Offered, r.Summary.Backlog))
	}
	if len(ids) == 0 {
		return
	}
	verb := " are each"
	if len(ids) == 1 {
		verb = " is"
	}
	c.add(Finding{Rule: RuleOverload, Severity: Warning,
		Message:  fmt.Sprintf("%s an overload point: the offered rate was not sustained, so the response times measure a backlog that grows through the window (they depend on its length), not the server at that rate; reports mark these points instead of reading them as part of the curve", plural(len(ids), "open-loop run")+verb),
		Evidence: listed(lines, 8), Runs: ids,
		Fix: "lower the rate or add terminals to find where the rate is still sustained (the saturation point); with --latency-limit the backlog stays bounded and the skipped arrivals are counted"})
	// A cell whose repeats disagree on it averages two regimes.
	var cells, mixed []string
	var mids []int64
	for _, cl := range c.g.cells {
		over := 0
		for _, r := range cl.fin {
			if r.Params.OpenLoop() && r.Summary.Overload {
				over++
			}
		}
		if over > 0 && over < len(cl.fin) {
			cells = append(cells, cl.key)
			mids = append(mids, cl.ids...)
			mixed = append(mixed, fmt.Sprintf("%s: %d of %d finished runs are overload points", orAll(cl.key), over, len(cl.fin)))
		}
	}
	if len(cells) > 0 {
		c.add(Finding{Rule: RuleOverload, Severity: Error,
			Message:  "some repeats of a cell kept the offered rate and others did not: the cell's mean averages a sustained load with a growing backlog",
			Evidence: listed(mixed, 8), Runs: mids, Cells: cells,
			Fix: "the cell sits at the saturation point: read its runs apart, or move the rate away from it"})
	}
}

// repeats flags cells with fewer finished repeats than needed.
func (c *checker) repeats() {
	need := c.opt.MinRepeats
	if c.opt.Repeat > 0 && c.opt.Repeat < c.opt.MinRepeats {
		need = c.opt.Repeat
		c.add(Finding{Rule: RuleFewRepeats, Severity: Info,
			Message:  fmt.Sprintf("the study asks for %s per cell, fewer than %d: differences smaller than the noise cannot be told apart (seed 000: \"each test configuration is run at least five times\")", plural(c.opt.Repeat, "repeat"), c.opt.MinRepeats),
			Evidence: fmt.Sprintf("repeat: %d", c.opt.Repeat),
			Fix:      fmt.Sprintf("set repeat: %d or more for figures to quote", c.opt.MinRepeats)})
	}
	var cells, lines []string
	var ids []int64
	for _, cl := range c.g.cells {
		if len(cl.fin) >= need {
			continue
		}
		cells = append(cells, cl.key)
		for _, r := range cl.runs {
			ids = append(ids, r.ID)
		}
		line := fmt.Sprintf("%s: %d finished", orAll(cl.key), len(cl.fin))
		if n := len(cl.runs) - len(cl.fin); n > 0 {
			line += fmt.Sprintf(" (%d failed, aborted or running)", n)
		}
		lines = append(lines, line)
	}
	if len(cells) == 0 {
		return
	}
	c.add(Finding{Rule: RuleFewRepeats, Severity: Warning,
		Message:  fmt.Sprintf("%s fewer than %s: their means have wide or no confidence intervals (seed 000 runs every configuration at least five times)", cellsHave(len(cells)), plural(need, "finished repeat")),
		Evidence: listed(lines, 8), Runs: ids, Cells: cells,
		Fix: fmt.Sprintf("run the study again: `dblat study run` resumes and adds the missing repeats (%d per cell)", need)})
}

func cellsHave(n int) string {
	if n == 1 {
		return "1 cell has"
	}
	return fmt.Sprintf("%d cells have", n)
}

func orAll(key string) string {
	if key == "" {
		return allRuns
	}
	return key
}

// variation flags cells whose repeats disagree by more than MaxCV.
func (c *checker) variation() {
	var cells, lines []string
	var ids []int64
	slowHost := 0
	for _, cl := range c.g.cells {
		if len(cl.fin) < 2 {
			continue
		}
		xs := make([]float64, len(cl.fin))
		for i, r := range cl.fin {
			xs[i] = results.MetricValue(r, c.g.metric)
		}
		m, sd := meanSD(xs)
		// Counting alone makes repeats differ: a window that counted k transactions has a
		// relative standard deviation of 1/√k (Poisson). Repeats disagree when they differ
		// by more than MaxCV and by more than twice what counting explains.
		counted := 0.0
		for _, r := range cl.fin {
			counted += counts(r, c.g.metric)
		}
		counting := math.Inf(1)
		if counted > 0 {
			counting = 1 / math.Sqrt(counted/float64(len(cl.fin)))
		}
		if m <= 0 || sd/m <= c.opt.MaxCV || sd/m <= 2*counting {
			continue
		}
		cells = append(cells, cl.key)
		ids = append(ids, cl.ids...)
		vals := make([]string, len(xs))
		for i, x := range xs {
			vals[i] = strconv.FormatFloat(round(x, 1), 'f', -1, 64)
		}
		line := fmt.Sprintf("%s: %s CV %s over runs %s (%s; counting alone explains %s)", orAll(cl.key), c.g.metric, pct(sd/m),
			idList(cl.ids, 10), strings.Join(vals, ", "), pct(counting))
		if st, ok := hostBehind(cl.fin, xs); ok {
			line += "; " + st
			slowHost++
		}
		lines = append(lines, line)
	}
	if len(cells) == 0 {
		return
	}
	fix := "look for what changed between the repeats (background load, checkpoints, a cold cache: see warm-up), lengthen the window, or add repeats"
	if slowHost > 0 {
		fix = "the machine itself was slower during the slower repeats (a busy virtual machine host, a lower clock): rerun when it is quiet, on a dedicated host, or with more repeats, so that the mean averages over it; " + fix
	}
	c.add(Finding{Rule: RuleVariation, Severity: Warning,
		Message:  fmt.Sprintf("repeats of %s disagree by more than %s (coefficient of variation): the mean hides an unstable measurement", plural(len(cells), "cell"), pct(c.opt.MaxCV)),
		Evidence: listed(lines, 8), Runs: ids, Cells: cells, Fix: fix})
}

// hostBehind says what shows that the machine, not the system under test, changed between
// runs, whose metric values are xs: the steal time of its hypervisor (stealBehind), or else
// dblat's own CPU per transaction (clientCPUBehind). ok is false when neither does.
func hostBehind(runs []*results.Run, xs []float64) (string, bool) {
	if len(runs) < 2 {
		return "", false
	}
	if st, ok := stealBehind(runs, xs); ok {
		return st, true
	}
	return clientCPUBehind(runs, xs)
}

// extremes returns the indexes of the smallest and largest of vs, which is not empty.
func extremes(vs []float64) (lo, hi int) {
	for i, v := range vs {
		if v < vs[lo] {
			lo = i
		}
		if v > vs[hi] {
			hi = i
		}
	}
	return lo, hi
}

// stealBehind says how much CPU the client machine's hypervisor took (steal) during each of
// runs (at least two) when that plausibly explains why they differ: the steal differs by at least one
// percentage point between them, and the run with the most is slower than the one with the
// least. ok is false otherwise, or when not measured.
func stealBehind(runs []*results.Run, xs []float64) (string, bool) {
	steal := make([]float64, len(runs))
	parts := make([]string, len(runs))
	for i, r := range runs {
		if r.Client.Steal == nil {
			return "", false
		}
		steal[i] = *r.Client.Steal
		parts[i] = fmt.Sprintf("%.1f", 100*steal[i])
	}
	lo, hi := extremes(steal)
	if steal[hi]-steal[lo] < 0.01 || xs[hi] >= xs[lo] {
		return "", false
	}
	return fmt.Sprintf("the machine's hypervisor took %s %% of its CPU time (steal) in these runs", strings.Join(parts, ", ")), true
}

// clientCPUBehind says how much CPU dblat itself spent per transaction in each of runs when
// the slowest run spent at least 20 % more than the fastest: the client does the same work
// for every transaction, so that is a machine whose CPUs ran slower (a neighbour's load on
// the host's caches and memory, a lower clock), which slows the server on it too. ok is
// false otherwise, or when not measured.
func clientCPUBehind(runs []*results.Run, xs []float64) (string, bool) {
	perTx := make([]float64, len(runs))
	parts := make([]string, len(runs))
	for i, r := range runs {
		done := r.Summary.Committed + r.Summary.Rollbacks
		if done == 0 || r.Client.CPUSeconds <= 0 {
			return "", false
		}
		perTx[i] = r.Client.CPUSeconds / float64(done) * 1e6
		parts[i] = strconv.FormatFloat(perTx[i], 'f', 0, 64)
	}
	slow, fast := extremes(xs)
	if perTx[slow] < 1.2*perTx[fast] {
		return "", false
	}
	return fmt.Sprintf("dblat's own CPU per transaction was %s µs in these runs: the same client work cost %s more in the slowest, which points at the machine, not the server",
		strings.Join(parts, ", "), pct(perTx[slow]/perTx[fast]-1)), true
}

// counts is how many transactions a run's metric counted in its window: New-Orders for
// NOPM, every completed transaction for TPS.
func counts(r *results.Run, metric string) float64 {
	return results.MetricValue(r, metric) * r.Summary.Elapsed.Seconds() / metricSeconds(metric)
}

// metricSeconds is the time unit of a metric: 60 for per-minute figures, else 1.
func metricSeconds(metric string) float64 {
	if metric == results.MetricNOPM {
		return 60
	}
	return 1
}

// clientBound flags runs where dblat's own CPU use approached the client's cores.
func (c *checker) clientBound() {
	for _, sev := range []Severity{Error, Warning} {
		var ids []int64
		var lines []string
		shared := false
		for _, r := range c.fin {
			u, ok := clientUse(r)
			if !ok {
				continue
			}
			el := r.Summary.Elapsed.Seconds()
			s := Info
			switch {
			case u >= c.opt.ClientCPUError:
				s = Error
			case u >= c.opt.ClientCPUWarning:
				s = Warning
			}
			if s != sev {
				continue
			}
			ids = append(ids, r.ID)
			shared = shared || r.Server.Managed
			lines = append(lines, fmt.Sprintf("run %d: %.1f CPU-s in %.1f s on %s = %s", r.ID, r.Client.CPUSeconds, el, plural(r.Client.Cores, "core"), pct(u)))
		}
		if len(ids) == 0 {
			continue
		}
		limit := c.opt.ClientCPUWarning
		if sev == Error {
			limit = c.opt.ClientCPUError
		}
		msg := fmt.Sprintf("dblat itself used %s or more of the client's cores during the window: its own queueing is counted as database time, so the figure measures the tool as much as the database", pct(limit))
		if shared {
			msg += "; the server runs on the same machine (managed) and competes for the same cores, so the contention is worse than this share shows"
		}
		c.add(Finding{Rule: RuleClientBound, Severity: sev, Message: msg, Evidence: listed(lines, 8), Runs: ids,
			Fix: "run fewer terminals per client, give dblat its own machine or cores, or use a faster client; the latency link's precise waits also cost CPU (package latency: Config.NoSpin)"})
	}
}

// rtt flags runs whose link did not add the RTT asked for, or was not measured.
func (c *checker) rtt() {
	type lvl struct {
		ids      []int64
		min, max time.Duration
	}
	off := map[time.Duration]*lvl{}
	var uncal, nolink []int64
	for _, r := range c.fin {
		l := r.Link
		if l == nil {
			if r.Params.RTT > 0 {
				nolink = append(nolink, r.ID)
			}
			continue
		}
		if l.Samples <= 0 {
			uncal = append(uncal, r.ID)
			continue
		}
		want := l.RTT
		if r.Params.RTT != want {
			want = r.Params.RTT
		}
		tol := c.rttTolerance(want)
		d := l.AchievedP50 - want
		if d <= tol && d >= -tol {
			continue
		}
		v := off[want]
		if v == nil {
			v = &lvl{min: l.AchievedP50, max: l.AchievedP50}
			off[want] = v
		}
		v.ids = append(v.ids, r.ID)
		v.min, v.max = min(v.min, l.AchievedP50), max(v.max, l.AchievedP50)
	}
	if len(off) > 0 {
		levels := make([]time.Duration, 0, len(off))
		for k := range off {
			levels = append(levels, k)
		}
		slices.Sort(levels)
		var ids []int64
		var lines []string
		for _, want := range levels {
			v := off[want]
			ids = append(ids, v.ids...)
			tol := c.rttTolerance(want)
			got := fmtDur(v.min)
			if v.max != v.min {
				got += "–" + fmtDur(v.max)
			}
			lines = append(lines, fmt.Sprintf("requested %s, achieved %s (tolerance ±%s) in %s (%s)",
				fmtDur(want), got, fmtDur(tol), plural(len(v.ids), "run"), idList(v.ids, 8)))
		}
		c.add(Finding{Rule: RuleRTT, Severity: Error,
			Message:  "the link did not add the RTT requested: the calibrated median differs from the request by more than the tolerance, so cells named by their requested RTT were measured at another",
			Evidence: strings.Join(lines, "; "), Runs: ids,
			Fix: "compare cells at their achieved RTT (the report's charts, knees and latency model place them there; its tables name them by the request), or find what delays the link (a CPU-starved client: see client-bound; timer precision) and rerun"})
	}
	if len(nolink) > 0 {
		c.add(Finding{Rule: RuleRTT, Severity: Error,
			Message:  "runs that asked for added RTT record no latency link: nothing shows that the delay was added",
			Evidence: fmt.Sprintf("%s (%s)", plural(len(nolink), "run"), idList(nolink, 8)), Runs: nolink,
			Fix: "rerun with a dblat that records the link"})
	}
	if len(uncal) > 0 {
		c.add(Finding{Rule: RuleRTT, Severity: Warning,
			Message:  "the link was not calibrated before these runs: the RTT actually added is unknown",
			Evidence: fmt.Sprintf("%s (%s)", plural(len(uncal), "run"), idList(uncal, 8)), Runs: uncal,
			Fix: "rerun with calibration (the default of `dblat run` and `dblat study run`)"})
	}
}

// linkLate flags runs whose link released data late during the run itself: the up and
// down lateness at p50 added up exceed the RTT tolerance. The calibration before a run
// measures an idle machine; this is what the run's own traffic met.
func (c *checker) linkLate() {
	var ids []int64
	var lines []string
	for _, r := range c.fin {
		l := r.Link
		if l == nil || l.LatenessUp == nil && l.LatenessDown == nil {
			continue
		}
		late := linkLateness(l)
		tol := c.rttTolerance(l.RTT)
		if late <= tol {
			continue
		}
		ids = append(ids, r.ID)
		lines = append(lines, fmt.Sprintf("run %d: rtt %s released %s late at p50 (up %s, down %s; tolerance %s)", r.ID,
			fmtDur(l.RTT), fmtDur(late), latePart(l.LatenessUp), latePart(l.LatenessDown), fmtDur(tol)))
	}
	if len(ids) == 0 {
		return
	}
	c.add(Finding{Rule: RuleLinkLate, Severity: Error,
		Message:  "during the run the latency link released data later than the RTT tolerance: the RTT the terminals met was larger than the one requested and calibrated",
		Evidence: listed(lines, 8), Runs: ids,
		Fix: "give the client CPU (fewer terminals, a separate client machine), hold the CPUs out of deep idle states (the default where permitted; see --no-cpu-latency-hold), and rerun"})
}

func latePart(l *results.Lateness) string {
	if l == nil {
		return "–"
	}
	return fmtDur(l.P50)
}

// linkCPU flags runs whose latency link used more than a quarter of a CPU for its timing
// during the window.
func (c *checker) linkCPU() {
	var ids []int64
	var lines []string
	for _, r := range c.fin {
		el := r.Summary.Elapsed.Seconds()
		if r.Link == nil || r.Link.CPUSeconds <= 0 || el <= 0 {
			continue
		}
		share := r.Link.CPUSeconds / el
		if share < linkCPUWarning {
			continue
		}
		ids = append(ids, r.ID)
		line := fmt.Sprintf("run %d: %.2f CPU-s in %.1f s = %.2f CPUs", r.ID, r.Link.CPUSeconds, el, share)
		if done := r.Summary.Committed + r.Summary.Rollbacks; done > 0 {
			line += fmt.Sprintf(", %.1f µs per transaction", r.Link.CPUSeconds/float64(done)*1e6)
		}
		lines = append(lines, line)
	}
	if len(ids) == 0 {
		return
	}
	c.add(Finding{Rule: RuleLinkCPU, Severity: Warning,
		Message:  fmt.Sprintf("the latency link's timing took more than %.2f of a CPU during the window: CPU a server on the same machine could have used, so the figures may understate it", linkCPUWarning),
		Evidence: listed(lines, 8), Runs: ids,
		Fix: "hold the CPUs out of deep idle states (the default where permitted), which lets the link wait without busy-waiting, or run the server on another machine"})
}

// linkCPUWarning is the link's timing CPU, in CPUs over the window, above which RuleLinkCPU
// warns: a quarter of one of the two cores of the machines dblat was tuned on.
const linkCPUWarning = 0.25

// warmup flags runs with no warm-up, and runs whose window did not start in steady state.
// Where a run's per-second samples are at hand, that is measured: the throughput of the
// window's first part (max(2 s, 10 % of the window)) against the rest, flagged when it is
// more than 10 % lower and the shortfall is beyond chance: 3 standard deviations of the
// difference, with the second-to-second noise the cell's windows showed (at least a
// Poisson count's; see steady). Without samples it falls back to a rule of thumb: a warm-up shorter
// than max(MinWarmup, MinWarmupFraction × window); an automatic warm-up (warmup: auto), which
// the run's own samples ended, only when it reached its ceiling. The warm-up judged is the one
// the run had (results.Run.WarmupHad).
func (c *checker) warmup() {
	var none, short []int64
	var shortLines []string
	seen := map[string]bool{}
	note := func(id int64, line string) {
		short = append(short, id)
		if !seen[line] {
			seen[line] = true
			shortLines = append(shortLines, line)
		}
	}
	measured := false
	windows := map[int64]window{} // by run ID, for the runs whose windows split
	for _, r := range c.fin {
		if ws, ok := windowStart(r); ok {
			windows[r.ID] = ws
		}
	}
	dispersion := map[int64]float64{} // by run ID
	for _, cl := range c.g.cells {
		var ws []window
		for _, r := range cl.fin {
			if w, ok := windows[r.ID]; ok {
				ws = append(ws, w)
			}
		}
		phi := restDispersion(ws)
		for _, r := range cl.fin {
			dispersion[r.ID] = phi
		}
	}
	for _, r := range c.fin {
		// The warm-up the run had: an automatic one (warmup: auto) ended when throughput
		// was steady, or at its ceiling.
		w, d, auto := r.WarmupHad(), r.Params.Duration, r.Params.WarmupAuto
		what := fmtDur(w)
		if auto {
			// It ends on a second's tick: the microseconds after it say nothing.
			what = fmtDur(w.Round(100*time.Millisecond)) + " automatic"
		}
		if w <= 0 {
			none = append(none, r.ID)
			continue
		}
		if ws, ok := windows[r.ID]; ok {
			first, rest, span := ws.first, ws.rest, ws.span
			measured = true
			if steady(ws, max(1, dispersion[r.ID])) {
				continue
			}
			note(r.ID, fmt.Sprintf("run %d: after a %s warm-up the window's first %s ran at %s of the rest", r.ID, what, fmtDur(span),
				pct(first/rest)))
			continue
		}
		if auto {
			// Without samples, the rule of thumb does not judge what the steady-state rule
			// chose from the run's own samples; a warm-up cut off at its ceiling it flags.
			if w >= r.Params.Warmup {
				note(r.ID, fmt.Sprintf("run %d: the automatic warm-up reached its ceiling of %s before throughput was steady", r.ID, fmtDur(r.Params.Warmup)))
			}
			continue
		}
		need := max(c.opt.MinWarmup, time.Duration(c.opt.MinWarmupFraction*float64(d)))
		if w < need {
			note(r.ID, fmt.Sprintf("warm-up %s before a %s window (at least %s wanted)", fmtDur(w), fmtDur(d), fmtDur(need)))
		}
	}
	if len(none) > 0 {
		c.add(Finding{Rule: RuleWarmup, Severity: Warning,
			Message:  "runs without warm-up: connection set-up, first use of every statement (an extra round trip each in pgx's cache mode, engines.md §6 item 9) and cold caches fall into the measured window",
			Evidence: fmt.Sprintf("warm-up 0 in %s (%s)", plural(len(none), "run"), idList(none, 8)), Runs: none,
			Fix: fmt.Sprintf("use a warm-up of at least %s (dblat run's default)", fmtDur(c.opt.MinWarmup))})
	}
	if len(short) > 0 {
		msg := "warm-up too short for the caches to fill and the statements to be prepared before the window starts: the first seconds of the window are not steady state"
		if measured {
			msg = "the window did not start in steady state: its first seconds ran measurably slower than the rest, so the warm-up was too short for the caches to fill and the statements to be prepared"
		}
		c.add(Finding{Rule: RuleWarmup, Severity: Warning, Message: msg,
			Evidence: listed(shortLines, 4) + fmt.Sprintf(" in %s (%s)", plural(len(short), "run"), idList(short, 8)), Runs: short,
			Fix: fmt.Sprintf("lengthen the warm-up (at least %s, and at least %s of the window, is a safe rule of thumb)", fmtDur(c.opt.MinWarmup), pct(c.opt.MinWarmupFraction))})
	}
}

// window is a run's window split into its first part — max(2 s, 10 % of the window) — and
// the rest, from its per-second samples (all types, Type ""): the transactions each part
// completed, scaled to the first part's number of seconds (first, rest), the first part's
// length (span), how many seconds the rest had (restSeconds), and the rest's per-second
// counts (perSecond).
type window struct {
	first, rest float64
	span        time.Duration
	restSeconds int
	perSecond   []float64
}

// windowStart splits r's window (see window). Only samples whose second lies inside the
// window count: the one that ends just after the window starts is mostly warm-up, and the
// last one also holds the transactions that were in flight when the window ended. ok is
// false without at least four such samples.
func windowStart(r *results.Run) (w window, ok bool) {
	el := r.Summary.Elapsed
	span := max(2*time.Second, el/10)
	if el < 2*span {
		return window{}, false
	}
	var nFirst int
	for _, s := range r.Samples {
		if s.Type != "" || s.Offset < time.Second-time.Second/10 || s.Offset > el {
			continue
		}
		if s.Offset <= span+time.Second/10 {
			w.first += float64(s.Committed)
			nFirst++
		} else {
			w.rest += float64(s.Committed)
			w.perSecond = append(w.perSecond, float64(s.Committed))
		}
	}
	w.restSeconds = len(w.perSecond)
	if nFirst+w.restSeconds < 4 || nFirst == 0 || w.restSeconds == 0 || w.rest <= 0 {
		return window{}, false
	}
	// Rates per sampled second, so the parts compare whatever their number of samples.
	w.rest *= float64(nFirst) / float64(w.restSeconds)
	w.span = time.Duration(nFirst) * time.Second
	return w, true
}

// restDispersion is how much more the per-second counts of windows (past their first
// part) vary than Poisson counts would: the variance of each window's per-second counts
// over their mean, pooled over the windows by degrees of freedom. A server sharing two busy
// vCPUs varies well beyond counting, and a test against Poisson noise alone would take that
// for a slow start. It is 0 when no window has two such seconds.
func restDispersion(windows []window) float64 {
	var sum, df float64
	for _, w := range windows {
		if len(w.perSecond) < 2 {
			continue
		}
		m, sd := meanSD(w.perSecond)
		if m <= 0 {
			continue
		}
		k := float64(len(w.perSecond) - 1)
		sum += k * sd * sd / m
		df += k
	}
	if df == 0 {
		return 0
	}
	return sum / df
}

// steady reports whether the first part of a window is in keeping with the rest: not more
// than 10 % below it, or within 3 standard deviations of the difference of the two counts.
// A count's variance is its value (Poisson) times phi, the dispersion the cell's windows
// showed (restDispersion, at least 1); the rest, scaled from its seconds to the first
// part's, has its variance scaled by the square of that factor.
func steady(w window, phi float64) bool {
	if w.first >= 0.9*w.rest {
		return true
	}
	scale := w.span.Seconds() / float64(w.restSeconds)
	return w.rest-w.first <= 3*math.Sqrt(phi*(w.first+scale*w.rest))
}

// ---------------------------------------------------------------------------------------

func pct(f float64) string {
	if math.IsInf(f, 1) {
		return "∞ %"
	}
	p := f * 100
	if p >= 10 || p == math.Trunc(p) {
		return fmt.Sprintf("%.0f %%", p)
	}
	return fmt.Sprintf("%.1f %%", p)
}

// agentParts judges each agent's part of a run that several agents drove by the rules a run
// of one process meets: its client CPU (client-bound), its link's in-run lateness
// (link-late) and its calibration (rtt-off). A merged run's own figures are sums or upper
// bounds over its parts, so they show that something was off, not on which agent.
func (c *checker) agentParts() {
	for _, sev := range []Severity{Error, Warning} {
		var ids []int64
		var lines []string
		for _, r := range c.fin {
			for _, p := range c.opt.Parts[r.ID] {
				if p.Result == nil {
					continue
				}
				for _, problem := range c.partProblems(p.Result, sev) {
					lines = append(lines, fmt.Sprintf("run %d, agent %s: %s", r.ID, p.Agent, problem))
					if len(ids) == 0 || ids[len(ids)-1] != r.ID {
						ids = append(ids, r.ID)
					}
				}
			}
		}
		if len(ids) == 0 {
			continue
		}
		c.add(Finding{Rule: RuleAgentPart, Severity: sev,
			Message:  "an agent's part of a run failed a test the whole run is held to: the merged figures include what that agent's client or link added",
			Evidence: listed(lines, 8), Runs: ids,
			Fix: "give that agent's machine more CPU or fewer terminals (its link's precise waits also cost CPU), or leave it out with --agents, and rerun"})
	}
}

// partProblems lists what is wrong with one part's figures at severity sev: client CPU at
// or over the warning (Warning) or error (Error) share of its cores; link lateness or
// calibration outside the RTT tolerance (Error).
func (c *checker) partProblems(r *results.Run, sev Severity) []string {
	var out []string
	if u, ok := clientUse(r); ok {
		if sev == Error && u >= c.opt.ClientCPUError || sev == Warning && u >= c.opt.ClientCPUWarning && u < c.opt.ClientCPUError {
			out = append(out, fmt.Sprintf("client used %s of its %d cores", pct(u), r.Client.Cores))
		}
	}
	l := r.Link
	if sev != Error || l == nil {
		return out
	}
	tol := c.rttTolerance(l.RTT)
	if late := linkLateness(l); late > tol {
		out = append(out, fmt.Sprintf("its link released %s late at p50 (tolerance %s)", fmtDur(late), fmtDur(tol)))
	}
	if d := l.AchievedP50 - l.RTT; l.Samples > 0 && (d > tol || d < -tol) {
		out = append(out, fmt.Sprintf("its link calibrated at %s for %s requested (tolerance ±%s)", fmtDur(l.AchievedP50), fmtDur(l.RTT), fmtDur(tol)))
	}
	return out
}

// rttTolerance is how far an added RTT may be off its request: max(RTTTolerance,
// RTTToleranceFrac of it).
func (c *checker) rttTolerance(rtt time.Duration) time.Duration {
	return max(c.opt.RTTTolerance, time.Duration(c.opt.RTTToleranceFrac*float64(rtt)))
}

// clientUse is dblat's CPU over the window as a share of the client's cores; false when the
// run did not record it.
func clientUse(r *results.Run) (float64, bool) {
	el := r.Summary.Elapsed.Seconds()
	if r.Client.CPUSeconds <= 0 || r.Client.Cores <= 0 || el <= 0 {
		return 0, false
	}
	return r.Client.CPUSeconds / (el * float64(r.Client.Cores)), true
}

// linkLateness is how late the link released data in the run, up and down at p50 added up:
// the RTT the terminals met beyond the one calibrated.
func linkLateness(l *results.Link) time.Duration {
	var late time.Duration
	for _, x := range []*results.Lateness{l.LatenessUp, l.LatenessDown} {
		if x != nil {
			late += x.P50
		}
	}
	return late
}
