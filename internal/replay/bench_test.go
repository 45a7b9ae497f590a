package replay_test

import (
	"context"
	"net"
	"net/url"
	"syscall"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/latency"
	"github.com/dblat/dblat/internal/replay"
)

// BenchmarkReplayPgbench is issue 42's PostgreSQL targets: pgbench tpcb-like, 4 clients,
// 5 s, captured by tcpdump, replayed on a restored copy at RTT 0 as captured (the same
// transactions and round trips, no divergence, the duration within 10 % of the capture's),
// as fast as it goes (--fast: throughput at least the capture's), and at +5 ms (the mean
// transaction latency within 5 % of dblat predict's; that replay takes minutes: pgbench
// ran some 15,000 transactions in 5 s, and each now takes 7 round trips of 5 ms and more).
//
//	go test ./internal/replay -run '^$' -bench ReplayPgbench -benchtime 1x -v -timeout 30m
func BenchmarkReplayPgbench(b *testing.B) {
	for b.Loop() {
		dsn, rec, n, appCPU := pgbenchCaptureCPU(b, "-c", "4", "-T", "5")
		b.ReportMetric(float64(appCPU.Microseconds())/float64(n), "pgbench+tcpdump-cpu-us/tx")
		ctx := context.Background()
		cfg := replay.Config{Recording: rec, Protocols: protocols(), DSN: dsn, Dial: direct, Target: "bench",
			AutoCorrect: true, StallTimeout: time.Minute}
		restoreB(b, dsn)
		res, err := replay.Run(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("pgbench processed %d; as captured: %s", n, res.Summary())
		b.ReportMetric(float64(res.Transactions), "tx")
		b.ReportMetric(float64(res.CaptureTransactions), "capture-tx")
		b.ReportMetric(float64(res.Divergences), "divergences")
		b.ReportMetric(res.DurationS, "replay-s")
		b.ReportMetric(res.CaptureDurationS, "capture-s")
		b.ReportMetric(100*(res.DurationS-res.CaptureDurationS)/res.CaptureDurationS, "duration-err-%")
		for _, s := range res.Shapes {
			if s.Capture != nil && s.Capture.RoundTripsMean != s.RoundTripsMean {
				b.Errorf("shape %q: %.2f round trips, captured %.2f", s.Shape.Shape, s.RoundTripsMean, s.Capture.RoundTripsMean)
			}
		}

		restoreB(b, dsn)
		fast := cfg
		fast.Fast = true
		self := rusage(b, syscall.RUSAGE_SELF)
		res, err = replay.Run(ctx, fast)
		if err != nil {
			b.Fatal(err)
		}
		// What the replay costs the machine's CPUs, beside what the application did: on a
		// machine whose server is CPU-bound, a heavier client is a slower replay.
		b.ReportMetric(float64((rusage(b, syscall.RUSAGE_SELF)-self).Microseconds())/float64(res.Transactions), "fast-replay-cpu-us/tx")
		b.Logf("--fast: %s; %.0f TPS against the capture's %.0f", res.Summary(), res.TPS, res.CaptureTPS)
		b.ReportMetric(res.TPS/res.CaptureTPS, "fast-tps/capture-tps")

		restoreB(b, dsn)
		u, _ := url.Parse(dsn)
		link, err := latency.Listen(ctx, "127.0.0.1:0", u.Host, latency.Config{Up: 2500 * time.Microsecond, Down: 2500 * time.Microsecond})
		if err != nil {
			b.Fatal(err)
		}
		far := cfg
		far.Dial = func(ctx context.Context, _, _ string) (net.Conn, error) { return link.Dial(ctx) }
		far.Up, far.Down = 2500*time.Microsecond, 2500*time.Microsecond
		h, err := latency.HoldCPULatency()
		if err == nil {
			defer h.Release()
		}
		res, err = replay.Run(ctx, far)
		link.Close()
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("+5 ms: %s", res.Summary())
		if p := res.Predicted; p != nil {
			b.ReportMetric(res.LatencyMsMean, "5ms-replay-ms")
			b.ReportMetric(p.LatencyMs, "5ms-predict-ms")
			b.ReportMetric(p.LatencyErrorPct, "5ms-err-%")
		}
	}
}
