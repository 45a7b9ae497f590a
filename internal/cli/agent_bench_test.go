package cli_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/stats"
)

// dblatChild runs dblat as a child process (this test binary, see TestMain) with its state
// in dir and waits for it.
func dblatChild(tb testing.TB, dir string, args ...string) {
	tb.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "DBLAT_CLI_CHILD=1", "DBLAT_STATE="+filepath.Join(dir, "state"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		tb.Fatalf("dblat %v: %v\n%s", args, err, out.String())
	}
}

// BenchmarkAgents prints the figures issue 15 asks for: the start skew of three agents
// (latest minus earliest actual start of the parts) and the throughput of select-only with
// 12 terminals as 3 agents × 4 against one process × 12, side by side in each round
// (3 rounds, medians). Every process shares this machine's cores with the server, so the
// ratio measures the cost of the split on one machine, not the gain of several.
func BenchmarkAgents(b *testing.B) {
	target := pgtest.NewDatabase(b)
	storeDSN := pgtest.NewDatabase(b)
	dir := b.TempDir()
	dblatChild(b, dir, "load", "simple", "select-only", "--target", target, "--scale", "1")
	for _, name := range []string{"b1", "b2", "b3"} {
		cmd := exec.Command(os.Args[0], "--results", storeDSN, "--no-cpu-latency-hold", "agent", "--name", name)
		cmd.Env = append(os.Environ(), "DBLAT_CLI_CHILD=1", "DBLAT_STATE="+filepath.Join(dir, "state"))
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	}
	ctx := context.Background()
	store, err := results.Open(ctx, storeDSN)
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	latest := func() *results.Run {
		rs, err := store.List(ctx, results.Filter{Limit: 1})
		if err != nil || len(rs) != 1 || rs[0].Status != results.StatusFinished {
			b.Fatalf("latest run: %+v, %v", rs, err)
		}
		return &rs[0]
	}
	const rounds = 3
	run := []string{"--results", storeDSN, "--no-cpu-latency-hold", "run", "simple", "select-only", "--target", target,
		"--terminals", "12", "--duration", "5s", "--warmup", "1s", "--print-every", "0"}
	var skews, ratios, single, merged []float64
	for range b.N {
		for range rounds {
			dblatChild(b, dir, run...)
			one := latest().Summary.TPS
			dblatChild(b, dir, append(run, "--agents", "3", "--agents-wait", "30s")...)
			m := latest()
			single, merged = append(single, one), append(merged, m.Summary.TPS)
			skews = append(skews, float64(m.StartSkew.Microseconds()))
			ratios = append(ratios, m.Summary.TPS/one)
		}
	}
	b.ReportMetric(stats.Median(skews), "skew-µs")
	b.ReportMetric(stats.Median(ratios), "merged/single")
	b.Logf("select-only, 12 terminals, %d rounds (shared 2-core machine): start skew µs %v (median %.0f); TPS one process %v, 3 agents × 4 %v; ratio median %.3f",
		len(ratios), skews, stats.Median(skews), rounded(single), rounded(merged), stats.Median(ratios))
}

func rounded(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(int(x + 0.5))
	}
	return out
}
