package latency

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"
)

// TestLinkDial: in-process conns echo through every kind of link, take at least the
// requested RTT, are counted like accepted ones, and end when the link closes.
func TestLinkDial(t *testing.T) {
	for _, lc := range linkConfigs {
		t.Run(lc.name, func(t *testing.T) {
			s := startServer(t, echo)
			l := startLink(t, s.addr(), lc.cfg)
			c, err := l.Dial(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if _, pass := c.(*passConn); pass != (lc.cfg.AddedRTT() == 0) {
				t.Errorf("conn %T for %+v", c, lc.cfg)
			}
			buf := make([]byte, 5)
			// A release leaves when its timer wakes, armed early by the predicted wake-up
			// latency (at most maxLead each way): a timer that wakes sooner than predicted
			// releases early by the difference, about half of them by a few µs.
			rtt := lc.cfg.AddedRTT() - lc.cfg.Jitter*2
			var took []time.Duration
			for i := range 10 {
				msg := fmt.Sprintf("msg%02d", i)
				start := time.Now()
				if _, err := c.Write([]byte(msg)); err != nil {
					t.Fatal(err)
				}
				if _, err := io.ReadFull(c, buf); err != nil || string(buf) != msg {
					t.Fatalf("got %q, %v", buf, err)
				}
				d := time.Since(start)
				took = append(took, d)
				if want := rtt - 2*maxLead; d < want {
					t.Errorf("round trip %d took %v, want at least %v", i, d, want)
				}
			}
			slices.Sort(took)
			if med, want := took[len(took)/2], rtt-50*time.Microsecond; rtt > 0 && med < want {
				t.Errorf("round trips took %v at the median, want at least %v", med, want)
			}
			if st := l.Stats(); st.Active != 1 || st.Accepted != 1 {
				t.Errorf("stats while open %+v", st)
			}
			c.Close()
			waitFor(t, func() bool { return l.Stats().Active == 0 })
			if got := l.Totals(); got.RoundTrips != 10 || got.BytesUp != 50 || got.BytesDown != 50 {
				t.Errorf("totals %+v, want 10 round trips and 50 bytes each way", got)
			}

			c, err = l.Dial(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			l.Close()
			_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
			if _, err := c.Read(buf); err == nil {
				t.Error("read from an in-process conn after the link closed")
			}
			if _, err := l.Dial(context.Background()); err == nil {
				t.Error("Dial after Close succeeded")
			}
		})
	}
}

// TestLinkDialUpstreamDown: the error names the upstream.
func TestLinkDialUpstreamDown(t *testing.T) {
	s := startServer(t, echo)
	l := startLink(t, s.addr(), Config{RTT: time.Millisecond})
	s.stop()
	if _, err := l.Dial(context.Background()); err == nil || !strings.Contains(err.Error(), "upstream "+s.addr()+" unreachable") {
		t.Errorf("Dial to a stopped upstream: %v", err)
	}
}

// TestCalibrateInline: in-process conns get the requested RTT (the tolerance and attempts
// of TestCalibrateAccuracy; BenchmarkAccuracy measures the accuracy).
func TestCalibrateInline(t *testing.T) {
	if raceEnabled {
		t.Skip("timing is meaningless under the race detector")
	}
	const rtt = 100 * time.Microsecond
	tol := 800 * time.Microsecond
	var errs []time.Duration
	for range 3 {
		cal, err := Calibrate(context.Background(), Config{RTT: rtt}, CalibrateOptions{Samples: 200, Inline: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Log(cal)
		errs = append(errs, cal.Error.P50)
		if e := cal.Error.P50; e <= tol && e >= -tol {
			return
		}
	}
	t.Errorf("error p50 %v in 3 attempts, want within ±%v", errs, tol)
}

// inlinePipe makes an in-process conn of a link on the Go clock whose upstream is one end
// of an in-memory pipe, for a synctest bubble; it returns the conn, the upstream's other
// end and the link's env.
func inlinePipe(t *testing.T, cfg Config) (*inlineConn, net.Conn, *env) {
	t.Helper()
	e := newEnv(cfg, newGoClock())
	l := &Link{env: e, conns: map[member]struct{}{}}
	upstream, server := net.Pipe()
	c, err := newInlineConn(l, 1, upstream, e.clk.now())
	if err != nil {
		t.Fatal(err)
	}
	l.register(c)
	t.Cleanup(func() { c.Close(); server.Close() })
	return c, server, e
}

// TestInlineConnExact: on the fake clock the request reaches the upstream exactly Up after
// Write, the answer is returned exactly Down after it left the upstream, and each delayed
// chunk is recorded once in its direction's lateness (0 here: the clock is exact).
func TestInlineConnExact(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, server, e := inlinePipe(t, Config{Up: 3 * time.Millisecond, Down: 7 * time.Millisecond})
		start := time.Now()
		go func() { _, _ = c.Write([]byte("ping")) }()
		if b, at := readAt(t, server, 4); string(b) != "ping" || at.Sub(start) != 3*time.Millisecond {
			t.Fatalf("upstream got %q after %v, want ping after 3ms", b, at.Sub(start))
		}
		mid := time.Now()
		go func() { _, _ = server.Write([]byte("pong!")) }()
		if b, at := readAt(t, c, 5); string(b) != "pong!" || at.Sub(mid) != 7*time.Millisecond {
			t.Fatalf("client got %q after %v, want pong! after 7ms", b, at.Sub(mid))
		}
		for d, h := range e.lateness {
			if s := h.summary(); s.N != 1 || s.Max != 0 {
				t.Errorf("direction %d lateness %+v, want one chunk on time", d, s)
			}
		}
		if got := c.counts(); got.RoundTrips != 1 || got.BytesUp != 4 || got.BytesDown != 5 {
			t.Errorf("counts %+v", got)
		}
	})
}

// TestInlineConnDeadline: a read deadline ends a Read that waits for the release of data
// already received; the data is not lost and the next Read returns it on time.
func TestInlineConnDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, server, _ := inlinePipe(t, Config{Down: 10 * time.Millisecond})
		start := time.Now()
		go func() { _, _ = server.Write([]byte("late")) }()
		_ = c.SetReadDeadline(start.Add(4 * time.Millisecond))
		buf := make([]byte, 4)
		if _, err := c.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) || time.Since(start) != 4*time.Millisecond {
			t.Fatalf("Read past its deadline: %v after %v, want a timeout after 4ms", err, time.Since(start))
		}
		_ = c.SetReadDeadline(time.Time{})
		if n, err := c.Read(buf); err != nil || string(buf[:n]) != "late" || time.Since(start) != 10*time.Millisecond {
			t.Fatalf("next Read: %q %v after %v, want late after 10ms", buf[:n], err, time.Since(start))
		}
	})
}

