package latency

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Dial connects to the link's upstream through the link's delay, in this process, without
// the loopback hop of Addr. It is how dblat's own terminals use a link: a client reached
// through Addr pays two extra loopback TCP hops per round trip, which on a small machine
// cost as much CPU as a simple query (see BenchmarkLinkOverheadPgbench).
//
// The returned conn has no goroutine of its own. Data written to it is stamped on the
// caller's clock and written to the upstream socket at its release time by the link's
// releaser, which serves every connection of the link from one goroutine; data from the
// upstream is read by the conn's own Read, stamped with the kernel's receive time, and
// returned by that Read at its release time, the caller's goroutine waiting on the conn's
// timer in the meantime. A round trip so costs two timed wake-ups (the releaser's and the
// reader's) and no hand-over between goroutines; a conn that waits for data holds no
// buffer. With no delay in either direction the conn is the upstream socket, counted.
//
// Totals, Stats and Close cover these conns like accepted ones. The upstream is dialled on
// the caller's goroutine, bounded by ctx; a failure returns an error naming the upstream.
// The conn does not support half-close: closing it closes both directions. Read and Write
// may be called concurrently with each other, but not with themselves.
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
		p := &passConn{Conn: server, l: l}
		p.r, p.w = quickIO(server)
		if !l.register(p) {
			server.Close()
			return nil, net.ErrClosed
		}
		return p, nil
	}
	c, err := newInlineConn(l, id, server, at)
	if err != nil {
		server.Close()
		l.failed.Add(1)
		return nil, err
	}
	if !l.register(c) {
		c.Close()
		return nil, net.ErrClosed
	}
	return c, nil
}

// passConn is an in-process conn through a link that adds nothing: the upstream socket,
// counted in the link's totals.
type passConn struct {
	net.Conn
	r     io.Reader // Conn's reads (quickIO)
	w     io.Writer // Conn's writes (quickIO)
	meter Meter
	l     *Link
	once  sync.Once
}

func (p *passConn) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.meter.Down(n)
	return n, err
}

func (p *passConn) Write(b []byte) (int, error) {
	p.meter.Up(len(b))
	n, err := p.w.Write(b)
	if n < len(b) {
		p.meter.bytesUp.Add(int64(n - len(b)))
	}
	return n, err
}

// Close closes the upstream socket and moves the conn's traffic into the link's totals.
func (p *passConn) Close() error {
	err := p.Conn.Close()
	p.once.Do(func() { p.l.retire(p) })
	return err
}

func (p *passConn) counts() Counts { return p.meter.Snapshot() }
func (p *passConn) shutdown()      { p.Conn.Close() }

// inlineConn is a conn made by Link.Dial through a delay (see there).
type inlineConn struct {
	l      *Link
	e      *env
	id     uint64
	server net.Conn
	sw     io.Writer // server's writes (quickIO)
	meter  Meter

	// Up: chunks written by the caller wait in upQ until the releaser writes them.
	upMu    sync.Mutex
	upSched sched
	upQ     ring
	upBytes int64 // buffer capacity held by upQ
	upSent  bool  // the head of upQ is with the releaser or being written
	upErr   error // a failed upstream write, returned by the next Write
	upWait  bool  // a Write waits for upSpace
	upSpace chan struct{}
	job     *releaseJob // nil without a releaser: Write then waits for the release itself
	upTimer timer       // for Write's own waits (no releaser, bandwidth back-pressure); lazily made

	// Down: the chunk read from the upstream and not yet returned in full, or the end of
	// the stream (pendKind kEOF or kReset, with pendErr) once it is due.
	rd         *reader
	downSch    sched
	pend       *[]byte
	pendOff    int
	pendEnd    int
	pendDue    int64
	pendKind   uint8
	pendErr    error
	recordLate bool

	// Read's waits: a Go timer for the coarse part of a long wait, then a precise timer
	// borrowed from the link's pool (see waitDue). dlMu guards the deadline and the
	// borrowed timer, which SetReadDeadline and Close reach into.
	coarse    *time.Timer
	dlMu      sync.Mutex
	deadline  time.Time
	borrowed  timer
	dlChanged chan struct{}

	closing atomic.Bool
	done    chan struct{}
	once    sync.Once
}

