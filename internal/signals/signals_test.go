package signals

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/results"
)

// burn starts a process that spins on a CPU until the test ends, and returns its PID.
func burn(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sh", "-c", "while :; do :; done")
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot start a shell: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd.Process.Pid
}

func byName(sigs []results.Signal) map[string][]results.Signal {
	out := map[string][]results.Signal{}
	for _, s := range sigs {
		out[s.Name] = append(out[s.Name], s)
	}
	return out
}

// TestSamplerRecordsHostSignals: every interval has the host's CPU figures, dblat's CPU
// and stall, and (where the kernel has them) the pressure shares, each within its range;
// the intervals tile the sampled time, and offsets are measured from the window's start.
func TestSamplerRecordsHostSignals(t *testing.T) {
	s := Start(Config{Every: 50 * time.Millisecond})
	time.Sleep(300 * time.Millisecond)
	window := time.Now()
	time.Sleep(100 * time.Millisecond)
	sigs, notes := s.Stop(window)
	names := byName(sigs)
	want := []string{HostBusy, HostSteal, HostIOWait, HostCPUs, HostDirty, HostDiskWrite, HostCanary, DblatCPU, DblatStall}
	if _, err := os.Stat("/proc/pressure/io"); err == nil {
		want = append(want, HostIOSome, HostIOFull, HostCPUSome, HostMemorySome, HostMemoryFull)
		if len(notes) > 0 {
			t.Errorf("notes %q on a kernel with pressure information", notes)
		}
	} else if len(notes) == 0 {
		t.Error("no note on a kernel without pressure information")
	}
	for _, n := range want {
		if len(names[n]) < 2 {
			t.Errorf("%s: %d intervals, want at least 2", n, len(names[n]))
		}
	}
	for _, sg := range sigs {
		if sg.Span <= 0 {
			t.Errorf("%+v: no span", sg)
		}
		switch {
		case strings.HasSuffix(sg.Name, ".some"), strings.HasSuffix(sg.Name, ".full"), sg.Name == HostSteal, sg.Name == HostIOWait:
			if sg.Value < 0 || sg.Value > 1 {
				t.Errorf("%+v: a share outside [0, 1]", sg)
			}
		case sg.Value < 0:
			t.Errorf("%+v: negative", sg)
		}
	}
	busy := names[HostBusy]
	if busy[0].Offset >= 0 || busy[len(busy)-1].Offset <= 0 {
		t.Errorf("offsets from %v to %v: want the warm-up's negative and the window's positive", busy[0].Offset, busy[len(busy)-1].Offset)
	}
	for i := 1; i < len(busy); i++ {
		if gap := busy[i].Offset - busy[i].Span - busy[i-1].Offset; gap != 0 {
			t.Errorf("intervals %d and %d leave %v between them", i-1, i, gap)
		}
	}
}

// TestSamplerMeasuresServerTree: a "server" whose process tree spins is charged its CPU
// (ServerCPU), not counted among the others, and not named as another process.
func TestSamplerMeasuresServerTree(t *testing.T) {
	pid := burn(t)
	before, _ := procTicks(pid)
	s := Start(Config{Every: 100 * time.Millisecond, ServerPID: pid})
	time.Sleep(1500 * time.Millisecond)
	sigs, _ := s.Stop(time.Time{})
	after, _ := procTicks(pid)
	var server float64
	for _, sg := range byName(sigs)[ServerCPU] {
		server += sg.Value * sg.Span.Seconds()
	}
	// The tree's CPU is read at the intervals' ends, in ticks of 10 ms: within two ticks of
	// the process's own count over a span that includes the sampler's.
	if spent := float64(after.ticks-before.ticks) / userHZ; server > spent+0.02 || (spent > 0.5 && server <= 0) {
		t.Errorf("server CPU %.3f s over the sampling, the process used %.3f s in a longer span", server, spent)
	}
	for _, sg := range sigs {
		if p, _, ok := ParseProcessName(sg.Name); ok && p == pid {
			t.Errorf("the server's process named as another: %+v", sg)
		}
	}
}

