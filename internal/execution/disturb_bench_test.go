package execution

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/disturb"
	"github.com/dblat/dblat/internal/latency"
	"github.com/dblat/dblat/internal/managed"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/spec"
	"github.com/dblat/dblat/internal/stats"
)

// BenchmarkDisturbances is issue 41's experiment, on a managed PostgreSQL (2 warehouses, 2
// terminals, RTT 0 through the link, 3 s warm-up, 5 s windows, the data restored before
// none of them), in four series of runs one after another:
//
//   - disk: eight runs with the data directory on disk: each run's NOPM and what disturbed
//     it (on a shared cloud VM the host's disk stalls every few seconds);
//   - memory: the same eight with the data directory in memory (storage: memory), with
//     selection: deck, and the CV of NOPM over the runs that no external cause disturbed;
//   - injected: a run on disk, then runs in memory, with a disturbance started a second
//     into their window — another process writing 2 GB to the state directory's disk with
//     direct IO, then as many busy loops as the machine has CPUs — each followed by a
//     quiet run: each disturbance must be named as what it is in its run, and the quiet
//     run after it not;
//   - quiet: ten runs in memory, counted with any disturbance named (target: none).
//
// It prints a line per run and the figures the issue judges. Run it alone.
//
//	go test ./internal/execution -run '^$' -bench Disturbances -benchtime 1x -v -timeout 60m
func BenchmarkDisturbances(b *testing.B) {
	c := benchCore(b)
	ctx := context.Background()
	for b.Loop() {
		disk := disturbedSeries(b, c, ctx, "dist-disk", managed.StorageDisk, 8, nil)
		mem := disturbedSeries(b, c, ctx, "dist-mem", managed.StorageMemory, 8, nil)
		storm := func(at time.Duration) func() {
			// Direct IO: the disk, not the page cache and the CPU that fills it.
			return inject(b, at, "dd", "if=/dev/zero", "of="+filepath.Join(c.Servers.Root, "storm"), "bs=1M", "count=2048", "oflag=direct", "conv=fsync")
		}
		spin := func(at time.Duration) func() {
			var stops []func()
			for range runtime.NumCPU() {
				stops = append(stops, inject(b, at, "sh", "-c", "while :; do :; done"))
			}
			return func() {
				for _, s := range stops {
					s()
				}
			}
		}
		diskStorm := disturbedSeries(b, c, ctx, "dist-disk", managed.StorageDisk, 2, []func(time.Duration) func(){storm, nil})
		injected := disturbedSeries(b, c, ctx, "dist-mem", managed.StorageMemory, 4, []func(time.Duration) func(){storm, nil, spin, nil})
		_ = os.Remove(filepath.Join(c.Servers.Root, "storm"))
		quiet := disturbedSeries(b, c, ctx, "dist-mem", managed.StorageMemory, 10, nil)

		named := func(rs []*results.Run) int {
			n := 0
			for _, r := range rs {
				if len(r.Disturbances) > 0 {
					n++
				}
			}
			return n
		}
		b.Logf("disk:   %d of %d runs disturbed; NOPM CV %s over all, %s over the undisturbed, %s where the machine's speed held",
			named(disk), len(disk), cvText(disk, false), cvText(disk, true), cvHeld(disk))
		b.Logf("memory: %d of %d runs disturbed; NOPM CV %s over all, %s over the undisturbed, %s where the machine's speed held",
			named(mem), len(mem), cvText(mem, false), cvText(mem, true), cvHeld(mem))
		for i, r := range diskStorm {
			what := []string{"a 2 GB direct write, on disk", "(quiet, on disk)"}[i]
			b.Logf("injected %-26s run %d: %s", what, r.ID, causes(r))
		}
		for i, r := range injected {
			what := []string{"a 2 GB direct write", "(quiet)", "busy loops on every CPU", "(quiet)"}[i]
			b.Logf("injected %-26s run %d: %s", what, r.ID, causes(r))
		}
		b.Logf("quiet:  %d of %d runs with a disturbance named (target 0)", named(quiet), len(quiet))
	}
}

