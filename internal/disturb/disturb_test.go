package disturb

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/signals"
)

// run builds a run of len(counts) one-second window intervals (and two of warm-up) with
// those counts and stalls (ms), and signals every 250 ms from sig(name, at) where it
// returns ok.
func run(counts []int64, stalls []int64, sig func(name string, from time.Duration) (float64, bool)) *results.Run {
	r := &results.Run{Summary: results.Summary{Elapsed: time.Duration(len(counts)) * time.Second}}
	for i := -2; i < len(counts); i++ {
		s := results.Sample{Offset: time.Duration(i+1) * time.Second, Committed: 1000, StallUs: 5000}
		if i >= 0 {
			s.Committed, s.StallUs = counts[i], stalls[i]*1000
		}
		r.Samples = append(r.Samples, s, results.Sample{Offset: s.Offset, Type: "new_order", Committed: s.Committed / 2})
	}
	names := []string{signals.HostIOFull, signals.HostMemoryFull, signals.HostMemorySome, signals.HostBusy, signals.HostCPUs,
		signals.HostSteal, signals.DblatCPU, signals.DblatStall, signals.ServerCPU, "proc.812.stress-ng", "db.checkpointing", "db.autovacuum", signals.HostDiskWrite}
	for at := -2 * time.Second; at < r.Summary.Elapsed; at += 250 * time.Millisecond {
		for _, n := range names {
			if v, ok := sig(n, at); ok {
				r.Signals = append(r.Signals, results.Signal{Offset: at + 250*time.Millisecond, Span: 250 * time.Millisecond, Name: n, Value: v})
			}
		}
	}
	return r
}

// quiet is a machine where dblat and the server share two CPUs and nothing else runs.
func quiet(name string, _ time.Duration) (float64, bool) {
	switch name {
	case signals.HostBusy:
		return 1.9, true
	case signals.HostCPUs:
		return 2, true
	case signals.DblatCPU:
		return 0.7, true
	case signals.ServerCPU:
		return 1.15, true
	case signals.HostIOFull, signals.HostMemoryFull, signals.HostMemorySome, signals.HostSteal, signals.DblatStall:
		return 0.01, true
	case signals.HostDiskWrite:
		return 3, true // the server's WAL
	}
	return 0, false
}

