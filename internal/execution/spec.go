package execution

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/latency"
	"github.com/dblat/dblat/internal/option"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/suggest"
	"github.com/dblat/dblat/internal/workload"
)

// Transports a run may connect by (Spec.Transport).
const (
	TransportTCP  = "tcp"
	TransportUnix = "unix"
)

// Spec is everything one run needs: what to run, where, how hard, for how long and through
// which link. The command line builds one from its flags, a study from each cell (SpecOf);
// Core.Run takes it as it is.
type Spec struct {
	// Target is a managed server's name or a DSN.
	Target string
	// Workload names a registered workload ("tpcc", "select-only").
	Workload string
	// Scale is the part of the loaded data the terminals use (TPC-C's warehouses); 0 means
	// all of it.
	Scale int
	// Terminals is the number of emulated users; Connections the pool size (0: one per
	// terminal).
	Terminals, Connections int
	// FirstTerminal numbers the run's first terminal: a part of a run driven by several
	// agents runs terminals FirstTerminal … FirstTerminal + Terminals − 1 of the whole run
	// (runner.Config.FirstTerminal). 0 for a run of one process.
	FirstTerminal int
	// Warmup runs before the measurement window, Duration.
	Duration, Warmup time.Duration
	// Seed seeds the terminals' inputs.
	Seed int64
	// Mix weighs the workload's transaction types; nil means its default mix.
	Mix workload.Mix
	// Think turns on keying and think times, where the workload has them.
	Think bool
	// Rate, when positive, drives the run open-loop: transactions arrive at Rate per second
	// in total, on a schedule fixed in advance (Arrival, seeded by Seed) that does not
	// depend on how fast the server answers; Terminals bounds how many run at once. 0 drives
	// it closed-loop: each terminal starts its next transaction when the last one ends.
	Rate float64
	// Arrival spaces an open-loop run's arrivals: results.ArrivalConstant ("" too) or
	// results.ArrivalPoisson. It needs a Rate.
	Arrival string
	// LatencyLimit, when positive, bounds the backlog as pgbench's --latency-limit does:
	// arrivals picked up later than it are skipped and counted, slower transactions are
	// counted late, and no transaction is retried past it.
	LatencyLimit time.Duration
	// MaxTries is how many tries a transaction that fails with a retryable error gets, its
	// first included (pgbench's --max-tries); it is run again with the same input. 0 means
	// 1: no retries. It is a field of the run rather than an option of a workload or an
	// engine because the runner retries, for every workload on every engine.
	MaxTries int
	// Options are workload options, engine run options and database options by name
	// (option.Option.Name), as given; they are checked against the declarations.
	Options map[string]string
	// Transport is TransportTCP ("" too) or TransportUnix (a managed server's socket).
	Transport string
	// Link, when set, puts dblat's latency link between the terminals and the server.
	Link *latency.Config
	// Study and Cell tie the run to a study cell; "" for a run of its own.
	Study, Cell string
	// Record holds what is stored with the run's options besides the options' values: a
	// study cell's requested server settings ("set.NAME") and its mix as written ("mix").
	Record map[string]string
}

// plan is a Spec checked against its workload and engine.
type plan struct {
	def *workload.Definition
	eng engine.Engine
	// The options by who declared them, in canonical form.
	work, run, db option.Values
	// stored are the options stored with the run: every declared workload and run option
	// at its value or default, the database options given, the transport and Record.
	stored map[string]string
}

// knownOptions lists what a run on e may set, by the declaring party.
func knownOptions(def *workload.Definition, e engine.Engine) (work, run, db option.Set) {
	work = def.Options
	if h, ok := e.(engine.RunHooks); ok {
		run = h.RunOptions()
	}
	if d, ok := e.(engine.Databases); ok {
		db = d.DatabaseOptions()
	}
	return work, run, db
}

