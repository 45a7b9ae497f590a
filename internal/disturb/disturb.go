// Package disturb names what disturbed a run: from its per-interval samples (package runner:
// transactions ended, the longest stall with none ending) and its signals (package signals:
// what the host, dblat and the server were doing), it finds the stretches of the window in
// which the run lost throughput, or every terminal waited at once, and matches each against
// what was happening then — the host's disk (IO pressure), memory pressure, CPU taken by
// other processes or by the hypervisor (steal), dblat's own process going without a CPU,
// the server's own checkpoint or vacuum — and says how much of the window it cost, with the
// figures that show it. A stretch that no signal explains is named too ("unknown").
//
// Find is a pure function of a stored run, so a run stored with samples and signals can be
// judged again at any time; package execution calls it as a run ends and stores its
// disturbances with the run, and a study's policy (package study) re-runs a run that
// external causes disturbed (Disturbed). Package analysis quotes them in its checks and
// package report draws them on the run's timeline.
//
// What counts as a stretch is decided against the run's own figures, so that a quiet run
// raises nothing: an interval whose count of transactions falls below the run's median by
// more than counting explains (five standard deviations of a Poisson count, and 15 % at
// least), or whose longest stall is more than three times the run's median stall and 200 ms
// longer. Every threshold is a constant below with its derivation.
package disturb

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/signals"
	"github.com/dblat/dblat/internal/stats"
)

// The causes a Disturbance names.
const (
	// CauseDisk: the host's tasks all waited on IO (pressure "full"), and no checkpoint of
	// the server's explains it: a cloud VM's disk stall, another process's writes; or, where
	// no other signal explains a stretch, the machine's disks wrote far more than in the rest
	// of the window (another process's direct or fsynced writes).
	CauseDisk = "disk"
	// CauseMemory: tasks waited for memory (reclaim, swap).
	CauseMemory = "memory"
	// CauseCPU: processes other than dblat and the server took CPU the run needed.
	CauseCPU = "cpu"
	// CauseSteal: the hypervisor gave the machine's CPUs to other guests.
	CauseSteal = "steal"
	// CauseClient: dblat's own process went without a CPU (it drives the terminals, so the
	// server saw no requests meanwhile).
	CauseClient = "dblat"
	// CauseCheckpoint and CauseVacuum: the server's own work, part of what it does under
	// load; named, never set aside.
	CauseCheckpoint = "checkpoint"
	CauseVacuum     = "vacuum"
	// CauseUnknown: the run lost time and no signal explains it.
	CauseUnknown = "unknown"
	// CauseHost: the machine itself ran slower than in the other runs it is compared with
	// (SlowHost), over the whole run.
	CauseHost = "host"
	// CauseOperation: the operation dblat itself started on the server during the window
	// (results.Operation: a backup, a vacuum, a checkpoint, an index build), which the run
	// was asked to measure: named, never unexplained, never external, never set aside.
	CauseOperation = "operation"
)

// External reports whether cause lies outside the system under test (the host, other
// processes, dblat itself), so that a run it disturbed measures the machine rather than
// the server, and a study may re-run it. The server's own checkpoints and vacuum, and what
// no signal explains, are not.
func External(cause string) bool {
	switch cause {
	case CauseDisk, CauseMemory, CauseCPU, CauseSteal, CauseClient, CauseHost:
		return true
	}
	return false
}

// Describe names a cause as a sentence's subject: "the host's disk", "other processes".
func Describe(cause string) string {
	switch cause {
	case CauseDisk:
		return "the host's disk"
	case CauseMemory:
		return "memory pressure"
	case CauseCPU:
		return "other processes"
	case CauseSteal:
		return "the hypervisor (steal)"
	case CauseClient:
		return "dblat's own process going without a CPU"
	case CauseCheckpoint:
		return "the server's checkpoint"
	case CauseVacuum:
		return "the server's autovacuum"
	case CauseHost:
		return "a slower machine"
	case CauseOperation:
		return "the operation dblat started during the window"
	}
	return "something no signal explains"
}

