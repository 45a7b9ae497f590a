package wiretest

import (
	"bytes"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/wire"
)

// Proxy is a TCP proxy for tests that forwards each connection to an upstream server and
// tees it into a wire.Tracker, the way the observing proxy does: each chunk goes, under the
// connection's lock, through the Tracker's Interceptor, then is fed to the Tracker and
// recorded, then forwarded. Feeding before the write keeps the order the Tracker needs (a
// reply cannot be fed before the request it answers), as latency.Meter counts a chunk
// before writing it.
type Proxy struct {
	ln        net.Listener
	upstream  string
	protocols []wire.Protocol
	start     time.Time
	// Agg receives every connection's figures when it ends.
	Agg wire.Aggregate

	mu     sync.Mutex
	conns  []*Conn
	closed bool
	wg     sync.WaitGroup
	ended  chan struct{}
}

// Conn is what the Proxy recorded of one connection.
type Conn struct {
	mu      sync.Mutex
	tr      *wire.Tracker
	rec     Recorder
	capture Capture
	txs     []wire.Tx
	client  net.Conn
	server  net.Conn
	wmu     [2]sync.Mutex // serialises writes to client (0) and server (1)
	done    bool
}

// StartProxy listens on an ephemeral loopback port and forwards to upstream, following the
// connections with the given protocols. It is closed when the test ends.
func StartProxy(t testing.TB, upstream string, protocols ...wire.Protocol) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{ln: ln, upstream: upstream, protocols: protocols, start: time.Now(), ended: make(chan struct{}, 1)}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.Close)
	return p
}

// Addr returns the address clients connect to.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Port returns the port clients connect to.
func (p *Proxy) Port() int { return p.ln.Addr().(*net.TCPAddr).Port }

func (p *Proxy) now() int64 { return time.Since(p.start).Nanoseconds() }

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		cl, err := p.ln.Accept()
		if err != nil {
			return
		}
		sv, err := net.Dial("tcp", p.upstream)
		if err != nil {
			cl.Close()
			continue
		}
		c := &Conn{client: cl, server: sv}
		c.tr = wire.NewTracker(wire.TrackerConfig{Protocols: p.protocols, Tap: &c.rec, OnTx: func(tx *wire.Tx) {
			x := *tx
			sh := *tx.Shape
			x.Shape = &sh
			c.txs = append(c.txs, x)
		}})
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			cl.Close()
			sv.Close()
			return
		}
		p.conns = append(p.conns, c)
		p.mu.Unlock()
		var pumps sync.WaitGroup
		pumps.Add(2)
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			pumps.Wait()
			cl.Close()
			sv.Close()
			c.mu.Lock()
			c.tr.Close(p.now())
			c.tr.Flush(&p.Agg)
			c.done = true
			c.mu.Unlock()
			select {
			case p.ended <- struct{}{}:
			default:
			}
		}()
		go p.pump(c, wire.Client, &pumps)
		go p.pump(c, wire.Server, &pumps)
	}
}

// pump moves one direction of c.
func (p *Proxy) pump(c *Conn, from wire.Direction, wg *sync.WaitGroup) {
	defer wg.Done()
	src, dst, back := c.client, c.server, 0
	to := 1
	if from == wire.Server {
		src, dst, back, to = c.server, c.client, 1, 0
	}
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			at := p.now()
			c.mu.Lock()
			ic := c.tr.Intercept(from, buf[:n])
			out := buf[:n]
			switch ic.Action {
			case wire.Answer:
				reply := bytes.Clone(ic.Bytes)
				c.mu.Unlock()
				_ = c.write(back, src, reply)
				continue
			case wire.Replace:
				out = bytes.Clone(ic.Bytes)
			}
			c.capture = append(c.capture, Chunk{Dir: from, At: at, Data: bytes.Clone(out)})
			if from == wire.Client {
				c.tr.ClientData(out, at)
			} else {
				c.tr.ServerData(out, at)
			}
			c.mu.Unlock()
			if c.write(to, dst, out) != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	if tc, ok := dst.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
}

func (c *Conn) write(i int, conn net.Conn, b []byte) error {
	c.wmu[i].Lock()
	defer c.wmu[i].Unlock()
	_, err := conn.Write(b)
	return err
}

// Close stops accepting, closes every connection and waits for the proxy's goroutines.
func (p *Proxy) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	conns := p.conns
	p.mu.Unlock()
	p.ln.Close()
	for _, c := range conns {
		c.client.Close()
		c.server.Close()
	}
	p.wg.Wait()
}

// Conns returns the connections so far, in the order they were accepted.
func (p *Proxy) Conns() []*Conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*Conn(nil), p.conns...)
}

// WaitEnded waits until n connections have ended (both directions closed and the Tracker
// flushed), or fails the test after timeout.
func (p *Proxy) WaitEnded(t testing.TB, n int, timeout time.Duration) {
	t.Helper()
	deadline := time.After(timeout)
	for {
		ended := 0
		for _, c := range p.Conns() {
			c.mu.Lock()
			if c.done {
				ended++
			}
			c.mu.Unlock()
		}
		if ended >= n {
			return
		}
		select {
		case <-p.ended:
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			t.Fatalf("%d of %d connections ended after %s", ended, n, timeout)
		}
	}
}

// Capture returns what the connection forwarded so far.
func (c *Conn) Capture() Capture {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append(Capture(nil), c.capture...)
}

// Txs returns the transactions the connection's Tracker reported so far.
func (c *Conn) Txs() []wire.Tx {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]wire.Tx(nil), c.txs...)
}

// Events returns copies of the decoder's events so far.
func (c *Conn) Events() []wire.Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]wire.Event(nil), c.rec.Events...)
}

// Stopped returns why the Tracker does not follow the connection, or "".
func (c *Conn) Stopped() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tr.Stopped()
}

// Notes returns the decoder's notes about the connection.
func (c *Conn) Notes() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.tr.Notes()...)
}

// Counts returns the connection's traffic as the Tracker counted it.
func (c *Conn) Counts() wire.Counts {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tr.Counts()
}

// Protocol returns the protocol the Tracker found.
func (c *Conn) Protocol() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tr.Protocol()
}
