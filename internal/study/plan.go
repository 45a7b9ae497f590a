package study

import (
	"crypto/sha256"
	"encoding/binary"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dblat/dblat/internal/spec"
)

// Planned is one run still to do: a cell and which of its repeats this is (1-based).
type Planned struct {
	Cell   Cell
	Repeat int
}

// Plan returns the runs still needed, in the order to run them. done maps a cell key to the
// number of finished runs the cell already has (other keys are ignored); a cell gets
// Repeat − done more runs, none when done ≥ Repeat. (An adaptive study's cells get what
// Schedule gives them without measured values: RepeatMin, then one round at a time.)
//
// Runs are scheduled in rounds: round r holds the r-th repeat of every cell that still needs
// it, so every cell is measured once before any is measured again and slow drift (a warming
// cache, a filling disk, a neighbour's load) spreads over all cells instead of lining up with
// a factor. Within a round the cells are in a random order drawn from Seed and the round
// number: with OrderRandom a fresh permutation of the cells per round; with OrderGrouped the
// cells that share a server configuration run together (the groups, and the cells within each,
// in random order), so the server restarts once per configuration per round.
//
// The order depends only on Seed, the cell keys and done: it is the same on every call and
// platform, independent of the order of factors in the file, and a resumed study continues the
// sequence it was interrupted in (the plan after k finished runs is the old plan minus those
// runs).
func (s *Study) Plan(done map[string]int) []Planned {
	progress := make(map[string]Progress, len(done))
	for k, n := range done {
		progress[k] = Progress{Done: n}
	}
	return s.Schedule(progress)
}

// rank is a pseudo-random number for item in round r, fixed by the study's seed. Sorting by
// it shuffles; a hash rather than math/rand keeps the order the same across Go releases.
func (s *Study) rank(r int, kind, item string) uint64 {
	h := sha256.Sum256([]byte("dblat order v1\n" + strconv.FormatInt(s.Seed, 10) + "\n" +
		strconv.Itoa(r) + "\n" + kind + "\n" + item))
	return binary.BigEndian.Uint64(h[:8])
}

// serverID names a server configuration: engine, target, settings, and the version and
// installation, memory limit and encryption when given (appended only then, so that the
// order of existing studies stays as it was).
func serverID(p *Params) string {
	var b strings.Builder
	b.WriteString(strconv.Quote(p.Engine) + strconv.Quote(p.Target))
	for _, k := range slices.Sorted(maps.Keys(p.Settings)) {
		b.WriteString(strconv.Quote(k) + strconv.Quote(p.Settings[k]))
	}
	if p.Version != "" || p.Install != "" {
		b.WriteString("\x00" + strconv.Quote(p.Version) + strconv.Quote(p.Install))
	}
	if p.Memory != "" || p.Encryption != "" {
		b.WriteString("\x01" + strconv.Quote(p.Memory) + strconv.Quote(p.Encryption))
	}
	return b.String()
}

// Overhead is the time a run costs beyond its warm-up and measurement window.
type Overhead struct {
	// Run is spent on every run: restoring the pristine copy, connecting, reading settings
	// and statistics, storing the results.
	Run time.Duration
	// Restart is spent on every server (re)start that Restarts counts.
	Restart time.Duration
}

// Estimate returns how long runs take in the order given: each run's warm-up (automatic ones
// at ExpectedWarmup), window and
// o.Run, the cooldown between consecutive runs, and o.Restart for every server (re)start.
// It saturates at the largest time.Duration instead of overflowing.
func (s *Study) Estimate(runs []Planned, o Overhead) time.Duration {
	var total time.Duration
	for i := range runs {
		p := &runs[i].Cell.Params
		total = addSat(total, ExpectedWarmup(&p.Drive), p.Duration, o.Run)
		if i > 0 {
			total = addSat(total, s.Cooldown)
		}
	}
	for range Restarts(runs) {
		total = addSat(total, o.Restart)
	}
	return total
}

// AutoWarmupEstimate is what an automatic warm-up is expected to take before anything is
// measured: the steady-state rule's median on a series that is steady from the start (6 s,
// package runner) and two seconds of a start's transient.
const AutoWarmupEstimate = 8 * time.Second

// ExpectedWarmup is the warm-up a run of d is expected to have: Warmup, or for an automatic
// one AutoWarmupEstimate up to its ceiling.
func ExpectedWarmup(d *spec.Drive) time.Duration {
	if d.WarmupAuto {
		return min(d.Warmup, AutoWarmupEstimate)
	}
	return d.Warmup
}

// Restarts counts the server starts runs need in the order given: the first run's, and one
// for every run whose server configuration differs from the previous run's
// (Cell.NeedsServerRestart).
func Restarts(runs []Planned) int {
	n := 0
	var prev *Cell
	for i := range runs {
		if runs[i].Cell.NeedsServerRestart(prev) {
			n++
		}
		prev = &runs[i].Cell
	}
	return n
}

func addSat(total time.Duration, ds ...time.Duration) time.Duration {
	for _, d := range ds {
		if d > 0 && total > math.MaxInt64-d {
			return math.MaxInt64
		}
		total += d
	}
	return total
}
