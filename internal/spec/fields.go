package spec

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dblat/dblat/internal/latency"
	"github.com/dblat/dblat/internal/option"
)

// Field is one parameter of a run as users write it: a study file's base.NAME (and, if
// Factor, a factor NAME), the command line's --FLAG, and the name its value is stored and
// compared under. It is an option.Option, the one declaration of everything a user can set:
// its Kind says which of package option's readers reads it, its Default, Min and Values are
// its range, which Validate checks on a run. Set reads a value (syntax only) into a Run's
// Params and Value writes it back in canonical form.
type Field struct {
	option.Option
	// Factor is set when a study may vary the parameter.
	Factor bool
	// Late marks a parameter added after the first studies: a study cell's key leaves it
	// out at its Default, so that existing keys stayed as they were.
	Late bool
	// Incidental marks a parameter that changes how dblat reaches the server, not what a
	// run measures (the connect timeout): no factor, in no cell key, never compared between
	// stored runs, and so with no Mismatch.
	Incidental bool
	// Mismatch says what differs between two runs whose values of the parameter differ,
	// and so why their figures do not compare unless a study varies it on purpose ("a
	// different load"). Checks of stored runs quote it when compared runs disagree. Every
	// field but an Incidental one has one.
	Mismatch string
	// MinorMismatch says that such a difference makes a comparison doubtful rather than
	// wrong (a window of another length averages other noise): a warning, not an error.
	MinorMismatch bool
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
	// Link marks a parameter of the latency link's shape (LinkKeys): dblat run's, dblat
	// proxy's and dblat calibrate's flags of the same name, which a Profile sets together.
	// A run that sets one goes through the link.
	Link bool

	set func(p *Params, text string) error
	add func(p *Params, text string) error
	get func(p *Params) string
}

// List reports whether the field holds several values (option.List, option.Pairs: the
// scripts): a flag given again adds one (Add), a study file writes them as a list, and Set
// replaces them all with those of a canonical text.
func (f *Field) List() bool { return f.Kind == option.List || f.Kind == option.Pairs }

