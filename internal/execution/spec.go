package execution

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/option"
	"github.com/dblat/dblat/internal/spec"
	"github.com/dblat/dblat/internal/suggest"
	"github.com/dblat/dblat/internal/workload"
)

// plan is a run checked against its workload and engine.
type plan struct {
	def *workload.Definition
	eng engine.Engine
	// The options by who declared them, in canonical form.
	work, run, db option.Values
	// stored are the options stored with the run: every declared workload and run option
	// at its value or default, the database options and reserved options given, and the
	// transport.
	stored map[string]string
	// files reads the files the run names (rs.Files, else rs.Dir on disk).
	files workload.Files
	// sources are the texts the workload runs (workload.Sourcer), stored with the run.
	sources []workload.Source
}

// knownOptions lists what a run on e may set, by the declaring party.
func knownOptions(def *workload.Definition, e engine.Engine) (work, run, db option.Set) {
	work = def.Options
	caps := engine.Caps(e)
	if caps.RunHooks != nil {
		run = caps.RunHooks.RunOptions()
	}
	if caps.Databases != nil {
		db = caps.Databases.DatabaseOptions()
	}
	return work, run, db
}

// reserved are the options every run has (package spec), checked by Validate and here rather
// than declared by a workload or an engine.
var reserved = []string{spec.OptionMix, spec.OptionTransport}

// check checks rs against its workload and engine e, as far as that can be known without a
// server: managed says whether the target is a managed server. It validates rs (spec.Run.
// Validate), resolves its mix (rs.Mix) and returns every problem as an *InputError holding
// a *spec.ErrorList, each tagged with the path of its field.
func check(rs *spec.Run, e engine.Engine, managed bool) (*plan, error) {
	errs := rs.Validate()
	bad := func(path *field.Path, detail string, args ...any) {
		errs = append(errs, spec.Invalid(path, detail, args...))
	}
	def, err := workload.Lookup(rs.Workload)
	if err != nil {
		bad(spec.WorkloadPath, "%v", err)
		return nil, asInput(spec.Errors(errs))
	}
	if rs.Think && !def.Think {
		bad(spec.FieldPath("think"), "is not a pacing of %s: it has no think times", def.Name)
	}
	for _, f := range spec.Fields {
		if f.Scoped && f.Value(&rs.Params) != "" && !slices.Contains(def.Fields, f.Name) {
			bad(spec.FieldPath(f.Name), "is not a parameter of workload %s: it is for %s", def.Name, strings.Join(takers(f.Name), ", "))
		}
	}
	rs.Mix = nil
	if text := rs.Options[spec.OptionMix]; text != "" {
		switch mix, err := workload.ParseMix(text, def.TxTypes); {
		case def.TxTypes == nil:
			bad(spec.OptionPath(spec.OptionMix), "does not apply: workload %s weighs its transaction types itself (FILE@WEIGHT)", def.Name)
		case len(def.TxTypes) < 2:
			bad(spec.OptionPath(spec.OptionMix), "does not apply: workload %s has one transaction type", def.Name)
		case err != nil:
			bad(spec.OptionPath(spec.OptionMix), "%v", err)
		default:
			rs.Mix = mix
		}
	}
	p := &plan{def: def, eng: e, work: option.Values{}, run: option.Values{}, db: option.Values{}, stored: map[string]string{},
		files: runFiles(rs)}
	work, run, db := knownOptions(def, e)
	for _, name := range slices.Sorted(maps.Keys(rs.Options)) {
		if slices.Contains(reserved, name) {
			p.stored[name] = rs.Options[name]
			continue
		}
		var o option.Option
		var into option.Values
		if x, ok := work.Lookup(name); ok {
			o, into = x, p.work
		} else if x, ok := run.Lookup(name); ok {
			o, into = x, p.run
		} else if x, ok := db.Lookup(name); ok {
			o, into = x, p.db
			if !managed {
				bad(spec.OptionPath(name), "fixes how a database is created: it needs a managed server")
				continue
			}
		} else {
			var known []string
			for _, set := range []option.Set{work, run, db} {
				known = append(known, set.Names()...)
			}
			msg := fmt.Sprintf("is not an option of workload %s on %s", def.Name, e.Name())
			if c := suggest.Closest(name, known, 3); c != "" {
				msg += fmt.Sprintf(" (did you mean %s?)", c)
			}
			if len(known) == 0 {
				bad(spec.OptionPath(name), "%s: it takes no options", msg)
			} else {
				bad(spec.OptionPath(name), "%s; its options: %s", msg, strings.Join(known, ", "))
			}
			continue
		}
		c, err := o.Canonical(rs.Options[name])
		if err != nil {
			bad(spec.OptionPath(name), "%v", err)
			continue
		}
		if o.ManagedOnly && !managed && c != o.Default {
			bad(spec.OptionPath(name), "needs a managed server (dblat runs its tools on the server's files)")
			continue
		}
		into[name] = c
	}
	for _, set := range []struct {
		s option.Set
		v option.Values
	}{{work, p.work}, {run, p.run}} {
		for _, o := range set.s {
			if v, ok := set.v[o.Name]; ok {
				p.stored[o.Name] = v
			} else if o.Default != "" {
				p.stored[o.Name] = o.Default
			}
		}
	}
	maps.Copy(p.stored, p.db)
	p.stored[spec.OptionTransport] = rs.Transport()
	if rs.Transport() == spec.TransportUnix {
		switch {
		case engine.Caps(e).Sockets == nil:
			bad(spec.OptionPath(spec.OptionTransport), "unix: a %s server listens on TCP only", e.Name())
		case !managed:
			bad(spec.OptionPath(spec.OptionTransport), "unix needs a managed server (for an external server, put the socket in the DSN)")
		case len(p.db) > 0:
			bad(spec.OptionPath(spec.OptionTransport), "unix reaches only the server's default database; drop the database options %s", strings.Join(slices.Sorted(maps.Keys(p.db)), ", "))
		}
	}
	if len(errs) > 0 {
		return nil, asInput(spec.Errors(errs))
	}
	// The workload checks the rest against the engine's capabilities (TPC-C's procedure
	// mode needs a procedure language, pgbench's protocols need QueryProtocols, a
	// script's pipeline needs ScriptConns) without touching a database; it reads the
	// files the run names.
	w, err := def.New(workload.Target{Engine: e}, p.workloadConfig(rs))
	if err != nil {
		return nil, workloadInput(err)
	}
	if s, ok := w.(workload.Sourcer); ok {
		p.sources = s.Sources()
	}
	return p, nil
}

