package latency

import (
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Directions. up is client→server, down server→client.
const (
	up   = 0
	down = 1
)

// dirConfig is what one direction of a link does, shared read-only by its connections.
type dirConfig struct {
	delay int64      // base one-way delay, ns
	table *quantiles // jitter distribution; nil without jitter
	pacer *pacer     // bandwidth; nil when unlimited
	loss  float64    // probability a segment is lost; 0: none
	rto   time.Duration
	// shape records the delay applied to each chunk; nil when the direction is not shaped
	// (no jitter, bandwidth or loss: every chunk gets delay). With loss, clean records the
	// delays of the chunks that no loss delayed (neither their own nor one ahead of them),
	// whose spread is the jitter's and the queue's; lost counts the losses. Both nil
	// without loss.
	shape *delayStats
	clean *delayStats
	lost  *lossStats
}

// line reports whether the direction needs a delay line; otherwise chunks pass straight
// through on the reading goroutine.
func (d *dirConfig) line() bool { return d.delay > 0 || d.shape != nil }

// env is everything connections of one link share: the clock, the per-direction
// configuration and accounting hooks. Tests build one around goClock and net.Pipe.
type env struct {
	clk          clock
	dirs         [2]dirConfig
	rtt          int64 // base RTT (Up+Down), ns, for DelayConnect
	delayConnect bool
	queueLimit   int64
	seed         int64
	// lateness records, per direction, how late delayed chunks left compared with their
	// release time: written to the server (up) or to the client, or returned by an
	// in-process conn's Read (down).
	lateness [2]*histogram
	// rel writes message-completing chunks at their release time; nil: each delay line's
	// writer waits on its own timer.
	rel releaser
	// timers lends precise timers to in-process conns' reads.
	timers *timerPool
}

// newEnv derives the shared state of a link from a validated cfg.
func newEnv(cfg Config, clk clock) *env {
	e := &env{clk: clk, delayConnect: cfg.DelayConnect, queueLimit: cfg.queueLimit(), seed: cfg.Seed,
		lateness: [2]*histogram{{}, {}}, timers: &timerPool{clk: clk}}
	u, d := cfg.oneWay()
	e.rtt = int64(u + d)
	var rto time.Duration
	if cfg.Loss > 0 {
		rto = cfg.RTO()
	}
	for i, x := range [2]struct {
		delay time.Duration
		bw    int64
	}{{u, cfg.BandwidthUp}, {d, cfg.BandwidthDown}} {
		dc := &e.dirs[i]
		dc.delay = int64(x.delay)
		if cfg.Jitter > 0 && x.delay > 0 {
			dc.table = newQuantiles(x.delay, cfg.Jitter, cfg.Distribution)
		}
		if x.bw > 0 {
			dc.pacer = newPacer(x.bw)
		}
		if cfg.Loss > 0 {
			dc.loss, dc.rto, dc.lost, dc.clean = cfg.Loss, rto, &lossStats{}, &delayStats{}
		}
		if dc.table != nil || dc.pacer != nil || dc.lost != nil {
			dc.shape = &delayStats{}
		}
	}
	return e
}

// timingCPU is the CPU the link's clock and releaser spent on timing, ns (see Stats).
func (e *env) timingCPU() int64 {
	type meter interface{ timingCPU() int64 }
	var n int64
	if m, ok := e.clk.(meter); ok {
		n += m.timingCPU()
	}
	if m, ok := e.rel.(meter); ok {
		n += m.timingCPU()
	}
	return n
}

// conn is one proxied connection: client is the accepted socket, server the dialled one.
type conn struct {
	e       *env
	id      uint64
	client  net.Conn
	server  net.Conn
	meter   Meter
	dirs    [2]*direction
	done    chan struct{} // closed by teardown
	once    sync.Once
	closing atomic.Bool
	// finished counts directions that delivered their end of stream; at 2 the connection
	// closes normally.
	finished atomic.Int32
	// running counts the connection's goroutines; the last one out calls onExit.
	running atomic.Int32
	onExit  func(member)
	// ob watches the connection's chunks (WithObserver); nil when nothing does.
	ob ConnObserver
}

// chunk kinds
const (
	kData = iota
	kEOF
	kReset
)

type chunk struct {
	buf     *[]byte
	n       int
	release int64
	kind    uint8
}

// direction moves bytes one way. With a delay line it has a reader goroutine that stamps
// and queues chunks and a writer goroutine that releases them on time; without one the
// reader writes each chunk at once.
type direction struct {
	c        *conn
	d        int
	src, dst net.Conn
	w        io.Writer // dst's writes (quickIO)
	cfg      *dirConfig
	rd       *reader
	sched
	limit  int   // read size
	wtimer timer // writer's
	// job is the writer's one job for the link's releaser; nil without a releaser or
	// when dst is not a socket.
	job      *releaseJob
	rtimer   timer // reader's, for bandwidth back-pressure; nil until needed
	timersMu sync.Mutex

	mu            sync.Mutex
	q             ring
	bytes         int64 // buffer capacity held by q
	writerWaiting bool
	readerWaiting bool
	wake          chan struct{} // to the writer: queue not empty
	space         chan struct{} // to the reader: queue below limit
}

// newConn prepares a connection accepted at accepted (clock time) whose upstream is
// already dialled; ob, when not nil, watches its chunks.
func (e *env) newConn(id uint64, client, server net.Conn, accepted int64, onExit func(member), ob ConnObserver) *conn {
	c := &conn{e: e, id: id, client: client, server: server, done: make(chan struct{}), onExit: onExit, ob: ob}
	for d := range 2 {
		x := &direction{c: c, d: d, cfg: &e.dirs[d], limit: maxChunk}
		x.sched.cfg = x.cfg
		if d == up {
			x.src, x.dst = client, server
		} else {
			x.src, x.dst = server, client
		}
		// An observer gets kernel receive timestamps too: its server and client times
		// should not include this process's wake-up latency.
		x.rd = newReader(x.src, e.clk, x.cfg.line() || ob != nil)
		_, x.w = quickIO(x.dst)
		if e.delayConnect && e.rtt > 0 {
			// See Config.DelayConnect: the client's connect() would return one RTT after its
			// SYN; the server's accept() when the final ACK arrives, Up later.
			x.gate = accepted + e.rtt
			if d == down {
				x.gate += e.dirs[up].delay
			}
		}
		if x.cfg.pacer != nil {
			x.limit = x.cfg.pacer.chunkLimit()
		}
		x.sched.shapeFor(e, id, d)
		if sc, ok := x.dst.(syscall.Conn); ok && e.rel != nil && x.cfg.line() {
			if rc, err := sc.SyscallConn(); err == nil {
				x.job = newReleaseJob(rc, e.lateness[d])
			}
		}
		c.dirs[d] = x
	}
	return c
}

// start runs the connection: it creates the writers' timers and starts the goroutines with
// spawn (the link's WaitGroup-tracked go statement). It returns an error, having closed both
// sockets, if a timer cannot be created (out of file descriptors).
func (c *conn) start(spawn func(func())) error {
	n := int32(0)
	for _, x := range c.dirs {
		n++
		if x.cfg.line() {
			x.wake = make(chan struct{}, 1)
			x.space = make(chan struct{}, 1)
			n++
		}
		if x.cfg.line() || x.gate > 0 {
			t, err := c.e.clk.newTimer()
			if err != nil {
				c.teardown(true)
				return err
			}
			x.timersMu.Lock() // teardown (Link.Close) may be reading it
			x.wtimer = t
			x.timersMu.Unlock()
		}
	}
	c.running.Store(n)
	for _, x := range c.dirs {
		if x.cfg.line() {
			spawn(c.run(x.writeLoop))
			spawn(c.run(x.readLoop))
		} else {
			spawn(c.run(x.passLoop))
		}
	}
	return nil
}

// run wraps a connection goroutine so that the last one to exit retires the connection.
func (c *conn) run(f func()) func() {
	return func() {
		f()
		if c.running.Add(-1) == 0 {
			for _, x := range c.dirs {
				x.closeTimers()
				x.drain()
			}
			if c.ob != nil {
				c.ob.Close(c.e.clk.now())
			}
			if c.onExit != nil {
				c.onExit(c)
			}
		}
	}
}

func (c *conn) counts() Counts { return c.meter.Snapshot() }
func (c *conn) shutdown()      { c.teardown(false) }

// finish records that one direction delivered its end of stream.
func (c *conn) finish() {
	if c.finished.Add(1) == 2 {
		c.teardown(false)
	}
}

// teardown closes both sockets, with RST when reset is set, and stops all goroutines of the
// connection. Idempotent, safe from any goroutine.
func (c *conn) teardown(reset bool) {
	c.once.Do(func() {
		c.closing.Store(true)
		if reset {
			abortive(c.client)
			abortive(c.server)
		}
		c.client.Close()
		c.server.Close()
		close(c.done)
		for _, x := range c.dirs {
			if x != nil { // nil in a passConn's conn
				x.closeTimers()
			}
		}
	})
}

// closeTimers closes the direction's timers, interrupting any wait on them. Idempotent.
func (x *direction) closeTimers() {
	x.timersMu.Lock()
	defer x.timersMu.Unlock()
	if x.wtimer != nil {
		x.wtimer.close()
	}
	if x.rtimer != nil {
		x.rtimer.close()
	}
}

// count records a chunk in the connection's meter: client→server chunks just before they
// are written to the server (so that a reply racing the write's return still counts as a
// turn), server→client chunks as soon as they are read from the server.
func (x *direction) count(n int) {
	if x.d == up {
		x.c.meter.Up(n)
	} else {
		x.c.meter.Down(n)
	}
}

// endKind classifies the end of the source stream: EOF is passed on as a half-close, any
// other error (a reset) as a reset. It returns false when the connection is already closing
// and nothing should be passed on.
func (x *direction) endKind(err error) (uint8, bool) {
	if x.c.closing.Load() || errors.Is(err, net.ErrClosed) {
		return 0, false
	}
	if err == eof {
		return kEOF, true
	}
	return kReset, true
}

// passLoop is a direction without delay line: read, count, write, on one goroutine.
func (x *direction) passLoop() {
	clk := x.c.e.clk
	for {
		b, n, at, err := x.rd.read(x.limit)
		if n > 0 && x.c.ob != nil {
			var ok bool
			if b, n, ok = x.observed(x.c.ob, b, n, at); !ok {
				putBuf(b)
				n = 0
			}
		}
		if n > 0 {
			if x.d == down {
				x.count(n)
			}
			if x.gate > 0 {
				if x.gate > clk.now() {
					if x.wtimer.wait(x.gate, true) != nil {
						putBuf(b)
						return
					}
				}
				x.gate = 0
			}
			if x.d == up {
				x.count(n)
			}
			_, werr := x.w.Write((*b)[:n])
			putBuf(b)
			if werr != nil {
				x.c.teardown(true)
				return
			}
		}
		if err != nil {
			kind, ok := x.endKind(err)
			switch {
			case !ok:
			case kind == kEOF:
				if closeWrite(x.dst) != nil {
					x.c.teardown(true)
					return
				}
				x.c.finish()
			default:
				x.c.teardown(true)
			}
			return
		}
	}
}

// readLoop is the reading half of a delay line.
func (x *direction) readLoop() {
	e := x.c.e
	for {
		if !x.waitSpace() || !x.waitCable() {
			return
		}
		b, n, at, err := x.rd.read(x.limit)
		if n > 0 && x.c.ob != nil {
			var ok bool
			if b, n, ok = x.observed(x.c.ob, b, n, at); !ok {
				putBuf(b)
				n = 0
			}
		}
		if n > 0 {
			if x.d == down {
				x.count(n)
			}
			x.push(shrink(b, n), n, at, kData)
		}
		if err != nil {
			if kind, ok := x.endKind(err); ok {
				x.push(nil, 0, e.clk.now(), kind)
			}
			return
		}
	}
}

// push stamps a chunk (or end marker) that arrived at `at`, computes its release time and
// queues it for the writer.
func (x *direction) push(b *[]byte, n int, at int64, kind uint8) {
	rel := x.due(at, n)
	x.mu.Lock()
	x.q.push(chunk{buf: b, n: n, release: rel, kind: kind})
	if b != nil {
		x.bytes += int64(cap(*b))
	}
	w := x.writerWaiting
	x.writerWaiting = false
	x.mu.Unlock()
	if w {
		select {
		case x.wake <- struct{}{}:
		default:
		}
	}
}

// waitSpace blocks while the queue is at its limit. It returns false when the connection
// closes.
func (x *direction) waitSpace() bool {
	waited := false
	for {
		x.mu.Lock()
		if x.bytes < x.c.e.queueLimit {
			x.mu.Unlock()
			if waited {
				x.resumed = x.c.e.clk.now()
			}
			return true
		}
		x.readerWaiting = true
		x.mu.Unlock()
		waited = true
		select {
		case <-x.space:
		case <-x.c.done:
			return false
		}
	}
}

// waitCable blocks while the shared bandwidth is booked more than maxBacklog ahead.
func (x *direction) waitCable() bool {
	p := x.cfg.pacer
	if p == nil {
		return true
	}
	clk := x.c.e.clk
	now := clk.now()
	over := p.backlog(now) - maxBacklog
	if over <= 0 {
		return true
	}
	x.timersMu.Lock()
	if x.rtimer == nil && !x.c.closing.Load() {
		t, err := clk.newTimer()
		if err != nil {
			x.timersMu.Unlock()
			x.c.teardown(true)
			return false
		}
		x.rtimer = t
	}
	t := x.rtimer
	x.timersMu.Unlock()
	if t == nil || t.wait(now+over, false) != nil {
		return false
	}
	x.resumed = clk.now()
	return true
}

// peek returns the oldest queued chunk without removing it, and whether it is the only one.
// It blocks while the queue is empty and returns ok=false when the connection closes.
func (x *direction) peek() (c chunk, last, ok bool) {
	for {
		x.mu.Lock()
		if x.q.n > 0 {
			c, last = x.q.head(), x.q.n == 1
			x.mu.Unlock()
			return c, last, true
		}
		x.writerWaiting = true
		x.mu.Unlock()
		select {
		case <-x.wake:
		case <-x.c.done:
			return chunk{}, false, false
		}
	}
}

// pop removes the oldest chunk and recycles its buffer.
func (x *direction) pop() {
	x.mu.Lock()
	c := x.q.pop()
	if c.buf != nil {
		x.bytes -= int64(cap(*c.buf))
	}
	r := x.readerWaiting && x.bytes < x.c.e.queueLimit
	if r {
		x.readerWaiting = false
	}
	x.mu.Unlock()
	if c.buf != nil {
		putBuf(c.buf)
	}
	if r {
		select {
		case x.space <- struct{}{}:
		default:
		}
	}
}

// drain recycles whatever is left in the queue of a finished connection.
func (x *direction) drain() {
	x.mu.Lock()
	defer x.mu.Unlock()
	for x.q.n > 0 {
		if c := x.q.pop(); c.buf != nil {
			putBuf(c.buf)
		}
	}
	x.bytes = 0
}

// writeLoop is the writing half of a delay line: it releases each chunk at its time.
func (x *direction) writeLoop() {
	clk := x.c.e.clk
	for {
		c, last, ok := x.peek()
		if !ok {
			return
		}
		// Only the last queued chunk is waited for precisely: it completes a message the
		// application waits for, while chunks followed by others (a bulk stream) may leave
		// a little late without changing throughput or message latency, and are not worth
		// a busy-wait each. The releaser, when there is one, writes it, even when the
		// release is closer than its spin lead: at 0.1 ms and one connection that measured
		// +9-16 µs against +38-62 µs when this goroutine waited itself.
		if c.kind == kData && last && x.job != nil && c.release > clk.now() {
			if x.d == up {
				x.c.meter.Up(c.n)
			}
			if !x.release(c) {
				return
			}
			continue
		}
		if c.release > clk.now() {
			if x.wtimer.wait(c.release, last) != nil {
				return
			}
		}
		if c.kind == kData {
			x.c.e.lateness[x.d].record(clk.now() - c.release)
			if x.d == up {
				x.c.meter.Up(c.n)
			}
			_, err := x.w.Write((*c.buf)[:c.n])
			x.pop()
			if err != nil {
				x.c.teardown(true)
				return
			}
			continue
		}
		x.pop()
		if c.kind == kEOF {
			if closeWrite(x.dst) != nil {
				x.c.teardown(true)
				return
			}
			x.c.finish()
		} else {
			x.c.teardown(true)
		}
		return
	}
}

// release has the link's releaser write c at its release time, writes whatever the socket
// did not take, and pops c. It returns false when the connection is closing or failed.
func (x *direction) release(c chunk) bool {
	j := x.job
	j.release, j.buf = c.release, (*c.buf)[:c.n]
	if !x.c.e.rel.submit(j) {
		return false
	}
	select {
	case <-j.done:
	case <-x.c.done:
		if x.c.e.rel.cancel(j) {
			return false
		}
		<-j.done
	}
	n, err := j.n, j.err
	j.buf = nil
	if err == nil && n < c.n {
		_, err = x.w.Write((*c.buf)[n:c.n])
	}
	x.pop()
	if err != nil {
		x.c.teardown(true)
		return false
	}
	return true
}

// sched computes the release times of one direction's chunks: arrival (no earlier than the
// connection's gate or the end of a back-pressure wait), bandwidth, delay, jitter and loss,
// in TCP order. It is used by the one goroutine that stamps the direction's chunks.
type sched struct {
	cfg     *dirConfig
	gate    int64 // earliest stamp (DelayConnect); 0 = none
	resumed int64 // earliest stamp after the sender waited for queue space or bandwidth
	chain   *jitterChain
	loss    *lossDraw
	lastRel int64 // release time of the previous chunk
	lossRel int64 // release time of the last chunk a loss delayed
}

// shapeFor gives the direction d of connection id its own jitter and loss streams, each
// derived from the link's seed.
func (x *sched) shapeFor(e *env, id uint64, d int) {
	c := &e.dirs[d]
	if c.table != nil {
		x.chain = newJitterChain(c.table, e.seed, id<<1|uint64(d))
	}
	if c.lost != nil {
		x.loss = newLossDraw(c.loss, c.rto, e.seed, id<<1|uint64(d), c.lost)
	}
}

// due returns the release time of a chunk of n bytes (0 for an end marker) that
// arrived at `at`.
func (x *sched) due(at int64, n int) int64 {
	stamp := max(at, x.gate, x.resumed)
	if x.cfg.shape == nil {
		// A delay alone: the path of nearly every run, kept to one test.
		rel := max(stamp+x.cfg.delay, x.lastRel) // TCP order, as below
		x.lastRel = rel
		return rel
	}
	return x.shaped(stamp, n)
}

// shaped is due for a direction with jitter, bandwidth or loss: it records the delay each
// chunk is given.
func (x *sched) shaped(stamp int64, n int) int64 {
	dep := stamp
	if x.cfg.pacer != nil && n > 0 {
		dep = x.cfg.pacer.reserve(stamp, n)
	}
	delay := x.cfg.delay
	if x.chain != nil {
		delay = x.chain.next(dep)
	}
	var lost int64
	if x.loss != nil && n > 0 {
		lost = x.loss.delay(n)
	}
	// TCP order: never before the previous chunk (see Distribution).
	rel := max(dep+delay+lost, x.lastRel)
	x.lastRel = rel
	if n > 0 {
		x.cfg.shape.record(rel - stamp)
		if c := x.cfg.clean; c != nil {
			if lost > 0 {
				x.lossRel = rel
			} else if dep+delay >= x.lossRel { // not held behind a chunk a loss delayed
				c.record(rel - stamp)
			}
		}
	}
	return rel
}

// ring is a growable FIFO of chunks.
type ring struct {
	buf   []chunk
	first int
	n     int
}

func (r *ring) push(c chunk) {
	if r.n == len(r.buf) {
		nb := make([]chunk, max(8, 2*len(r.buf)))
		for i := range r.n {
			nb[i] = r.buf[(r.first+i)%len(r.buf)]
		}
		r.buf, r.first = nb, 0
	}
	r.buf[(r.first+r.n)%len(r.buf)] = c
	r.n++
}

func (r *ring) head() chunk { return r.buf[r.first] }

func (r *ring) pop() chunk {
	c := r.buf[r.first]
	r.buf[r.first] = chunk{}
	r.first = (r.first + 1) % len(r.buf)
	r.n--
	return c
}