// Fields are the run's parameters, in the order help texts list them. Each is declared here
// once; the front ends, the cell keys, the stored runs' factor values and the like-for-like
// check of stored runs all read this table.
var Fields = []Field{
	{Option: option.Option{Name: "rtt", Kind: option.Duration, Default: "0", Usage: "round-trip time added between terminals and server, half each way unless up and down split it; 0 still goes through the link"},
		Factor: true, Link: true, Mismatch: "a different added latency",
		set: func(p *Params, s string) (err error) { p.RTT, err = option.ParseDuration(s); return },
		get: func(p *Params) string { return FormatDuration(p.RTT) }},
	{Option: option.Option{Name: "up", Kind: option.Duration, Default: "0", Usage: "one-way delay terminals→server; with down, in place of rtt's even split (rtt is then up + down)"},
		Factor: true, Late: true, Link: true, Mismatch: "another split of the added latency between the directions",
		set: func(p *Params, s string) (err error) { p.Up, err = option.ParseDuration(s); return },
		get: func(p *Params) string { return FormatDuration(p.Up) }},
	{Option: option.Option{Name: "down", Kind: option.Duration, Default: "0", Usage: "one-way delay server→terminals; with up, in place of rtt's even split (rtt is then up + down)"},
		Factor: true, Late: true, Link: true, Mismatch: "another split of the added latency between the directions",
		set: func(p *Params, s string) (err error) { p.Down, err = option.ParseDuration(s); return },
		get: func(p *Params) string { return FormatDuration(p.Down) }},
	{Option: option.Option{Name: "jitter", Kind: option.Duration, Default: "0", Usage: "spread of each one-way delay, drawn per chunk without reordering: the half-width of uniform jitter, the standard deviation of normal and paretonormal"},
		Factor: true, Late: true, Link: true, Mismatch: "another spread of the added latency (jitter widens response-time percentiles)",
		set: func(p *Params, s string) (err error) { p.Jitter, err = option.ParseDuration(s); return },
		get: func(p *Params) string { return FormatDuration(p.Jitter) }},
	{Option: option.Option{Name: "distribution", Kind: option.String, Default: DefaultDistribution, Values: Distributions, Usage: "shape of the jitter: uniform, normal or paretonormal, as tc-netem's"},
		Factor: true, Late: true, Link: true, Mismatch: "jitter of another shape",
		set: func(p *Params, s string) error {
			d := strings.TrimSpace(s)
			if err := option.OneOf(d, Distributions); err != nil {
				return err
			}
			p.Distribution = d
			if d == DefaultDistribution {
				p.Distribution = "" // the zero value, as runs stored before it hold
			}
			return nil
		},
		get: func(p *Params) string { return cmp.Or(p.Distribution, DefaultDistribution) }},
	{Option: option.Option{Name: "bandwidth", Kind: option.String, Default: Unlimited, Usage: "capacity each way, shared by the connections like one cable: 100mbit, 1gbit, 12.5MB/s, or unlimited"},
		Factor: true, Late: true, Link: true, Mismatch: "another capacity (a narrow link queues large messages behind each other)",
		set: func(p *Params, s string) (err error) { p.Bandwidth, err = ParseBandwidth(s); return },
		get: func(p *Params) string { return FormatBandwidth(p.Bandwidth) }},
	{Option: option.Option{Name: "loss", Kind: option.String, Default: "0", Usage: "share of TCP segments lost each way, like 0.1%: a lost segment delays its data by a retransmission timeout (RTT + 200 ms at least), as TCP does"},
		Factor: true, Late: true, Link: true, Mismatch: "another loss rate (each loss costs a retransmission timeout)",
		set: func(p *Params, s string) (err error) { p.Loss, err = ParseLoss(s); return },
		get: func(p *Params) string { return latency.FormatLoss(p.Loss) }},
	{Option: option.Option{Name: "profile", Kind: option.String, Usage: "a named network's whole shape (same-host, lan-1gbe, lan-10gbe, lan-100mbit-loaded, same-az, cross-az, cross-region, or a study's own): its rtt, jitter, bandwidth and loss, which the link fields given beside it override"},
		Factor: true, Late: true, Link: true, Mismatch: "another network profile",
		set: func(p *Params, s string) error {
			name := strings.TrimSpace(s)
			if name != "" && !validProfile.MatchString(name) {
				return fmt.Errorf("must be a profile's name (letters, digits, '-', '_', '.'), got %q", s)
			}
			p.Profile = name
			return nil
		},
		get: func(p *Params) string { return p.Profile }},
	{Option: option.Option{Name: "terminals", Kind: option.Int, Default: "10", Min: 1, Usage: "concurrent terminals (emulated users)"},
		Factor: true, Mismatch: "a different load",
		set: func(p *Params, s string) (err error) { p.Terminals, err = option.ParseInt(s); return },
		get: func(p *Params) string { return strconv.Itoa(p.Terminals) }},
	{Option: option.Option{Name: "connections", Kind: option.Int, Default: "0", Zero: "one per terminal", Usage: "connection pool size (default: one per terminal); with fewer, terminals queue and the wait is reported apart"},
		Factor: true, Mismatch: "a different pool size",
		set: func(p *Params, s string) (err error) { p.Connections, err = option.ParseInt(s); return },
		get: func(p *Params) string { return strconv.Itoa(p.Connections) }},
	{Option: option.Option{Name: "warehouses", Kind: option.Int, Default: "0", Flag: option.NoFlag, Usage: "the part of the loaded data the terminals use, in the workload's scale (default: all loaded)"},
		Factor: true, Mismatch: "a different dataset size (seed 001: performance drops heavily as the database grows)",
		set: func(p *Params, s string) (err error) { p.Scale, err = option.ParseInt(s); return },
		get: func(p *Params) string { return strconv.Itoa(p.Scale) }},
	{Option: option.Option{Name: "duration", Kind: option.Duration, Default: "1m0s", Min: 1, Usage: "measurement window"},
		Factor: true, Mismatch: "windows of different length average different amounts of noise and background work", MinorMismatch: true,
		set: func(p *Params, s string) (err error) { p.Duration, err = option.ParseDuration(s); return },
		get: func(p *Params) string { return FormatDuration(p.Duration) }},
	{Option: option.Option{Name: "min_transactions", Kind: option.Int, Default: "0",
		Usage: "the window goes on past its duration until it counted this many of the headline figure's transactions (New-Orders for NOPM), at most " + strconv.Itoa(MaxWindowFactor) + " times its duration, so that a slow cell is not measured on a few dozen of them (0: by time only)"},
		Factor: true, Late: true, Mismatch: "windows that ran on until different counts average different amounts of noise", MinorMismatch: true,
		set: func(p *Params, s string) (err error) { p.MinTransactions, err = option.ParseInt(s); return },
		get: func(p *Params) string { return strconv.Itoa(p.MinTransactions) }},
	{Option: option.Option{Name: "warmup", Kind: option.Duration, Default: "10s", Usage: "warm-up before the window, excluded from all figures; auto ends it when throughput is steady, at most " + FormatDuration(DefaultWarmupCeiling) + " (\"auto 30s\": at most 30s)"},
		Factor: true, Mismatch: "warm-ups of different length leave caches in different states", MinorMismatch: true,
		set: func(p *Params, s string) (err error) { p.Warmup, p.WarmupAuto, err = parseWarmup(s); return },
		get: func(p *Params) string { return FormatWarmup(p.Warmup, p.WarmupAuto) }},
	{Option: option.Option{Name: "think", Kind: option.Bool, Default: "false", Usage: "keying and think times per TPC-C 5.2.5 (off: terminals run flat out, as HammerDB does)"},
		Factor: true, Mismatch: "pacing on in some runs and off in others",
		set: func(p *Params, s string) (err error) { p.Think, err = option.ParseBool(s); return },
		get: func(p *Params) string { return strconv.FormatBool(p.Think) }},
	{Option: option.Option{Name: "seed", Kind: option.Int, Default: "1", Min: option.Unbounded, Usage: "random seed of the terminals"},
		Mismatch: "the terminals draw different random sequences", MinorMismatch: true,
		set: func(p *Params, s string) error { n, err := option.ParseInt(s); p.Seed = int64(n); return err },
		get: func(p *Params) string { return strconv.FormatInt(p.Seed, 10) }},
	{Option: option.Option{Name: "rate", Kind: option.Rate, Default: "0", Zero: "a closed loop", Usage: "open loop: transactions arrive at this many per second in total, however fast the server answers; --terminals bounds how many run at once (default 0: closed loop)"},
		Mismatch: "a different offered load (0: a closed loop, which slows down with the server)",
		Factor:   true, Late: true,
		set: func(p *Params, s string) (err error) { p.Rate, err = option.ParseRate(s); return },
		get: func(p *Params) string { return FormatRate(p.Rate) }},
	{Option: option.Option{Name: "arrival", Kind: option.String, Values: Arrivals, Usage: "how --rate's arrivals are spaced: constant, or poisson (seeded by --seed)"},
		Factor: true, Mismatch: "arrivals spaced differently (Poisson arrivals queue more than constant ones)",
		set: func(p *Params, s string) error { p.Arrival = strings.TrimSpace(s); return nil },
		get: func(p *Params) string { return p.Arrival }},
	{Option: option.Option{Name: "latency_limit", Kind: option.Duration, Default: "0", Usage: "skip and count arrivals picked up later than this, count slower transactions as late, retry none past it (pgbench's --latency-limit)"},
		Mismatch: "a different bound on the backlog (skipped arrivals leave the figures)",
		Factor:   true, Late: true,
		set: func(p *Params, s string) (err error) { p.LatencyLimit, err = option.ParseDuration(s); return },
		get: func(p *Params) string { return FormatDuration(p.LatencyLimit) }},
	{Option: option.Option{Name: "max_tries", Kind: option.Int, Default: "1", Min: 1, Usage: "tries per transaction: one that fails with a serialization failure, deadlock or update conflict is run again with the same input (pgbench's --max-tries)"},
		Mismatch: "retries on in some runs and off in others (a retried conflict adds response time, a failed one an error)",
		Factor:   true, Late: true,
		set: func(p *Params, s string) (err error) { p.MaxTries, err = option.ParseInt(s); return },
		get: func(p *Params) string { return strconv.Itoa(p.Tries()) }},
	duringField,
	{Option: option.Option{Name: "connect_timeout", Kind: option.Duration, Default: "30s", Zero: "the driver's default",
		Usage: "how long making one connection to the server may take, the terminals' and dblat's own (0: the driver's default); for a server slow to accept"},
		Incidental: true,
		set:        func(p *Params, s string) (err error) { p.ConnectTimeout, err = option.ParseDuration(s); return },
		get:        func(p *Params) string { return FormatDuration(p.ConnectTimeout) }},
	{Option: option.Option{Name: "scripts", Kind: option.List, Flag: "file", Short: "f",
		Usage: "FILE[@WEIGHT]: a pgbench script, one transaction type named after the file, chosen in proportion to WEIGHT (default 1; 0 disables it); again for more. FILE.ENGINE.sql beside it, if there, runs instead on that engine"},
		Scoped: true, Factor: true, File: true, Weighs: true,
		set:      func(p *Params, s string) error { return setList(&p.Scripts, s, canonicalScript) },
		add:      func(p *Params, s string) error { return addList(&p.Scripts, s, canonicalScript) },
		get:      func(p *Params) string { return strings.Join(p.Scripts, ",") },
		Mismatch: "other transactions (another script set, or other weights)"},
	{Option: option.Option{Name: "builtins", Kind: option.List, Flag: "builtin", Short: "b",
		Usage: "NAME[@WEIGHT]: one of pgbench's built-in scripts, tpcb-like, simple-update or select-only, on the tables dblat load simple tpcb creates, chosen in proportion to WEIGHT (default 1); again for more"},
		Scoped: true, Factor: true, Weighs: true,
		set:      func(p *Params, s string) error { return setList(&p.Builtins, s, canonicalScript) },
		add:      func(p *Params, s string) error { return addList(&p.Builtins, s, canonicalScript) },
		get:      func(p *Params) string { return strings.Join(p.Builtins, ",") },
		Mismatch: "other built-in transactions, or other weights"},
	{Option: option.Option{Name: "defines", Kind: option.Pairs, Flag: "define", Short: "D",
		Usage: "NAME=VALUE: set the scripts' variable NAME to VALUE (pgbench -D); again for more"},
		Scoped:   true,
		set:      func(p *Params, s string) error { p.Defines = nil; return addDefine(p, s) },
		add:      addDefine,
		get:      formatDefines,
		Mismatch: "the scripts ran with other values of their variables"},
	{Option: option.Option{Name: "init", Kind: option.String,
		Usage: "FILE: a script that creates and fills the tables the scripts run on (DDL and data, :scale set), which dblat load script runs once and a run finds loaded; FILE.ENGINE.sql beside it, if there, runs instead on that engine"},
		Scoped: true, File: true,
		set:      func(p *Params, s string) error { p.Init = strings.TrimSpace(s); return nil },
		get:      func(p *Params) string { return p.Init },
		Mismatch: "the data was made by another init script"},
}

