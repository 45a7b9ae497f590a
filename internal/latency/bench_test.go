package latency

import (
	"context"
	"fmt"
	"io"
	"net"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// replyServer answers every reqSize-byte request with a repSize-byte reply.
func replyServer(tb testing.TB, reqSize, repSize int) (addr string, stop func()) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	conns := map[net.Conn]bool{}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns[c] = true
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				req := make([]byte, reqSize)
				rep := make([]byte, repSize)
				for {
					if _, err := io.ReadFull(c, req); err != nil {
						break
					}
					if _, err := c.Write(rep); err != nil {
						break
					}
				}
				c.Close()
			}()
		}
	}()
	return ln.Addr().String(), func() {
		ln.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	}
}

// cpuTime returns the CPU time used by the process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// requestLoad runs conns closed-loop request/response connections against addr for d and
// returns the round trips per second and the process CPU time per round trip.
func requestLoad(tb testing.TB, addr string, conns, reqSize, repSize int, d time.Duration) (float64, time.Duration) {
	var total atomic.Int64
	var wg sync.WaitGroup
	cs := make([]net.Conn, conns)
	for i := range cs {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			tb.Fatal(err)
		}
		cs[i] = c
	}
	stop := time.Now().Add(d)
	start, cpu0 := time.Now(), cpuTime()
	for _, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := make([]byte, reqSize)
			rep := make([]byte, repSize)
			n := int64(0)
			for ; ; n++ {
				if n%64 == 0 && time.Now().After(stop) {
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
	for _, c := range cs {
		c.Close()
	}
	n := total.Load()
	return float64(n) / el.Seconds(), cpu / time.Duration(max(n, 1))
}

// BenchmarkOverhead compares a request/response load (10 connections, 100-byte requests,
// 200-byte replies) directly and through a zero-delay link, alternating 1 s rounds, and
// reports the median throughput ratio and the process CPU per round trip on each path (the
// client, the server and the link all run in this process, so the difference is the link's).
func BenchmarkOverhead(b *testing.B) {
	addr, stop := replyServer(b, 100, 200)
	defer stop()
	l, err := Listen(context.Background(), "", addr, Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	var ratios, direct, linked, dcpu, lcpu []float64
	for range b.N {
		for range 3 {
			d, dc := requestLoad(b, addr, 10, 100, 200, time.Second)
			k, lc := requestLoad(b, l.Addr(), 10, 100, 200, time.Second)
			direct, linked, ratios = append(direct, d), append(linked, k), append(ratios, k/d)
			dcpu, lcpu = append(dcpu, float64(dc)/1e3), append(lcpu, float64(lc)/1e3)
		}
	}
	med := func(v []float64) float64 { slices.Sort(v); return v[len(v)/2] }
	b.ReportMetric(med(ratios), "ratio")
	b.ReportMetric(med(direct), "direct-rt/s")
	b.ReportMetric(med(linked), "linked-rt/s")
	b.ReportMetric(med(dcpu), "direct-cpu-us/rt")
	b.ReportMetric(med(lcpu), "linked-cpu-us/rt")
}

// BenchmarkBulk moves 1 GiB one way through a link with a 50 ms one-way delay and reports
// the throughput and the peak Go heap in use (the delay line holds bandwidth × delay).
func BenchmarkBulk(b *testing.B) {
	for _, delay := range []time.Duration{0, 50 * time.Millisecond} {
		b.Run("delay="+delay.String(), func(b *testing.B) {
			const size = 1 << 30
			got := make(chan time.Time, 1)
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			defer ln.Close()
			go func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					go func() {
						defer c.Close()
						n, _ := io.CopyN(io.Discard, c, size)
						if n == size {
							got <- time.Now()
						}
					}()
				}
			}()
			l, err := Listen(context.Background(), "", ln.Addr().String(), Config{Up: delay})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			var peak atomic.Uint64
			stop := make(chan struct{})
			var wg sync.WaitGroup
			wg.Add(1)
			go func() { // sample the heap every 10 ms
				defer wg.Done()
				var ms runtime.MemStats
				for {
					select {
					case <-stop:
						return
					case <-time.After(10 * time.Millisecond):
					}
					runtime.ReadMemStats(&ms)
					if ms.HeapInuse > peak.Load() {
						peak.Store(ms.HeapInuse)
					}
				}
			}()
			var rates []float64
			for range b.N {
				c, err := net.Dial("tcp", l.Addr())
				if err != nil {
					b.Fatal(err)
				}
				buf := make([]byte, 256<<10)
				start := time.Now()
				for n := 0; n < size; n += len(buf) {
					if _, err := c.Write(buf); err != nil {
						b.Fatal(err)
					}
				}
				end := <-got
				c.Close()
				rates = append(rates, size/end.Sub(start).Seconds()/1e6)
			}
			close(stop)
			wg.Wait()
			slices.Sort(rates)
			b.ReportMetric(rates[len(rates)/2], "MB/s")
			b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MiB")
		})
	}
}

