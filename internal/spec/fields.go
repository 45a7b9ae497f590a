package spec

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dblat/dblat/internal/suggest"
)

// Field is one parameter of a run as users write it: a study file's base.KEY (and, if Factor,
// a factor KEY), the command line's --FLAG, and the name its value is stored and compared
// under. Its value is read by Set (syntax only: the ranges are Validate's) and written back
// in canonical form by Value.
type Field struct {
	// Key names the parameter in study files and stored runs ("max_tries").
	Key string
	// Flag is the command-line flag ("max-tries"), "" when the command line spells the
	// parameter otherwise (the scale under the workload's own unit, the RTT among the link's
	// flags).
	Flag string
	// Kind is the type word help texts show ("int", "duration").
	Kind string
	// Usage is the flag's one-line help.
	Usage string
	// Factor is set when a study may vary the parameter.
	Factor bool
	// KeyDefault is the canonical value at which a study cell's key leaves the parameter
	// out ("" never does): parameters added after the first studies, so that their keys
	// stayed as they were.
	KeyDefault string
	// Mismatch says what differs between two runs whose values of the parameter differ,
	// and so why their figures do not compare unless a study varies it on purpose ("a
	// different load"). Checks of stored runs quote it when compared runs disagree. Every
	// field has one.
	Mismatch string
	// MinorMismatch says that such a difference makes a comparison doubtful rather than
	// wrong (a window of another length averages other noise): a warning, not an error.
	MinorMismatch bool
	// Short is the flag's one-letter shorthand ("f" for pgbench's -f), "" for none.
	Short string
	// List is set for a parameter that holds several values (the scripts): a flag given
	// again adds one (Add), a study file writes them as a list; Set replaces them all with
	// those of a canonical text.
	List bool
	// Pairs is set for a List field whose values are NAME=VALUE pairs (defines), which a
	// study file may write as a mapping of names to values.
	Pairs bool
	// File is set for a parameter that names files, relative to Run.Dir.
	File bool
	// Scoped is set for a parameter that only the workloads naming it take
	// (workload.Definition.Fields, LoadFields: the script workload's scripts); a run of any
	// other workload refuses it.
	Scoped bool
	// Weighs is set for a parameter whose values are the transaction types and their
	// weights (the scripts, the built-ins): a run's mix follows from it, so runs that differ
	// in it differ in their mix by design.
	Weighs bool

	set func(p *Params, text string) error
	add func(p *Params, text string) error
	get func(p *Params) string
}