// TestBusiestNamesTheBusiest: a scan names, among the processes other than dblat and the
// server, the busiest since the last scan: the spinning process, or others that were at
// least as busy.
func TestBusiestNamesTheBusiest(t *testing.T) {
	pid := burn(t)
	h := newHost(Config{})
	if got := h.busiest(time.Now()); got != nil {
		t.Errorf("the first scan named %v: it has nothing to compare with", got)
	}
	before := h.others[pid]
	time.Sleep(500 * time.Millisecond)
	start := h.othersAt
	got := h.busiest(time.Now())
	span := h.othersAt.Sub(start).Seconds()
	burnt := float64(h.others[pid].ticks-before.ticks) / userHZ / span
	named := false
	for _, v := range got {
		p, comm, ok := ParseProcessName(v.name)
		if !ok {
			t.Fatalf("bad name %q", v.name)
		}
		if p == pid {
			named = true
			if comm != "sh" {
				t.Errorf("named %q, want sh", comm)
			}
		}
	}
	if !named && burnt >= 0.05 {
		if len(got) < topProcesses {
			t.Errorf("the spinning process (%.2f CPUs) is not named among %v", burnt, got)
		}
		for _, v := range got {
			if v.val < burnt {
				t.Errorf("%s (%.2f CPUs) named before the spinning process (%.2f)", v.name, v.val, burnt)
			}
		}
	}
}

// TestSamplerReadsTheServer: the server's counters are stored as their difference per
// interval, its gauges as read, under "db."; a counter that goes backwards (a restart) has
// no interval; a reading that fails stops the server's signals with a note.
func TestSamplerReadsTheServer(t *testing.T) {
	var n atomic.Int64
	read := func(ctx context.Context) ([]Reading, error) {
		i := n.Add(1)
		switch {
		case i == 3:
			return []Reading{{Name: "syncs", Value: 1, Counter: true}, {Name: "waiting", Value: float64(i)}}, nil
		case i > 4:
			return nil, errors.New("gone\nsecond line")
		}
		return []Reading{{Name: "syncs", Value: float64(10 * i), Counter: true}, {Name: "waiting", Value: float64(i)}}, nil
	}
	s := Start(Config{Every: time.Hour, ServerEvery: 20 * time.Millisecond, Server: read})
	for noted := false; !noted; {
		time.Sleep(10 * time.Millisecond)
		s.mu.Lock()
		noted = len(s.notes) > 0
		s.mu.Unlock()
	}
	sigs, notes := s.Stop(time.Time{})
	names := byName(sigs)
	var syncs, waiting []float64
	for _, sg := range names[EnginePrefix+"syncs"] {
		syncs = append(syncs, sg.Value)
	}
	for _, sg := range names[EnginePrefix+"waiting"] {
		waiting = append(waiting, sg.Value)
	}
	// Readings 1..4: syncs 10, 20, 1 (reset), 40; waiting 1..4.
	if len(syncs) != 2 || syncs[0] != 10 || syncs[1] != 39 {
		t.Errorf("syncs per interval %v, want [10 39]", syncs)
	}
	if len(waiting) != 3 || waiting[0] != 2 || waiting[2] != 4 {
		t.Errorf("waiting per interval %v, want [2 3 4]", waiting)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "gone") || strings.Contains(notes[0], "second line") {
		t.Errorf("notes %q, want one line saying the reading failed", notes)
	}
}

// TestStallWatch: a goroutine that keeps dblat's process from running its other
// goroutines cannot be staged portably, but the watch's own arithmetic can: the longest
// lateness of its ticks is what the host sampler takes, and taking it starts anew.
func TestStallWatch(t *testing.T) {
	s := &Sampler{}
	s.stall.Store(int64(300 * time.Millisecond))
	h := newHost(Config{})
	prev := h.read(time.Now().Add(-time.Second))
	s.flushHost(h, prev, time.Now())
	var got []float64
	for _, p := range s.points {
		if p.name == DblatStall {
			got = append(got, p.val)
		}
	}
	if len(got) != 1 || got[0] != 0.3 || s.stall.Load() != 0 {
		t.Errorf("stall %v, left %v: want [0.3] and 0", got, s.stall.Load())
	}
}

// TestCanary: the canary's CPU time is positive, and Canary is the median of a run's.
func TestCanary(t *testing.T) {
	h := newHost(Config{})
	us, ok := h.canary()
	if !ok {
		t.Skip("no thread CPU time here")
	}
	if us <= 0 {
		t.Errorf("canary took %v µs", us)
	}
	sigs := []results.Signal{{Name: HostCanary, Value: 300}, {Name: HostBusy, Value: 9}, {Name: HostCanary, Value: 500}, {Name: HostCanary, Value: 320}}
	if got := Canary(sigs); got != 320 {
		t.Errorf("Canary %v, want the median 320", got)
	}
	if got := Canary(nil); got != 0 {
		t.Errorf("Canary of none %v", got)
	}
}