// Thresholds of Find, each with its reason.
const (
	// dipSigmas and dipShare: an interval's count is a dip when it falls below the run's
	// median count by more than dipSigmas standard deviations of a Poisson count of that
	// mean (a closed loop's counts vary less than Poisson's, so this errs towards quiet:
	// 5 σ is passed by chance in 3 intervals of 10 million, so that a thousand ten-minute
	// runs raise no false dip between them) and by dipShare at least (at thousands of
	// transactions a second, 5 σ is a few per cent, within a quiet machine's drift).
	dipSigmas = 5
	dipShare  = 0.15
	// stallFactor and stallExcess: an interval's longest stall is abnormal when it is more
	// than stallFactor times the run's median longest stall and stallExcess longer: the
	// median is the run's own rhythm (a few ms at RTT 0, the longest transactions at 5 ms),
	// and 200 ms is longer than a scheduler's or a garbage collector's pauses.
	stallFactor = 3
	stallExcess = 200 * time.Millisecond
	// minLost is the least a stretch must cost to be named: less is within counting.
	minLost = 20 * time.Millisecond
	// slack widens a stretch on each side when its signals are read: the host's
	// intervals are half a second long and need not line up with the runner's.
	slack = 250 * time.Millisecond

	// Signal levels that name a cause over a stretch (the time-weighted mean over it):
	// every task waiting on IO a quarter of the time; memory waits a tenth of the time (any
	// is unusual on a benchmark machine); others keeping a quarter of a CPU busy; the
	// hypervisor taking a tenth of the CPU time; dblat's stall watch late by half the
	// stretch.
	ioFullLevel = 0.25
	// dirtyLevel is the data waiting to be written back that a disk stall's evidence
	// quotes: more than a few seconds of a cloud disk's throughput.
	dirtyLevel  = 64
	memoryLevel = 0.10
	othersLevel = 0.25
	stealLevel  = 0.10
	// diskWriteLevel and diskWriteFactor name the disk where nothing else does: the
	// machine's disks writing 50 MB/s at least over the stretch, and four times what they
	// wrote in the rest of the window (the server's own writes are in both).
	diskWriteLevel  = 50
	diskWriteFactor = 4
	clientStallPct  = 0.5

	// The whole window, when nothing stands out within it: other processes keeping a
	// quarter of a CPU busy throughout while the machine's CPUs were nearly all busy
	// (four fifths), or the hypervisor taking a twentieth of the CPU time throughout.
	windowOthers = 0.25
	windowBusy   = 0.8
	windowSteal  = 0.05

	// Material is the share of its window that external causes must take for a run to be
	// Disturbed: 2 % moves a figure by about as much as counting does in a 5 s window of a
	// few thousand transactions, and is a fifth of the 10 % a study's precision targets.
	Material = 0.02
)

// SlowHostMargin is how much slower a run's canary (results.Client.CanaryUs) must be than
// its comparison's for SlowHost to name it: a run's canary is the median of a few dozen
// readings whose spread on a quiet VM is ±10 %, so its own noise is 2 to 3 %, and 8 % is
// three times that.
const SlowHostMargin = 0.08

// SlowHost names a run whose machine ran slower than in the runs it is compared with:
// its canary (the CPU time of a fixed piece of work) took more than SlowHostMargin longer
// than baseline (theirs, a median). The time it lost is the share of the work the machine
// did more slowly, times the share of the window its CPUs were busy: a run that waited on
// the network most of its window lost little to a slower CPU. ok is false for a run the
// margin does not name, or without canaries.
func SlowHost(r *results.Run, baseline float64) (results.Disturbance, bool) {
	c := r.Client.CanaryUs
	if c <= 0 || baseline <= 0 || c < (1+SlowHostMargin)*baseline {
		return results.Disturbance{}, false
	}
	elapsed := r.Summary.Elapsed
	idx := newSignalIndex(r.Signals)
	busy, _ := idx.mean(signals.HostBusy, 0, elapsed)
	cpus, _ := idx.mean(signals.HostCPUs, 0, elapsed)
	share := 1.0
	if cpus > 0 {
		share = min(1, busy/cpus)
	}
	d := results.Disturbance{Cause: CauseHost, From: 0, To: elapsed,
		Lost: time.Duration((1 - baseline/c) * share * float64(elapsed)),
		Evidence: fmt.Sprintf("throughout the run a fixed piece of work took %.0f µs of CPU against %.0f µs in the runs it is compared with: the machine itself ran %.0f %% slower (a neighbour on its host, a lower clock), while its CPUs were %.0f %% busy",
			c, baseline, 100*(c/baseline-1), 100*share)}
	return d, true
}

