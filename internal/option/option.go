// Package option describes the named options that workloads and engines accept (TPC-C's
// round-trip mode, pgbench's query protocol, MariaDB's parameter interpolation, Firebird's
// page size) and checks the values given for them. One declaration serves both places a
// user writes an option: a command-line flag (--blobs-per-tx) and a study file's
// opt.NAME (opt.blobs_per_tx).
//
// It knows nothing of any workload or engine: they declare their options with it (package
// workload, package engine), the execution core checks a run's values against the
// declarations, and the CLI turns declarations into flags. It imports nothing of dblat but
// package suggest.
package option

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dblat/dblat/internal/suggest"
)

// Kind is the type of an option's values.
type Kind int

// The kinds of option values.
const (
	String   Kind = iota // any text, or one of Option.Values
	Bool                 // true or false
	Int                  // a whole number ≥ Option.Min
	Duration             // a Go duration ("1.5ms", "2s") or 0
)

// Option is one named option.
type Option struct {
	// Name is the option's name in snake_case ("blobs_per_tx"), as a study file writes it
	// after "opt." and as runs store it. Its flag is Flag().
	Name string
	Kind Kind
	// Default is the value used when none is given, in canonical form; "" when the absence
	// of a value means something of its own (documented in Usage).
	Default string
	// Values, for a String option, is the closed set of allowed values; nil allows any.
	Values []string
	// Min is the smallest allowed value of an Int option.
	Min int
	// Usage is the one-line help of the flag.
	Usage string
	// ManagedOnly marks an option that needs a server dblat manages (Firebird's sweep runs
	// gfix on the server's own files).
	ManagedOnly bool
}

// Flag returns the option's command-line flag name: Name with dashes ("blobs-per-tx").
func (o Option) Flag() string { return strings.ReplaceAll(o.Name, "_", "-") }

// Canonical checks v as a value of o and returns it in canonical form: booleans as "true"
// or "false", integers plainly, durations as Go prints them ("0" for zero). The error
// reads after the option's name: "must be a whole number, got \"x\"".
func (o Option) Canonical(v string) (string, error) {
	v = strings.TrimSpace(v)
	switch o.Kind {
	case Bool:
		switch strings.ToLower(v) {
		case "true", "yes", "on", "1":
			return "true", nil
		case "false", "no", "off", "0":
			return "false", nil
		}
		return "", fmt.Errorf("must be true or false, got %q", v)
	case Int:
		n, err := strconv.Atoi(v)
		if err != nil {
			return "", fmt.Errorf("must be a whole number, got %q", v)
		}
		if n < o.Min {
			return "", fmt.Errorf("must be at least %d, got %d", o.Min, n)
		}
		return strconv.Itoa(n), nil
	case Duration:
		if v == "0" {
			return "0", nil
		}
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return "", fmt.Errorf("must be a duration such as 500ms or 2s, got %q", v)
		}
		if d == 0 {
			return "0", nil
		}
		return d.String(), nil
	}
	if o.Values != nil && !slices.Contains(o.Values, v) {
		msg := fmt.Sprintf("%q is not one of %s", v, strings.Join(o.Values, ", "))
		if s := suggest.Closest(v, o.Values, 2); s != "" {
			msg += fmt.Sprintf(" (did you mean %s?)", s)
		}
		return "", fmt.Errorf("%s", msg)
	}
	return v, nil
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
	for _, name := range sortedKeys(vals) {
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

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
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
