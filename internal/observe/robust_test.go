package observe_test

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/latency"
	"github.com/dblat/dblat/internal/observe"
	"github.com/dblat/dblat/internal/wire"
	"github.com/dblat/dblat/internal/wire/wiretest"
)

// mangled returns versions of a capture a decoder cannot follow: cut inside a chunk,
// 8 bytes of 0xFF inserted before a client chunk, random bytes changed. The first two
// chunks stay whole: a mangled first message could be a TLS request, which the proxy may
// answer itself (the one exchange it changes).
func mangled(c wiretest.Capture, rng *rand.Rand) map[string]wiretest.Capture {
	out := map[string]wiretest.Capture{}
	n := len(c)
	for _, k := range []int{n / 3, n / 2, n - 2} {
		if k < 2 || k >= n || len(c[k].Data) < 2 {
			continue
		}
		cut := append(wiretest.Capture(nil), c[:k]...)
		out[fmt.Sprintf("cut in chunk %d", k)] = append(cut, wiretest.Chunk{Dir: c[k].Dir, At: c[k].At, Data: c[k].Data[:len(c[k].Data)-1]})
	}
	for _, k := range []int{n / 3, 2 * n / 3} {
		for k < n && c[k].Dir != wire.Client {
			k++
		}
		if k < 2 || k >= n {
			continue
		}
		bad := append(wiretest.Capture(nil), c[:k]...)
		bad = append(bad, wiretest.Chunk{Dir: wire.Client, At: c[k].At, Data: bytes.Repeat([]byte{0xff}, 8)})
		out[fmt.Sprintf("0xff before chunk %d", k)] = append(bad, c[k:]...)
	}
	for i := range 3 {
		bad := make(wiretest.Capture, n)
		for j, ch := range c {
			bad[j] = wiretest.Chunk{Dir: ch.Dir, At: ch.At, Data: bytes.Clone(ch.Data)}
		}
		for range 3 {
			if n <= 2 {
				break
			}
			ch := &bad[2+rng.IntN(n-2)]
			if len(ch.Data) > 0 {
				ch.Data[rng.IntN(len(ch.Data))] = byte(rng.Uint32())
			}
		}
		out[fmt.Sprintf("random bytes %d", i)] = bad
	}
	return out
}

// conversation plays a capture through a real observing proxy: the test is the client on
// one side and the server on the other, sends each chunk from its side and reads exactly
// its bytes on the other. It fails unless every byte arrives unchanged.
func conversation(t *testing.T, l *latency.Link, srv net.Listener, c wiretest.Capture) {
	t.Helper()
	cl, err := net.Dial("tcp", l.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	_ = srv.(*net.TCPListener).SetDeadline(time.Now().Add(10 * time.Second))
	sv, err := srv.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer sv.Close()
	for i, ch := range c {
		from, to := cl, sv
		if ch.Dir == wire.Server {
			from, to = sv, cl
		}
		if _, err := from.Write(ch.Data); err != nil {
			t.Fatalf("chunk %d: write: %v", i, err)
		}
		_ = to.SetReadDeadline(time.Now().Add(10 * time.Second))
		got := make([]byte, len(ch.Data))
		if _, err := io.ReadFull(to, got); err != nil {
			t.Fatalf("chunk %d (%s, %d bytes): %v", i, ch.Dir, len(ch.Data), err)
		}
		if !bytes.Equal(got, ch.Data) {
			t.Fatalf("chunk %d (%s) arrived changed", i, ch.Dir)
		}
	}
}

// TestProxyForwardsWhatItCannotFollow feeds every captured conversation, whole and
// mangled (cut, with garbage inserted, with random bytes changed), through a real observing
// proxy: the bytes each side receives are exactly those the other sent, the proxy goes on
// accepting connections, and its observation counts them.
func TestProxyForwardsWhatItCannotFollow(t *testing.T) {
	srv, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	obs := observe.New(observe.Config{Protocols: engine.WireProtocols(), Record: true})
	for _, cfg := range []latency.Config{{}, {RTT: 200 * time.Microsecond}} {
		l, err := latency.Listen(t.Context(), "", srv.Addr().String(), cfg, latency.WithObserver(obs))
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(24, 2))
		conns := 0
		// Accept the proxy's start-up probe.
		if c, err := srv.Accept(); err == nil {
			c.Close()
		}
		for _, path := range captures(t) {
			c, err := wiretest.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			name := filepath.Base(filepath.Dir(filepath.Dir(filepath.Dir(path)))) + "/" + filepath.Base(path)
			t.Run(fmt.Sprintf("%s/%s/whole", cfg, name), func(t *testing.T) { conversation(t, l, srv, c) })
			conns++
			for what, bad := range mangled(c, rng) {
				t.Run(fmt.Sprintf("%s/%s/%s", cfg, name, what), func(t *testing.T) { conversation(t, l, srv, bad) })
				conns++
			}
		}
		deadline := time.Now().Add(10 * time.Second)
		for l.Stats().Active > 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if st := l.Stats(); st.Accepted != int64(conns) || st.Active != 0 || st.Failed != 0 {
			t.Errorf("%s: accepted %d, active %d, failed %d; want %d accepted", cfg, st.Accepted, st.Active, st.Failed, conns)
		}
		l.Close()
	}
	o := obs.Snapshot()
	if o.Connections == 0 || o.Transactions == 0 || len(o.CannotFollow) == 0 {
		t.Errorf("observation: %d connections, %d transactions, cannot follow %v", o.Connections, o.Transactions, o.CannotFollow)
	}
}