// Disturbed reports whether external causes took at least Material of r's window.
func Disturbed(r *results.Run) bool {
	return r.Summary.Elapsed > 0 && float64(LostExternal(r.Disturbances)) >= Material*float64(r.Summary.Elapsed)
}

// LostExternal is the window time ds lost to external causes.
func LostExternal(ds []results.Disturbance) time.Duration {
	var lost time.Duration
	for _, d := range ds {
		if External(d.Cause) {
			lost += d.Lost
		}
	}
	return lost
}

// Interval is one of the runner's sample intervals of a run's window: it ends at To and
// began at From (before the window's start for an interval that straddles it), and in it
// Count transactions ended and none did for Stall at most.
type Interval struct {
	From, To time.Duration
	Count    float64
	Stall    time.Duration
}

// Rate is the interval's transactions per second.
func (iv Interval) Rate() float64 { return iv.Count / (iv.To - iv.From).Seconds() }

// Find names what disturbed r's window, from r.Samples and r.Signals (a run read with its
// samples); nil for a quiet run or one without samples. A stretch that overlaps an
// operation dblat started during the window (r.Operations) is the operation's
// (CauseOperation), whatever else the signals show then: the tools it runs are other
// processes to the host, its reads and writes the host's IO.
func Find(r *results.Run) []results.Disturbance {
	ivs := WindowIntervals(r)
	if len(ivs) < 3 {
		return nil // too few intervals for a median to stand for the run
	}
	sig := newSignalIndex(r.Signals)
	var out []results.Disturbance
	for _, st := range stretches(ivs) {
		d := sig.explain(st)
		// The operation's times are the samples' own clock's: no slack.
		if op, ok := during(r.Operations, st.from, st.to); ok {
			d.Cause = CauseOperation
			_, rest, _ := strings.Cut(d.Evidence, ": ")
			d.Evidence = fmt.Sprintf("from %s to %s: dblat's %s (%s) ran from %s to %s, %s; the signals then: %s",
				offset(st.from), offset(st.to), op.Name, op.Tool, offset(op.Started), offset(op.Ended), op.Outcome, rest)
		}
		if d.Lost >= minLost {
			out = append(out, d)
		}
	}
	if len(out) == 0 {
		if d, ok := sig.throughout(r.Summary.Elapsed, r.Operations); ok {
			out = append(out, d)
		}
	}
	return out
}

// during returns the operation of ops that ran over some of [from, to].
func during(ops []results.Operation, from, to time.Duration) (results.Operation, bool) {
	for _, op := range ops {
		if op.Ran() && op.Started < to && max(op.Ended, op.Started) > from {
			return op, true
		}
	}
	return results.Operation{}, false
}

// WindowIntervals returns the intervals of r's samples of all types that lie in its
// window: those with most of their time in it. One that straddles the window's start with
// most of it before is the warm-up's (a fixed warm-up's timer and the sampling ticker fire
// at about the same time); the last, which the runner takes after the drain, is the
// window's when most of it was.
func WindowIntervals(r *results.Run) []Interval {
	var out []Interval
	prev, first := time.Duration(0), true
	end := r.Summary.Elapsed
	for _, s := range r.Samples {
		if s.Type != "" {
			continue
		}
		from := prev
		prev = s.Offset
		if first {
			first = false
			continue // its start is not known
		}
		inside := min(s.Offset, end) - max(from, 0)
		if s.Offset <= from || 2*inside < s.Offset-from {
			continue
		}
		out = append(out, Interval{From: from, To: s.Offset, Count: float64(s.Committed + s.Errors),
			Stall: time.Duration(s.StallUs) * time.Microsecond})
	}
	return out
}

