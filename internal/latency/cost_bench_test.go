package latency

import (
	"context"
	"io"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkLinkCost is the cost of the link's data path as runs use it, for comparing two
// builds of the link: ten in-process connections (Link.Dial, what dblat's terminals use)
// ping-pong 100-byte requests and 200-byte replies with an echo server in this process
// through a link adding 100 µs each way, closed loop, in rounds of 2 s; it reports the
// median over the rounds of the process's CPU per round trip (client, link and server:
// only the link differs between builds) and of the round trips per second. The "due"
// sub-benchmark times what every chunk pays to be scheduled (sched.due) on a link with
// nothing but a delay, the part of the path a new link parameter touches when unset.
//
// Compare two builds alternately on one machine (make bench FIGURE=link-cost in each),
// since the machine's own noise is larger than what one parameter costs. Issue 43 (the
// link's shape as fields: jitter, bandwidth and loss checked per chunk only where set)
// against the build before it, ten alternations on the 2-vCPU VM, load average 0.3-2.0:
// 29.7 against 29.5 µs of CPU per round trip, 1.84 against 1.77 ns per chunk scheduled
// (medians; target at most 1.02×).
//
//	go test ./internal/latency -run '^$' -bench LinkCost -benchtime 1x -count 1 -v
func BenchmarkLinkCost(b *testing.B) {
	b.Run("due", func(b *testing.B) {
		e := newEnv(Config{RTT: 200 * time.Microsecond}, newGoClock())
		s := &sched{cfg: &e.dirs[up]}
		var ns []float64
		for range b.N {
			for range 5 {
				const n = 20_000_000
				at, start := int64(0), time.Now()
				for range n {
					at += 1000
					s.due(at, 100)
				}
				ns = append(ns, float64(time.Since(start))/n)
			}
		}
		slices.Sort(ns)
		b.ReportMetric(ns[len(ns)/2], "due-ns")
	})
	b.Run("roundtrip", func(b *testing.B) {
		addr, stop := replyServer(b, 100, 200)
		defer stop()
		l, err := Listen(context.Background(), "", addr, Config{RTT: 200 * time.Microsecond, DelayConnect: true})
		if err != nil {
			b.Fatal(err)
		}
		defer l.Close()
		conns := make([]net.Conn, 10)
		for i := range conns {
			if conns[i], err = l.Dial(context.Background()); err != nil {
				b.Fatal(err)
			}
			defer conns[i].Close()
		}
		var cpus, rates []float64
		for range b.N {
			for range 5 {
				rate, cpu := roundTrips(b, conns, 100, 200, 2*time.Second)
				cpus, rates = append(cpus, float64(cpu)/1e3), append(rates, rate)
			}
		}
		med := func(v []float64) float64 { slices.Sort(v); return v[len(v)/2] }
		b.ReportMetric(med(cpus), "cpu-us/rt")
		b.ReportMetric(med(rates), "rt/s")
	})
}

// roundTrips runs the given connections closed-loop (reqSize-byte requests, repSize-byte
// replies) for d and returns the round trips per second and the process CPU per round trip.
func roundTrips(tb testing.TB, conns []net.Conn, reqSize, repSize int, d time.Duration) (float64, time.Duration) {
	var total atomic.Int64
	var wg sync.WaitGroup
	stop := time.Now().Add(d)
	start, cpu0 := time.Now(), cpuTime()
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, rep := make([]byte, reqSize), make([]byte, repSize)
			n := int64(0)
			for ; ; n++ {
				if n%16 == 0 && time.Now().After(stop) {
					break
				}
				if _, err := c.Write(req); err != nil {
					tb.Error(err)
					return
				}
				if _, err := io.ReadFull(c, rep); err != nil {
					tb.Error(err)
					return
				}
			}
			total.Add(n)
		}()
	}
	wg.Wait()
	el, cpu := time.Since(start), cpuTime()-cpu0
	n := total.Load()
	return float64(n) / el.Seconds(), cpu / time.Duration(max(n, 1))
}
