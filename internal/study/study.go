package study

import (
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dblat/dblat/internal/results"
)

// Designs, between-run policies and orders a study file may name.
const (
	DesignFull = "full" // every combination of levels
	DesignOFAT = "ofat" // one factor at a time around the base

	BetweenRestore = "restore" // restore a pristine copy of the data before each run
	BetweenKeep    = "keep"    // keep the data the previous run left

	OrderRandom  = "random"  // each round is a fresh random permutation of its cells
	OrderGrouped = "grouped" // within a round, cells sharing a server configuration run together
)

// Defaults of a study file's optional keys.
const (
	DefaultRepeat = 5 // seed 000: "each test configuration is run at least five times"
	// DefaultMaxFailures: a third failed run in one invocation points at the setup (a server
	// that no longer starts, a full disk) rather than at bad luck.
	DefaultMaxFailures = 3
	DefaultSeed        = 1
)

// Limits that keep a typo from planning years of runs or exhausting memory while expanding:
// 10 000 cells of a 1-minute run are a week per repeat; 100 000 runs of 10 s are 11 days.
const (
	MaxCells = 10000
	MaxRuns  = 100000
)

// Study is a parsed and validated study file. Treat it as read-only.
type Study struct {
	// File is the name the study was parsed under; errors are reported against it.
	File        string
	Name        string
	Description string
	Design      string // DesignFull or DesignOFAT
	Repeat      int    // finished runs wanted per cell, ≥ 1
	Seed        int64  // seeds the order of runs (not the terminals: that is Base.Seed)
	Order       string // OrderRandom or OrderGrouped
	Cooldown    time.Duration
	BetweenRuns string // BetweenRestore or BetweenKeep
	MaxFailures int    // the study stops after this many failed runs, ≥ 1
	// Agents, when positive, drives every run with that many `dblat agent` processes
	// (internal/agent); 0 runs every terminal in the study's own process.
	Agents int
	// Server is the managed server the study starts; zero when Target is set or the study
	// has a target factor.
	Server ServerSpec
	// Target is an existing server (managed server name or DSN, never with a password);
	// "" with a managed server.
	Target string
	// Base holds every parameter at its base value, defaults filled in: Engine from
	// Server.Engine, Target from Target, Settings from Server.Settings. Connections is as
	// written (0 = one per terminal); cells resolve it.
	Base    Params
	Factors []Factor
	// Source is the file as read, to be stored with the results.
	Source []byte

	pos map[string]pos
}

// ServerSpec describes the managed server a study starts.
type ServerSpec struct {
	Engine   string            // "postgres", "firebird", ...; "" when an engine factor names them
	Name     string            // managed server name; defaults to the study's name
	Settings map[string]string // server settings at their base values (name → value as written)
	// Version is the server version to run ("16"; engine.LaunchConfig.Version) and Install
	// an installation directory to run it from (as written); "" for the engine's default.
	Version, Install string
}

// Params are the parameters of one run. In a Cell they are fully resolved.
type Params struct {
	Engine      string // engine of the managed server; "" when the study uses a target
	Target      string // existing server; "" when the study manages its server
	Workload    string
	Warehouses  int // the workload's scale (results.Params.Scale)
	Terminals   int
	Connections int // pool size; in a Cell never 0 (0 in the file means one per terminal)
	Duration    time.Duration
	Warmup      time.Duration
	RTT         time.Duration
	Mode        string // workload execution mode; "" = the workload's default (factor opt.mode)
	Think       bool
	Mix         string // transaction weights as written, spaces removed (factor opt.mix)
	Seed        int64  // the terminals' random seed
	// Settings are the managed server's settings (factor set.NAME → Settings[NAME]).
	Settings map[string]string
	// Version and Install choose the managed server's binaries (factors server.version and
	// server.install); "" for the engine's default.
	Version, Install string
	// Options are other workload or engine options (factor opt.NAME → Options[NAME]).
	Options map[string]string
	// Rate is the open-loop arrival rate in transactions per second; 0 = closed loop.
	Rate float64
	// Arrival is the open-loop arrival process (results.ArrivalConstant or
	// results.ArrivalPoisson); in a Cell "" exactly when Rate is 0.
	Arrival string
	// LatencyLimit bounds the backlog (execution.Spec.LatencyLimit); 0 = none.
	LatencyLimit time.Duration
	// MaxTries is the tries per transaction after retryable errors; 0 or 1 = no retries.
	MaxTries int
}