// Fields are the run's parameters, in the order help texts list them. Each is declared here
// once; the front ends, the cell keys, the stored runs' factor values and the like-for-like
// check of stored runs all read this table.
var Fields = []Field{
	{Key: "rtt", Kind: "duration", Usage: "round-trip time added between terminals and server", Factor: true,
		Mismatch: "a different added latency",
		set:      func(p *Params, s string) (err error) { p.RTT, err = parseDuration(s); return },
		get:      func(p *Params) string { return FormatDuration(p.RTT) }},
	{Key: "terminals", Flag: "terminals", Kind: "int", Usage: "concurrent terminals (emulated users)", Factor: true,
		Mismatch: "a different load",
		set:      func(p *Params, s string) (err error) { p.Terminals, err = parseInt(s); return },
		get:      func(p *Params) string { return strconv.Itoa(p.Terminals) }},
	{Key: "connections", Flag: "connections", Kind: "int", Usage: "connection pool size (default: one per terminal); with fewer, terminals queue and the wait is reported apart", Factor: true,
		Mismatch: "a different pool size",
		set:      func(p *Params, s string) (err error) { p.Connections, err = parseInt(s); return },
		get:      func(p *Params) string { return strconv.Itoa(p.Connections) }},
	{Key: "warehouses", Kind: "int", Usage: "the part of the loaded data the terminals use, in the workload's scale (default: all loaded)", Factor: true,
		Mismatch: "a different dataset size (seed 001: performance drops heavily as the database grows)",
		set:      func(p *Params, s string) (err error) { p.Scale, err = parseInt(s); return },
		get:      func(p *Params) string { return strconv.Itoa(p.Scale) }},
	{Key: "duration", Flag: "duration", Kind: "duration", Usage: "measurement window", Factor: true,
		Mismatch: "windows of different length average different amounts of noise and background work", MinorMismatch: true,
		set: func(p *Params, s string) (err error) { p.Duration, err = parseDuration(s); return },
		get: func(p *Params) string { return FormatDuration(p.Duration) }},
	{Key: "warmup", Flag: "warmup", Kind: "duration", Usage: "warm-up before the window, excluded from all figures; auto ends it when throughput is steady, at most " + FormatDuration(DefaultWarmupCeiling) + " (\"auto 30s\": at most 30s)", Factor: true,
		Mismatch: "warm-ups of different length leave caches in different states", MinorMismatch: true,
		set: func(p *Params, s string) (err error) { p.Warmup, p.WarmupAuto, err = parseWarmup(s); return },
		get: func(p *Params) string { return FormatWarmup(p.Warmup, p.WarmupAuto) }},
	{Key: "think", Flag: "think", Kind: "bool", Usage: "keying and think times per TPC-C 5.2.5 (off: terminals run flat out, as HammerDB does)", Factor: true,
		Mismatch: "pacing on in some runs and off in others",
		set:      func(p *Params, s string) (err error) { p.Think, err = parseBool(s); return },
		get:      func(p *Params) string { return strconv.FormatBool(p.Think) }},
	{Key: "seed", Flag: "seed", Kind: "int", Usage: "random seed of the terminals",
		Mismatch: "the terminals draw different random sequences", MinorMismatch: true,
		set: func(p *Params, s string) (err error) { p.Seed, err = parseSeed(s); return },
		get: func(p *Params) string { return strconv.FormatInt(p.Seed, 10) }},
	{Key: "rate", Flag: "rate", Kind: "float", Usage: "open loop: transactions arrive at this many per second in total, however fast the server answers; --terminals bounds how many run at once (default 0: closed loop)",
		Mismatch: "a different offered load (0: a closed loop, which slows down with the server)",
		Factor:   true, KeyDefault: "0",
		set: func(p *Params, s string) (err error) { p.Rate, err = parseRate(s); return },
		get: func(p *Params) string { return FormatRate(p.Rate) }},
	{Key: "arrival", Flag: "arrival", Kind: "string", Usage: "how --rate's arrivals are spaced: constant, or poisson (seeded by --seed)", Factor: true,
		Mismatch: "arrivals spaced differently (Poisson arrivals queue more than constant ones)",
		set:      func(p *Params, s string) error { p.Arrival = strings.TrimSpace(s); return nil },
		get:      func(p *Params) string { return p.Arrival }},
	{Key: "latency_limit", Flag: "latency-limit", Kind: "duration", Usage: "skip and count arrivals picked up later than this, count slower transactions as late, retry none past it (pgbench's --latency-limit)",
		Mismatch: "a different bound on the backlog (skipped arrivals leave the figures)",
		Factor:   true, KeyDefault: "0",
		set: func(p *Params, s string) (err error) { p.LatencyLimit, err = parseDuration(s); return },
		get: func(p *Params) string { return FormatDuration(p.LatencyLimit) }},
	{Key: "max_tries", Flag: "max-tries", Kind: "int", Usage: "tries per transaction: one that fails with a serialization failure, deadlock or update conflict is run again with the same input (pgbench's --max-tries)",
		Mismatch: "retries on in some runs and off in others (a retried conflict adds response time, a failed one an error)",
		Factor:   true, KeyDefault: "1",
		set: func(p *Params, s string) (err error) { p.MaxTries, err = parseInt(s); return },
		get: func(p *Params) string { return strconv.Itoa(p.Tries()) }},
	{Key: "scripts", Flag: "file", Short: "f", Kind: "stringArray", List: true, Scoped: true, Factor: true, File: true, Weighs: true,
		Usage:    "FILE[@WEIGHT]: a pgbench script, one transaction type named after the file, chosen in proportion to WEIGHT (default 1; 0 disables it); again for more. FILE.ENGINE.sql beside it, if there, runs instead on that engine",
		set:      func(p *Params, s string) error { return setList(&p.Scripts, s, "scripts", canonicalScript) },
		add:      func(p *Params, s string) error { return addList(&p.Scripts, s, canonicalScript) },
		get:      func(p *Params) string { return strings.Join(p.Scripts, ",") },
		Mismatch: "other transactions (another script set, or other weights)"},
	{Key: "builtins", Flag: "builtin", Short: "b", Kind: "stringArray", List: true, Scoped: true, Factor: true, Weighs: true,
		Usage:    "NAME[@WEIGHT]: one of pgbench's built-in scripts, tpcb-like, simple-update or select-only, on the tables dblat load simple tpcb creates, chosen in proportion to WEIGHT (default 1); again for more",
		set:      func(p *Params, s string) error { return setList(&p.Builtins, s, "builtins", canonicalScript) },
		add:      func(p *Params, s string) error { return addList(&p.Builtins, s, canonicalScript) },
		get:      func(p *Params) string { return strings.Join(p.Builtins, ",") },
		Mismatch: "other built-in transactions, or other weights"},
	{Key: "defines", Flag: "define", Short: "D", Kind: "stringArray", List: true, Pairs: true, Scoped: true,
		Usage:    "NAME=VALUE: set the scripts' variable NAME to VALUE (pgbench -D); again for more",
		set:      func(p *Params, s string) error { p.Defines = nil; return addDefine(p, s) },
		add:      addDefine,
		get:      formatDefines,
		Mismatch: "the scripts ran with other values of their variables"},
	{Key: "init", Flag: "init", Kind: "string", Scoped: true, File: true,
		Usage:    "FILE: a script that creates and fills the tables the scripts run on (DDL and data, :scale set), which dblat load script runs once and a run finds loaded; FILE.ENGINE.sql beside it, if there, runs instead on that engine",
		set:      func(p *Params, s string) error { p.Init = strings.TrimSpace(s); return nil },
		get:      func(p *Params) string { return p.Init },
		Mismatch: "the data was made by another init script"},
}

