package study

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/spec"
)

// Designs, between-run policies and orders a study file may name.
const (
	DesignFull = "full" // every combination of levels
	DesignOFAT = "ofat" // one factor at a time around the base

	BetweenRestore = "restore" // restore a pristine copy of the data before each run
	BetweenKeep    = "keep"    // keep the data the previous run left

	OrderRandom  = "random"  // each round is a fresh random permutation of its cells
	OrderGrouped = "grouped" // within a round, cells sharing a server configuration run together

	// What a study does with a run that causes outside the system under test disturbed
	// (package disturb: the host's disk, other processes' CPU, the hypervisor, dblat's own
	// process took at least disturb.Material of its window).
	DisturbedKeep  = "keep"  // count it like any other (the default); the check names what disturbed it
	DisturbedRerun = "rerun" // set it aside, with its evidence, and run the cell again (up to Reruns times a cell)
	DisturbedStop  = "stop"  // count it, and stop the study: the machine is not quiet enough
)

// Defaults of a study file's optional keys.
const (
	DefaultRepeat = 5 // seed 000: "each test configuration is run at least five times"
	// DefaultMaxFailures: a third failed run in one invocation points at the setup (a server
	// that no longer starts, a full disk) rather than at bad luck.
	DefaultMaxFailures = 3
	DefaultSeed        = 1
	// DefaultReruns: a cell sets aside at most two disturbed runs; a third disturbed run
	// counts, and the check says what disturbed it: a machine disturbed that often is the
	// finding, and re-running would only spend the budget.
	DefaultReruns = 2
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
	// Repeat is the most finished runs a cell gets, ≥ 1, and RepeatMin the fewest: equal
	// for a fixed `repeat: N`; a range `repeat: MIN..MAX` with a Precision adds runs to a
	// cell only while its interval is wider than the precision (see Wanted).
	Repeat    int
	RepeatMin int
	// Precision, when positive, is the target half-width of each cell's 95 % interval as a
	// share of its mean (precision: 10% is 0.1); 0: none.
	Precision float64
	// Budget, when positive, bounds the time `study run` spends (budget: 2h); runs that do
	// not fit are left to a later resume, and the cells whose intervals are widest relative
	// to their target are served first (Allot).
	Budget      time.Duration
	Seed        int64  // seeds the order of runs (not the terminals: that is Base.Seed)
	Order       string // OrderRandom or OrderGrouped
	Cooldown    time.Duration
	BetweenRuns string // BetweenRestore or BetweenKeep
	MaxFailures int    // the study stops after this many failed runs, ≥ 1
	// Disturbed is what the study does with a disturbed run (DisturbedRerun, ...), and
	// Reruns how many disturbed runs a cell may set aside under DisturbedRerun.
	Disturbed string
	Reruns    int
	// ClientProcs, when positive, holds dblat's Go runtime to that many threads of Go code
	// (GOMAXPROCS) for the study's runs, which record it (results.Client.Procs): on a
	// machine of few CPUs that also runs the server, one keeps the client off the
	// server's CPUs and out of the runtime's spinning between round trips. 0 leaves the
	// runtime's default (one per CPU, or the GOMAXPROCS environment variable's).
	ClientProcs int
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

	// Profiles are the study's own network profiles (profiles:), which its profile keys
	// may name beside the built-in ones (spec.Profiles).
	Profiles []spec.Profile

	pos map[string]pos
	// linked is set when the file writes a field of the link (base.rtt, a jitter factor,
	// a profile, ...); see Linked.
	linked bool
}

// Linked reports whether the study's TCP cells go through dblat's latency link: when the file
// writes a field of the link (base.rtt, even 0, or any of spec.LinkKeys in base or as a
// factor: up, down, jitter, distribution, bandwidth, loss, profile), every TCP cell does, at
// RTT 0 too, so that its cells compare like for like; otherwise they connect directly. A
// cell whose transport is unix never does (the link is TCP). The path is therefore the same
// for every cell unless the transport is itself a factor.
func (s *Study) Linked() bool { return s.linked }

// ServerSpec describes the managed server a study starts.
type ServerSpec struct {
	Engine   string            // "postgres", "firebird", ...; "" when an engine factor names them
	Name     string            // managed server name; defaults to the study's name
	Settings map[string]string // server settings at their base values (name → value as written)
	// Version is the server version to run ("16"; engine.LaunchConfig.Version) and Install
	// an installation directory to run it from (as written); "" for the engine's default.
	Version, Install string
	// Storage is where the server keeps its data: managed.StorageDisk ("" too) or
	// managed.StorageMemory.
	Storage string
	// Memory is the memory limit the server runs under, as managed.FormatMemory writes it
	// ("512MB", or managed.MemoryNone), and Encryption whether it keeps its data encrypted
	// at rest ("on", "off"); "" for the engine's own (none, off).
	Memory, Encryption string
}