// Lookup returns the field called name.
func Lookup(name string) (*Field, bool) {
	for i := range Fields {
		if Fields[i].Name == name {
			return &Fields[i], true
		}
	}
	return nil, false
}

// Set reads text as the field's value into p with the reader of its Kind (package option):
// syntax only, its range is Validate's. Its error reads after the field's name: "must be a
// whole number, got \"x\"". A List field's values are all replaced by those text
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

// Keys lists the fields' names in order.
func Keys() []string {
	out := make([]string, len(Fields))
	for i, f := range Fields {
		out[i] = f.Name
	}
	return out
}

// LinkKeys lists the names of the link's fields (Field.Link), in order.
func LinkKeys() []string {
	var out []string
	for _, f := range Fields {
		if f.Link {
			out = append(out, f.Name)
		}
	}
	return out
}

// FactorKeys lists the names of the fields a study may vary, in order.
func FactorKeys() []string {
	var out []string
	for _, f := range Fields {
		if f.Factor {
			out = append(out, f.Name)
		}
	}
	return out
}

// Defaults returns the parameters every field's Default gives: what a run is when its
// front end is given nothing.
func Defaults() Params {
	var p Params
	for i := range Fields {
		if f := &Fields[i]; f.Default != "" {
			if err := f.Set(&p, f.Default); err != nil {
				panic("spec: field " + f.Name + "'s default: " + err.Error()) // a declaration's mistake
			}
		}
	}
	return p
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
func (v FlagValue) Type() string { return v.F.Kind.String() }

// IsBoolFlag lets a bool field's flag be given without a value.
func (v FlagValue) IsBoolFlag() bool { return v.F.Kind == option.Bool }

// parseWarmup reads a warm-up: a duration (fixed), "auto" (until steady, at most
// DefaultWarmupCeiling) or "auto DURATION" (at most DURATION); it returns the duration (the
// ceiling of an automatic warm-up) and whether it is automatic.
func parseWarmup(s string) (time.Duration, bool, error) {
	t := strings.TrimSpace(s)
	rest, auto := strings.CutPrefix(t, WarmupAuto)
	if !auto {
		d, err := option.ParseDuration(t)
		return d, false, err
	}
	rest = strings.TrimSpace(rest)
	if rest == "" {
		return DefaultWarmupCeiling, true, nil
	}
	d, err := option.ParseDuration(rest)
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

// FormatDuration writes d compactly and exactly (option.FormatDuration): "0", "100µs",
// "1.5ms", "20ms", "2s", "1m30s".
func FormatDuration(d time.Duration) string { return option.FormatDuration(d) }

// FormatRate writes an arrival rate in transactions per second as study files write it
// (option.FormatRate): "1000", "2.5", "0" (a closed loop).
func FormatRate(r float64) string { return option.FormatRate(r) }