// Lookup returns the field called key.
func Lookup(key string) (*Field, bool) {
	for i := range Fields {
		if Fields[i].Key == key {
			return &Fields[i], true
		}
	}
	return nil, false
}

// Set reads text as the field's value into p. Its error reads after the field's name:
// "is not a whole number: \"x\"". A List field's values are all replaced by those text
// writes in canonical form (Value's).
func (f *Field) Set(p *Params, text string) error { return f.set(p, text) }

// Add reads text as one more value of a List field (a flag given again, an item of a
// study file's list); for any other field it is Set.
func (f *Field) Add(p *Params, text string) error {
	if f.add == nil {
		return f.set(p, text)
	}
	return f.add(p, text)
}

// Value returns the field's value in p in canonical form: durations by FormatDuration,
// rates by FormatRate, integers and booleans plainly.
func (f *Field) Value(p *Params) string { return f.get(p) }

// Keys lists the fields' keys in order.
func Keys() []string {
	out := make([]string, len(Fields))
	for i, f := range Fields {
		out[i] = f.Key
	}
	return out
}

// FactorKeys lists the keys of the fields a study may vary, in order.
func FactorKeys() []string {
	var out []string
	for _, f := range Fields {
		if f.Factor {
			out = append(out, f.Key)
		}
	}
	return out
}

// FlagValue is a field of a Run as a command-line flag's value: it has the methods of
// pflag.Value (and IsBoolFlag for a bool field), so a front end registers it as it is.
type FlagValue struct {
	F *Field
	P *Params
}

func (v FlagValue) String() string {
	if v.P == nil {
		return ""
	}
	return v.F.Value(v.P)
}

// Set reads a flag's argument; a List field's flag adds one value each time it is given.
func (v FlagValue) Set(s string) error { return v.F.Add(v.P, s) }

// Type is the word help texts show for the value.
func (v FlagValue) Type() string { return v.F.Kind }

// IsBoolFlag lets a bool field's flag be given without a value.
func (v FlagValue) IsBoolFlag() bool { return v.F.Kind == "bool" }

// The readers below check syntax only; Validate checks ranges and combinations. Their errors
// read after a label: "terminals is not a whole number: \"x\"".

