package observe_test

import (
	"context"
	"fmt"
	"net/url"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
	"github.com/dblat/dblat/internal/latency"
	"github.com/dblat/dblat/internal/observe"
	"github.com/dblat/dblat/internal/stats"
	"github.com/dblat/dblat/internal/wire"
	"github.com/dblat/dblat/internal/wire/wiretest"
)

var (
	tpsRe     = regexp.MustCompile(`tps = ([0-9.]+) \(without initial connection time\)`)
	latencyRe = regexp.MustCompile(`latency average = ([0-9.]+) ms`)
)

// pgbenchDB returns a new database initialised by pgbench -i at scale, its host:port and
// name, and the pgbench binary of the managed server.
func pgbenchDB(b *testing.B, scale int) (*url.URL, string, string) {
	b.Helper()
	dsn := pgtest.NewDatabase(b)
	u, err := url.Parse(dsn)
	if err != nil {
		b.Fatal(err)
	}
	bin := filepath.Join(pgtest.Server(b).Binaries, "pgbench")
	if out, err := exec.Command(bin, "-i", "-q", "-s", strconv.Itoa(scale), dsn).CombinedOutput(); err != nil {
		b.Fatalf("pgbench -i: %v\n%s", err, out)
	}
	return u, strings.TrimPrefix(u.Path, "/"), bin
}

// runPgbench runs pgbench with args against addr and returns its TPS and its latency
// average. -P makes pgbench measure each transaction's latency rather than derive it from
// the TPS (which would include the time between transactions).
func runPgbench(b *testing.B, bin string, u *url.URL, addr string, args ...string) (tps, latencyMs float64) {
	b.Helper()
	v := *u
	v.Host = addr
	out, err := exec.Command(bin, append(append([]string{"-n", "-P", "5"}, args...), v.String())...).CombinedOutput()
	if err != nil {
		b.Fatalf("pgbench: %v\n%s", err, out)
	}
	m, l := tpsRe.FindSubmatch(out), latencyRe.FindSubmatch(out)
	if m == nil || l == nil {
		b.Fatalf("no tps or latency in pgbench output:\n%s", out)
	}
	tps, _ = strconv.ParseFloat(string(m[1]), 64)
	latencyMs, _ = strconv.ParseFloat(string(l[1]), 64)
	return tps, latencyMs
}

// observeRun runs pgbench through an observing link at no added RTT and returns the
// observation.
func observeRun(b *testing.B, bin string, u *url.URL, args ...string) *observe.Observation {
	b.Helper()
	obs := observe.New(observe.Config{Protocols: engine.WireProtocols()})
	l, err := latency.Listen(context.Background(), "", u.Host, latency.Config{DelayConnect: true}, latency.WithObserver(obs))
	if err != nil {
		b.Fatal(err)
	}
	runPgbench(b, bin, u, l.Addr(), args...)
	l.Close()
	return obs.Snapshot()
}

// measureRun runs pgbench through a link adding rtt and returns its TPS and latency. It
// logs how late the link released data: on a busy machine its tail adds to every round
// trip, which no prediction of the network's cost includes.
func measureRun(b *testing.B, bin string, u *url.URL, rtt time.Duration, args ...string) (float64, float64) {
	b.Helper()
	l, err := latency.Listen(context.Background(), "", u.Host, latency.Config{RTT: rtt, DelayConnect: true})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	tps, lat := runPgbench(b, bin, u, l.Addr(), args...)
	st := l.Stats()
	b.Logf("link at %v: lateness up %v, down %v", rtt, st.LatenessUp, st.LatenessDown)
	return tps, lat
}