// stretch is a run of consecutive intervals that lost time.
type stretch struct {
	from, to time.Duration
	lost     time.Duration
	// stall is the longest stall in it, and stalled whether a stall was abnormal.
	stall   time.Duration
	stalled bool
}

// stretches finds the intervals that dipped or stalled against the run's medians and joins
// neighbours into stretches, each with the time it lost.
func stretches(ivs []Interval) []stretch {
	rates := make([]float64, len(ivs))
	stalls := make([]float64, len(ivs))
	for i, iv := range ivs {
		rates[i] = iv.Rate()
		stalls[i] = float64(iv.Stall)
	}
	rate := stats.Median(rates)
	usual := time.Duration(stats.Median(stalls))
	var out []stretch
	var cur *stretch
	for _, iv := range ivs {
		span := iv.To - iv.From
		expect := rate * span.Seconds()
		var lost time.Duration
		dipped := expect > 0 && iv.Count < expect-max(dipSigmas*math.Sqrt(expect), dipShare*expect)
		if dipped {
			lost = time.Duration((expect - iv.Count) / expect * float64(span))
		}
		stalled := iv.Stall > stallFactor*usual && iv.Stall > usual+stallExcess
		if !dipped && !stalled {
			cur = nil
			continue
		}
		if cur == nil {
			out = append(out, stretch{from: max(0, iv.From), to: iv.To})
			cur = &out[len(out)-1]
		}
		cur.to = iv.To
		cur.lost += lost
		if stalled {
			cur.stalled = true
			cur.stall = max(cur.stall, iv.Stall)
			cur.from = min(cur.from, max(0, iv.To-iv.Stall))
			// Counts of a few transactions an interval cannot show a stall's cost; the
			// stall's excess over the run's rhythm can.
			cur.lost = max(cur.lost, iv.Stall-usual)
		}
	}
	return out
}

// signalIndex holds a run's signals by name.
type signalIndex map[string][]results.Signal

func newSignalIndex(sigs []results.Signal) signalIndex {
	idx := signalIndex{}
	for _, s := range sigs {
		idx[s.Name] = append(idx[s.Name], s)
	}
	return idx
}

// mean is the time-weighted mean of signal name over [from, to], and whether any of its
// intervals overlapped it.
func (idx signalIndex) mean(name string, from, to time.Duration) (float64, bool) {
	var sum, weight float64
	for _, s := range idx[name] {
		lo, hi := max(from, s.Offset-s.Span), min(to, s.Offset)
		if hi <= lo {
			continue
		}
		w := float64(hi - lo)
		sum += s.Value * w
		weight += w
	}
	if weight == 0 {
		return 0, false
	}
	return sum / weight, true
}

// peak is the largest value of signal name among its intervals that overlap [from, to].
func (idx signalIndex) peak(name string, from, to time.Duration) (float64, bool) {
	best, ok := 0.0, false
	for _, s := range idx[name] {
		if min(to, s.Offset) > max(from, s.Offset-s.Span) {
			best, ok = max(best, s.Value), true
		}
	}
	return best, ok
}

// others is the CPUs processes other than dblat and the server kept busy over [from, to];
// ok is false where the server's CPU is not known (a server dblat does not manage may run
// on this machine, and would count as another process).
func (idx signalIndex) others(from, to time.Duration) (float64, bool) {
	busy, ok1 := idx.mean(signals.HostBusy, from, to)
	dblat, ok2 := idx.mean(signals.DblatCPU, from, to)
	server, ok3 := idx.mean(signals.ServerCPU, from, to)
	return max(0, busy-dblat-server), ok1 && ok2 && ok3
}