func parseInt(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("must be a whole number, got %q", s)
	}
	return n, nil
}

func parseSeed(s string) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("must be a whole number, got %q", s)
	}
	return n, nil
}

func parseBool(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("must be true or false, got %q", s)
}

// ParseDuration reads a duration as study files and flags write it: a Go duration ("1.5ms",
// "100µs", "20s") or a bare 0. A number without a unit is refused with the two readings it
// may have meant.
func ParseDuration(s string) (time.Duration, error) { return parseDuration(s) }

func parseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		if f, nerr := strconv.ParseFloat(s, 64); nerr == nil {
			if f == 0 {
				return 0, nil // "0.0"
			}
			return 0, fmt.Errorf("needs a unit: %sms or %ss?", s, s)
		}
		return 0, fmt.Errorf("is not a duration: %q (write 1.5ms, 100µs, 20s, 2m)", s)
	}
	return d, nil
}

// parseWarmup reads a warm-up: a duration (fixed), "auto" (until steady, at most
// DefaultWarmupCeiling) or "auto DURATION" (at most DURATION); it returns the duration (the
// ceiling of an automatic warm-up) and whether it is automatic.
func parseWarmup(s string) (time.Duration, bool, error) {
	t := strings.TrimSpace(s)
	rest, auto := strings.CutPrefix(t, WarmupAuto)
	if !auto {
		d, err := parseDuration(t)
		return d, false, err
	}
	rest = strings.TrimSpace(rest)
	if rest == "" {
		return DefaultWarmupCeiling, true, nil
	}
	d, err := parseDuration(rest)
	if err != nil {
		return 0, true, fmt.Errorf("auto's ceiling %v", err)
	}
	return d, true, nil
}

// FormatWarmup writes a warm-up in canonical form: "10s", or "auto 1m0s" for an automatic
// one with its ceiling.
func FormatWarmup(d time.Duration, auto bool) string {
	if auto {
		return WarmupAuto + " " + FormatDuration(d)
	}
	return FormatDuration(d)
}

// parseRate reads an arrival rate in transactions per second: a number ("1000", "2.5",
// "1e3"), optionally followed by "/s"; 0 means a closed loop.
func parseRate(s string) (float64, error) {
	t := strings.TrimSuffix(strings.TrimSpace(s), "/s")
	r, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(r) || math.IsInf(r, 0) {
		return 0, fmt.Errorf("must be transactions per second, like 1000 or 2.5, got %q", s)
	}
	return r, nil
}

// FormatDuration writes d compactly and exactly: "0", "100µs", "1.5ms", "20ms", "2s", "1m30s".
func FormatDuration(d time.Duration) string {
	switch {
	case d == 0:
		return "0"
	case d%time.Second == 0 || d >= time.Second || d <= -time.Second:
		return d.String()
	case d%time.Millisecond == 0:
		return strconv.FormatInt(int64(d/time.Millisecond), 10) + "ms"
	case d >= time.Millisecond || d <= -time.Millisecond:
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', -1, 64) + "ms"
	default:
		return strconv.FormatFloat(float64(d)/float64(time.Microsecond), 'f', -1, 64) + "µs"
	}
}

// FormatRate writes an arrival rate in transactions per second as study files write it:
// "1000", "2.5", "0" (a closed loop).
func FormatRate(r float64) string { return strconv.FormatFloat(r, 'f', -1, 64) }

// errNotArrival is the detail of an unknown arrival process.
func errNotArrival(s string) error {
	msg := fmt.Sprintf("must be %s, got %q", strings.Join(Arrivals, " or "), s)
	if c := suggest.Closest(s, Arrivals, 2); c != "" {
		msg += fmt.Sprintf(" (did you mean %s?)", c)
	}
	return errors.New(msg)
}

var errUnknownField = errors.New("is not a parameter of a run")

// SetKey sets the parameter key of p from text; an unknown key is an error.
func SetKey(p *Params, key, text string) error {
	f, ok := Lookup(key)
	if !ok {
		return errUnknownField
	}
	return f.Set(p, text)
}

// isArrival reports whether s names an arrival process.
func isArrival(s string) bool { return slices.Contains(Arrivals, s) }