// positioned is an error that names its own place in a file the run reads: a script's
// "FILE:LINE:COL: message" (script.ParseError). Front ends print it as it is rather than
// at a flag or a study key.
type positioned interface {
	error
	Position() (file string, line, col int, msg string)
}

// workloadInput is a workload's or an engine's error about the run as the user's input:
// as it is when it names its own place in a file, else tagged with the field it concerns.
func workloadInput(err error) error {
	var pe positioned
	if errors.As(err, &pe) {
		return &InputError{Err: pe}
	}
	return asInput(spec.Errors(field.ErrorList{workloadError(err)}))
}

// workloadError tags a workload's or an engine's error with the option or the run's
// parameter it names (option.Error: a spec.Field's key or an option's name), else with the
// workload.
func workloadError(err error) *field.Error {
	var oe *option.Error
	if errors.As(err, &oe) {
		if _, ok := spec.Lookup(oe.Name); ok {
			return spec.Invalid(spec.FieldPath(oe.Name), "%v", oe.Err)
		}
		return spec.Invalid(spec.OptionPath(oe.Name), "%v", oe.Err)
	}
	return spec.Invalid(spec.WorkloadPath, "%v", err)
}

func (p *plan) workloadConfig(rs *spec.Run) workload.Config {
	return workload.Config{Scale: rs.Scale, Seed: rs.Seed, Mix: rs.Mix, Think: rs.Think, Options: p.work,
		ScriptParams: rs.ScriptParams, Files: p.files}
}

// takers lists the workloads that take the scoped parameter key.
func takers(key string) []string {
	var out []string
	for _, name := range workload.Names() {
		if d, err := workload.Lookup(name); err == nil && slices.Contains(d.Fields, key) {
			out = append(out, name)
		}
	}
	return out
}

// runFiles reads the files rs names: from rs.Files once read, else from disk relative to
// rs.Dir, keeping each file read in rs.Files, so that the run, handed to agents on other
// machines, runs the same text there.
func runFiles(rs *spec.Run) workload.Files {
	f := workload.Files{Dir: rs.Dir}
	f.Read = func(path string) ([]byte, error) {
		if text, ok := rs.Files[path]; ok {
			return []byte(text), nil
		}
		b, err := os.ReadFile(f.Where(path))
		if err != nil {
			return nil, err
		}
		if rs.Files == nil {
			rs.Files = map[string]string{}
		}
		rs.Files[path] = string(b)
		return b, nil
	}
	return f
}

func scaleName(def *workload.Definition) string {
	if def.Scale.Name == "" {
		return "scale"
	}
	return def.Scale.Name
}
