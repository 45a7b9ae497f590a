package runner_test

import (
	"context"
	"fmt"
	"github.com/dblat/dblat/internal/latency"
	"math/rand/v2"
	"net"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/engine/firebird"
	"github.com/dblat/dblat/internal/engine/firebird/fbtest"
	"github.com/dblat/dblat/internal/engine/postgres"
	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
	"github.com/dblat/dblat/internal/runner"
	"github.com/dblat/dblat/internal/spec"
	"github.com/dblat/dblat/internal/stats"
	"github.com/dblat/dblat/internal/workload"
	"github.com/dblat/dblat/internal/workload/simple"
	"github.com/dblat/dblat/internal/workload/tpcc"
)

// BenchmarkClientCPU is issue 26's first and last figures: dblat's CPU per round trip
// running TPC-C in client mode (4 terminals, 2 warehouses, no added RTT, 10 s windows) on
// PostgreSQL and on Firebird (SuperServer), against pgbench's per round trip running its
// select-only script (`-S -M prepared -c 4 -j 1`: one round trip per transaction) on the
// same PostgreSQL. The three alternate for three rounds; it reports each one's median and
// the ratios of the medians (targets: PostgreSQL ≤ 2× pgbench, Firebird ≤ 3×). A client's
// CPU is its process's user and system time over the window: dblat's from the runner
// (Result.CPUSeconds), pgbench's from its process.
//
// The -1p figures are the same TPC-C runs with the Go runtime held to one P (GOMAXPROCS 1,
// restored after), as pgbench -j 1 has one thread: they measure the share of dblat's CPU
// that is the runtime's idle path with two Ps (on every wake-up from idle it wakes a second
// thread to look for work, which finds none and sleeps again), which no change to dblat's
// own code removes. With one P the client queues its terminals behind each other, so it is
// not dblat's default (a select-only run at RTT 0 lost 30 % of its TPS so).
//
// Two more rows run pgbench's own statement (`SELECT abalance FROM pgbench_accounts WHERE
// aid = $1`, prepared, 4 connections), so that TPC-C's ratio splits into what a Go client
// of this driver costs on pgbench's round trip and what TPC-C's round trips add: dblat's
// select-only workload through the runner (select-us/roundtrip), and a plain loop of the
// driver as an application would write it, with none of dblat (pgconn-us/roundtrip: four
// goroutines of pgconn.ExecPrepared over Go's net.Conn, the process's CPU). TPC-C's round
// trips go through database/sql and carry more values and rows.
//
//	go test ./internal/runner -run '^$' -bench ClientCPU -benchtime 1x
func BenchmarkClientCPU(b *testing.B) {
	const terminals, rounds, window = 4, 3, 10 * time.Second
	ctx := context.Background()
	pgDSN := pgtest.NewDatabase(b)
	pg := metered(b, postgres.Engine{}, pgDSN)
	fb := metered(b, firebird.Engine{}, fbtest.NewDatabase(b, "Super"))
	for _, tg := range []workload.Target{pg, fb} {
		if err := tpcc.Load(ctx, tg, tpcc.LoadConfig{Warehouses: 2, Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
	bin := filepath.Join(pgtest.Server(b).Binaries, "pgbench")
	if out, err := exec.Command(bin, "-i", "-q", "-s", "1", pgDSN).CombinedOutput(); err != nil {
		b.Fatalf("pgbench -i: %v\n%s", err, out)
	}
	sel := metered(b, postgres.Engine{}, pgtest.NewDatabase(b))
	if err := simple.Load(ctx, sel, simple.LoadConfig{Workload: "select-only", Scale: 1}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		per := map[string][]float64{}
		for r := range rounds {
			for _, c := range []struct {
				name string
				tg   workload.Target
				oneP bool
			}{{"postgres", pg, false}, {"firebird", fb, false}, {"postgres-1p", pg, true}, {"firebird-1p", fb, true}} {
				procs := runtime.GOMAXPROCS(0)
				if c.oneP {
					runtime.GOMAXPROCS(1)
				}
				us, rts := tpccCPUPerRoundTrip(b, c.tg, terminals, window)
				runtime.GOMAXPROCS(procs)
				per[c.name] = append(per[c.name], us)
				b.Logf("round %d %-11s TPC-C client mode: %.2f µs of dblat CPU per round trip (%.1f round trips per transaction)", r+1, c.name, us, rts)
			}
			us := pgbenchCPUPerTx(b, bin, pgDSN, terminals, window)
			per["pgbench"] = append(per["pgbench"], us)
			b.Logf("round %d pgbench  -S -M prepared: %.2f µs of pgbench CPU per round trip", r+1, us)
			us = selectCPUPerRoundTrip(b, sel, terminals, window)
			per["select"] = append(per["select"], us)
			b.Logf("round %d dblat select-only (prepared): %.2f µs of dblat CPU per round trip", r+1, us)
			us = pgconnCPUPerRoundTrip(b, pgDSN, terminals, window)
			per["pgconn"] = append(per["pgconn"], us)
			b.Logf("round %d bare pgconn loop, same statement: %.2f µs of CPU per round trip", r+1, us)
		}
		pgbench := stats.Median(per["pgbench"])
		b.ReportMetric(pgbench, "pgbench-us/roundtrip")
		for _, name := range []string{"select", "pgconn"} {
			m := stats.Median(per[name])
			b.ReportMetric(m, name+"-us/roundtrip")
			b.ReportMetric(m/pgbench, name+"-x-pgbench")
		}
		for _, name := range []string{"postgres", "firebird", "postgres-1p", "firebird-1p"} {
			m := stats.Median(per[name])
			b.ReportMetric(m, "tpcc-"+name+"-us/roundtrip")
			b.ReportMetric(m/pgbench, "tpcc-"+name+"-x-pgbench")
		}
	}
}

// metered opens dsn on e with every connection metered, as a run's are, so that round trips
// are counted.
func metered(b *testing.B, e engine.Engine, dsn string) workload.Target {
	b.Helper()
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return latency.MeterInto(ctx, c), nil
	}
	db, err := e.Open(context.Background(), dsn, engine.OpenOptions{Dial: dial})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return workload.Target{Engine: e, DB: db}
}

// tpccCPUPerRoundTrip runs TPC-C in client mode on tg and returns dblat's CPU per round trip
// in µs, and the round trips per transaction.
func tpccCPUPerRoundTrip(b *testing.B, tg workload.Target, terminals int, window time.Duration) (float64, float64) {
	w, err := tpcc.New(tg, tpcc.Config{Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	res, err := runner.Run(context.Background(), tg, w, runner.Config{
		Drive: spec.Drive{Terminals: terminals, Warmup: 2 * time.Second, Duration: window, MaxTries: 1}, NOPMType: "new_order"})
	if err != nil {
		b.Fatal(err)
	}
	var trips, done float64
	for _, tx := range res.Tx {
		n := float64(tx.Committed + tx.Rollbacks)
		trips += tx.RoundTrips * n
		done += n
	}
	if trips == 0 {
		b.Fatal("no round trips counted")
	}
	return res.CPUSeconds / trips * 1e6, trips / done
}

// selectCPUPerRoundTrip runs dblat's select-only workload (prepared) on tg and returns
// dblat's CPU per round trip in µs.
func selectCPUPerRoundTrip(b *testing.B, tg workload.Target, terminals int, window time.Duration) float64 {
	w, err := simple.New(tg, simple.Config{Workload: "select-only", Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	res, err := runner.Run(context.Background(), tg, w, runner.Config{
		Drive: spec.Drive{Terminals: terminals, Warmup: 2 * time.Second, Duration: window, MaxTries: 1}})
	if err != nil {
		b.Fatal(err)
	}
	var trips float64
	for _, tx := range res.Tx {
		trips += tx.RoundTrips * float64(tx.Committed+tx.Rollbacks)
	}
	if trips == 0 {
		b.Fatal("no round trips counted")
	}
	return res.CPUSeconds / trips * 1e6
}

// pgconnCPUPerRoundTrip runs pgbench's select-only statement, prepared, in a bare loop of
// the driver on n connections of dsn for window, and returns the process's CPU per round
// trip in µs.
func pgconnCPUPerRoundTrip(b *testing.B, dsn string, n int, window time.Duration) float64 {
	ctx := context.Background()
	conns := pgtest.Conns(b, dsn, n)
	for _, c := range conns {
		if _, err := c.Prepare(ctx, "sel", "SELECT abalance FROM pgbench_accounts WHERE aid = $1", nil); err != nil {
			b.Fatal(err)
		}
	}
	var trips atomic.Int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	cpu0 := processCPU()
	for i, c := range conns {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(i), 1))
			arg := [][]byte{nil}
			for {
				select {
				case <-stop:
					return
				default:
				}
				arg[0] = strconv.AppendInt(arg[0][:0], 1+rng.Int64N(100000), 10)
				if err := c.ExecPrepared(ctx, "sel", arg, nil, nil).Read().Err; err != nil {
					b.Error(err)
					return
				}
				trips.Add(1)
			}
		})
	}
	time.Sleep(window)
	close(stop)
	wg.Wait()
	return (processCPU() - cpu0) / float64(trips.Load()) * 1e6
}

// processCPU is this process's user and system CPU time in seconds.
func processCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// pgbenchCPUPerTx runs `pgbench -S -M prepared` and returns its own CPU per transaction in
// µs: one round trip each.
func pgbenchCPUPerTx(b *testing.B, bin, dsn string, clients int, window time.Duration) float64 {
	cmd := exec.Command(bin, "-S", "-M", "prepared", "-c", strconv.Itoa(clients), "-j", "1", "-T", fmt.Sprint(int(window.Seconds())), dsn)
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
	return cpu / (tps * window.Seconds()) * 1e6
}