func newInlineConn(l *Link, id uint64, server net.Conn, at int64) (*inlineConn, error) {
	e := l.env
	_, sw := quickIO(server) // reads go through the conn's reader (recvmsg, for the stamps)
	c := &inlineConn{l: l, e: e, id: id, server: server, sw: sw, upSpace: make(chan struct{}, 1), done: make(chan struct{}),
		dlChanged: make(chan struct{}, 1)}
	c.upSched.cfg, c.downSch.cfg = &e.dirs[up], &e.dirs[down]
	if e.delayConnect && e.rtt > 0 {
		// See Config.DelayConnect, and conn: the connect would return one RTT after the SYN.
		c.upSched.gate = at + e.rtt
		c.downSch.gate = at + e.rtt + e.dirs[up].delay
	}
	c.upSched.shapeFor(e, id, up)
	c.downSch.shapeFor(e, id, down)
	c.rd = newReader(server, e.clk, e.dirs[down].line())
	if sc, ok := server.(syscall.Conn); ok && e.rel != nil {
		if raw, err := sc.SyscallConn(); err == nil {
			c.job = newReleaseJob(raw, e.lateness[up])
			c.job.then = c.afterRelease
		}
	}
	return c, nil
}

// Read returns the upstream's data at its release time: the time the kernel received it
// plus the down delay (with jitter and bandwidth). It waits for the release on the conn's
// timer, so the data leaves at the caller's own wake-up, the one a real network costs too.
// A read deadline interrupts the wait; the data stays for the next Read.
func (c *inlineConn) Read(b []byte) (int, error) {
	if c.pend == nil && c.pendKind == kData {
		c.takeOverUp()
		if err := c.fill(); err != nil {
			return 0, err
		}
	}
	if err := c.waitDue(); err != nil {
		return 0, err
	}
	if c.pend == nil {
		if c.pendKind == kEOF {
			return 0, eof
		}
		return 0, c.pendErr
	}
	n := copy(b, (*c.pend)[c.pendOff:c.pendEnd])
	c.pendOff += n
	if c.pendOff == c.pendEnd {
		putBuf(c.pend)
		c.pend = nil
	}
	return n, nil
}

// fill reads the next chunk from the upstream and computes its release time.
func (c *inlineConn) fill() error {
	b, n, at, err := c.rd.read(maxChunk)
	if n > 0 {
		c.meter.Down(n)
		c.pend, c.pendOff, c.pendEnd = shrink(b, n), 0, n
		c.pendDue = c.downSch.due(at, n)
		c.recordLate = c.downSch.cfg.line()
		return nil
	}
	if c.closing.Load() {
		return net.ErrClosed
	}
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return err
	}
	// End of stream or reset: returned after the data before it, at its own release.
	c.pendKind, c.pendErr = kReset, err
	if err == eof {
		c.pendKind = kEOF
	}
	c.pendDue = c.downSch.due(c.e.clk.now(), 0)
	return nil
}

// Read's waits longer than coarseAbove sleep on a Go timer (no file, a few bytes in the
// runtime's timer heap) until coarseMargin before the release, then wait the rest on a
// precise timer borrowed from the link's pool. So a link holds as many timerfds as
// connections are within coarseMargin of a release, not one per connection: at 200 ms and
// 10,000 connections about 100. Go timers fire up to ~1 ms late (golang/go#53824): 2 ms
// leave room for that and for a busy scheduler.
const (
	coarseAbove  = int64(5 * time.Millisecond)
	coarseMargin = int64(2 * time.Millisecond)
)

