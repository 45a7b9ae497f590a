package simple_test

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os/exec"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
	"github.com/dblat/dblat/internal/latency"
	"github.com/dblat/dblat/internal/workload/simple"
)

// BenchmarkLinkOverheadPgbench is the zero-delay figure of issue 3: `pgbench -S -M prepared
// -c 10 -j 2 -T 8` against one PostgreSQL database directly, through a latency link with
// --rtt 0, and, when socat is installed, through socat (a minimal C proxy: the cost of any
// TCP proxy, with no delay logic at all). The three alternate for three rounds on the same
// data; it reports the median TPS of each and the median per-round ratios to direct (the
// issue's target for the link is ≥ 0.85; toxiproxy measured 0.49).
//
//	go test ./internal/workload/simple -run '^$' -bench LinkOverheadPgbench -benchtime 1x
func BenchmarkLinkOverheadPgbench(b *testing.B) {
	const clients, rounds, window = 10, 3, 8 * time.Second
	ctx := context.Background()
	dsn := pgtest.NewDatabase(b)
	if err := simple.Load(ctx, open(b, engines()[0], dsn), simple.LoadConfig{Workload: "select-only", Scale: 1}); err != nil {
		b.Fatal(err)
	}
	u, err := url.Parse(dsn)
	if err != nil {
		b.Fatal(err)
	}
	l, err := latency.Listen(ctx, "", u.Host, latency.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	paths := []struct{ name, addr string }{{"direct", u.Host}, {"link", l.Addr()}}
	if addr, stop := startSocat(b, u.Host); stop != nil {
		defer stop()
		paths = append(paths, struct{ name, addr string }{"socat", addr})
	}
	for b.Loop() {
		tps := map[string][]float64{}
		for r := range rounds {
			var direct float64
			for _, p := range paths {
				v := *u
				v.Host = p.addr
				t, _ := pgbench(b, v.String(), clients, window, "-S", "-M", "prepared")
				tps[p.name] = append(tps[p.name], t)
				if p.name == "direct" {
					direct = t
				} else {
					tps[p.name+"-ratio"] = append(tps[p.name+"-ratio"], t/direct)
				}
				b.Logf("round %d %-6s %6.0f tps (%.3f of direct)", r+1, p.name, t, t/direct)
			}
		}
		for name, v := range tps {
			unit := name + "-tps"
			if len(name) > 6 && name[len(name)-6:] == "-ratio" {
				unit = name
			}
			b.ReportMetric(median(v), unit)
		}
	}
}

// startSocat starts `socat` forwarding a free loopback port to upstream and returns that
// address and a function that stops it by its PID, or a nil stop when socat is not installed.
func startSocat(b *testing.B, upstream string) (string, func()) {
	bin, err := exec.LookPath("socat")
	if err != nil {
		b.Log("socat not installed: no proxy floor in this run (apt-get install socat)")
		return "", nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(bin, fmt.Sprintf("TCP-LISTEN:%s,fork,reuseaddr,bind=127.0.0.1", port), "TCP:"+upstream)
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	stop := func() {
		cmd.Process.Kill()
		cmd.Wait()
	}
	for range 100 {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return addr, stop
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	b.Fatalf("socat did not listen on %s", addr)
	return "", nil
}
