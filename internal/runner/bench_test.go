package runner_test

import (
	"context"
	"fmt"
	"github.com/dblat/dblat/internal/latency"
	"net"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/engine/postgres"
	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
	"github.com/dblat/dblat/internal/runner"
	"github.com/dblat/dblat/internal/spec"
	"github.com/dblat/dblat/internal/workload"
	"github.com/dblat/dblat/internal/workload/tpcc"
)

// BenchmarkRunnerOverhead runs TPC-C with 10 terminals at zero latency for 10 s and then
// pgbench (TPC-B-like, 10 clients, same duration) on the same PostgreSQL, and reports side by
// side: throughput, and the client's CPU per transaction and per round trip. It is the figure
// of the foundation issue: what dblat itself costs, next to a lean C client.
//
//	go test ./internal/runner -run '^$' -bench RunnerOverhead -benchtime 1x
func BenchmarkRunnerOverhead(b *testing.B) {
	const terminals, window = 10, 10 * time.Second
	ctx := context.Background()
	dsn := pgtest.NewDatabase(b)
	e := postgres.Engine{}
	// Meter every pooled connection, as a real run does, so round trips are counted.
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return latency.MeterInto(ctx, c), nil
	}
	db, err := e.Open(ctx, dsn, engine.OpenOptions{Dial: dial})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	tg := workload.Target{Engine: e, DB: db}
	if err := tpcc.Load(ctx, tg, tpcc.LoadConfig{Warehouses: 2, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		w, err := tpcc.New(tg, tpcc.Config{Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		res, err := runner.Run(ctx, tg, w, runner.Config{Drive: spec.Drive{Terminals: terminals, Warmup: 2 * time.Second, Duration: window}, NOPMType: "new_order"})
		if err != nil {
			b.Fatal(err)
		}
		done := float64(res.Summary.Committed + res.Summary.Rollbacks)
		var trips float64
		for _, tx := range res.Tx {
			trips += tx.RoundTrips * float64(tx.Committed+tx.Rollbacks)
		}
		b.ReportMetric(res.Summary.NOPM, "NOPM")
		b.ReportMetric(res.Summary.TPS, "dblat-tps")
		b.ReportMetric(res.CPUSeconds/done*1e6, "dblat-cpu-us/tx")
		b.ReportMetric(res.CPUSeconds/trips*1e6, "dblat-cpu-us/roundtrip")

		tps, cpuPerTx := pgbench(b, dsn, terminals, window)
		b.ReportMetric(tps, "pgbench-tps")
		b.ReportMetric(cpuPerTx*1e6, "pgbench-cpu-us/tx")
		// pgbench's TPC-B-like transaction is 7 statements, one round trip each (-M prepared).
		b.ReportMetric(cpuPerTx/7*1e6, "pgbench-cpu-us/roundtrip")
	}
}

var tpsRe = regexp.MustCompile(`tps = ([0-9.]+) \(without initial connection time\)`)

// pgbench runs pgbench's built-in TPC-B-like script and returns its TPS and its own CPU
// seconds per transaction.
func pgbench(b *testing.B, dsn string, clients int, d time.Duration) (float64, float64) {
	bin := filepath.Join(pgtest.Server(b).Binaries, "pgbench")
	if out, err := exec.Command(bin, "-i", "-q", "-s", "10", dsn).CombinedOutput(); err != nil {
		b.Fatalf("pgbench -i: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "-M", "prepared", "-c", strconv.Itoa(clients), "-j", "2", "-T", fmt.Sprint(int(d.Seconds())), dsn)
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