// waitDue waits until the pending chunk's release time and records how late it leaves.
func (c *inlineConn) waitDue() error {
	clk := c.e.clk
	if c.recordLate && c.pendDue <= clk.now() {
		// Due before the caller asked for it: the data was there on time, as it would
		// wait in a socket buffer; the caller's own delay is not the link's lateness.
		c.recordLate = false
		c.e.lateness[down].record(0)
	}
	for {
		left := c.pendDue - clk.now()
		if left <= 0 {
			break
		}
		c.dlMu.Lock()
		dl := c.deadline
		c.dlMu.Unlock()
		if !dl.IsZero() && !time.Now().Before(dl) {
			return os.ErrDeadlineExceeded
		}
		if left > coarseAbove {
			d := time.Duration(left - coarseMargin)
			if !dl.IsZero() {
				d = min(d, time.Until(dl))
			}
			if c.coarse == nil {
				c.coarse = time.NewTimer(d)
			} else {
				c.coarse.Reset(d)
			}
			select {
			case <-c.coarse.C:
			case <-c.dlChanged:
				c.coarse.Stop()
			case <-c.done:
				c.coarse.Stop()
				return net.ErrClosed
			}
			continue
		}
		if err := c.preciseWait(dl); err != nil {
			return err
		}
		break
	}
	if c.recordLate {
		c.recordLate = false
		c.e.lateness[down].record(clk.now() - c.pendDue)
	}
	return nil
}

// preciseWait waits for the release on a timer borrowed from the link's pool, bounded by
// the read deadline dl.
func (c *inlineConn) preciseWait(dl time.Time) error {
	t, err := c.e.timers.get()
	if err != nil {
		return err
	}
	c.dlMu.Lock()
	if c.closing.Load() {
		c.dlMu.Unlock()
		c.e.timers.put(t)
		return net.ErrClosed
	}
	if !dl.Equal(c.deadline) {
		dl = c.deadline // changed since waitDue read it
	}
	err = t.setDeadline(dl)
	c.borrowed = t
	c.dlMu.Unlock()
	if err == nil {
		err = t.wait(c.pendDue, true)
	}
	c.dlMu.Lock()
	c.borrowed = nil
	c.dlMu.Unlock()
	if !dl.IsZero() {
		_ = t.setDeadline(time.Time{})
	}
	c.e.timers.put(t)
	switch {
	case c.closing.Load():
		return net.ErrClosed
	case err != nil && errors.Is(err, os.ErrDeadlineExceeded):
		return os.ErrDeadlineExceeded
	}
	return err
}

// Write queues b for the upstream at its release time (now plus the up delay) and returns
// at once; the link's releaser writes it then. A write error of an earlier chunk is
// returned by the next Write. When the queue holds Config.QueueLimit bytes, Write waits
// for room. Without a delay up, b goes straight to the upstream socket.
func (c *inlineConn) Write(b []byte) (int, error) {
	if c.closing.Load() {
		return 0, net.ErrClosed
	}
	clk := c.e.clk
	if err := c.waitCable(); err != nil {
		return 0, err
	}
	c.upMu.Lock()
	if err := c.upErr; err != nil {
		c.upMu.Unlock()
		return 0, err
	}
	now := clk.now()
	if !c.upSched.cfg.line() && c.upQ.n == 0 && now >= c.upSched.gate {
		c.upMu.Unlock()
		c.meter.Up(len(b))
		n, err := c.sw.Write(b)
		if n < len(b) {
			c.meter.bytesUp.Add(int64(n - len(b)))
		}
		return n, err
	}
	for c.upBytes >= c.e.queueLimit {
		c.upWait = true
		c.upMu.Unlock()
		select {
		case <-c.upSpace:
		case <-c.done:
			return 0, net.ErrClosed
		}
		c.upMu.Lock()
		now = clk.now()
		c.upSched.resumed = now
	}
	total := 0
	for len(b) > 0 {
		n := min(len(b), maxChunk)
		buf := getBuf(n)
		copy(*buf, b[:n])
		c.upQ.push(chunk{buf: buf, n: n, release: c.upSched.due(now, n), kind: kData})
		c.upBytes += int64(cap(*buf))
		b, total = b[n:], total+n
	}
	start := !c.upSent
	c.upSent = true
	c.upMu.Unlock()
	if !start {
		return total, nil
	}
	if c.job == nil {
		return total, c.sendQueued()
	}
	c.submitHead()
	return total, nil
}

// waitCable blocks while the shared bandwidth is booked more than maxBacklog ahead.
func (c *inlineConn) waitCable() error {
	p := c.upSched.cfg.pacer
	if p == nil {
		return nil
	}
	clk := c.e.clk
	now := clk.now()
	over := p.backlog(now) - maxBacklog
	if over <= 0 {
		return nil
	}
	t, err := c.writerTimer()
	if err != nil {
		return err
	}
	if err := t.wait(now+over, false); err != nil {
		return net.ErrClosed
	}
	c.upMu.Lock()
	c.upSched.resumed = clk.now()
	c.upMu.Unlock()
	return nil
}