// TestLatenessSince: a window's lateness counts only what was recorded after its mark.
func TestLatenessSince(t *testing.T) {
	var h histogram
	h.record(int64(500 * time.Microsecond))
	m := h.snapshot()
	for range 9 {
		h.record(int64(10 * time.Microsecond))
	}
	s := h.since(m)
	if s.N != 9 || s.P50 < 10*time.Microsecond || s.P50 > 12*time.Microsecond || s.Max > 12*time.Microsecond {
		t.Errorf("since the mark: %+v, want 9 samples of ~10µs", s)
	}
	if all := h.summary(); all.N != 10 || all.Max != 500*time.Microsecond {
		t.Errorf("whole: %+v", all)
	}
}

// raiseFDLimit makes room for n more open files, raising the hard limit too where the
// process may (root), and returns how many it can have.
func raiseFDLimit(n uint64) uint64 {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0
	}
	if lim.Cur < n {
		want := lim
		want.Cur, want.Max = n, max(lim.Max, n)
		if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &want) != nil {
			want.Cur, want.Max = min(n, lim.Max), lim.Max
			_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &want)
		}
		_ = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim)
	}
	return lim.Cur
}

// TestLinkDialManyConnections holds 10,000 in-process conns (2,000 with -short) open at
// once through a 200 ms link, each doing one round trip, closes them and the link, and
// checks that no file descriptor or goroutine is left behind, that the link kept at most
// maxFreeTimers timers for reuse meanwhile, and that every round trip was counted.
func TestLinkDialManyConnections(t *testing.T) {
	total := 10_000
	if testing.Short() {
		total = 2_000
	}
	// Per conn: its socket and the echo server's (timers are pooled).
	if have := raiseFDLimit(uint64(2*total + 1000)); have < uint64(2*total+1000) {
		total = int(have-1000) / 2
		t.Logf("open-file limit %d: %d connections", have, total)
	}
	// An echo loop of its own: io.Copy between TCP conns splices through a pipe pair per
	// connection, two more files each.
	s := startServer(t, func(c net.Conn) {
		b := make([]byte, 64)
		for {
			n, err := c.Read(b)
			if n > 0 {
				if _, werr := c.Write(b[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	})
	fds, gs := openFDs(t), runtime.NumGoroutine()
	l := startLink(t, s.addr(), Config{RTT: 200 * time.Millisecond})
	conns := make([]net.Conn, total)
	var wg sync.WaitGroup
	errs := make(chan error, total)
	start := time.Now()
	for i := range conns {
		c, err := l.Dial(context.Background())
		if err != nil {
			t.Fatalf("conn %d: %v", i, err)
		}
		conns[i] = c
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.Write([]byte{byte(i)}); err != nil {
				errs <- err
				return
			}
			b := make([]byte, 1)
			if _, err := io.ReadFull(c, b); err != nil || b[0] != byte(i) {
				errs <- fmt.Errorf("echo: %v %v", b, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if st := l.Stats(); st.Active != int64(total) || st.Totals.RoundTrips != int64(total) {
		t.Errorf("with all open: %d active, %d round trips; want %d each", st.Active, st.Totals.RoundTrips, total)
	}
	t.Logf("%d connections, one round trip each at 200 ms, in %v", total, time.Since(start))
	for _, c := range conns {
		c.Close()
	}
	waitFor(t, func() bool { return l.Stats().Active == 0 })
	// The echo server closes its ends as their EOFs arrive.
	deadline := time.Now().Add(5 * time.Second)
	for openFDs(t)-fds > maxFreeTimers+4 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := openFDs(t) - fds; n > maxFreeTimers+4 {
		t.Errorf("%d files open with every conn closed, want at most the link's own (listener, releaser, %d pooled timers)", n, maxFreeTimers)
	}
	l.Close()
	waitFor(t, func() bool { return openFDs(t) <= fds && runtime.NumGoroutine() <= gs })
}