// check checks s against its workload and engine e, as far as that can be known without a
// server: managed says whether the target is a managed server.
func check(s *Spec, e engine.Engine, managed bool) (*plan, error) {
	def, err := workload.Lookup(s.Workload)
	if err != nil {
		return nil, asInput(err)
	}
	switch {
	case s.Terminals < 1:
		return nil, Inputf("terminals must be at least 1, got %d", s.Terminals)
	case s.FirstTerminal < 0:
		return nil, Inputf("first terminal must not be negative, got %d", s.FirstTerminal)
	case s.Connections < 0:
		return nil, Inputf("connections must not be negative, got %d", s.Connections)
	case s.Duration <= 0:
		return nil, Inputf("duration must be positive, got %v", s.Duration)
	case s.Warmup < 0:
		return nil, Inputf("warm-up must not be negative, got %v", s.Warmup)
	case s.Scale < 0:
		return nil, Inputf("%s must not be negative, got %d", scaleName(def), s.Scale)
	case s.Think && !def.Think:
		return nil, Inputf("workload %s has no think times", def.Name)
	case s.Rate < 0 || math.IsNaN(s.Rate) || math.IsInf(s.Rate, 0):
		return nil, Inputf("rate must be a positive number of transactions per second (0: closed loop), got %v", s.Rate)
	case s.Arrival != "" && !slices.Contains(results.Arrivals, s.Arrival):
		return nil, Inputf("arrival %q: use %s", s.Arrival, strings.Join(results.Arrivals, " or "))
	case s.Arrival != "" && s.Rate == 0:
		return nil, Inputf("arrival %s spaces the arrivals of an open-loop run: give a rate too", s.Arrival)
	case s.Rate > 0 && s.Think:
		return nil, Inputf("think times pace a closed loop and a rate paces an open one: give either, not both")
	case s.LatencyLimit < 0:
		return nil, Inputf("latency limit must not be negative, got %v", s.LatencyLimit)
	case s.MaxTries < 0:
		return nil, Inputf("max tries must be at least 1, got %d", s.MaxTries)
	}
	if s.Mix != nil {
		if len(def.TxTypes) < 2 {
			return nil, Inputf("workload %s has one transaction type: it takes no mix", def.Name)
		}
		for k := range s.Mix {
			if !slices.Contains(def.TxTypes, k) {
				return nil, Inputf("mix: workload %s has no transaction %q (known: %s)", def.Name, k, strings.Join(def.TxTypes, ", "))
			}
		}
	}
	p := &plan{def: def, eng: e, work: option.Values{}, run: option.Values{}, db: option.Values{}, stored: map[string]string{}}
	work, run, db := knownOptions(def, e)
	for _, name := range sortedKeys(s.Options) {
		value := s.Options[name]
		var o option.Option
		var into option.Values
		if x, ok := work.Lookup(name); ok {
			o, into = x, p.work
		} else if x, ok := run.Lookup(name); ok {
			o, into = x, p.run
		} else if x, ok := db.Lookup(name); ok {
			o, into = x, p.db
			if !managed {
				return nil, Inputf("option %s fixes how a database is created: it needs a managed server", name)
			}
		} else {
			var known []string
			for _, set := range []option.Set{work, run, db} {
				known = append(known, set.Names()...)
			}
			msg := fmt.Sprintf("unknown option %q for workload %s on %s", name, def.Name, e.Name())
			if c := suggest.Closest(name, known, 3); c != "" {
				msg += fmt.Sprintf(" (did you mean %s?)", c)
			}
			if len(known) == 0 {
				return nil, Inputf("%s: it takes no options", msg)
			}
			return nil, Inputf("%s; its options: %s", msg, strings.Join(known, ", "))
		}
		c, err := o.Canonical(value)
		if err != nil {
			return nil, Inputf("option %s %v", name, err)
		}
		if o.ManagedOnly && !managed && c != o.Default {
			return nil, Inputf("option %s needs a managed server (dblat runs its tools on the server's files)", name)
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
	switch s.Transport {
	case "", TransportTCP:
		p.stored["transport"] = TransportTCP
	case TransportUnix:
		if s.Link != nil {
			return nil, Inputf("transport unix cannot go through the latency link, which is TCP: drop the RTT, or use transport tcp")
		}
		if _, ok := e.(engine.Sockets); !ok {
			return nil, Inputf("transport unix: a %s server listens on TCP only", e.Name())
		}
		if !managed {
			return nil, Inputf("transport unix needs a managed server (for an external server, put the socket in the DSN)")
		}
		p.stored["transport"] = TransportUnix
	default:
		return nil, Inputf("transport %q: use tcp or unix", s.Transport)
	}
	maps.Copy(p.stored, s.Record)
	// The workload checks the rest against the engine's capabilities (TPC-C's procedure
	// mode needs a procedure language, pgbench's protocols need QueryProtocols) without
	// touching a database.
	if _, err := def.New(workload.Target{Engine: e}, p.workloadConfig(s)); err != nil {
		return nil, asInput(err)
	}
	return p, nil
}

// arrival is the arrival process a Spec's run uses: "" for a closed-loop run.
func (s *Spec) arrival() string {
	switch {
	case s.Rate <= 0:
		return ""
	case s.Arrival == "":
		return results.ArrivalConstant
	}
	return s.Arrival
}

// maxTries is the tries a Spec's transactions get: at least 1.
func (s *Spec) maxTries() int { return max(s.MaxTries, 1) }

func (p *plan) workloadConfig(s *Spec) workload.Config {
	return workload.Config{Scale: s.Scale, Seed: s.Seed, Mix: s.Mix, Think: s.Think, Options: p.work}
}

func scaleName(def *workload.Definition) string {
	if def.Scale.Name == "" {
		return "scale"
	}
	return def.Scale.Name
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
