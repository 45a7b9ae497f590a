package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/cli"
	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
	"github.com/dblat/dblat/internal/latency"
	"github.com/dblat/dblat/internal/results"
)

// BenchmarkReplayPgbench is issue 24's replay target: pgbench's tpcb-like (scale 1, 4
// clients) recorded through `dblat proxy --record`, replayed by `dblat run script -f` at 4
// terminals, beside pgbench itself, at no added RTT and at 5 ms (pgbench through a link
// adding it, dblat run --rtt 5ms): round trips per transaction the same (7) and TPS within
// 10 %. Three rounds, alternating pgbench and the replay and which of them runs first; it
// reports the median TPS ratios.
//
//	go test ./internal/cli -run '^$' -bench ReplayPgbench -benchtime 1x
func BenchmarkReplayPgbench(b *testing.B) {
	const rounds, window = 3, 10 * time.Second
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
	for b.Loop() {
		for _, rtt := range []time.Duration{0, 5 * time.Millisecond} {
			var ratios []float64
			for r := range rounds {
				// Who runs second inherits the first's dead rows (every transaction
				// updates a row of each table): the order alternates.
				var p, d, rts float64
				if r%2 == 0 {
					p = pgb(rtt)
					d, rts = replay(rtt)
				} else {
					d, rts = replay(rtt)
					p = pgb(rtt)
				}
				ratios = append(ratios, d/p)
				b.Logf("rtt %v, round %d: pgbench %.1f TPS, the replay %.1f TPS at %.2f round trips per transaction: %.3f", rtt, r+1, p, d, rts, d/p)
			}
			b.ReportMetric(medianOf(ratios), "ratio-"+strings.TrimSuffix(rtt.String(), "0s")+"rtt")
		}
	}
}

var processedTPS = regexp.MustCompile(`tps = ([0-9.]+) \(without initial connection time\)`)

func medianOf(v []float64) float64 {
	s := append([]float64(nil), v...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s[len(s)/2]
}