// predictBench observes pgbench with args at no added RTT, then measures it through links
// adding each of rtts, for rounds rounds (observation and measurements alternate, since
// the machine is shared), and reports the median error of the predicted TPS and mean
// latency against pgbench's own figures at each RTT, and of the contention-blind TPS.
func predictBench(b *testing.B, scale int, clients int, args ...string) {
	const rounds = 3
	rtts := []time.Duration{5 * time.Millisecond, 20 * time.Millisecond}
	u, _, bin := pgbenchDB(b, scale)
	if h, err := latency.HoldCPULatency(); err == nil {
		defer h.Release()
	}
	args = append([]string{"-c", strconv.Itoa(clients), "-j", "2", "-T", "10"}, args...)
	for b.Loop() {
		errs := map[string][]float64{}
		for r := range rounds {
			o := observeRun(b, bin, u, args...)
			for _, rtt := range rtts {
				f, err := observe.Predict(o, rtt, clients)
				if err != nil {
					b.Fatal(err)
				}
				tps, lat := measureRun(b, bin, u, rtt, args...)
				tag := fmtRTT(rtt)
				errs[tag+"-tps-err-%"] = append(errs[tag+"-tps-err-%"], 100*(f.TPS/tps-1))
				errs[tag+"-latency-err-%"] = append(errs[tag+"-latency-err-%"], 100*(f.LatencyMs/lat-1))
				blind := ""
				if f.BlindTPS > 0 {
					errs[tag+"-blind-tps-err-%"] = append(errs[tag+"-blind-tps-err-%"], 100*(f.BlindTPS/tps-1))
					blind = fmt.Sprintf(", blind to contention %.1f TPS (%+.1f %%)", f.BlindTPS, 100*(f.BlindTPS/tps-1))
				}
				b.Logf("round %d, +%s: predicted %.1f TPS, %.3f ms (upper bound %v)%s; pgbench %.1f TPS, %.3f ms: %+.1f %% and %+.1f %%",
					r+1, tag, f.TPS, f.LatencyMs, f.UpperBound, blind, tps, lat, 100*(f.TPS/tps-1), 100*(f.LatencyMs/lat-1))
			}
			for _, n := range o.Shapes[:min(1, len(o.Shapes))] {
				if n.Serial != nil {
					b.Logf("round %d: serial section %+v", r+1, *n.Serial)
				}
			}
		}
		for k, v := range errs {
			b.ReportMetric(stats.Median(v), k)
		}
	}
}

// BenchmarkPredictPgbench is issue 24's prediction target: from an observation of `pgbench
// -N` (simple-update: no hot rows) at no added RTT, 4 clients, the predicted TPS and mean
// latency at +5 ms and +20 ms against pgbench's own figures through a link adding them
// (target: within 5 %). Three rounds, alternating; it reports the median errors.
//
//	go test ./internal/observe -run '^$' -bench PredictPgbench -benchtime 1x
func BenchmarkPredictPgbench(b *testing.B) { predictBench(b, 1, 4, "-N") }

// BenchmarkPredictContention is issue 24's contention check: tpcb-like at scale 1, where
// every transaction updates the one branch row and holds its lock for two more round trips.
// It reports the errors of the prediction (which models the serial section it finds) and of
// the same model blind to it (target: within 10 %, and the blind one's overestimate).
//
//	go test ./internal/observe -run '^$' -bench PredictContention -benchtime 1x
func BenchmarkPredictContention(b *testing.B) { predictBench(b, 1, 4) }