func (c *inlineConn) writerTimer() (timer, error) {
	c.upMu.Lock()
	defer c.upMu.Unlock()
	if c.upTimer == nil {
		if c.closing.Load() {
			return nil, net.ErrClosed
		}
		t, err := c.e.clk.newTimer()
		if err != nil {
			return nil, err
		}
		c.upTimer = t
	}
	return c.upTimer, nil
}

// sendQueued writes the queue on the caller's goroutine, each chunk at its release time:
// the path without a releaser (systems without timerfd, tests on goClock).
func (c *inlineConn) sendQueued() error {
	t, err := c.writerTimer()
	if err != nil {
		return err
	}
	for {
		c.upMu.Lock()
		if c.upQ.n == 0 || c.closing.Load() {
			c.upSent = false
			c.upMu.Unlock()
			return nil
		}
		h := c.upQ.head()
		c.upMu.Unlock()
		if h.release > c.e.clk.now() {
			if err := t.wait(h.release, true); err != nil {
				return net.ErrClosed
			}
		}
		c.e.lateness[up].record(c.e.clk.now() - h.release)
		c.meter.Up(h.n)
		_, werr := c.sw.Write((*h.buf)[:h.n])
		c.upMu.Lock()
		c.popUp()
		c.upMu.Unlock()
		if werr != nil {
			c.upMu.Lock()
			c.upSent = false
			c.upMu.Unlock()
			return werr
		}
	}
}

// takeOverMax bounds the request a reading goroutine releases itself (takeOverUp): one
// that fits a socket buffer, so that the write does not wait for the server to read.
// takeOverWithin bounds how far ahead its release may be: longer waits stay with the
// releaser, whose one timer serves them all, rather than holding a precise timer (a file
// descriptor) per waiting terminal.
const (
	takeOverMax    = 16 << 10
	takeOverWithin = int64(2 * time.Millisecond)
)

// takeOverUp lets the goroutine that is about to wait for the server's answer release its
// own request: when the up queue holds one small chunk the releaser has not taken yet, Read
// withdraws it, waits for its release time on a timer of its own and writes it, as the down
// direction does. Where the CPUs are saturated the one releaser goroutine waits for a CPU
// behind the terminals, a terminal woken by its own timer does not: TPC-C on 2 CPUs at 16
// terminals and 0.2 ms released requests 147-180 µs late at p50 through the releaser
// (98-106 µs with its thread at nice -20), while the answers, timed by each terminal, were
// 1 µs late. Write errors are kept for the next Write, as the releaser's are.
func (c *inlineConn) takeOverUp() {
	if c.job == nil {
		return
	}
	c.upMu.Lock()
	one := c.upSent && c.upQ.n == 1 && c.upQ.head().n <= takeOverMax &&
		c.upQ.head().release-c.e.clk.now() <= takeOverWithin
	c.upMu.Unlock()
	if !one || !c.e.rel.cancel(c.job) {
		return
	}
	c.upMu.Lock()
	h := c.upQ.head() // only popAndContinue pops, and the releaser no longer holds it
	c.upMu.Unlock()
	clk := c.e.clk
	if h.release > clk.now() {
		t, err := c.e.timers.get()
		if err != nil {
			c.popAndContinue(err)
			return
		}
		err = t.wait(h.release, true)
		c.e.timers.put(t)
		if err != nil {
			c.popAndContinue(net.ErrClosed)
			return
		}
	}
	c.e.lateness[up].record(clk.now() - h.release)
	_, err := c.sw.Write((*h.buf)[:h.n]) // metered by submitHead
	c.popAndContinue(err)                // and hands what was queued meanwhile to the releaser
}

// submitHead hands the head of the queue to the releaser.
func (c *inlineConn) submitHead() {
	c.upMu.Lock()
	if c.upQ.n == 0 || c.closing.Load() {
		c.upSent = false
		c.upMu.Unlock()
		return
	}
	h := c.upQ.head()
	c.job.release, c.job.buf = h.release, (*h.buf)[:h.n]
	c.upMu.Unlock()
	c.meter.Up(h.n) // before the bytes can reach the server (see Meter.Up)
	if !c.e.rel.submit(c.job) {
		c.upMu.Lock()
		c.upErr, c.upSent = net.ErrClosed, false
		c.upMu.Unlock()
	}
}

