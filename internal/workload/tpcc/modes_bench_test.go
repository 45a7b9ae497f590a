package tpcc

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/latency"
	"github.com/dblat/dblat/internal/runner"
	"github.com/dblat/dblat/internal/spec"
)

// BenchmarkModes measures, for each engine, mode and added round-trip time (0, 1 ms and
// 10 ms, through a latency.Link in front of the server, as `dblat run --rtt` does), the
// NOPM of 10 terminals on one warehouse (§4.2.2: ten terminals per warehouse, no pacing)
// and the round trips per New-Order that the runner metered on its connections. Each
// engine's database is loaded once, and every cell runs on a fresh copy of it (as a study
// restores a pristine copy before each run: on Firebird, cells run on a database that
// earlier cells had used stalled for tens of seconds), with 2 s of warm-up and a window of
// DBLAT_MODES_WINDOW (default 8 s). Run it alone (about 8 minutes), since the figures
// depend on what else the machine does:
//
//	go test ./internal/workload/tpcc -run '^$' -bench Modes -benchtime 1x -timeout 30m
func BenchmarkModes(b *testing.B) {
	window := 8 * time.Second
	if s := os.Getenv("DBLAT_MODES_WINDOW"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			b.Fatal(err)
		}
		window = d
	}
	rtts := []time.Duration{0, time.Millisecond, 10 * time.Millisecond}
	var table strings.Builder
	fmt.Fprintf(&table, "%-9s %-9s %9s %9s %9s %9s\n", "engine", "mode", "RT/NO", "NOPM 0", "NOPM 1ms", "NOPM 10ms")
	for _, e := range modeEngines {
		b.Run(e.name, func(b *testing.B) {
			ctx := context.Background()
			src := e.empty(b)
			tg := open(b, e.eng, src, engine.OpenOptions{})
			if err := Load(ctx, tg, LoadConfig{Warehouses: 1, Seed: 1}); err != nil {
				b.Fatal(err)
			}
			tg.DB.Close()
			u, err := url.Parse(src)
			if err != nil {
				b.Fatal(err)
			}
			for _, m := range Modes {
				var rt float64
				nopm := make([]float64, len(rtts))
				for i, rtt := range rtts {
					b.Run(fmt.Sprintf("%s/rtt=%v", m, rtt), func(b *testing.B) {
						res := runThroughLink(b, e.eng, e.clone(b, src), u.Host, m, rtt, window)
						nopm[i] = res.Summary.NOPM
						for _, tx := range res.Tx {
							if tx.Type == txNames[txNewOrder] {
								rt = tx.RoundTrips
							}
						}
						b.ReportMetric(res.Summary.NOPM, "NOPM")
						b.ReportMetric(rt, "RT/new_order")
						if n := len(res.Summary.Errors); n > 0 {
							b.Logf("errors: %v %v", res.Summary.Errors, res.Summary.ErrorExamples)
						}
					})
				}
				fmt.Fprintf(&table, "%-9s %-9s %9.1f %9.0f %9.0f %9.0f\n", e.name, m, rt, nopm[0], nopm[1], nopm[2])
			}
		})
	}
	b.Logf("10 terminals, 1 warehouse, %v windows, RTT added by latency.Link:\n%s", window, table.String())
}

// runThroughLink runs 10 terminals in mode m on dsn for window, every connection going
// through a latency link that adds rtt in front of upstream and metered for the runner.
func runThroughLink(b *testing.B, e engine.Engine, dsn, upstream, m string, rtt, window time.Duration) *runner.Result {
	ctx := context.Background()
	link, err := latency.Listen(ctx, "127.0.0.1:0", upstream, latency.Config{RTT: rtt})
	if err != nil {
		b.Fatal(err)
	}
	defer link.Close()
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", link.Addr())
		if err != nil {
			return nil, err
		}
		return latency.MeterInto(ctx, c), nil
	}
	tg := open(b, e, dsn, engine.OpenOptions{Dial: dial})
	defer tg.DB.Close()
	w, err := New(tg, Config{Seed: 1, Mode: m})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	res, err := runner.Run(ctx, tg, w, runner.Config{Drive: spec.Drive{Terminals: 10, Warmup: 2 * time.Second, Duration: window}, NOPMType: "new_order"})
	if err != nil {
		b.Fatal(err)
	}
	return res
}