// Params are the parameters of one cell: the managed server it runs on and the run it asks
// for. In a Cell they are resolved (spec.Run.Resolve) and the Run's Link says whether the
// cell goes through the latency link (Study.Linked).
type Params struct {
	// Run is the run as the study writes it: its Options hold the workload and engine
	// options and the mode, mix and transport as written (spec.OptionMode, ...); its Target
	// is the existing server of a study on a target, "" when the study manages its server.
	spec.Run
	// Engine is the engine of the managed server; "" when the study uses a target.
	Engine string
	// Settings are the managed server's settings (factor set.NAME → Settings[NAME]).
	Settings map[string]string
	// Version and Install choose the managed server's binaries (factors server.version and
	// server.install); "" for the engine's default.
	Version, Install string
	// Memory is the managed server's memory limit (factor server.memory: "512MB", or
	// managed.MemoryNone) and Encryption whether it encrypts its data at rest (factor
	// server.encryption: "on", "off"); "" for none.
	Memory, Encryption string
}

// Factor is one parameter a study varies, with its levels in canonical form (the spelling of
// results.FactorValue: durations by spec.FormatDuration, integers and booleans plainly).
type Factor struct {
	Key    string
	Levels []string
}

// Setting returns the server setting a set.NAME factor varies.
func (f Factor) Setting() (name string, ok bool) {
	return strings.CutPrefix(f.Key, results.SettingPrefix)
}

// RestartsServer reports whether changing this factor's level means another server
// configuration: a server setting, the engine or the target, the managed server's
// binaries, memory limit or encryption.
func (f Factor) RestartsServer() bool {
	_, set := f.Setting()
	return set || f.Key == results.FactorEngine || f.Key == results.FactorTarget || f.Binaries() ||
		f.Key == results.FactorMemory || f.Key == results.FactorEncryption
}

// Binaries reports whether the factor varies the managed server's binaries (its version
// or installation): each level runs on a server of its own, with its own data.
func (f Factor) Binaries() bool {
	return f.Key == results.FactorVersion || f.Key == results.FactorInstall
}

// ServerOnly reports whether the factor is a property of the managed server dblat starts
// (its binaries, memory limit or encryption), which a study on a target cannot vary.
func (f Factor) ServerOnly() bool {
	return f.Binaries() || f.Key == results.FactorMemory || f.Key == results.FactorEncryption
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

// HasFactor reports whether the study varies the factor key.
func (s *Study) HasFactor(key string) bool { return s.hasFactor(key) }

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
// configuration: a different engine, target, version, installation, memory limit,
// encryption or server setting, or no previous run at all.
func (c Cell) NeedsServerRestart(prev *Cell) bool {
	if prev == nil {
		return true
	}
	return !sameServer(&c.Params, &prev.Params)
}

// clone returns p with its own maps.
func (p Params) clone() Params {
	p.Run = p.Run.Clone()
	p.Settings = maps.Clone(p.Settings)
	if p.Settings == nil {
		p.Settings = map[string]string{}
	}
	if p.Options == nil {
		p.Options = map[string]string{}
	}
	return p
}

// Value returns p's value of factor key in canonical form ("" if p does not set it).
func (p Params) Value(key string) string {
	if f, ok := spec.Lookup(key); ok {
		return f.Value(&p.Run.Params)
	}
	switch key {
	case results.FactorEngine:
		return p.Engine
	case results.FactorTarget:
		return p.Target
	case results.FactorVersion:
		return p.Version
	case results.FactorInstall:
		return p.Install
	case results.FactorMemory:
		return p.Memory
	case results.FactorEncryption:
		return p.Encryption
	}
	if name, ok := strings.CutPrefix(key, results.SettingPrefix); ok {
		return p.Settings[name]
	}
	if name, ok := strings.CutPrefix(key, results.OptionPrefix); ok {
		return p.Options[name]
	}
	return ""
}

// set parses level (as written in a file) into p's parameter for factor key. It checks the
// syntax (a whole number, a duration); Validate checks ranges on the cells. A level names a
// value, never a shorthand that Resolve fills in (spec.Field.Zero: 0 connections, one per
// terminal, is only the base's). p's maps must be its own (clone).
func (p *Params) set(key, level string) error {
	if f, ok := spec.Lookup(key); ok {
		if err := f.Set(&p.Run.Params, level); err != nil {
			return err
		}
		if v := f.Value(&p.Run.Params); f.Zero != "" && v != resolvedValue(f, p.Run) {
			return fmt.Errorf("must be at least 1, got %s (%s in base.%s means %s)", v, v, key, f.Zero)
		}
		return nil
	}
	var err error
	switch key {
	case results.FactorEngine:
		p.Engine, err = checkWord(level)
	case results.FactorTarget:
		p.Target, err = checkTarget(level)
	case results.FactorVersion:
		p.Version, err = checkVersion(level)
	case results.FactorInstall:
		p.Install, err = checkValue(level)
	case results.FactorMemory:
		p.Memory, err = checkMemory(level)
	case results.FactorEncryption:
		p.Encryption, err = checkSwitch(level)
	case optMode:
		p.Options[spec.OptionMode], err = checkWord(level)
	case optMix:
		p.Options[spec.OptionMix], err = checkMix(level)
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

// resolvedValue is f's value in r once resolved (spec.Run.Resolve).
func resolvedValue(f *spec.Field, r spec.Run) string {
	r = r.Clone()
	r.Resolve()
	return f.Value(&r.Params)
}

const (
	optMode = results.OptionPrefix + spec.OptionMode
	optMix  = results.OptionPrefix + spec.OptionMix
)