// disturbedSeries runs n TPC-C runs on the managed server name (started with storage and
// loaded with 2 warehouses the first time), the i-th with the disturbance inject[i] started a second
// into its window when there is one, and logs each.
func disturbedSeries(b *testing.B, c *Core, ctx context.Context, name, storage string, n int, injects []func(time.Duration) func()) []*results.Run {
	b.Helper()
	if inst, err := c.Servers.Load(name); err != nil || inst.PID == 0 {
		if _, err := c.Start(ctx, ServerStart{Engine: "postgres", Name: name, Storage: storage, Settings: map[string]string{"shared_buffers": "128MB"}}); err != nil {
			b.Fatal(err)
		}
		if err := c.Load(ctx, name, LoadSpec{Workload: "tpcc", Scale: 2, Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
	var out []*results.Run
	for i := range n {
		var stop func()
		if i < len(injects) && injects[i] != nil {
			stop = injects[i](3*time.Second + time.Second) // the warm-up, then a second of the window
		}
		r, err := c.Run(ctx, nil, spec.Run{Target: name, Link: &latency.Config{DelayConnect: true},
			Params: spec.Params{Workload: "tpcc", Options: map[string]string{"selection": "deck"},
				Drive: spec.Drive{Terminals: 2, Duration: 5 * time.Second, Warmup: 3 * time.Second, Seed: 1, MaxTries: 1}}})
		if stop != nil {
			stop()
		}
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("%-9s run %3d: NOPM %6.0f  canary %3.0f µs  %s", name, r.ID, r.Summary.NOPM, r.Client.CanaryUs, causes(r))
		out = append(out, r)
	}
	return out
}

// inject starts a process after a delay and returns the function that stops it (by its
// PID) and waits for it.
func inject(b *testing.B, after time.Duration, name string, args ...string) func() {
	b.Helper()
	cmd := exec.Command(name, args...)
	started := make(chan struct{})
	timer := time.AfterFunc(after, func() {
		defer close(started)
		if err := cmd.Start(); err != nil {
			b.Errorf("%s: %v", name, err)
		}
	})
	return func() {
		if !timer.Stop() {
			<-started
			if cmd.Process != nil {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
			}
		}
	}
}

// causes says what disturbed r: each disturbance's cause, cost and evidence, or "quiet".
func causes(r *results.Run) string {
	if len(r.Disturbances) == 0 {
		return "quiet"
	}
	var parts []string
	for _, d := range r.Disturbances {
		parts = append(parts, fmt.Sprintf("%s %v (%s)", d.Cause, d.Lost.Round(10*time.Millisecond), d.Evidence))
	}
	return strings.Join(parts, "; ")
}

// cvText is the coefficient of variation of rs's NOPM, over the runs no external cause
// disturbed when undisturbed.
func cvText(rs []*results.Run, undisturbed bool) string {
	var keep []*results.Run
	for _, r := range rs {
		if !undisturbed || !disturb.Disturbed(r) {
			keep = append(keep, r)
		}
	}
	return cvOf(keep)
}

// cvHeld is cvText over the undisturbed runs whose canary was within
// disturb.SlowHostMargin of the series' median: where the machine's own speed held.
func cvHeld(rs []*results.Run) string {
	var cs []float64
	for _, r := range rs {
		cs = append(cs, r.Client.CanaryUs)
	}
	base := stats.Median(cs)
	var keep []*results.Run
	for _, r := range rs {
		if _, slow := disturb.SlowHost(r, base); !slow && !disturb.Disturbed(r) {
			keep = append(keep, r)
		}
	}
	return cvOf(keep)
}

// cvOf is the coefficient of variation of rs's NOPM, and how many runs it is over.
func cvOf(rs []*results.Run) string {
	var xs []float64
	for _, r := range rs {
		xs = append(xs, r.Summary.NOPM)
	}
	if len(xs) < 2 {
		return fmt.Sprintf("– (%d runs)", len(xs))
	}
	var m, ss float64
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return fmt.Sprintf("%.1f %% (%d runs)", 100*math.Sqrt(ss/float64(len(xs)-1))/m, len(xs))
}
