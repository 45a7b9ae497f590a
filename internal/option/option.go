// Package option is dblat's one vocabulary of parameters: the declaration of anything a
// user can set (Option: its name, kind, default, range and flag) and the one set of readers
// that read what a user wrote (ParseBool, ParseInt, ParseDuration, ParseRate, ParsePair,
// OneOf), each with one rule wherever the value comes from. Workloads and engines declare
// their options with it (TPC-C's round-trip mode, pgbench's query protocol, Firebird's page
// size); package spec declares a run's fields with it (spec.Field embeds Option: terminals,
// durations, the connect timeout); package study declares its own keys with it (design,
// budget, max_failures). One declaration serves every place a user writes the parameter: a
// command-line flag (--blobs-per-tx), a study file's opt.NAME or base.NAME.
//
// A reader checks syntax only; Option.Canonical reads and checks the range (Min, Values),
// and Option.CheckInt, CheckDuration and CheckRate check a value already read, for a
// validation that works on typed values (spec.Run.Validate). Booleans are true, yes, on, 1
// or t and false, no, off, 0 or f, in any case, everywhere.
//
// It knows nothing of any workload, engine, run or front end, and places no error: a
// reader's error reads after the parameter's name, and the front ends say where the name was
// written. It imports nothing of dblat but package suggest.
package option

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dblat/dblat/internal/suggest"
)

// Kind is the type of an option's values: which reader reads them (read.go) and how they
// are written back (Option.Canonical).
type Kind int

// The kinds of option values.
const (
	String   Kind = iota // any text, or one of Option.Values
	Bool                 // ParseBool: true, yes, on, 1 or false, no, off, 0
	Int                  // ParseInt: a whole number ≥ Option.Min
	Duration             // ParseDuration: a Go duration or 0, ≥ Option.Min nanoseconds
	Rate                 // ParseRate: transactions per second, not negative
	List                 // several values, each given on its own (a flag again, a list item)
	Pairs                // a List of NAME=VALUE pairs (ParsePair)
)

// String is the word help texts show for a value of the kind ("int", "duration").
func (k Kind) String() string {
	switch k {
	case Bool:
		return "bool"
	case Int:
		return "int"
	case Duration:
		return "duration"
	case Rate:
		return "float"
	case List, Pairs:
		return "stringArray"
	}
	return "string"
}

// Unbounded is the Min of an Int option that takes any whole number, negative ones too.
const Unbounded = math.MinInt

// Option is one named parameter a user can set: a workload's or an engine's option, a field
// of a run (package spec embeds it in spec.Field), a key of a study file. Its Kind says how
// its values are read and written back, and Default, Values and Min are all there is to its
// range: every front end reads it through Canonical, and validation checks a value already
// read with Check.
type Option struct {
	// Name is the option's name in snake_case ("blobs_per_tx"), as a study file writes it
	// (base.NAME, opt.NAME) and as runs store it.
	Name string
	Kind Kind
	// Default is the value used when none is given, in canonical form; "" when the absence
	// of a value means something of its own (documented in Usage).
	Default string
	// Values, for a String option, is the closed set of allowed values; nil allows any.
	Values []string
	// Min bounds an Int option's values from below (0: not negative; Unbounded: none) and a
	// Duration option's, in nanoseconds (0: not negative; 1: positive).
	Min int
	// Zero, when set, says what a value of 0 stands for ("one per terminal"): 0 is then a
	// shorthand, which Check accepts whatever Min says, and which a front end that needs
	// the value itself (a study's factor level) refuses, quoting it.
	Zero string
	// Usage is the one-line help of the flag.
	Usage string
	// Flag is the command-line flag when it is not Name with dashes (FlagName), NoFlag when
	// the command line spells the option otherwise (the scale under the workload's unit).
	Flag string
	// Short is the flag's one-letter shorthand ("f" for pgbench's -f), "" for none.
	Short string
	// ManagedOnly marks an option that needs a server dblat manages (Firebird's sweep runs
	// gfix on the server's own files).
	ManagedOnly bool
}

// NoFlag is the Flag of an option that has no flag of its own.
const NoFlag = "-"

// FlagName returns the option's command-line flag name: Flag, or Name with dashes
// ("blobs-per-tx"); "" for an option with NoFlag.
func (o Option) FlagName() string {
	switch o.Flag {
	case "":
		return strings.ReplaceAll(o.Name, "_", "-")
	case NoFlag:
		return ""
	}
	return o.Flag
}