// busiest names the other processes seen busiest over [from, to]: "stress-ng (pid 812)
// 98 %".
func (idx signalIndex) busiest(from, to time.Duration) string {
	type proc struct {
		name string
		cpus float64
	}
	var list []proc
	for name := range idx {
		pid, comm, ok := signals.ParseProcessName(name)
		if !ok {
			continue
		}
		if v, ok := idx.peak(name, from-time.Second, to+time.Second); ok {
			list = append(list, proc{fmt.Sprintf("%s (pid %d)", comm, pid), v})
		}
	}
	slices.SortFunc(list, func(a, b proc) int { return cmp.Or(cmp.Compare(b.cpus, a.cpus), strings.Compare(a.name, b.name)) })
	parts := make([]string, 0, 3)
	for _, p := range list[:min(3, len(list))] {
		parts = append(parts, fmt.Sprintf("%s %.0f %%", p.name, 100*p.cpus))
	}
	return strings.Join(parts, ", ")
}

// diskWrites says how much the machine's disks wrote over [from, to] against the rest of
// the window, when that is far more (diskWriteLevel, diskWriteFactor), else "": another
// process's writes, which need not make every task wait (IO pressure full) to slow the
// server's own.
func (idx signalIndex) diskWrites(from, to time.Duration) string {
	during, ok := idx.mean(signals.HostDiskWrite, from, to)
	if !ok || during < diskWriteLevel {
		return ""
	}
	var sum float64
	n := 0
	for _, s := range idx[signals.HostDiskWrite] {
		if s.Offset <= from || s.Offset-s.Span >= to {
			sum += s.Value
			n++
		}
	}
	usual := 0.0
	if n > 0 {
		usual = sum / float64(n)
	}
	if during < diskWriteFactor*usual {
		return ""
	}
	return fmt.Sprintf("the machine's disks wrote %.0f MB/s, against %.0f MB/s in the rest of the window: another process's writes", during, usual)
}

// explain names the cause of a stretch from the signals around it.
func (idx signalIndex) explain(st stretch) results.Disturbance {
	from, to := st.from-slack, st.to+slack
	d := results.Disturbance{From: st.from, To: st.to, Lost: st.lost}
	var ev []string
	if st.stalled {
		ev = append(ev, fmt.Sprintf("no transaction ended for %s at once", seconds(st.stall)))
	}
	ioFull, hasIO := idx.mean(signals.HostIOFull, from, to)
	ioPeak, _ := idx.peak(signals.HostIOFull, from, to)
	memFull, _ := idx.mean(signals.HostMemoryFull, from, to)
	memSome, _ := idx.mean(signals.HostMemorySome, from, to)
	others, knownOthers := idx.others(from, to)
	steal, _ := idx.mean(signals.HostSteal, from, to)
	clientStall, _ := idx.peak(signals.DblatStall, from, to)
	checkpointing, _ := idx.peak(signals.EnginePrefix+"checkpointing", from, to)
	checkpoints, _ := idx.peak(signals.EnginePrefix+"checkpoints", from, to)
	vacuum, _ := idx.peak(signals.EnginePrefix+"autovacuum", from, to)
	if v, ok := idx.peak(signals.EnginePrefix+"waiting_io", from, to); ok && v > 0 {
		ev = append(ev, fmt.Sprintf("%.0f sessions waiting on IO at once", v))
	}
	if v, ok := idx.mean(signals.EnginePrefix+"wal_sync_s", from, to); ok && v > 0.05 {
		ev = append(ev, fmt.Sprintf("WAL sync %.0f %% of the time", 100*v))
	}
	disk := hasIO && (ioFull >= ioFullLevel || ioPeak >= 2*ioFullLevel)
	writes := idx.diskWrites(from, to)
	if disk {
		if dirty, ok := idx.peak(signals.HostDirty, from-time.Second, to); ok && dirty >= dirtyLevel {
			ev = append(ev, fmt.Sprintf("%.0f MiB in the page cache waited to be written back (a restore's copy, another process's writes)", dirty))
		}
		ev = append([]string{fmt.Sprintf("IO pressure full %.0f %% (at most %.0f %%): every task of the machine waited on the disk", 100*ioFull, 100*ioPeak)}, ev...)
	}
	switch {
	case disk && (checkpointing > 0 || checkpoints > 0):
		d.Cause = CauseCheckpoint
		ev = append([]string{"the server was writing a checkpoint"}, ev...)
	case disk:
		d.Cause = CauseDisk
	case memFull >= memoryLevel || memSome >= 2*memoryLevel:
		d.Cause = CauseMemory
		ev = append([]string{fmt.Sprintf("memory pressure some %.0f %%, full %.0f %%", 100*memSome, 100*memFull)}, ev...)
	case knownOthers && others >= othersLevel:
		d.Cause = CauseCPU
		line := fmt.Sprintf("other processes kept %.2f CPUs busy", others)
		if b := idx.busiest(from, to); b != "" {
			line += ": " + b
		}
		ev = append([]string{line}, ev...)
	case steal >= stealLevel:
		d.Cause = CauseSteal
		ev = append([]string{fmt.Sprintf("the hypervisor took %.0f %% of the CPU time (steal)", 100*steal)}, ev...)
	case clientStall >= clientStallPct*float64(st.to-st.from)/float64(time.Second) && clientStall >= stallExcess.Seconds():
		d.Cause = CauseClient
		ev = append([]string{fmt.Sprintf("dblat's own process went without a CPU for %s", seconds(time.Duration(clientStall*float64(time.Second))))}, ev...)
	case checkpointing > 0:
		d.Cause = CauseCheckpoint
		ev = append([]string{"the server was writing a checkpoint"}, ev...)
	case vacuum > 0:
		d.Cause = CauseVacuum
		ev = append([]string{fmt.Sprintf("%.0f autovacuum workers ran", vacuum)}, ev...)
	case writes != "":
		d.Cause = CauseDisk
		ev = append([]string{writes}, ev...)
	default:
		d.Cause = CauseUnknown
		ev = append([]string{"no signal of the host's, dblat's or the server's explains it"}, ev...)
	}
	d.Evidence = fmt.Sprintf("from %s to %s: %s", offset(st.from), offset(st.to), strings.Join(ev, "; "))
	return d
}

