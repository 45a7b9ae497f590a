package runner_test

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/engine/firebird"
	"github.com/dblat/dblat/internal/engine/firebird/fbtest"
	"github.com/dblat/dblat/internal/engine/postgres"
	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
	"github.com/dblat/dblat/internal/runner"
	"github.com/dblat/dblat/internal/spec"
	"github.com/dblat/dblat/internal/workload"
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
		}
		pgbench := median(per["pgbench"])
		b.ReportMetric(pgbench, "pgbench-us/roundtrip")
		for _, name := range []string{"postgres", "firebird", "postgres-1p", "firebird-1p"} {
			m := median(per[name])
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
		return runner.Metered(ctx, c), nil
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

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