// BenchmarkObserveCost is issue 24's cost target: `pgbench -S -M prepared -c 4` through the
// proxy with and without an observer, at no added RTT (this process's CPU per round trip:
// target ≤ 1.1× without) and at 1 ms (the link's release lateness: target unchanged).
//
// The ratio that judges the target is measured at one fixed offered rate (pgbench -R, 60 %
// of what the plain proxy reached in a first saturated run), so both proxies forward the
// same transactions at the same pace. Saturated, the comparison is not like for like: the
// observer's work lowers the throughput a little, fewer transactions share each wake-up, and
// every one of them costs more (in one sitting the saturated ratio was 1.07–1.14× while the
// observer's own functions took 4.5 % of the proxy's CPU by perf); that ratio is reported too
// (cpu-ratio-saturated). Five rounds, alternating which proxy runs first; medians.
//
//	go test ./internal/observe -run '^$' -bench ObserveCost -benchtime 1x
func BenchmarkObserveCost(b *testing.B) {
	const rounds = 5
	u, _, bin := pgbenchDB(b, 1)
	if h, err := latency.HoldCPULatency(); err == nil {
		defer h.Release()
	}
	args := []string{"-S", "-M", "prepared", "-c", "4", "-j", "2", "-T", "6"}
	run := func(rtt time.Duration, observed bool, extra ...string) (cpuPerRT, tps float64, st latency.Stats) {
		var opts []latency.ListenOption
		if observed {
			opts = append(opts, latency.WithObserver(observe.New(observe.Config{Protocols: engine.WireProtocols()})))
		}
		l, err := latency.Listen(context.Background(), "", u.Host, latency.Config{RTT: rtt}, opts...)
		if err != nil {
			b.Fatal(err)
		}
		defer l.Close()
		before := cpuNow()
		tps, _ = runPgbench(b, bin, u, l.Addr(), append(slices.Clone(args), extra...)...)
		cpu := cpuNow() - before
		st = l.Stats()
		return float64(cpu) / float64(st.Totals.RoundTrips), tps, st
	}
	tag := func(observed bool) string {
		if observed {
			return "observed"
		}
		return "plain"
	}
	for b.Loop() {
		_, tps0, _ := run(0, false)
		rate := []string{"-R", strconv.Itoa(int(0.6 * tps0))}
		b.Logf("saturated, plain: %.0f TPS; the fixed-rate runs offer %s", tps0, rate[1])
		ratios := map[string][]float64{}
		late := map[string][]float64{}
		for r := range rounds {
			order := []bool{false, true}
			if r%2 == 1 {
				order = []bool{true, false}
			}
			for _, setting := range []struct {
				name  string
				extra []string
			}{{"cpu-ratio", rate}, {"cpu-ratio-saturated", nil}} {
				cpu := map[bool]float64{}
				for _, observed := range order {
					c, tps, _ := run(0, observed, setting.extra...)
					cpu[observed] = c
					b.Logf("round %d, %s, %s: %.0f TPS, %.2f µs CPU per round trip", r+1, setting.name, tag(observed), tps, c/1e3)
				}
				ratios[setting.name] = append(ratios[setting.name], cpu[true]/cpu[false])
			}
			for _, observed := range order {
				_, _, st := run(time.Millisecond, observed)
				t := tag(observed)
				late[t+"-late-up-p50-µs"] = append(late[t+"-late-up-p50-µs"], float64(st.LatenessUp.P50)/1e3)
				late[t+"-late-up-p99-µs"] = append(late[t+"-late-up-p99-µs"], float64(st.LatenessUp.P99)/1e3)
				late[t+"-late-down-p50-µs"] = append(late[t+"-late-down-p50-µs"], float64(st.LatenessDown.P50)/1e3)
				late[t+"-late-down-p99-µs"] = append(late[t+"-late-down-p99-µs"], float64(st.LatenessDown.P99)/1e3)
				b.Logf("round %d, rtt 1ms, %s: lateness up %v, down %v", r+1, t, st.LatenessUp, st.LatenessDown)
			}
			b.Logf("round %d: ratios so far %v", r+1, ratios)
		}
		for k, v := range ratios {
			b.ReportMetric(stats.Median(v), k)
		}
		for k, v := range late {
			b.ReportMetric(stats.Median(v), k)
		}
	}
}

func cpuNow() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkObserveDecode is the observer's own cost per round trip on captured pgbench
// traffic (no sockets): the Tracker, the timeline and the per-shape figures.
//
//	go test ./internal/observe -run '^$' -bench ObserveDecode
func BenchmarkObserveDecode(b *testing.B) {
	for _, name := range []string{"pgbench-simple", "pgbench-prepared"} {
		b.Run(name, func(b *testing.B) {
			c, err := wiretest.ReadFile("../engine/postgres/testdata/wire/" + name + ".cap")
			if err != nil {
				b.Fatal(err)
			}
			// The body starts with the first request after the start-up's ReadyForQuery.
			skip := 0
			for i, ch := range c {
				if ch.Dir == wire.Server && strings.Contains(string(ch.Data), "Z\x00\x00\x00\x05I") {
					for skip = i + 1; skip < len(c) && c[skip].Dir != wire.Client; skip++ {
					}
					break
				}
			}
			obs := observe.New(observe.Config{Protocols: engine.WireProtocols()})
			co := obs.Open()
			at := int64(0)
			feed := func(from int) {
				for _, ch := range c[from:] {
					at += 1000
					co.Data(ch.Dir == wire.Client, ch.Data, at)
				}
			}
			feed(0)
			rts := c[skip:].RoundTrips()
			b.ResetTimer()
			for b.Loop() {
				feed(skip)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(rts), "ns/roundtrip")
			if o := obs.Snapshot(); o.Transactions < int64(b.N) || len(o.CannotFollow) > 0 {
				b.Fatalf("the replayed body was not followed: %d transactions, %v", o.Transactions, o.CannotFollow)
			}
		})
	}
}

func fmtRTT(d time.Duration) string { return strings.TrimSuffix(d.String(), "0s") }