// Factor is one parameter a study varies, with its levels in canonical form (the spelling of
// results.FactorValue: durations by results.FormatDuration, integers and booleans plainly).
type Factor struct {
	Key    string
	Levels []string
}

// Setting returns the server setting a set.NAME factor varies.
func (f Factor) Setting() (name string, ok bool) {
	return strings.CutPrefix(f.Key, results.SettingPrefix)
}

// RestartsServer reports whether changing this factor's level means another server
// configuration: a server setting, the engine or the target.
func (f Factor) RestartsServer() bool {
	_, set := f.Setting()
	return set || f.Key == results.FactorEngine || f.Key == results.FactorTarget || f.Binaries()
}

// Binaries reports whether the factor varies the managed server's binaries (its version
// or installation): each level runs on a server of its own, with its own data.
func (f Factor) Binaries() bool {
	return f.Key == results.FactorVersion || f.Key == results.FactorInstall
}

// BinariesFactor returns the study's factor that varies the managed server's binaries,
// and false when it has none.
func (s *Study) BinariesFactor() (Factor, bool) {
	for _, f := range s.Factors {
		if f.Binaries() {
			return f, true
		}
	}
	return Factor{}, false
}

// Cell is one combination of levels.
type Cell struct {
	// Key identifies the cell across files and runs: CellKey(Params).
	Key string
	// Levels maps every factor of the study to this cell's level (canonical form). For a
	// set.NAME factor whose base leaves the setting at the server's default, the base
	// level is "".
	Levels map[string]string
	// Varied is the factor this cell varies away from the base in an ofat design; "" for the
	// base cell and in a full design.
	Varied string
	Params Params
}

// Managed reports whether the study starts its own server (rather than using a target).
func (s *Study) Managed() bool {
	return s.Target == "" && !s.hasFactor(results.FactorTarget)
}

func (s *Study) hasFactor(key string) bool {
	for _, f := range s.Factors {
		if f.Key == key {
			return true
		}
	}
	return false
}

