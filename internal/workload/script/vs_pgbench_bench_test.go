package script

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/engine/postgres"
	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
	"github.com/dblat/dblat/internal/runner"
	"github.com/dblat/dblat/internal/spec"
	"github.com/dblat/dblat/internal/stats"
	"github.com/dblat/dblat/internal/workload"
	"github.com/dblat/dblat/internal/workload/simple"
)

// BenchmarkScriptVsPgbench is the figure of issue 23: pgbench's built-in tpcb-like and
// select-only scripts, as `pgbench --show-script` writes them, run by dblat's script
// workload through the runner (what `dblat run script -f` runs: 8 terminals, every
// connection metered, 10 s measured after 2 s of warm-up) and by `pgbench -n -f FILE -c 8
// -j 2 -T 10` against the same managed PostgreSQL database, loaded once (scale 1), in each
// of -M simple and -M prepared. The two alternate for three rounds on the shared machine,
// dblat first in the first and third, pgbench first in the second.
// It prints, per script and protocol, the median of the per-round ratios of TPS
// (dblat/pgbench; the target is ≥ 0.95) and of client CPU per transaction (dblat's own
// process against pgbench's; the target is ≤ 1.5), and dblat's round trips per transaction
// (exactly 7 and 1).
//
//	go test ./internal/workload/script -run '^$' -bench ScriptVsPgbench -benchtime 1x
func BenchmarkScriptVsPgbench(b *testing.B) {
	const clients, rounds = 8, 3
	const window, warmup = 10 * time.Second, 2 * time.Second
	ctx := context.Background()
	srv := pgtest.Server(b)
	bin := filepath.Join(srv.Binaries, "pgbench")
	dir := b.TempDir()
	scripts := []string{"tpcb-like", "select-only"}
	for _, s := range scripts {
		out, err := exec.Command(bin, "--show-script="+s).CombinedOutput()
		if err != nil {
			b.Fatalf("pgbench --show-script=%s: %v\n%s", s, err, out)
		}
		if err := os.WriteFile(filepath.Join(dir, s+".sql"), out, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	dsn := pgtest.NewDatabase(b)
	tg := openTarget(b, postgres.Engine{}, dsn)
	if err := simple.Load(ctx, tg, simple.LoadConfig{Workload: "tpcb", Scale: 1}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		tpsRatio, cpuRatio, trips := map[string][]float64{}, map[string][]float64{}, map[string]float64{}
		for r := range rounds {
			for _, s := range scripts {
				for _, proto := range []string{"simple", "prepared"} {
					key := s + "/" + proto
					w, err := New(tg, workload.Config{ScriptParams: spec.ScriptParams{Scripts: []string{s + ".sql"}}, Files: dirFiles(dir), Seed: int64(r + 1),
						Options: protocol(proto)})
					if err != nil {
						b.Fatal(err)
					}
					// Whoever runs second finds the other's dead rows and history: the
					// order alternates from round to round.
					var pTPS, pCPU float64
					if r%2 == 1 {
						pTPS, pCPU = runPgbenchFile(b, bin, dsn, filepath.Join(dir, s+".sql"), clients, window, proto)
					}
					res, err := runner.Run(ctx, tg, w, runner.Config{Drive: spec.Drive{Terminals: clients, Warmup: warmup, Duration: window}})
					w.Close()
					if err != nil {
						b.Fatal(err)
					}
					if len(res.Summary.Errors) > 0 || res.Summary.Committed == 0 {
						b.Fatalf("%s: %d committed, errors %v", key, res.Summary.Committed, res.Summary.Errors)
					}
					dCPU := res.CPUSeconds / float64(res.Summary.Committed)
					if r%2 == 0 {
						pTPS, pCPU = runPgbenchFile(b, bin, dsn, filepath.Join(dir, s+".sql"), clients, window, proto)
					}
					tpsRatio[key] = append(tpsRatio[key], res.Summary.TPS/pTPS)
					cpuRatio[key] = append(cpuRatio[key], dCPU/pCPU)
					trips[key] = res.Tx[0].RoundTrips
					b.Logf("round %d %-21s dblat %6.0f tps %6.1f µs CPU/tx %.2f round trips, pgbench %6.0f tps %6.1f µs CPU/tx: tps ratio %.3f, CPU ratio %.2f",
						r+1, key, res.Summary.TPS, dCPU*1e6, res.Tx[0].RoundTrips, pTPS, pCPU*1e6, res.Summary.TPS/pTPS, dCPU/pCPU)
				}
			}
		}
		for _, key := range slices.Sorted(maps.Keys(tpsRatio)) {
			b.ReportMetric(stats.Median(tpsRatio[key]), key+"-tps-ratio")
			b.ReportMetric(stats.Median(cpuRatio[key]), key+"-cpu-ratio")
			b.ReportMetric(trips[key], key+"-round-trips")
		}
	}
}

var pgbenchTPS = regexp.MustCompile(`tps = ([0-9.]+) \(without initial connection time\)`)

// runPgbenchFile runs `pgbench -n -f file -M protocol` with clients for d on dsn and returns
// its TPS and its own CPU seconds per transaction.
func runPgbenchFile(b *testing.B, bin, dsn, file string, clients int, d time.Duration, protocol string) (float64, float64) {
	b.Helper()
	cmd := exec.Command(bin, "-n", "-f", file, "-M", protocol, "-c", strconv.Itoa(clients), "-j", "2",
		"-T", fmt.Sprint(int(d.Seconds())), dsn)
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("pgbench: %v\n%s", err, out)
	}
	m := pgbenchTPS.FindSubmatch(out)
	if m == nil {
		b.Fatalf("no tps in pgbench output:\n%s", out)
	}
	tps, _ := strconv.ParseFloat(string(m[1]), 64)
	cpu := (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
	return tps, cpu / (tps * d.Seconds())
}
