package latency

import (
	"bytes"
	"io"
	"math"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// pipeConn runs one link connection over in-memory pipes on the Go clock, for use inside a
// synctest bubble where time is exact. It returns the application ends: what the client
// and the server would hold. Cleanup tears everything down and waits for the goroutines.
func pipeConn(t *testing.T, cfg Config) (client, server net.Conn, c *conn) {
	t.Helper()
	e := newEnv(cfg, newGoClock())
	appClient, linkClient := net.Pipe()
	linkServer, appServer := net.Pipe()
	c = e.newConn(0, linkClient, linkServer, e.clk.now(), nil, nil)
	var wg sync.WaitGroup
	if err := c.start(func(f func()) { wg.Add(1); go func() { defer wg.Done(); f() }() }); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.teardown(false)
		appClient.Close()
		appServer.Close()
		wg.Wait()
	})
	return appClient, appServer, c
}

// readAt reads exactly n bytes and returns them with the time the last one arrived.
func readAt(t *testing.T, c net.Conn, n int) ([]byte, time.Time) {
	t.Helper()
	b := make([]byte, n)
	if _, err := io.ReadFull(c, b); err != nil {
		t.Fatal(err)
	}
	return b, time.Now()
}

func TestDelayLineExact(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := Config{Up: 3 * time.Millisecond, Down: 7 * time.Millisecond}
		client, server, c := pipeConn(t, cfg)
		start := time.Now()
		go func() { _, _ = client.Write([]byte("ping")) }()
		if b, at := readAt(t, server, 4); string(b) != "ping" || at.Sub(start) != 3*time.Millisecond {
			t.Fatalf("server got %q after %v, want ping after 3ms", b, at.Sub(start))
		}
		mid := time.Now()
		go func() { _, _ = server.Write([]byte("pong!")) }()
		if b, at := readAt(t, client, 5); string(b) != "pong!" || at.Sub(mid) != 7*time.Millisecond {
			t.Fatalf("client got %q after %v, want pong! after 7ms", b, at.Sub(mid))
		}
		if got := c.meter.Snapshot(); got != (Counts{RoundTrips: 1, BytesUp: 4, BytesDown: 5, ChunksUp: 1, ChunksDown: 1}) {
			t.Errorf("counts %+v", got)
		}
	})
}

// TestDelayLinePipelines sends a message every millisecond without waiting: each must
// arrive exactly Up after it was sent (delays do not add up, order is kept), and the
// sender is never held back.
func TestDelayLinePipelines(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client, server, _ := pipeConn(t, Config{Up: 10 * time.Millisecond})
		start := time.Now()
		go func() {
			for i := range 50 {
				_, _ = client.Write([]byte{byte(i)})
				time.Sleep(time.Millisecond)
			}
		}()
		for i := range 50 {
			b, at := readAt(t, server, 1)
			want := time.Duration(i)*time.Millisecond + 10*time.Millisecond
			if b[0] != byte(i) || at.Sub(start) != want {
				t.Fatalf("message %d: got %d at %v, want at %v", i, b[0], at.Sub(start), want)
			}
		}
	})
}

// TestDelayLineJitterStream checks the delivered delays of a jittered one-way stream and
// that order is kept.
func TestDelayLineJitterStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client, server, _ := pipeConn(t, Config{Up: 5 * time.Millisecond, Jitter: 4 * time.Millisecond, Seed: 3})
		const n = 5000
		sent := make([]time.Time, n)
		go func() {
			for i := range n {
				sent[i] = time.Now()
				_, _ = client.Write([]byte{byte(i), byte(i >> 8)})
				time.Sleep(time.Millisecond)
			}
		}()
		var sum, lo, hi float64 = 0, math.Inf(1), math.Inf(-1)
		for i := range n {
			b, at := readAt(t, server, 2)
			if got := int(b[0]) | int(b[1])<<8; got != i {
				t.Fatalf("message %d arrived as %d", got, i)
			}
			d := float64(at.Sub(sent[i])) / 1e6
			sum += d
			lo, hi = min(lo, d), max(hi, d)
		}
		mean := sum / n
		t.Logf("5±4 ms uniform, one message per ms: mean %.3f ms, range [%.3f, %.3f]", mean, lo, hi)
		if math.Abs(mean-5) > 0.25 || lo < 1 || hi > 9 {
			t.Errorf("mean %.3f range [%.3f, %.3f], want 5±0.25 within [1, 9]", mean, lo, hi)
		}
	})
}

