package latency

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/stalltest"
)

// server is a loopback TCP server running handle for each connection.
type server struct {
	ln net.Listener
	wg sync.WaitGroup
}

func startServer(t testing.TB, handle func(net.Conn)) *server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &server{ln: ln}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer c.Close()
				handle(c)
			}()
		}
	}()
	t.Cleanup(s.stop)
	return s
}

func (s *server) addr() string { return s.ln.Addr().String() }

func (s *server) stop() {
	s.ln.Close()
	s.wg.Wait()
}

func echo(c net.Conn) { _, _ = io.Copy(c, c) }

func startLink(t testing.TB, upstream string, cfg Config) *Link {
	t.Helper()
	l, err := Listen(context.Background(), "", upstream, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func dial(t testing.TB, addr string) *net.TCPConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return c.(*net.TCPConn)
}

var linkConfigs = []struct {
	name string
	cfg  Config
}{
	{"pass-through", Config{}},
	{"delayed", Config{RTT: 2 * time.Millisecond}},
	{"jitter+bandwidth", Config{RTT: 2 * time.Millisecond, Jitter: 200 * time.Microsecond, Distribution: Normal,
		BandwidthUp: 1 << 30, BandwidthDown: 1 << 30, DelayConnect: true}},
}

func TestLinkEchoAndCounts(t *testing.T) {
	for _, lc := range linkConfigs {
		t.Run(lc.name, func(t *testing.T) {
			s := startServer(t, echo)
			l := startLink(t, s.addr(), lc.cfg)
			if !strings.HasPrefix(l.Addr(), "127.0.0.1:") {
				t.Errorf("listens on %s, want loopback", l.Addr())
			}
			c := dial(t, l.Addr())
			buf := make([]byte, 5)
			for i := range 10 {
				msg := fmt.Sprintf("msg%02d", i)
				if _, err := c.Write([]byte(msg)); err != nil {
					t.Fatal(err)
				}
				if _, err := io.ReadFull(c, buf); err != nil || string(buf) != msg {
					t.Fatalf("got %q, %v", buf, err)
				}
			}
			c.Close()
			waitFor(t, func() bool { return l.Stats().Active == 0 })
			if got := l.Totals(); got.RoundTrips != 10 || got.BytesUp != 50 || got.BytesDown != 50 {
				t.Errorf("totals %+v, want 10 round trips and 50 bytes each way", got)
			}
			if st := l.Stats(); st.Accepted != 1 || st.Failed != 0 {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

// waitFor polls cond for up to 5 s.
func waitFor(t testing.TB, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 5 s")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestLinkHalfClose: the client sends a request and shuts down its write side; the server
// reads to EOF and only then answers. Toxiproxy loses this answer.
func TestLinkHalfClose(t *testing.T) {
	for _, lc := range linkConfigs {
		t.Run(lc.name, func(t *testing.T) {
			s := startServer(t, func(c net.Conn) {
				b, err := io.ReadAll(c)
				if err != nil {
					return
				}
				fmt.Fprintf(c, "got %d bytes", len(b))
			})
			l := startLink(t, s.addr(), lc.cfg)
			c := dial(t, l.Addr())
			defer c.Close()
			_, _ = c.Write(make([]byte, 100_000))
			if err := c.CloseWrite(); err != nil {
				t.Fatal(err)
			}
			reply, err := io.ReadAll(c)
			if err != nil || string(reply) != "got 100000 bytes" {
				t.Fatalf("reply %q, %v", reply, err)
			}
		})
	}
}

func isReset(err error) bool { return errors.Is(err, syscall.ECONNRESET) }

// TestLinkResetPropagates: when one side resets, the other sees a reset too, not a clean EOF.
func TestLinkResetPropagates(t *testing.T) {
	for _, lc := range linkConfigs {
		t.Run(lc.name+"/client resets", func(t *testing.T) {
			got := make(chan error, 1)
			s := startServer(t, func(c net.Conn) {
				// The link's start-up probe connects and closes without a word: skip it.
				if _, err := io.ReadFull(c, make([]byte, 2)); err != nil {
					return
				}
				_, _ = c.Write([]byte("hi"))
				_, err := io.ReadAll(c)
				got <- err
			})
			l := startLink(t, s.addr(), lc.cfg)
			c := dial(t, l.Addr())
			_, _ = c.Write([]byte("hi"))
			_, _ = io.ReadFull(c, make([]byte, 2))
			_ = c.SetLinger(0)
			c.Close()
			select {
			case err := <-got:
				if !isReset(err) {
					t.Errorf("server saw %v, want connection reset", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("server never saw the reset")
			}
		})
		t.Run(lc.name+"/server resets", func(t *testing.T) {
			s := startServer(t, func(c net.Conn) {
				_, _ = io.ReadFull(c, make([]byte, 2))
				_ = c.(*net.TCPConn).SetLinger(0)
			})
			l := startLink(t, s.addr(), lc.cfg)
			c := dial(t, l.Addr())
			defer c.Close()
			_, _ = c.Write([]byte("hi"))
			_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
			if _, err := io.ReadAll(c); !isReset(err) {
				t.Errorf("client saw %v, want connection reset", err)
			}
		})
	}
}

func TestLinkUpstreamDown(t *testing.T) {
	// Nothing listens on a port we just closed.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	_, err := Listen(context.Background(), "", addr, Config{})
	if want := "upstream " + addr + " unreachable: connection refused"; err == nil || err.Error() != want {
		t.Fatalf("Listen: %v, want %q", err, want)
	}

	// The upstream goes away after the link started: clients are reset at once.
	s := startServer(t, echo)
	l := startLink(t, s.addr(), Config{RTT: time.Millisecond})
	s.stop()
	start := time.Now()
	// The reset may even beat the client's connect() back to user space.
	c, err := net.Dial("tcp", l.Addr())
	if err == nil {
		defer c.Close()
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err = c.Read(make([]byte, 1))
	}
	if !isReset(err) || time.Since(start) > time.Second {
		t.Errorf("client: %v after %v, want a prompt connection reset", err, time.Since(start))
	}
	waitFor(t, func() bool { return l.Stats().Failed == 1 })
	if st := l.Stats(); !strings.Contains(st.LastError, "unreachable: connection refused") {
		t.Errorf("stats %+v", st)
	}
}

// TestLinkCloseUnblocks: Close returns promptly even with data held in long delay lines and
// a peer that does not read, and the clients see their connections end.
func TestLinkCloseUnblocks(t *testing.T) {
	s := startServer(t, func(c net.Conn) { _, _ = io.Copy(io.Discard, c) })
	l := startLink(t, s.addr(), Config{RTT: 10 * time.Second})
	var cs []*net.TCPConn
	for range 5 {
		c := dial(t, l.Addr())
		defer c.Close()
		_, _ = c.Write(make([]byte, 1<<20))
		cs = append(cs, c)
	}
	waitFor(t, func() bool { return l.Stats().Active == 5 })
	start := time.Now()
	l.Close()
	if d := time.Since(start); d > time.Second {
		t.Errorf("Close took %v", d)
	}
	for _, c := range cs {
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("client read after Close: %v", err)
		}
	}
	if err := l.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func openFDs(t testing.TB) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(ents)
}

// TestLinkManyConnections opens and closes 10,000 connections (2,000 with -short) through
// delayed and pass-through links, in concurrent batches, and checks that no file descriptor
// or goroutine is left behind.
func TestLinkManyConnections(t *testing.T) {
	total, batch := 10_000, 250
	if testing.Short() {
		total = 2_000
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err == nil && lim.Cur < 8*uint64(batch)+1000 {
		lim.Cur = min(lim.Max, 8*uint64(batch)+1000)
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
	}
	s := startServer(t, echo)
	links := []*Link{
		startLink(t, s.addr(), Config{RTT: 100 * time.Microsecond, Jitter: 20 * time.Microsecond}),
		startLink(t, s.addr(), Config{}),
	}
	// Warm up pools and the runtime so they do not count as leaks.
	for _, l := range links {
		c := dial(t, l.Addr())
		_, _ = c.Write([]byte{1})
		_, _ = io.ReadFull(c, make([]byte, 1))
		c.Close()
		waitFor(t, func() bool { return l.Stats().Active == 0 })
	}
	fds, gs := openFDs(t), runtime.NumGoroutine()
	start := time.Now()
	for done := 0; done < total; done += batch {
		l := links[(done/batch)%2]
		var wg sync.WaitGroup
		errs := make(chan error, batch)
		for range batch {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c, err := net.Dial("tcp", l.Addr())
				if err != nil {
					errs <- err
					return
				}
				defer c.Close()
				if _, err := c.Write([]byte{7}); err != nil {
					errs <- err
					return
				}
				b := make([]byte, 1)
				if _, err := io.ReadFull(c, b); err != nil || b[0] != 7 {
					errs <- fmt.Errorf("echo: %v %v", b, err)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	}
	for _, l := range links {
		waitFor(t, func() bool { return l.Stats().Active == 0 })
	}
	t.Logf("%d connections in %v", total, time.Since(start))
	waitFor(t, func() bool { return openFDs(t) <= fds && runtime.NumGoroutine() <= gs })
	var rts int64
	for _, l := range links {
		st := l.Stats()
		rts += st.Totals.RoundTrips
		if st.Failed != 0 {
			t.Errorf("failed connections: %+v", st)
		}
	}
	if rts != int64(total)+2 {
		t.Errorf("%d round trips counted, want %d", rts, total+2)
	}
}

// TestLinkBulkIntegrity pushes 1 GiB (64 MiB with -short) of random bytes through a link
// with delay, jitter and a bandwidth limit in both directions (the server echoes), closes
// the client's write side and checks that exactly the same bytes come back.
func TestLinkBulkIntegrity(t *testing.T) {
	size := int64(1 << 30)
	if testing.Short() {
		size = 64 << 20
	}
	s := startServer(t, func(c net.Conn) {
		_, _ = io.Copy(c, c) // until the client's FIN has come through
		_ = c.(*net.TCPConn).CloseWrite()
	})
	bw, _ := ParseBandwidth("16gbit")
	l := startLink(t, s.addr(), Config{RTT: 4 * time.Millisecond, Jitter: 500 * time.Microsecond, Distribution: ParetoNormal,
		BandwidthUp: bw, BandwidthDown: bw})
	c := dial(t, l.Addr())
	defer c.Close()
	start := time.Now()
	sent := make(chan []byte, 1)
	go func() {
		h := sha256.New()
		rng := rand.New(rand.NewPCG(1, 2))
		buf := make([]byte, 1<<20)
		for n := int64(0); n < size; {
			k := min(int64(len(buf)), size-n, int64(1+rng.IntN(len(buf))))
			for i := range k {
				buf[i] = byte(rng.Uint32())
			}
			h.Write(buf[:k])
			if _, err := c.Write(buf[:k]); err != nil {
				t.Error(err)
				break
			}
			n += k
		}
		_ = c.CloseWrite()
		sent <- h.Sum(nil)
	}()
	h := sha256.New()
	n, err := io.Copy(h, c)
	if err != nil || n != size {
		t.Fatalf("received %d bytes, %v; want %d", n, err, size)
	}
	if got, want := h.Sum(nil), <-sent; string(got) != string(want) {
		t.Fatal("checksum mismatch")
	}
	t.Logf("%d MiB echoed byte-exact in %v", size>>20, time.Since(start))
}

// TestLinkNoAllocations checks that forwarding does not allocate per chunk once warmed up,
// on the pass-through path and through a delay line. A round trip is two chunks, so one
// allocation per chunk would show as 2; what little is allowed is time-based (the spin
// budget reads /proc/stat every 100 ms).
func TestLinkNoAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	for _, lc := range linkConfigs[:2] {
		t.Run(lc.name, func(t *testing.T) {
			s := startServer(t, echo)
			l := startLink(t, s.addr(), lc.cfg)
			c := dial(t, l.Addr())
			defer c.Close()
			msg, buf := make([]byte, 100), make([]byte, 100)
			roundTrips := func(n int) {
				for range n {
					if _, err := c.Write(msg); err != nil {
						t.Fatal(err)
					}
					if _, err := io.ReadFull(c, buf); err != nil {
						t.Fatal(err)
					}
				}
			}
			roundTrips(50)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			const n = 300
			roundTrips(n)
			runtime.ReadMemStats(&after)
			if per := float64(after.Mallocs-before.Mallocs) / n; per > 0.5 {
				t.Errorf("%.2f allocations per round trip", per)
			}
		})
	}
}

// TestLinkBandwidth: 2.5 MB through a 100 Mbit/s link take 200 ms on the wire, plus the
// one-way delay, and two connections share the one cable.
func TestLinkBandwidth(t *testing.T) {
	const size = 2_500_000
	bw, _ := ParseBandwidth("100mbit")
	done := make(chan time.Time, 2)
	s := startServer(t, func(c net.Conn) {
		if n, _ := io.CopyN(io.Discard, c, size/2); n == size/2 {
			done <- time.Now()
		}
	})
	l := startLink(t, s.addr(), Config{Up: 5 * time.Millisecond, BandwidthUp: bw})
	a, b := dial(t, l.Addr()), dial(t, l.Addr())
	defer a.Close()
	defer b.Close()
	stalls := stalltest.Watch()
	start := time.Now()
	go func() { _, _ = a.Write(make([]byte, size/2)) }()
	go func() { _, _ = b.Write(make([]byte, size/2)) }()
	<-done
	last := <-done
	st := stalls()
	// Never faster than the one cable (each connection on a cable of its own would take
	// half). Slower only by what the machine withheld: each chunk is due after those
	// queued before it, by the clock, so a late wake-up does not add up chunk after chunk;
	// the time this process went without a CPU (measured alongside) and 5 % do.
	want := 205 * time.Millisecond
	limit := want*105/100 + st.Total
	if d := last.Sub(start); d < want*95/100 || d > limit {
		t.Errorf("2.5 MB over 100mbit took %v, want %v to %v (this process went %v without a CPU)", d, want*95/100, limit, st.Total)
	} else {
		t.Logf("2.5 MB over 100mbit took %v (want %v; the process went %v without a CPU)", d, want, st.Total)
	}
}
