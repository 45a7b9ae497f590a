package latency

import (
	"context"
	"fmt"
	"net"
	"sync"
)

// Dial connects to the link's upstream through the link's delay lines, in this process,
// without the loopback hop of Addr: the returned conn's writes go into the up delay line
// and its reads come out of the down one. It is how dblat's own terminals use a link: a
// client reached through Addr pays two extra loopback TCP hops per round trip, which on a
// small machine cost as much CPU as a simple query (see BenchmarkLinkOverheadPgbench), while
// an in-process conn costs a goroutine hand-over per chunk, and nothing at all when the link
// adds no delay (the conn is then the upstream socket, counted).
//
// Totals, Stats and Close cover these conns like accepted ones. The upstream is dialled on
// the caller's goroutine, bounded by ctx; a failure returns an error naming the upstream.
// The conn does not support half-close: closing it closes both directions.
func (l *Link) Dial(ctx context.Context) (net.Conn, error) {
	e := l.env
	at := e.clk.now()
	d := net.Dialer{Timeout: dialTimeout}
	server, err := d.DialContext(ctx, "tcp", l.upstream)
	if err != nil {
		return nil, fmt.Errorf("upstream %s unreachable: %s", l.upstream, cause(err))
	}
	l.accepted.Add(1)
	id := l.nextID.Add(1) - 1
	if !e.dirs[up].line() && !e.dirs[down].line() && (!e.delayConnect || e.rtt == 0) {
		c := &conn{e: e, id: id, client: server, server: server, done: make(chan struct{})}
		if !l.register(c) {
			server.Close()
			return nil, net.ErrClosed
		}
		return &passConn{Conn: server, c: c, l: l}, nil
	}
	app, inner := net.Pipe()
	c := e.newConn(id, inner, server, at, l.retire)
	if !l.register(c) {
		app.Close()
		inner.Close()
		server.Close()
		return nil, net.ErrClosed
	}
	if err := c.start(l.spawn); err != nil {
		l.failed.Add(1)
		l.retire(c)
		app.Close()
		return nil, err
	}
	return app, nil
}

// passConn is an in-process conn through a link that adds nothing: the upstream socket,
// counted in the link's totals.
type passConn struct {
	net.Conn
	c    *conn
	l    *Link
	once sync.Once
}

func (p *passConn) Read(b []byte) (int, error) {
	n, err := p.Conn.Read(b)
	p.c.meter.Down(n)
	return n, err
}

func (p *passConn) Write(b []byte) (int, error) {
	p.c.meter.Up(len(b))
	n, err := p.Conn.Write(b)
	if n < len(b) {
		p.c.meter.bytesUp.Add(int64(n - len(b)))
	}
	return n, err
}

// Close closes the upstream socket and moves the conn's traffic into the link's totals.
func (p *passConn) Close() error {
	err := p.Conn.Close()
	p.once.Do(func() { p.l.retire(p.c) })
	return err
}
