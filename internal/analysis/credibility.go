package analysis

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/words"
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
	// Repeat is the number of finished runs per cell the study asks for at least
	// (study.Study.RepeatMin); 0 when unknown. A study asking for fewer than MinRepeats
	// gets one info finding, and its cells are then held to Repeat.
	Repeat int
	// RepeatMax is the most a study with a range (`repeat: 2..6`) runs in a cell whose
	// interval stays wide; 0 or Repeat for a fixed number. It only words the finding.
	RepeatMax int
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
	// cache costs an extra round trip at first use) and filling the caches; a missing one
	// puts all of that in the window.
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
	for _, c := range g.Cells {
		fin = append(fin, c.Finished...)
	}
	sort.Slice(fin, func(i, j int) bool { return fin[i].ID < fin[j].ID })
	c := &checker{g: g, opt: opt, fin: fin}
	for _, r := range rules {
		r.check(c)
	}
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

// A rule is one credibility check: the Rule… constants its findings carry, and check, which
// judges the checker's runs and adds its findings (checker.add). Each rule is declared in a
// file of its own, check_*.go (related rules share one), with its constants and their
// docs, and is listed once in rules.
type rule struct {
	// names are the Rule… constants the check's findings carry. Engine advice also
	// carries the engines' own rule names (engine.Advice.Rule), which are not constants
	// here.
	names []string
	check func(*checker)
}

// rules are the rules Check applies, in the order it applies them. Check sorts the
// findings, so the order matters only to findings that tie on every sort key.
var rules = []rule{
	mixedRule, versionSettingsRule, conflictsRule, settingNotAppliedRule, engineAdviceRule,
	defaultCacheRule, dataInRAMRule, errorRateRule, retryRateRule, overloadRule,
	fewRepeatsRule, variationRule, clientBoundRule, rttRule, rttUncertainRule, linkCPURule,
	warmupRule, agentPartRule, stalledRule, disturbedRule,
}

// checker is the state of one Check that its rules share: the runs grouped into cells, the
// options with their defaults, the finished runs, and the findings added so far.
type checker struct {
	g   *grouping
	opt CheckOptions
	fin []*results.Run // finished runs, ascending ID
	out []Finding
}

// add keeps a finding, its runs sorted and without duplicates.
func (c *checker) add(f Finding) {
	slices.Sort(f.Runs)
	f.Runs = slices.Compact(f.Runs)
	c.out = append(c.out, f)
}

func (c *checker) isFactor(key string) bool { return c.g.factorIndex(key) >= 0 }

// cellOf returns the key of the cell run belongs to.
func (c *checker) cellOf(r *results.Run) string {
	parts := make([]string, len(c.g.Factors))
	for i, k := range c.g.Factors {
		parts[i] = k + "=" + results.FactorValue(r, k)
	}
	return strings.Join(parts, " ")
}

// levelsKey joins run's levels of the factors at idx.
func (c *checker) levelsKey(r *results.Run, idx []int) string {
	parts := make([]string, len(idx))
	for i, f := range idx {
		parts[i] = results.FactorValue(r, c.g.Factors[f])
	}
	return strings.Join(parts, "\x00")
}

// comparison returns what engine name (results.Server.Engine) says about its settings; the
// zero Comparison for an engine this build does not know.
func comparison(name string) engine.Comparison {
	e, err := engine.Lookup(name)
	if err != nil {
		return engine.Comparison{}
	}
	if c := engine.Caps(e).Comparer; c != nil {
		return c.Comparison()
	}
	return engine.Comparison{}
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
	cores := clientCores(r)
	if r.Client.CPUSeconds <= 0 || cores <= 0 || el <= 0 {
		return 0, false
	}
	return r.Client.CPUSeconds / (el * float64(cores)), true
}

// clientCores is how many cores dblat could use in run r: its machine's, or fewer when
// the Go runtime was held to fewer (Client.Procs, GOMAXPROCS).
func clientCores(r *results.Run) int {
	if p := r.Client.Procs; p > 0 && p < r.Client.Cores {
		return p
	}
	return r.Client.Cores
}

// byCount orders the values of vals by their number of runs (most first), then by value.
func byCount(vals map[string][]int64) []string {
	ks := slices.Sorted(maps.Keys(vals))
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
		parts = append(parts, fmt.Sprintf("%q in %s (%s)", v, words.Count(len(ids), "run"), idList(ids, 8)))
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

// listed joins up to n evidence lines and counts the rest.
func listed(lines []string, n int) string {
	if len(lines) > n {
		return strings.Join(lines[:n], "; ") + fmt.Sprintf("; and %d more", len(lines)-n)
	}
	return strings.Join(lines, "; ")
}

func orAll(key string) string {
	if key == "" {
		return allRuns
	}
	return key
}

// pct writes a fraction as a percentage: rounded to a whole number from 10 % up ("12 %")
// and when it is one ("3 %"), else to one decimal ("2.5 %"); +Inf is "∞ %".
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