// BenchmarkAccuracy calibrates links from 0.1 to 200 ms RTT at 1, 10 and 32 concurrent
// connections, in process (Link.Dial, what runs use) and through the proxy (Link.Addr,
// what dblat proxy's clients use), holding the CPUs out of deep idle states as dblat
// does, and prints the error of the added RTT (achieved − requested, direct baseline
// subtracted) at p50 and p99 next to the targets: p50 within max(2 %, 25 µs), p99 within
// max(5 %, 150 µs). Each level measures about 2 s per path, pinging at most 10,000 times a
// second over all connections (CalibrateOptions.MaxRate). The package documentation's
// ranges are two runs (make bench FIGURE=latency-accuracy):
//
//	go test ./internal/latency -run '^$' -bench Accuracy -benchtime 1x -count 2 -v
func BenchmarkAccuracy(b *testing.B) {
	if h, err := HoldCPULatency(); err == nil {
		defer h.Release()
	} else {
		b.Logf("CPUs not held out of deep idle states: %v", err)
	}
	var table strings.Builder
	fmt.Fprintf(&table, "%-7s %5s %9s %12s %12s %12s %12s  %s\n", "path", "conns", "rtt", "err p50", "err p99", "late up p50", "late dn p50", "on target")
	for _, path := range []string{"inline", "inline-spin", "proxy"} {
		for _, conns := range []int{1, 10, 32} {
			for _, rtt := range []time.Duration{100 * time.Microsecond, 500 * time.Microsecond, time.Millisecond,
				10 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond} {
				benchmarkAccuracy(b, path, conns, rtt, &table)
			}
		}
	}
	b.Logf("error of the added RTT, median of the iterations:\n%s", table.String())
}

func benchmarkAccuracy(b *testing.B, path string, conns int, rtt time.Duration, table *strings.Builder) {
	b.Run(fmt.Sprintf("path=%s/conns=%d/rtt=%v", path, conns, rtt), func(b *testing.B) {
		opts := CalibrateOptions{Conns: conns, Inline: path != "proxy"}
		opts.Samples = min(2000, max(20, int(2*time.Second/opts.Interval(rtt)))) * conns
		var last *Calibration
		var p50, p99 []float64
		for range b.N {
			c, err := Calibrate(context.Background(), Config{RTT: rtt, Spin: path == "inline-spin"}, opts)
			if err != nil {
				b.Fatal(err)
			}
			p50, p99 = append(p50, float64(c.Error.P50)/1e3), append(p99, float64(c.Error.P99)/1e3)
			last = c
		}
		med := func(v []float64) float64 { slices.Sort(v); return v[len(v)/2] }
		e50, e99 := med(p50), med(p99)
		t50, t99 := max(float64(rtt)/50, 25e3)/1e3, max(float64(rtt)/20, 150e3)/1e3
		ok := "yes"
		if e50 > t50 || e50 < -t50 || e99 > t99 || e99 < -t99 {
			ok = "NO"
		}
		fmt.Fprintf(table, "%-7s %5d %9v %+10.1fµs %+10.1fµs %10.1fµs %10.1fµs  %s (p50 ±%.0f, p99 ±%.0f µs)\n", path, conns, rtt, e50, e99,
			float64(last.LatenessUp.P50)/1e3, float64(last.LatenessDown.P50)/1e3, ok, t50, t99)
		b.ReportMetric(e50, "p50-err-us")
		b.ReportMetric(e99, "p99-err-us")
		b.ReportMetric(float64(last.Direct.P50)/1e3, "direct-p50-us")
	})
}