// Engines lists the engines the study's managed servers run, base engine first; empty for a
// study on a target.
func (s *Study) Engines() []string {
	var out []string
	add := func(e string) {
		if e != "" && !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	var levels []string
	for _, f := range s.Factors {
		if f.Key == results.FactorEngine {
			levels = f.Levels
		}
	}
	if levels == nil || s.Design == DesignOFAT {
		add(s.Base.Engine) // a full design with an engine factor never runs the base engine
	}
	for _, l := range levels {
		add(l)
	}
	return out
}

// Label describes c by its levels in the study's factor order: "rtt=1ms terminals=4"; "base"
// for a study without factors.
func (s *Study) Label(c Cell) string {
	var b strings.Builder
	for _, f := range s.Factors {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		v := c.Levels[f.Key]
		if v == "" {
			v = "(default)"
		}
		b.WriteString(f.Key + "=" + v)
	}
	if b.Len() == 0 {
		return "base"
	}
	return b.String()
}

// NeedsServerRestart reports whether running c after prev needs another server
// configuration: a different engine, target, version, installation or server setting, or
// no previous run at all.
func (c Cell) NeedsServerRestart(prev *Cell) bool {
	if prev == nil {
		return true
	}
	return !sameServer(&c.Params, &prev.Params)
}

// clone returns p with its own maps.
func (p Params) clone() Params {
	p.Settings = maps.Clone(p.Settings)
	p.Options = maps.Clone(p.Options)
	if p.Settings == nil {
		p.Settings = map[string]string{}
	}
	if p.Options == nil {
		p.Options = map[string]string{}
	}
	return p
}

// resolved returns p with Connections 0 replaced by Terminals and the arrival process of an
// open-loop run named (constant by default).
func (p Params) resolved() Params {
	if p.Connections == 0 {
		p.Connections = p.Terminals
	}
	if p.Rate > 0 && p.Arrival == "" {
		p.Arrival = results.ArrivalConstant
	}
	return p
}

// Value returns p's value of factor key in canonical form ("" if p does not set it).
func (p Params) Value(key string) string {
	switch key {
	case results.FactorRTT:
		return results.FormatDuration(p.RTT)
	case results.FactorTerminals:
		return strconv.Itoa(p.Terminals)
	case results.FactorConnections:
		return strconv.Itoa(p.Connections)
	case results.FactorWarehouses:
		return strconv.Itoa(p.Warehouses)
	case results.FactorDuration:
		return results.FormatDuration(p.Duration)
	case results.FactorWarmup:
		return results.FormatDuration(p.Warmup)
	case results.FactorEngine:
		return p.Engine
	case results.FactorThink:
		return strconv.FormatBool(p.Think)
	case results.FactorTarget:
		return p.Target
	case results.FactorVersion:
		return p.Version
	case results.FactorInstall:
		return p.Install
	case optMode:
		return p.Mode
	case optMix:
		return p.Mix
	case results.FactorRate:
		return results.FormatRate(p.Rate)
	case results.FactorArrival:
		return p.Arrival
	case results.FactorLatencyLimit:
		return results.FormatDuration(p.LatencyLimit)
	case results.FactorMaxTries:
		return strconv.Itoa(max(p.MaxTries, 1))
	}
	if name, ok := strings.CutPrefix(key, results.SettingPrefix); ok {
		return p.Settings[name]
	}
	if name, ok := strings.CutPrefix(key, results.OptionPrefix); ok {
		return p.Options[name]
	}
	return ""
}

const (
	optMode = results.OptionPrefix + "mode"
	optMix  = results.OptionPrefix + "mix"
)

// set parses level (as written in a file) into p's parameter for factor key. It checks the
// value as a factor level: connections must be ≥ 1 here (0 is only the base's shorthand).
// p's maps must be its own (clone).
func (p *Params) set(key, level string) error {
	var err error
	switch key {
	case results.FactorRTT:
		p.RTT, err = parseDuration(level, 0)
	case results.FactorTerminals:
		p.Terminals, err = parseCount(level, 1)
	case results.FactorConnections:
		p.Connections, err = parseCount(level, 1)
	case results.FactorWarehouses:
		p.Warehouses, err = parseCount(level, 1)
	case results.FactorDuration:
		p.Duration, err = parseDuration(level, 1)
	case results.FactorWarmup:
		p.Warmup, err = parseDuration(level, 0)
	case results.FactorEngine:
		p.Engine, err = checkWord(level)
	case results.FactorThink:
		p.Think, err = parseBool(level)
	case results.FactorTarget:
		p.Target, err = checkTarget(level)
	case results.FactorVersion:
		p.Version, err = checkVersion(level)
	case results.FactorInstall:
		p.Install, err = checkValue(level)
	case optMode:
		p.Mode, err = checkWord(level)
	case optMix:
		p.Mix, err = checkMix(level)
	case results.FactorRate:
		p.Rate, err = parseRate(level)
	case results.FactorArrival:
		p.Arrival, err = checkArrival(level)
	case results.FactorLatencyLimit:
		p.LatencyLimit, err = parseDuration(level, 0)
	case results.FactorMaxTries:
		p.MaxTries, err = parseCount(level, 1)
	default:
		if name, ok := strings.CutPrefix(key, results.SettingPrefix); ok {
			p.Settings[name], err = checkValue(level)
		} else if name, ok := strings.CutPrefix(key, results.OptionPrefix); ok {
			p.Options[name], err = checkValue(level)
		} else {
			err = errors.New("is not a known factor")
		}
	}
	return err
}