// throughout names what took the machine's CPU for the whole window, when nothing stood out
// within it: a run slowed evenly by another process's load or by the hypervisor has no dip
// against its own median. Its lost time is the share of the machine's CPUs taken. The
// time operations dblat started ran (ops) is left out: their tools are other processes.
func (idx signalIndex) throughout(elapsed time.Duration, ops []results.Operation) (results.Disturbance, bool) {
	d := results.Disturbance{From: 0, To: elapsed}
	if len(ops) > 0 {
		idx = idx.outside(ops)
	}
	cpus, _ := idx.mean(signals.HostCPUs, 0, elapsed)
	busy, _ := idx.mean(signals.HostBusy, 0, elapsed)
	others, known := idx.others(0, elapsed)
	steal, _ := idx.mean(signals.HostSteal, 0, elapsed)
	switch {
	case known && cpus > 0 && others >= windowOthers && busy >= windowBusy*cpus:
		d.Cause = CauseCPU
		d.Lost = time.Duration(others / cpus * float64(elapsed))
		d.Evidence = fmt.Sprintf("throughout the window other processes kept %.2f of the machine's %.0f CPUs busy, which were %.0f %% busy", others, cpus, 100*busy/cpus)
		if b := idx.busiest(0, elapsed); b != "" {
			d.Evidence += ": " + b
		}
	case steal >= windowSteal:
		d.Cause = CauseSteal
		d.Lost = time.Duration(steal * float64(elapsed))
		d.Evidence = fmt.Sprintf("throughout the window the hypervisor took %.0f %% of the CPU time (steal)", 100*steal)
	default:
		return d, false
	}
	return d, d.Lost >= minLost
}

// outside is idx without the intervals that overlap the operations in ops.
func (idx signalIndex) outside(ops []results.Operation) signalIndex {
	out := signalIndex{}
	for name, list := range idx {
		for _, s := range list {
			if _, ok := during(ops, s.Offset-s.Span, s.Offset); !ok {
				out[name] = append(out[name], s)
			}
		}
	}
	return out
}

// seconds writes a duration in seconds to the tenth, or milliseconds below one.
func seconds(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%d ms", d.Milliseconds())
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}

// offset writes an offset into the window: "1.1 s".
func offset(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }
