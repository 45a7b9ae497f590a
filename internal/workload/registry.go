package workload

import (
	"context"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dblat/dblat/internal/option"
	"github.com/dblat/dblat/internal/spec"
	"github.com/dblat/dblat/internal/suggest"
)

// Definition declares a workload to the execution core and the command line: what it is
// called, how its data size is counted, its transaction types, default mix and headline
// figure, the options it takes, and how to load it, find it loaded and build it. Workload
// packages register their definitions (Register) in an init function; package
// workload/all imports them all.
type Definition struct {
	// Name is the workload's name on the command line, in study files and in stored runs
	// ("tpcc", "select-only").
	Name string
	// Group, when set, is the command-line group the workload is run under: `dblat run
	// GROUP NAME` ("simple"); "" means `dblat run NAME`.
	Group string
	// Summary is a one-line description for help texts.
	Summary string
	// RunExample and LoadExample, when set, are the command line's examples of running and
	// loading the workload, in place of the generic ones; Help, when set, is a paragraph
	// the run command's help adds.
	RunExample, LoadExample, Help string
	// Scale says how the data size is counted.
	Scale Scale
	// TxTypes are the transaction types' names in a fixed order; nil for a workload whose
	// runs bring their own (the script workload: one per script), which its
	// Workload.TxTypes then lists, weighted by the run itself (no mix).
	TxTypes []string
	// DefaultMix weighs TxTypes when a run gives no mix.
	DefaultMix Mix
	// Metric is the headline throughput figure.
	Metric Metric
	// Options are the workload's run options ("mode", "protocol"); LoadOptions those of
	// its loader ("blob_size").
	Options, LoadOptions option.Set
	// Fields and LoadFields name the scoped parameters of a run (spec.Field.Scoped: the
	// script workload's scripts, defines, init) that the workload's runs and its loader
	// take; any other workload refuses them.
	Fields, LoadFields []string
	// Think is set when the workload has keying and think times that a run may turn on.
	Think bool
	// Pauses, for a workload with Think, are each transaction type's keying time and mean
	// think time (by type name) when think times are on: what sets how often a terminal
	// completes a transaction, so that a summary can say when a window is too short to
	// measure it.
	Pauses map[string]Pause
	// ReadOnly is set when runs leave the data as they found it, so that restoring a
	// pristine copy between runs is not needed.
	ReadOnly bool
	// Data names the data set the loader creates. Workloads that share one (tpcb and
	// select-only both use pgbench's tables) have the same Data; "" means Name.
	Data string
	// Index is what an index build during a run (dblat run --during index@OFFSET) indexes:
	// one of the workload's largest tables, on columns no index of its own covers; nil for
	// a workload whose tables dblat does not know (the script workload's are the user's).
	Index *Index

	// Load creates the schema and loads the data (dropping an earlier load of the same data
	// set).
	Load func(ctx context.Context, t Target, cfg LoadConfig) error
	// Loaded returns the scale of the data loaded in t for a run of cfg, or an error
	// wrapping ErrNotLoaded. Most workloads look at t alone; one whose data a run names
	// (the script workload's init script) also at cfg.
	Loaded func(ctx context.Context, t Target, cfg Config) (int, error)
	// New checks cfg against t's engine and returns the workload. It does not touch the
	// database; Workload.Prepare does.
	New func(t Target, cfg Config) (Workload, error)
	// Check, when set, checks the loaded data's consistency (TPC-C's 3.3.2 conditions).
	Check func(ctx context.Context, t Target) ([]CheckResult, error)
	// Split, when set, divides the data a run uses (scale) among n parts of the run (its
	// agents), so that each part's terminals work on data of their own: each Partition
	// gives a part's share of the terminals and the options that confine it (TPC-C: a range
	// of home warehouses). It returns nil when the data cannot be divided n ways (TPC-C:
	// fewer warehouses than parts): every part then runs on all of it. SplitOptions names
	// the options Split sets, which a run that is split must leave alone.
	Split        func(scale, n int) []Partition
	SplitOptions []string
	// RoundTripModes, when set, declares the run option whose values change how many round
	// trips the workload's transactions take and nothing else a run measures (TPC-C's
	// mode): stored runs that differ in it alone show what fewer round trips buy, which
	// dblat predict quotes beside its prediction.
	RoundTripModes *RoundTripModes
}

// RoundTripModes is a workload's declaration of its round-trip modes
// (Definition.RoundTripModes).
type RoundTripModes struct {
	// Option names the run option, one of Definition.Options with Values: the modes, in the
	// order to quote them (most round trips first).
	Option string
	// Title names the workload in sentences ("TPC-C"), and TxTitle its Metric.TxType
	// ("New-Order"), whose round trips the quotes give.
	Title, TxTitle string
	// Hint says how to measure what the modes buy, for when no stored runs show it.
	Hint string
}

