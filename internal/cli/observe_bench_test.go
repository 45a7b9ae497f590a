package cli_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/cli"
	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
	"github.com/dblat/dblat/internal/latency"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/stats"
)

// BenchmarkReplayPgbench is issue 24's replay target: pgbench's tpcb-like (scale 1, 4
// clients) recorded through `dblat proxy --record`, replayed by `dblat run script -f` at 4
// terminals, beside pgbench itself, at no added RTT and at 5 ms (pgbench through a link
// adding it, dblat run --rtt 5ms): round trips per transaction the same (7) and TPS within
// 10 %. pgbench runs with two threads (-j 2), its best on two cores; the replay runs with
// the Go runtime's default (a thread per core) and held to one thread (GOMAXPROCS=1, as
// `GOMAXPROCS=1 dblat run` does): on a machine whose cores the server shares, the second
// thread's hand-offs cost the client CPU the server then lacks. Before each measurement
// the tables are cleaned as pgbench cleans them before its own runs (branches, tellers
// and accounts vacuumed, history truncated), so no measurement inherits another's dead
// rows. At RTT 0 a plain Go client of the same driver runs beside them (pgconnTPCB: the
// same seven statements, none of dblat), so that the replay's distance from pgbench
// splits into what dblat adds (replay ÷ pgconn) and what a Go client of this driver costs
// the server's CPUs anyway (pgconn ÷ pgbench). Five rounds, the order rotating; it reports the median TPS
// ratios.
//
//	go test ./internal/cli -run '^$' -bench ReplayPgbench -benchtime 1x
func BenchmarkReplayPgbench(b *testing.B) {
	const rounds, window = 5, 10 * time.Second
	dsn := pgtest.NewDatabase(b)
	u, err := url.Parse(dsn)
	if err != nil {
		b.Fatal(err)
	}
	bin := filepath.Join(pgtest.Server(b).Binaries, "pgbench")
	if out, err := exec.Command(bin, "-i", "-q", "-s", "1", dsn).CombinedOutput(); err != nil {
		b.Fatalf("pgbench -i: %v\n%s", err, out)
	}
	dir := b.TempDir()
	run := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		st := &cli.State{Stdout: &out, Stderr: &errb, Signals: make(chan os.Signal), Getenv: func(k string) string {
			switch k {
			case "DBLAT_STATE":
				return filepath.Join(dir, "state")
			case "DBLAT_RESULTS":
				return filepath.Join(dir, "results.db")
			}
			return ""
		}}
		return cli.Main(st, args), out.String(), errb.String()
	}
	// Record 2,000 transactions of pgbench.
	rec := filepath.Join(dir, "tpcb.sql")
	sig := make(chan os.Signal, 1)
	var pout syncBuffer
	st := &cli.State{Stdout: &pout, Stderr: &pout, Signals: sig, Getenv: func(string) string { return "" }}
	done := make(chan int, 1)
	go func() {
		done <- cli.Main(st, []string{"proxy", "--upstream", u.Host, "--rtt", "0", "--record", rec, "--print-every", "0"})
	}()
	for range 500 {
		if strings.Contains(pout.String(), "\n") {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	addr, _, _ := strings.Cut(pout.String(), "\n")
	v := *u
	v.Host = addr
	if out, err := exec.Command(bin, "-n", "-c", "4", "-j", "2", "-t", "500", v.String()).CombinedOutput(); err != nil {
		b.Fatalf("pgbench: %v\n%s", err, out)
	}
	sig <- syscall.SIGINT
	if code := <-done; code != 0 {
		b.Fatalf("dblat proxy exited %d:\n%s", code, pout.String())
	}
	pgb := func(rtt time.Duration) float64 {
		host := u.Host
		if rtt > 0 {
			l, err := latency.Listen(context.Background(), "", u.Host, latency.Config{RTT: rtt, DelayConnect: true})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			host = l.Addr()
		}
		w := *u
		w.Host = host
		out, err := exec.Command(bin, "-n", "-c", "4", "-j", "2", "-T", strconv.Itoa(int(window.Seconds())), w.String()).CombinedOutput()
		if err != nil {
			b.Fatalf("pgbench: %v\n%s", err, out)
		}
		m := processedTPS.FindSubmatch(out)
		if m == nil {
			b.Fatalf("no tps in pgbench output:\n%s", out)
		}
		tps, _ := strconv.ParseFloat(string(m[1]), 64)
		return tps
	}
	replay := func(rtt time.Duration) (tps, rts float64) {
		args := []string{"run", "script", "-f", rec, "--target", dsn, "--terminals", "4", "--duration", window.String(), "--warmup", "1s"}
		if rtt > 0 {
			args = append(args, "--rtt", rtt.String())
		}
		if code, out, errs := run(args...); code != 0 {
			b.Fatalf("dblat run script: exit %d\n%s\n%s", code, out, errs)
		}
		_, out, _ := run("results", "export")
		var runs []results.Run
		if err := json.Unmarshal([]byte(out), &runs); err != nil || len(runs) == 0 {
			b.Fatalf("results export: %v", err)
		}
		r := runs[0] // the newest
		var n float64
		for _, tx := range r.Tx {
			rts += tx.RoundTrips * float64(tx.Committed)
			n += float64(tx.Committed)
		}
		return r.Summary.TPS, rts / max(n, 1)
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	clean := func() {
		for _, q := range []string{"VACUUM pgbench_branches", "VACUUM pgbench_tellers", "VACUUM pgbench_accounts", "TRUNCATE pgbench_history"} {
			if _, err := db.Exec(q); err != nil {
				b.Fatalf("%s: %v", q, err)
			}
		}
	}
	type measure struct {
		name string
		run  func(time.Duration) (tps, rts float64)
	}
	measures := []measure{
		{"pgbench", func(rtt time.Duration) (float64, float64) { return pgb(rtt), 0 }},
		{"replay", replay},
		{"replay-1thread", func(rtt time.Duration) (float64, float64) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
			return replay(rtt)
		}},
		{"pgconn", func(time.Duration) (float64, float64) { return pgconnTPCB(b, dsn, 4, window), 0 }}, // RTT 0 only
	}
	for b.Loop() {
		for _, rtt := range []time.Duration{0, 5 * time.Millisecond} {
			ratios := map[string][]float64{}
			for r := range rounds {
				tps := map[string]float64{}
				line := fmt.Sprintf("rtt %v, round %d:", rtt, r+1)
				for i := range measures {
					m := measures[(i+r)%len(measures)]
					if m.name == "pgconn" && rtt > 0 {
						continue
					}
					clean()
					t, rts := m.run(rtt)
					tps[m.name] = t
					if rts > 0 {
						line += fmt.Sprintf(" %s %.1f TPS (%.2f round trips per transaction)", m.name, t, rts)
					} else {
						line += fmt.Sprintf(" %s %.1f TPS", m.name, t)
					}
				}
				for _, m := range measures[1:] {
					if _, ran := tps[m.name]; !ran {
						continue
					}
					ratios[m.name] = append(ratios[m.name], tps[m.name]/tps["pgbench"])
					line += fmt.Sprintf(", %s/pgbench %.3f", m.name, tps[m.name]/tps["pgbench"])
				}
				b.Log(line)
			}
			for _, m := range measures[1:] {
				if len(ratios[m.name]) == 0 {
					continue
				}
				unit := "ratio-" + strings.TrimSuffix(rtt.String(), "0s") + "rtt"
				switch m.name {
				case "replay-1thread":
					unit += "-1thread"
				case "pgconn":
					unit = "pgconn-ratio-" + strings.TrimSuffix(rtt.String(), "0s") + "rtt"
				}
				b.ReportMetric(stats.Median(ratios[m.name]), unit)
			}
		}
	}
}

// pgconnTPCB runs pgbench's tpcb-like transaction (its seven statements, each a round trip
// of the simple query protocol, values written in) in a bare loop of the driver on n
// connections of dsn for window, with none of dblat, as an application would write it
// over Go's net.Conn, and returns its TPS.
func pgconnTPCB(b *testing.B, dsn string, n int, window time.Duration) float64 {
	ctx := context.Background()
	conns := pgtest.Conns(b, dsn, n)
	var done atomic.Int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	start := time.Now()
	for i, c := range conns {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(i), 2))
			var q []byte
			exec := func(format string, args ...any) error {
				q = fmt.Appendf(q[:0], format, args...)
				_, err := c.Exec(ctx, string(q)).ReadAll()
				return err
			}
			for {
				select {
				case <-stop:
					return
				default:
				}
				aid, tid, delta := 1+rng.IntN(100000), 1+rng.IntN(10), rng.IntN(10001)-5000
				for _, err := range []error{
					exec("BEGIN"),
					exec("UPDATE pgbench_accounts SET abalance = abalance + %d WHERE aid = %d", delta, aid),
					exec("SELECT abalance FROM pgbench_accounts WHERE aid = %d", aid),
					exec("UPDATE pgbench_tellers SET tbalance = tbalance + %d WHERE tid = %d", delta, tid),
					exec("UPDATE pgbench_branches SET bbalance = bbalance + %d WHERE bid = 1", delta),
					exec("INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (%d, 1, %d, %d, CURRENT_TIMESTAMP)", tid, aid, delta),
					exec("END"),
				} {
					if err != nil {
						b.Error(err)
						return
					}
				}
				done.Add(1)
			}
		})
	}
	time.Sleep(window)
	close(stop)
	n64 := done.Load()
	elapsed := time.Since(start)
	wg.Wait()
	return float64(n64) / elapsed.Seconds()
}

var processedTPS = regexp.MustCompile(`tps = ([0-9.]+) \(without initial connection time\)`)
