package simple_test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
	"github.com/dblat/dblat/internal/runner"
	"github.com/dblat/dblat/internal/spec"
	"github.com/dblat/dblat/internal/stats"
	"github.com/dblat/dblat/internal/workload/simple"
)

// BenchmarkSelectOnlyVsPgbench is the figure of issue 7: select-only at 10 terminals through
// the real runner (10 s measured after 2 s of warm-up, every connection metered as in a real
// run) beside `pgbench -S -M prepared -c 10 -j 2 -T 10` on the same PostgreSQL database,
// loaded once by simple.Load (pgbench runs on those tables as they are). The two alternate
// for three rounds, because the 2-core machine is shared; it reports the medians and the
// median of the per-round ratios dblat/pgbench (the target is ≥ 0.9).
//
//	go test ./internal/workload/simple -run '^$' -bench SelectOnlyVsPgbench -benchtime 1x
func BenchmarkSelectOnlyVsPgbench(b *testing.B) {
	const terminals, rounds = 10, 3
	const window, warmup = 10 * time.Second, 2 * time.Second
	ctx := context.Background()
	dsn := pgtest.NewDatabase(b)
	tg := open(b, engines()[0], dsn)
	if err := simple.Load(ctx, tg, simple.LoadConfig{Workload: "select-only", Scale: 1}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		var dblat, pgb, ratios, cpu []float64
		for r := range rounds {
			w, err := simple.New(tg, simple.Config{Workload: "select-only", Seed: int64(r)})
			if err != nil {
				b.Fatal(err)
			}
			res, err := runner.Run(ctx, tg, w, runner.Config{Drive: spec.Drive{Terminals: terminals, Warmup: warmup, Duration: window}})
			w.Close()
			if err != nil {
				b.Fatal(err)
			}
			if len(res.Summary.Errors) > 0 {
				b.Fatalf("select-only errors: %v", res.Summary.Errors)
			}
			tps, cpuPerTx := pgbench(b, dsn, terminals, window, "-S", "-M", "prepared")
			dblat, pgb, ratios = append(dblat, res.Summary.TPS), append(pgb, tps), append(ratios, res.Summary.TPS/tps)
			cpu = append(cpu, res.CPUSeconds/float64(res.Summary.Committed)*1e6, cpuPerTx*1e6)
			b.Logf("round %d: dblat %.0f tps (%.1f µs CPU/tx), pgbench %.0f tps (%.1f µs CPU/tx): ratio %.3f",
				r+1, res.Summary.TPS, cpu[len(cpu)-2], tps, cpu[len(cpu)-1], res.Summary.TPS/tps)
		}
		b.ReportMetric(stats.Median(dblat), "dblat-tps")
		b.ReportMetric(stats.Median(pgb), "pgbench-tps")
		b.ReportMetric(stats.Median(ratios), "ratio")
	}
}

var tpsRe = regexp.MustCompile(`tps = ([0-9.]+) \(without initial connection time\)`)

// pgbench runs pgbench with args on dsn for d and returns its TPS and its own CPU seconds per
// transaction.
func pgbench(b *testing.B, dsn string, clients int, d time.Duration, args ...string) (float64, float64) {
	b.Helper()
	bin := filepath.Join(pgtest.Server(b).Binaries, "pgbench")
	args = append(args, "-c", strconv.Itoa(clients), "-j", "2", "-T", fmt.Sprint(int(d.Seconds())), dsn)
	cmd := exec.Command(bin, args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("pgbench: %v\n%s", err, out)
	}
	m := tpsRe.FindSubmatch(out)
	if m == nil {
		b.Fatalf("no tps in pgbench output:\n%s", out)
	}
	tps, _ := strconv.ParseFloat(string(m[1]), 64)
	cpu := (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
	return tps, cpu / (tps * d.Seconds())
}

// BenchmarkSelectOnlyPaths measures what each step of the select-only hot path buys: 10
// terminals through the runner for 5 s (after 1 s of warm-up), on three paths that send the
// same bytes (a named prepared statement, Bind/Execute/Sync, one round trip):
//
//   - stmt: a *sql.Stmt prepared on each pooled *sql.Conn (the portable path);
//   - cache: the statement text with pgx.QueryExecModeCacheStatement on the *sql.Conn, pgx
//     caching the prepared statement per connection (QueryProtocols);
//   - raw: the same through (*sql.Conn).Raw on the pgx connection (RowQuerier).
//
// The paths alternate for three rounds; it reports the median TPS and the median client
// CPU per transaction of each.
//
//	go test ./internal/workload/simple -run '^$' -bench SelectOnlyPaths -benchtime 1x
func BenchmarkSelectOnlyPaths(b *testing.B) {
	const rounds = 3
	ctx := context.Background()
	dsn := pgtest.NewDatabase(b)
	paths := []struct {
		name string
		e    engine.Engine
	}{{"stmt", pgStmt{}}, {"cache", pgProtocols{}}, {"raw", pgRaw{}}}
	if err := simple.Load(ctx, open(b, paths[0].e, dsn), simple.LoadConfig{Workload: "select-only", Scale: 1}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		tps := map[string][]float64{}
		cpu := map[string][]float64{}
		for r := range rounds {
			for _, p := range paths {
				tg := open(b, p.e, dsn)
				w, err := simple.New(tg, simple.Config{Workload: "select-only", Seed: int64(r)})
				if err != nil {
					b.Fatal(err)
				}
				res, err := runner.Run(ctx, tg, w, runner.Config{Drive: spec.Drive{Terminals: 10, Warmup: time.Second, Duration: 5 * time.Second}})
				w.Close()
				tg.DB.Close()
				if err != nil {
					b.Fatal(err)
				}
				tps[p.name] = append(tps[p.name], res.Summary.TPS)
				cpu[p.name] = append(cpu[p.name], res.CPUSeconds/float64(res.Summary.Committed)*1e6)
				b.Logf("round %d %-5s %6.0f tps %5.1f µs CPU/tx", r+1, p.name, res.Summary.TPS, cpu[p.name][r])
			}
		}
		for _, p := range paths {
			b.ReportMetric(stats.Median(tps[p.name]), p.name+"-tps")
			b.ReportMetric(stats.Median(cpu[p.name]), p.name+"-cpu-us/tx")
		}
	}
}