func flat(n int, v int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// TestQuietRunsRaiseNothing: runs whose counts vary as counting makes them vary, at
// thousands of transactions a second and at a few, with the stalls of their rhythm, raise
// no disturbance (a thousand seeded runs of each).
func TestQuietRunsRaiseNothing(t *testing.T) {
	for _, rate := range []float64{2500, 60, 9} {
		rng := rand.New(rand.NewPCG(1, uint64(rate)))
		for k := range 1000 {
			counts := make([]int64, 10)
			stalls := make([]int64, 10)
			usual := int64(1000 / rate * 4) // a closed loop's longest gap, a few mean gaps
			for i := range counts {
				counts[i] = poisson(rng, rate)
				stalls[i] = usual + rng.Int64N(usual+1)
			}
			if ds := Find(run(counts, stalls, quiet)); len(ds) > 0 {
				t.Fatalf("rate %v, run %d (counts %v, stalls %v): %+v", rate, k, counts, stalls, ds)
			}
		}
	}
}

// poisson draws a Poisson count of mean m (by its normal approximation above 30).
func poisson(rng *rand.Rand, m float64) int64 {
	if m > 30 {
		return max(0, int64(m+rng.NormFloat64()*sqrt(m)+0.5))
	}
	var n int64
	for p := rng.Float64(); p > expNeg(m); p *= rng.Float64() {
		n++
	}
	return n
}

// TestDiskStall: a second in which the machine's IO pressure was full and every terminal
// waited is named the disk's, placed, and its cost is what the run lacked.
func TestDiskStall(t *testing.T) {
	counts := []int64{1200, 1210, 600, 1190, 1205}
	stalls := []int64{6, 5, 560, 7, 6}
	r := run(counts, stalls, func(name string, at time.Duration) (float64, bool) {
		if name == signals.HostIOFull && at >= 2*time.Second && at < 2500*time.Millisecond {
			return 0.96, true
		}
		return quiet(name, at)
	})
	ds := Find(r)
	if len(ds) != 1 {
		t.Fatalf("disturbances %+v, want one", ds)
	}
	d := ds[0]
	if d.Cause != CauseDisk || d.From > 2*time.Second || d.To != 3*time.Second {
		t.Errorf("%+v: want the disk's, from 2 s or before to 3 s", d)
	}
	if d.Lost < 500*time.Millisecond || d.Lost > 560*time.Millisecond {
		t.Errorf("lost %v, want half a second (600 of 1200 transactions), or the stall's excess", d.Lost)
	}
	for _, want := range []string{"IO pressure full", "no transaction ended for 560 ms"} {
		if !strings.Contains(d.Evidence, want) {
			t.Errorf("evidence %q lacks %q", d.Evidence, want)
		}
	}
	if !Disturbed(&results.Run{Summary: r.Summary, Disturbances: ds}) {
		t.Error("half a second of 5 s lost to the disk is not Disturbed")
	}
}

// TestCheckpoint: the same stall while the server writes a checkpoint is the server's own,
// not external.
func TestCheckpoint(t *testing.T) {
	r := run([]int64{1200, 1210, 600, 1190, 1205}, []int64{6, 5, 560, 7, 6}, func(name string, at time.Duration) (float64, bool) {
		switch {
		case name == signals.HostIOFull && at >= 2*time.Second && at < 2500*time.Millisecond:
			return 0.9, true
		case name == "db.checkpointing":
			return map[bool]float64{true: 1}[at >= time.Second && at < 3*time.Second], true
		}
		return quiet(name, at)
	})
	ds := Find(r)
	if len(ds) != 1 || ds[0].Cause != CauseCheckpoint || External(ds[0].Cause) {
		t.Fatalf("disturbances %+v, want one, the checkpoint's", ds)
	}
	if Disturbed(&results.Run{Summary: r.Summary, Disturbances: ds}) {
		t.Error("a checkpoint makes a run Disturbed: it is the server's own work")
	}
}

// TestSlowRateStall: at a few transactions a second, a count cannot show a stall of a
// second, but the stall itself does.
func TestSlowRateStall(t *testing.T) {
	r := run([]int64{9, 10, 8, 3, 9, 10}, []int64{310, 280, 330, 1250, 300, 290}, func(name string, at time.Duration) (float64, bool) {
		if name == signals.HostIOFull && at >= 2750*time.Millisecond && at < 4*time.Second {
			return 1, true
		}
		return quiet(name, at)
	})
	ds := Find(r)
	if len(ds) != 1 || ds[0].Cause != CauseDisk || ds[0].Lost < 900*time.Millisecond {
		t.Fatalf("disturbances %+v, want the disk's, costing the stall's excess over the usual (940 ms)", ds)
	}
}

// TestOtherProcessThroughout: a process that spins beside the whole run slows it evenly:
// no dip against its own median, but the window's CPU names it.
func TestOtherProcessThroughout(t *testing.T) {
	r := run(flat(5, 600), flat(5, 20), func(name string, at time.Duration) (float64, bool) {
		switch name {
		case signals.HostBusy:
			return 2, true
		case signals.DblatCPU:
			return 0.4, true
		case signals.ServerCPU:
			return 0.6, true
		case "proc.812.stress-ng":
			return 0.98, true
		}
		return quiet(name, at)
	})
	ds := Find(r)
	if len(ds) != 1 || ds[0].Cause != CauseCPU || !strings.Contains(ds[0].Evidence, "stress-ng (pid 812) 98 %") {
		t.Fatalf("disturbances %+v, want the CPU's, naming stress-ng", ds)
	}
	if want := 2500 * time.Millisecond; ds[0].Lost != want {
		t.Errorf("lost %v, want %v (one of two CPUs over 5 s)", ds[0].Lost, want)
	}
}

// TestUnknown: a dip no signal explains is named as such, and is not external.
func TestUnknown(t *testing.T) {
	ds := Find(run([]int64{1200, 300, 1190, 1205, 1210}, flat(5, 6), quiet))
	if len(ds) != 1 || ds[0].Cause != CauseUnknown || External(ds[0].Cause) {
		t.Fatalf("disturbances %+v, want one of unknown cause", ds)
	}
}

// TestOtherProcessWrites: a dip that no pressure, CPU or server signal explains, while the
// machine's disks wrote 40 times what they wrote in the rest of the window, is the disk's
// (another process writing with direct IO); the same writes at the run's usual rate, or
// too little to matter, leave it unknown.
func TestOtherProcessWrites(t *testing.T) {
	counts := []int64{1200, 1210, 700, 1190, 1205}
	writes := func(rate float64) func(string, time.Duration) (float64, bool) {
		return func(name string, at time.Duration) (float64, bool) {
			if name == signals.HostDiskWrite && at >= 2*time.Second && at < 3*time.Second {
				return rate, true
			}
			return quiet(name, at)
		}
	}
	ds := Find(run(counts, flat(5, 6), writes(120)))
	if len(ds) != 1 || ds[0].Cause != CauseDisk || !strings.Contains(ds[0].Evidence, "disks wrote") {
		t.Fatalf("disturbances %+v, want one of the disk's, its writes the evidence", ds)
	}
	for _, rate := range []float64{3, 10} {
		if ds := Find(run(counts, flat(5, 6), writes(rate))); len(ds) != 1 || ds[0].Cause != CauseUnknown {
			t.Errorf("disks writing %.0f MB/s: disturbances %+v, want one of unknown cause", rate, ds)
		}
	}
}

// TestTooShort: a window of two intervals has no median to judge against.
func TestTooShort(t *testing.T) {
	if ds := Find(run([]int64{1200, 10}, []int64{5, 900}, quiet)); ds != nil {
		t.Errorf("disturbances %+v in two intervals", ds)
	}
}

func sqrt(x float64) float64   { return math.Sqrt(x) }
func expNeg(x float64) float64 { return math.Exp(-x) }

// TestSlowHost: a run whose canary took more than the margin longer than its comparison's
// is named a slower machine, its cost the share of the work done slower times the share of
// the window its CPUs were busy; within the margin, or without canaries, it is not.
func TestSlowHost(t *testing.T) {
	r := run(flat(5, 1000), flat(5, 5), func(name string, at time.Duration) (float64, bool) {
		if name == signals.HostBusy {
			return 1.5, true
		}
		return quiet(name, at)
	})
	r.Client.CanaryUs = 420
	d, ok := SlowHost(r, 350)
	if !ok || d.Cause != CauseHost || !External(d.Cause) {
		t.Fatalf("%+v, %v", d, ok)
	}
	// (1 − 350/420) × 1.5/2 × 5 s = 625 ms.
	if want := 625 * time.Millisecond; d.Lost < want-time.Millisecond || d.Lost > want+time.Millisecond {
		t.Errorf("lost %v, want %v", d.Lost, want)
	}
	if !strings.Contains(d.Evidence, "20 % slower") {
		t.Errorf("evidence %q", d.Evidence)
	}
	r.Client.CanaryUs = 370
	if _, ok := SlowHost(r, 350); ok {
		t.Error("6 % slower named: within the margin")
	}
	r.Client.CanaryUs = 0
	if _, ok := SlowHost(r, 350); ok {
		t.Error("named without a canary")
	}
}

// TestOperation: the dip of a backup dblat started in the window, whose tool took a CPU
// and the disk, is the operation's, named with its times, neither unexplained nor
// external; without the operation the same run is the CPU's. A process that spins
// throughout is still named outside the operation's time.
func TestOperation(t *testing.T) {
	backup := func(name string, at time.Duration) (float64, bool) {
		if at >= 2*time.Second && at < 4*time.Second {
			switch name {
			case signals.HostIOFull:
				return 0.5, true
			case "proc.900.pg_basebackup":
				return 0.9, true
			case signals.HostBusy:
				return 2, true
			case signals.ServerCPU:
				return 0.5, true
			}
		}
		return quiet(name, at)
	}
	counts, stalls := []int64{1200, 1210, 500, 450, 1190, 1205}, flat(6, 6)
	r := run(counts, stalls, backup)
	if ds := Find(r); len(ds) != 1 || ds[0].Cause != CauseDisk {
		t.Fatalf("without the operation: %+v, want the disk's", ds)
	}
	r.Operations = []results.Operation{{Name: "backup", Tool: "pg_basebackup -X stream -c fast", At: 2 * time.Second,
		Started: 2*time.Second + 3*time.Millisecond, Ended: 4 * time.Second, Outcome: results.OperationDone}}
	ds := Find(r)
	if len(ds) != 1 || ds[0].Cause != CauseOperation || External(ds[0].Cause) {
		t.Fatalf("disturbances %+v, want one, the operation's", ds)
	}
	for _, want := range []string{"dblat's backup (pg_basebackup -X stream -c fast) ran from 2.0 s to 4.0 s, done", "IO pressure full"} {
		if !strings.Contains(ds[0].Evidence, want) {
			t.Errorf("evidence %q lacks %q", ds[0].Evidence, want)
		}
	}
	if Disturbed(&results.Run{Summary: r.Summary, Disturbances: ds}) {
		t.Error("dblat's own operation makes a run Disturbed")
	}
	// A quiet run with an operation that cost nothing: its tool's CPU is not another
	// process's load over the window.
	quietOp := run(flat(6, 1200), flat(6, 6), func(name string, at time.Duration) (float64, bool) {
		switch {
		case name == "proc.900.pg_basebackup":
			return 0.9, true
		case name == signals.HostBusy:
			return 2, true
		case name == signals.ServerCPU:
			return 0.5, true
		}
		return quiet(name, at)
	})
	if ds := Find(quietOp); len(ds) != 1 || ds[0].Cause != CauseCPU {
		t.Fatalf("without the operation: %+v, want the CPU's throughout", ds)
	}
	quietOp.Operations = []results.Operation{{Name: "vacuum", Started: 0, Ended: 6 * time.Second, Outcome: results.OperationDone}}
	if ds := Find(quietOp); len(ds) != 0 {
		t.Errorf("a run whose only load beside it was its operation: %+v", ds)
	}
}