// Index is a table of a workload's data and the columns an index build indexes.
type Index struct {
	Table   string
	Columns []string
}

// Partition is one part's share of a split run (Definition.Split).
type Partition struct {
	// Share weighs the part's terminals against the other parts' (TPC-C: its warehouses).
	Share int
	// Options are the workload options the part runs with.
	Options map[string]string
}

// DataSet returns the name of the data set the workload runs on.
func (d *Definition) DataSet() string {
	if d.Data != "" {
		return d.Data
	}
	return d.Name
}

// Scale says how a workload counts the size of its data.
type Scale struct {
	// Name is the unit as users say it ("warehouses"; "scale" for pgbench's 100,000
	// accounts).
	Name string
	// Usage describes one unit for help texts ("about 100 MB").
	Usage string
	// Default is the scale a load uses when none is given.
	Default int
	// Bytes is about how much one unit takes once loaded, with its indexes, on any engine;
	// 0 when it depends on what the user loads. A server whose data lives in memory is
	// checked against it before a study starts.
	Bytes int64
}

// Metric is a workload's headline throughput figure.
type Metric struct {
	// Name is "NOPM" (TPC-C's New-Order transactions per minute) or "TPS" (transactions
	// per second).
	Name string
	// TxType, when set, is the transaction type whose commits make the figure (TPC-C's
	// "new_order"); "" counts every completed transaction.
	TxType string
}

// Config is what a run asks of a workload.
type Config struct {
	// Scale is the part of the loaded data the terminals use (TPC-C's active warehouses);
	// 0 means all of it.
	Scale int
	// Seed seeds every terminal's random inputs.
	Seed int64
	// Mix weighs the transaction types; nil means the definition's DefaultMix.
	Mix Mix
	// Think turns on keying and think times (Definition.Think).
	Think bool
	// Options are the values of the definition's Options, checked.
	Options option.Values
	// ScriptParams are the run's own transactions and the script that creates their data,
	// for a workload that takes them (Definition.Fields), as the run holds them.
	spec.ScriptParams
	// Files reads the files the run names.
	Files Files
}

// Files reads the files a run names (a script, its init, and the variants a workload looks
// for beside them).
type Files struct {
	// Read reads a file by its path as the run names it; its error wraps fs.ErrNotExist
	// for a file that is not there. nil reads nothing.
	Read func(path string) ([]byte, error)
	// Dir is the directory relative paths are taken from, "" the working directory: what
	// Where needs to name a file where its user finds it.
	Dir string
}

// ReadFile reads path (see Read).
func (f Files) ReadFile(path string) ([]byte, error) {
	if f.Read == nil {
		return nil, &fs.PathError{Op: "read", Path: f.Where(path), Err: fs.ErrNotExist}
	}
	return f.Read(path)
}

// Where names path as its user finds it: joined to Dir when relative.
func (f Files) Where(path string) string {
	if f.Dir == "" || filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(f.Dir, path)
}

// LoadConfig is what a load asks of a workload.
type LoadConfig struct {
	// Scale is the size of the data to load (Definition.Scale); 0 means its default.
	Scale int
	// Seed seeds the data: the same seed loads the same data.
	Seed int64
	// Workers is the number of parallel loader connections; 0 means the loader's default.
	Workers int
	// Options are the values of the definition's LoadOptions, checked.
	Options option.Values
	// Progress, when set, receives the rows stored so far and the rows to store.
	Progress func(done, total int64)
	// ScriptParams and Files are as in Config, for a loader that takes them
	// (Definition.LoadFields: Init, Defines, and Builtins, which says which data built-in
	// scripts need).
	spec.ScriptParams
	Files Files
}

// CheckResult is the outcome of one consistency condition of the loaded data.
type CheckResult struct {
	// Clause is the specification clause the condition comes from ("3.3.2.1").
	Clause string
	// Name says what the condition states.
	Name string
	// OK is true when the condition holds, or was skipped: it is false only for a
	// condition that was evaluated and found violated.
	OK bool
	// Skipped is true when the condition was not evaluated because it does not apply to
	// the data as it is now (TPC-C's 3.3.2.11 once Delivery has run in every district);
	// Detail then says why. A skipped condition is neither held nor failed.
	Skipped bool
	// Detail explains a failure (how many rows violate the condition, with examples), why
	// the condition was skipped, or which part of the data a holding condition covered
	// when it could not cover all of it.
	Detail string
}

// Mix is the weight of each transaction type, by name. Weights need not sum to 100.
type Mix map[string]float64

// String renders m in TxTypes order as ParseMix reads it: "new_order=45,payment=43".
func (m Mix) String() string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + strconv.FormatFloat(m[k], 'g', -1, 64)
	}
	return strings.Join(parts, ",")
}

// ParseMix reads transaction weights for types either positionally ("45,43,4,4,4", one
// weight per type in order) or by name ("new_order=45,payment=43", omitted types weigh
// 0). Weights are non-negative numbers, at least one positive. An empty string gives nil
// (the workload's default).
func ParseMix(s string, types []string) (Mix, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	parts := strings.Split(s, ",")
	named := strings.Contains(s, "=")
	if !named && len(parts) != len(types) {
		return nil, fmt.Errorf("mix %q: want %d weights (%s) or name=weight pairs, got %d values",
			s, len(types), strings.Join(types, ","), len(parts))
	}
	m := Mix{}
	for i, p := range parts {
		p = strings.TrimSpace(p)
		name, val := "", p
		if named {
			n, v, ok := strings.Cut(p, "=")
			if !ok {
				return nil, fmt.Errorf("mix %q: %q is not name=weight (do not mix both forms)", s, p)
			}
			name, val = strings.TrimSpace(n), strings.TrimSpace(v)
			if !slices.Contains(types, name) {
				msg := fmt.Sprintf("mix %q: unknown transaction %q", s, name)
				if c := suggest.Closest(name, types, 3); c != "" {
					msg += fmt.Sprintf(" (did you mean %s?)", c)
				}
				return nil, fmt.Errorf("%s (known: %s)", msg, strings.Join(types, ", "))
			}
			if _, dup := m[name]; dup {
				return nil, fmt.Errorf("mix %q: %s given twice", s, name)
			}
		} else {
			name = types[i]
		}
		x, err := strconv.ParseFloat(val, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("mix %q: weight %q of %s is not a number", s, val, name)
		}
		if x < 0 {
			return nil, fmt.Errorf("mix %q: weight of %s is negative (%g)", s, name, x)
		}
		m[name] = x
	}
	var total float64
	for _, x := range m {
		total += x
	}
	if total <= 0 {
		return nil, fmt.Errorf("mix %q: all weights are zero", s)
	}
	return m, nil
}

var (
	regMu    sync.RWMutex
	registry = map[string]*Definition{}
)

// Register makes a workload available to Lookup. It panics on a duplicate name or a
// definition without its hooks, programming errors found at init time.
func Register(d *Definition) {
	regMu.Lock()
	defer regMu.Unlock()
	if _, dup := registry[d.Name]; dup {
		panic("workload: duplicate registration of " + d.Name)
	}
	if d.Load == nil || d.Loaded == nil || d.New == nil || d.Metric.Name == "" {
		panic("workload: incomplete definition of " + d.Name)
	}
	if m := d.RoundTripModes; m != nil {
		if o, ok := d.Options.Lookup(m.Option); !ok || len(o.Values) == 0 {
			panic("workload: " + d.Name + "'s round-trip modes name no option with values: " + m.Option)
		}
	}
	registry[d.Name] = d
}

// Lookup returns the workload registered under name.
func Lookup(name string) (*Definition, error) {
	regMu.RLock()
	defer regMu.RUnlock()
	if d, ok := registry[name]; ok {
		return d, nil
	}
	known := namesLocked()
	msg := fmt.Sprintf("unknown workload %q", name)
	if c := suggest.Closest(name, known, 3); c != "" {
		msg += fmt.Sprintf(" (did you mean %s?)", c)
	}
	return nil, fmt.Errorf("%s (known: %s)", msg, strings.Join(known, ", "))
}

// Names lists the registered workloads, sorted.
func Names() []string {
	regMu.RLock()
	defer regMu.RUnlock()
	return namesLocked()
}

// InGroup lists the registered workloads of a command-line group ("" for those run by
// their own name), sorted.
func InGroup(group string) []*Definition {
	var out []*Definition
	for _, n := range Names() {
		d, _ := Lookup(n)
		if d.Group == group {
			out = append(out, d)
		}
	}
	return out
}

func namesLocked() []string {
	out := make([]string, 0, len(registry))
	for n := range registry {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// ThinkCycle is, for a workload with think times (Pauses), the time one terminal takes per
// headline transaction (Metric.TxType; any transaction when "") at mix (nil: DefaultMix):
// the keying and mean think times of the mix's transactions per headline transaction. With
// TPC-C's default mix it is about 47 s. ok is false when the workload has no pauses.
func (d *Definition) ThinkCycle(mix Mix) (cycle time.Duration, ok bool) {
	if len(d.Pauses) == 0 {
		return 0, false
	}
	if len(mix) == 0 {
		mix = d.DefaultMix
	}
	var weight, pause float64
	for typ, w := range mix {
		p := d.Pauses[typ]
		weight += w
		pause += w * (p.Keying + p.Think).Seconds()
	}
	share := 1.0
	if d.Metric.TxType != "" {
		share = mix[d.Metric.TxType] / max(weight, 1e-9)
	}
	if weight <= 0 || share <= 0 {
		return 0, false
	}
	return time.Duration(pause / weight / share * float64(time.Second)), true
}