// Canonical reads v as a value of o, checks it against o's range (Check) and returns it in
// canonical form: booleans as "true" or "false", integers plainly, durations by
// FormatDuration, rates by FormatRate. The error reads after the option's name: "must be a
// whole number, got \"x\"".
func (o Option) Canonical(v string) (string, error) {
	switch o.Kind {
	case Bool:
		b, err := ParseBool(v)
		return strconv.FormatBool(b), err
	case Int:
		n, err := ParseInt(v)
		if err == nil {
			err = o.CheckInt(n)
		}
		return strconv.Itoa(n), err
	case Duration:
		d, err := ParseDuration(v)
		if err == nil {
			err = o.CheckDuration(d)
		}
		return FormatDuration(d), err
	case Rate:
		r, err := ParseRate(v)
		if err == nil {
			err = o.CheckRate(r)
		}
		return FormatRate(r), err
	}
	v = strings.TrimSpace(v)
	if o.Values != nil {
		if err := OneOf(v, o.Values); err != nil {
			return "", err
		}
	}
	return v, nil
}

// CheckInt checks n against an Int option's range.
func (o Option) CheckInt(n int) error {
	switch {
	case n >= o.Min || o.Min == Unbounded || (n == 0 && o.Zero != ""):
		return nil
	case o.Min == 0:
		return fmt.Errorf("must not be negative, got %d", n)
	}
	return fmt.Errorf("must be at least %d, got %d", o.Min, n)
}

// CheckDuration checks d against a Duration option's range.
func (o Option) CheckDuration(d time.Duration) error {
	switch {
	case d >= time.Duration(o.Min) || (d == 0 && o.Zero != ""):
		return nil
	case d < 0:
		return fmt.Errorf("must not be negative, got %s", FormatDuration(d))
	}
	return fmt.Errorf("must be positive, got %s", FormatDuration(d))
}

// CheckRate checks r against a Rate option's range: not negative.
func (o Option) CheckRate(r float64) error {
	if r >= 0 && !math.IsInf(r, 0) {
		return nil
	}
	zero := ""
	if o.Zero != "" {
		zero = " (0: " + o.Zero + ")"
	}
	return fmt.Errorf("must be a positive number of transactions per second%s, got %v", zero, r)
}

// Set is a list of options, in the order their help lists them.
type Set []Option

// Lookup returns the option called name.
func (s Set) Lookup(name string) (Option, bool) {
	for _, o := range s {
		if o.Name == name {
			return o, true
		}
	}
	return Option{}, false
}

// Names lists the options' names in order.
func (s Set) Names() []string {
	out := make([]string, len(s))
	for i, o := range s {
		out[i] = o.Name
	}
	return out
}

// UnknownError is the error of an option name that no declaration knows.
type UnknownError struct {
	Name  string
	Known []string
}

func (e *UnknownError) Error() string {
	msg := fmt.Sprintf("unknown option %q", e.Name)
	if s := suggest.Closest(e.Name, e.Known, 3); s != "" {
		msg += fmt.Sprintf(" (did you mean %s?)", s)
	}
	if len(e.Known) == 0 {
		return msg + " (this run takes no options)"
	}
	return msg + " (known: " + strings.Join(e.Known, ", ") + ")"
}

// Check checks each of vals against the option of its name and returns them in canonical
// form. An unknown name is an *UnknownError; a bad value an error naming the option.
func (s Set) Check(vals map[string]string) (Values, error) {
	out := make(Values, len(vals))
	for _, name := range slices.Sorted(maps.Keys(vals)) {
		o, ok := s.Lookup(name)
		if !ok {
			return nil, &UnknownError{Name: name, Known: s.Names()}
		}
		c, err := o.Canonical(vals[name])
		if err != nil {
			return nil, fmt.Errorf("option %s %w", name, err)
		}
		out[name] = c
	}
	return out, nil
}

// Values holds options' values in canonical form, by name. A missing name has its
// option's default. The zero Values is empty and ready to use for reading.
type Values map[string]string

// String returns the value of name, or def when it is not set.
func (v Values) String(name, def string) string {
	if s, ok := v[name]; ok {
		return s
	}
	return def
}

// Bool returns the value of name as a boolean (false when not set).
func (v Values) Bool(name string) bool { return v[name] == "true" }

// Int returns the value of name as an integer, or def when it is not set or not a number.
func (v Values) Int(name string, def int) int {
	n, err := strconv.Atoi(v[name])
	if err != nil {
		return def
	}
	return n
}

// Only returns the values whose names are in s.
func (v Values) Only(s Set) Values {
	out := Values{}
	for k, x := range v {
		if _, ok := s.Lookup(k); ok {
			out[k] = x
		}
	}
	return out
}

// Error is a problem with the value of one option, found by a workload or an engine, which
// the front ends place at the option's flag or study key. Its message reads after the
// option's name ("batched cannot run on firebird: ...").
type Error struct {
	Name string
	Err  error
}

func (e *Error) Error() string { return "option " + e.Name + " " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error for option name with a formatted message that reads after the
// option's name.
func Errorf(name, format string, args ...any) error {
	return &Error{Name: name, Err: fmt.Errorf(format, args...)}
}
