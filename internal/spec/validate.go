package spec

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dblat/dblat/internal/option"

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

// Validate checks everything about r that needs no server, workload or engine: each field's
// value against its declared range (Field's Min, Values), and parameters that exclude or
// need each other. Call it on a resolved Run (Resolve). Every problem is returned, each
// tagged with the path of its field.
func (r *Run) Validate() field.ErrorList {
	errs := r.Drive.Validate()
	bad := func(key, detail string, args ...any) { errs = append(errs, Invalid(FieldPath(key), detail, args...)) }
	inRange(&errs, "warehouses", lookup("warehouses").CheckInt(r.Scale))
	if r.Cell != "" && r.Scale == 0 {
		// A study's run loads the data it runs on: "all loaded" names no size.
		bad("warehouses", "must be at least 1, got 0")
	}
	before := len(errs)
	for _, d := range []struct {
		key string
		v   time.Duration
	}{{"rtt", r.RTT}, {"up", r.Up}, {"down", r.Down}, {"jitter", r.Jitter}} {
		inRange(&errs, d.key, lookup(d.key).CheckDuration(d.v))
	}
	if r.Distribution != "" {
		inRange(&errs, "distribution", option.OneOf(r.Distribution, Distributions))
	}
	if r.Jitter == 0 && lookup("distribution").Value(&r.Params) != DefaultDistribution {
		bad("distribution", "shapes the jitter, and there is none: give {jitter} too, or drop it")
	}
	if r.Bandwidth < 0 {
		bad("bandwidth", "must not be negative, got %d bytes per second", r.Bandwidth)
	}
	if !(r.Loss >= 0 && r.Loss < 1) {
		bad("loss", "must be at least 0 and below 100%%, got %v", r.Loss)
	}
	if (r.Up != 0 || r.Down != 0) && r.RTT != r.Up+r.Down {
		bad("rtt", "is %s, but {up} and {down} add up to %s: give rtt, or up and down", FormatDuration(r.RTT), FormatDuration(r.Up+r.Down))
	}
	linkOK := len(errs) == before
	if _, at := r.Operation(); at >= r.Duration && r.During != "" && r.Duration > 0 {
		bad("during", "starts %s into the window, and the window lasts %s: give an offset within it", FormatDuration(at), FormatDuration(r.Duration))
	}
	inRange(&errs, "connect_timeout", lookup("connect_timeout").CheckDuration(r.ConnectTimeout))
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
	if r.Link != nil && linkOK {
		if err := r.Link.Validate(); err != nil {
			errs = append(errs, Invalid(LinkPath, "%v", err))
		} else if r.RTT != r.Link.AddedRTT() {
			bad("rtt", "is %s, but the link adds %s", FormatDuration(r.RTT), FormatDuration(r.Link.AddedRTT()))
		}
	} else if r.Link == nil && r.Shaped() {
		for i := range Fields {
			if f := &Fields[i]; f.Link && f.Name != "profile" && f.Value(&r.Params) != f.Default {
				if r.Transport() == TransportUnix {
					bad(f.Name, "of %s needs the latency link, which is TCP: a unix transport cannot go through it (use transport tcp, or leave the link's fields at their defaults)", f.Value(&r.Params))
				} else {
					bad(f.Name, "of %s needs the latency link, which this run does not go through", f.Value(&r.Params))
				}
				break
			}
		}
	}
	return errs
}

// Validate checks a resolved Drive (Run.Resolve): each field against its declared range,
// and the fields that bound each other. Run.Validate includes it; the runner takes a Drive
// that passed it.
func (d *Drive) Validate() field.ErrorList {
	var errs field.ErrorList
	bad := func(key, detail string, args ...any) { errs = append(errs, Invalid(FieldPath(key), detail, args...)) }
	inRange(&errs, "terminals", lookup("terminals").CheckInt(d.Terminals))
	if err := lookup("connections").CheckInt(d.Connections); err != nil {
		inRange(&errs, "connections", err)
	} else if d.Connections > d.Terminals && d.Terminals >= 1 {
		bad("connections", "%d is more than the %d terminals: a pool larger than the terminals is never used", d.Connections, d.Terminals)
	}
	if d.FirstTerminal < 0 {
		bad("terminals", "first terminal must not be negative, got %d", d.FirstTerminal)
	}
	inRange(&errs, "duration", lookup("duration").CheckDuration(d.Duration))
	inRange(&errs, "min_transactions", lookup("min_transactions").CheckInt(d.MinTransactions))
	if err := lookup("warmup").CheckDuration(d.Warmup); err != nil {
		inRange(&errs, "warmup", err)
	} else if d.WarmupAuto && d.Warmup == 0 {
		bad("warmup", "auto needs a positive ceiling (auto 30s), got 0")
	}
	inRange(&errs, "rate", lookup("rate").CheckRate(d.Rate))
	// An arrival process with no rate is moot rather than wrong: a study's closed-loop cells
	// (rate 0) share the arrival of its open-loop ones.
	if d.Arrival != "" {
		inRange(&errs, "arrival", option.OneOf(d.Arrival, Arrivals))
	}
	inRange(&errs, "latency_limit", lookup("latency_limit").CheckDuration(d.LatencyLimit))
	inRange(&errs, "max_tries", lookup("max_tries").CheckInt(d.MaxTries))
	return errs
}

// lookup returns the field called name, which Fields declares.
func lookup(name string) *Field {
	f, ok := Lookup(name)
	if !ok {
		panic("spec: no field " + name)
	}
	return f
}

// inRange adds err, a value's problem with its field's range, to errs.
func inRange(errs *field.ErrorList, name string, err error) {
	if err != nil {
		*errs = append(*errs, Invalid(FieldPath(name), "%v", err))
	}
}