// afterRelease runs on the releaser's goroutine once it wrote the head of the queue: it
// pops it and hands over the next one. A chunk the socket took only in part (its buffer was
// full: a bulk upload) is finished by a blocking write on a goroutine of its own.
func (c *inlineConn) afterRelease() {
	j := c.job
	n, err := j.n, j.err
	j.buf = nil
	c.upMu.Lock()
	if c.upQ.n == 0 {
		c.upSent = false // closed meanwhile
		c.upMu.Unlock()
		return
	}
	h := c.upQ.head()
	if err == nil && n < h.n {
		c.upMu.Unlock()
		go func() {
			_, werr := c.sw.Write((*h.buf)[n:h.n])
			c.popAndContinue(werr)
		}()
		return
	}
	c.upMu.Unlock()
	c.popAndContinue(err)
}

func (c *inlineConn) popAndContinue(err error) {
	c.upMu.Lock()
	if c.upQ.n > 0 {
		c.popUp()
	}
	if err != nil {
		c.upErr, c.upSent = err, false
		c.upMu.Unlock()
		return
	}
	more := c.upQ.n > 0 && !c.closing.Load()
	if !more {
		c.upSent = false
	}
	c.upMu.Unlock()
	if more {
		c.submitHead()
	}
}

// popUp removes the head of the up queue and wakes a Write that waits for room. Called
// with upMu held.
func (c *inlineConn) popUp() {
	h := c.upQ.pop()
	if h.buf != nil {
		c.upBytes -= int64(cap(*h.buf))
		putBuf(h.buf)
	}
	if c.upWait && c.upBytes < c.e.queueLimit {
		c.upWait = false
		select {
		case c.upSpace <- struct{}{}:
		default:
		}
	}
}

// Close closes the upstream socket, drops what was not sent, and moves the conn's traffic
// into the link's totals. Idempotent.
func (c *inlineConn) Close() error {
	var err error
	c.once.Do(func() {
		c.closing.Store(true)
		close(c.done)
		err = c.server.Close()
		c.dlMu.Lock()
		if c.borrowed != nil {
			_ = c.borrowed.setDeadline(time.Unix(1, 0)) // end the wait; the timer goes back to the pool
		}
		c.dlMu.Unlock()
		c.upMu.Lock()
		if c.upTimer != nil {
			c.upTimer.close()
		}
		taken := c.upSent && c.job != nil && !c.e.rel.cancel(c.job)
		if !taken {
			// The releaser no longer holds a chunk of the queue: recycle it. Otherwise
			// afterRelease finds the conn closing after its write and stops there.
			for c.upQ.n > 0 {
				c.popUp()
			}
			c.upSent = false
		}
		c.upMu.Unlock()
		c.l.retire(c)
	})
	return err
}

func (c *inlineConn) counts() Counts { return c.meter.Snapshot() }
func (c *inlineConn) shutdown()      { c.Close() }

func (c *inlineConn) LocalAddr() net.Addr  { return c.server.LocalAddr() }
func (c *inlineConn) RemoteAddr() net.Addr { return c.server.RemoteAddr() }

// SetDeadline sets both deadlines.
func (c *inlineConn) SetDeadline(t time.Time) error {
	if err := c.SetReadDeadline(t); err != nil {
		return err
	}
	return c.SetWriteDeadline(t)
}

// SetReadDeadline bounds Read: its read from the upstream and its wait for a release.
func (c *inlineConn) SetReadDeadline(t time.Time) error {
	if err := c.server.SetReadDeadline(t); err != nil {
		return err
	}
	c.dlMu.Lock()
	c.deadline = t
	var err error
	if c.borrowed != nil {
		err = c.borrowed.setDeadline(t)
	}
	c.dlMu.Unlock()
	select {
	case c.dlChanged <- struct{}{}:
	default:
	}
	return err
}

// SetWriteDeadline bounds Write's direct writes to the upstream (without a delay up).
func (c *inlineConn) SetWriteDeadline(t time.Time) error { return c.server.SetWriteDeadline(t) }