func TestDelayLineBandwidth(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// 1 MB/s: 100 kB take 100 ms on the cable, plus 10 ms propagation.
		client, server, _ := pipeConn(t, Config{Up: 10 * time.Millisecond, BandwidthUp: 1_000_000})
		start := time.Now()
		msg := bytes.Repeat([]byte("x"), 100_000)
		go func() { _, _ = client.Write(msg) }()
		_, first := readAt(t, server, 1)
		_, last := readAt(t, server, len(msg)-1)
		// Chunks are 1500 bytes (1 ms of cable at 1 MB/s is below one MTU).
		if d := first.Sub(start); d != 11500*time.Microsecond {
			t.Errorf("first byte after %v, want 11.5ms", d)
		}
		if d := last.Sub(start); d != 110*time.Millisecond {
			t.Errorf("last byte after %v, want 110ms", d)
		}
	})
}

func TestDelayLineConnect(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Up 2 ms, down 3 ms: a real client's first byte leaves when its connect returns
		// (1 RTT) and reaches the server 2 ms later; the server's first byte can leave when
		// the handshake's last ACK arrives (RTT+Up) and takes 3 ms to the client.
		client, server, _ := pipeConn(t, Config{Up: 2 * time.Millisecond, Down: 3 * time.Millisecond, DelayConnect: true})
		start := time.Now()
		go func() { _, _ = client.Write([]byte("q")) }()
		go func() { _, _ = server.Write([]byte("greeting")) }()
		if _, at := readAt(t, server, 1); at.Sub(start) != 7*time.Millisecond {
			t.Errorf("first request after %v, want 7ms", at.Sub(start))
		}
		if _, at := readAt(t, client, 8); at.Sub(start) != 10*time.Millisecond {
			t.Errorf("server greeting after %v, want 10ms (2 RTT)", at.Sub(start))
		}
		// Later traffic is not gated.
		mid := time.Now()
		go func() { _, _ = client.Write([]byte("q")) }()
		if _, at := readAt(t, server, 1); at.Sub(mid) != 2*time.Millisecond {
			t.Errorf("second request after %v, want 2ms", at.Sub(mid))
		}
	})
}

func TestDelayLineConnectPassThrough(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Up is zero (no delay line that way), but the gate still holds the first request.
		client, server, _ := pipeConn(t, Config{Down: 4 * time.Millisecond, DelayConnect: true})
		start := time.Now()
		go func() { _, _ = client.Write([]byte("q")) }()
		if _, at := readAt(t, server, 1); at.Sub(start) != 4*time.Millisecond {
			t.Errorf("first request after %v, want 4ms (1 RTT)", at.Sub(start))
		}
	})
}

func TestDelayLineEOF(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client, server, _ := pipeConn(t, Config{Up: 5 * time.Millisecond})
		start := time.Now()
		go func() {
			_, _ = client.Write([]byte("last words"))
			client.Close()
		}()
		b, err := io.ReadAll(server)
		if string(b) != "last words" || err != nil {
			t.Fatalf("got %q, %v", b, err)
		}
		// The end of stream travels like data.
		if d := time.Since(start); d != 5*time.Millisecond {
			t.Errorf("EOF after %v, want 5ms", d)
		}
	})
}

// TestDelayLineQueueLimit checks back-pressure: with a 64 KiB queue and a server that does
// not read, the link stops reading from the client after about the queue's worth.
func TestDelayLineQueueLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client, server, c := pipeConn(t, Config{Up: time.Millisecond, QueueLimit: 64 << 10})
		var written atomic.Int64
		go func() {
			buf := make([]byte, 1000)
			for {
				n, err := client.Write(buf)
				written.Add(int64(n))
				if err != nil {
					return
				}
			}
		}()
		time.Sleep(time.Second)
		synctest.Wait()
		// The queue holds the limit, and at most one more chunk above it.
		x := c.dirs[up]
		x.mu.Lock()
		held := x.bytes
		x.mu.Unlock()
		if held < 64<<10 || held > 64<<10+midClass {
			t.Errorf("queue holds %d bytes, want about 64 KiB", held)
		}
		if w := written.Load(); w > 100_000 {
			t.Errorf("client wrote %d bytes into a stalled link", w)
		}
		server.Close()
	})
}
