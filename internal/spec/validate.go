package spec

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Paths of what a Run holds besides its Fields: the target, the workload, the link.
var (
	TargetPath   = field.NewPath("target")
	WorkloadPath = field.NewPath("workload")
	LinkPath     = field.NewPath("link")
)

// FieldPath is the path of the Field called key ("max_tries").
func FieldPath(key string) *field.Path { return field.NewPath(key) }

// OptionPath is the path of option name: "options[mode]".
func OptionPath(name string) *field.Path { return field.NewPath("options").Key(name) }

// OptionName returns the option a path names, and false for a path that is not an option's.
func OptionName(p string) (string, bool) {
	name, ok := strings.CutPrefix(p, "options[")
	if !ok || !strings.HasSuffix(name, "]") {
		return "", false
	}
	return strings.TrimSuffix(name, "]"), true
}

// Invalid is a problem with the field at path; detail reads after the field's name ("must
// be at least 1, got 0") and is what front ends print after their own label for it.
func Invalid(path *field.Path, detail string, args ...any) *field.Error {
	return &field.Error{Type: field.ErrorTypeInvalid, Field: path.String(), Detail: fmt.Sprintf(detail, args...)}
}

// Errors turns a non-empty list into an error (nil for an empty one); errors.As finds an
// *ErrorList in it, so that a front end can place each problem.
func Errors(l field.ErrorList) error {
	if len(l) == 0 {
		return nil
	}
	return &ErrorList{List: l}
}

// Expand writes the other fields a detail names, as {key} or {options[name]}, the way a
// front end names them (a flag, a study key).
func Expand(detail string, name func(path string) string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(detail, '{')
		j := strings.IndexByte(detail[i+1:], '}')
		if i < 0 || j < 0 {
			b.WriteString(detail)
			return b.String()
		}
		b.WriteString(detail[:i])
		b.WriteString(name(detail[i+1 : i+1+j]))
		detail = detail[i+2+j:]
	}
}

// ErrorList is a Run's problems as one error. Its text, for callers that do not place the
// problems, is each "path detail" on a line.
type ErrorList struct{ List field.ErrorList }

func (e *ErrorList) Error() string {
	lines := make([]string, len(e.List))
	for i, fe := range e.List {
		lines[i] = fe.Field + " " + Expand(fe.Detail, func(p string) string { return p })
	}
	return strings.Join(lines, "\n")
}

// AsList returns the field errors err carries, and false when it carries none.
func AsList(err error) (field.ErrorList, bool) {
	var el *ErrorList
	if errors.As(err, &el) {
		return el.List, true
	}
	return nil, false
}

// Validate checks everything about r that needs no server, workload or engine: ranges, and
// parameters that exclude or need each other. Call it on a resolved Run (Resolve). Every
// problem is returned, each tagged with the path of its field.
func (r *Run) Validate() field.ErrorList {
	errs := r.Drive.Validate()
	bad := func(key, detail string, args ...any) { errs = append(errs, Invalid(FieldPath(key), detail, args...)) }
	if r.Scale < 0 {
		bad("warehouses", "must not be negative, got %d", r.Scale)
	}
	if r.RTT < 0 {
		bad("rtt", "must not be negative, got %s", FormatDuration(r.RTT))
	}
	if r.allWeightsZero() {
		key := "scripts"
		if len(r.Scripts) == 0 {
			key = "builtins"
		}
		bad(key, "all have weight 0: give at least one script a positive weight")
	}
	if r.Rate > 0 && r.Think {
		bad("rate", "and {think} do not combine: think times pace a closed loop and a rate an open one; give either")
	}
	switch t := r.Options[OptionTransport]; t {
	case "", TransportTCP:
	case TransportUnix:
		if r.Link != nil {
			errs = append(errs, Invalid(OptionPath(OptionTransport), "unix cannot go through the latency link, which is TCP: drop the RTT, or use transport tcp"))
		}
	default:
		errs = append(errs, Invalid(OptionPath(OptionTransport), "must be %s or %s, got %q", TransportTCP, TransportUnix, t))
	}
	if r.Link != nil && r.RTT >= 0 {
		if err := r.Link.Validate(); err != nil {
			errs = append(errs, Invalid(LinkPath, "%v", err))
		} else if r.RTT != r.Link.AddedRTT() {
			bad("rtt", "is %s, but the link adds %s", FormatDuration(r.RTT), FormatDuration(r.Link.AddedRTT()))
		}
	} else if r.Link == nil && r.RTT != 0 {
		bad("rtt", "of %s needs the latency link, which this run does not go through", FormatDuration(r.RTT))
	}
	return errs
}

// Validate checks a resolved Drive (Run.Resolve): ranges and names. The runner calls it on
// its own configuration; Run.Validate includes it.
func (d *Drive) Validate() field.ErrorList {
	var errs field.ErrorList
	bad := func(key, detail string, args ...any) { errs = append(errs, Invalid(FieldPath(key), detail, args...)) }
	if d.Terminals < 1 {
		bad("terminals", "must be at least 1, got %d", d.Terminals)
	}
	switch {
	case d.Connections < 0:
		bad("connections", "must not be negative, got %d", d.Connections)
	case d.Connections > d.Terminals && d.Terminals >= 1:
		bad("connections", "%d is more than the %d terminals: a pool larger than the terminals is never used", d.Connections, d.Terminals)
	}
	if d.FirstTerminal < 0 {
		bad("terminals", "first terminal must not be negative, got %d", d.FirstTerminal)
	}
	if d.Duration <= 0 {
		bad("duration", "must be positive, got %s", FormatDuration(d.Duration))
	}
	switch {
	case d.Warmup < 0:
		bad("warmup", "must not be negative, got %s", FormatDuration(d.Warmup))
	case d.WarmupAuto && d.Warmup == 0:
		bad("warmup", "auto needs a positive ceiling (auto 30s), got 0")
	}
	if d.Rate < 0 || math.IsNaN(d.Rate) || math.IsInf(d.Rate, 0) {
		bad("rate", "must be a positive number of transactions per second (0: a closed loop), got %v", d.Rate)
	}
	// An arrival process with no rate is moot rather than wrong: a study's closed-loop cells
	// (rate 0) share the arrival of its open-loop ones.
	if d.Arrival != "" && !isArrival(d.Arrival) {
		errs = append(errs, Invalid(FieldPath("arrival"), "%v", errNotArrival(d.Arrival)))
	}
	if d.LatencyLimit < 0 {
		bad("latency_limit", "must not be negative, got %s", FormatDuration(d.LatencyLimit))
	}
	if d.MaxTries < 1 {
		bad("max_tries", "must be at least 1, got %d", d.MaxTries)
	}
	return errs
}
