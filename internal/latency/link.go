package latency

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// dialTimeout bounds one upstream dial (the start-up probe and each connection's). A
// reachable server on a LAN or loopback answers a SYN in well under a millisecond and one
// behind a 200 ms path in under a second; 10 s only cuts off black holes (no SYN-ACK, no
// RST), where the kernel would otherwise retry SYNs for about two minutes.
const dialTimeout = 10 * time.Second

// Link is a running latency link: a TCP listener whose connections are proxied to one
// upstream address through the delay lines of a Config. All methods are safe for
// concurrent use.
type Link struct {
	ln       net.Listener
	upstream string
	cfg      Config
	obs      Observer // nil: connections are not observed
	env      *env
	ctx      context.Context // cancelled by Close; aborts pending upstream dials
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	nextID   atomic.Uint64

	mu      sync.Mutex
	closed  bool
	conns   map[member]struct{}
	retired Counts // traffic of connections that have ended

	accepted, failed atomic.Int64
	lastErr          atomic.Pointer[string]
}

// Listen starts a link that listens on addr ("" means 127.0.0.1:0, an ephemeral loopback
// port; see Addr) and forwards each accepted connection to upstream ("host:port") through
// delay lines configured by cfg.
//
// Before listening it dials upstream once and closes that connection at once; if that fails
// it returns an error such as "upstream 127.0.0.1:5432 unreachable: connection refused" (the
// server may log an incomplete connection). After that, each accepted connection dials
// upstream on its own goroutine, so a slow upstream never delays accepting others; if that
// dial fails the client's connection is reset and the failure is counted in Stats.
//
// ctx bounds the start-up probe only, like net.ListenConfig.Listen: cancelling it later does
// not affect the link. Call Close to stop it. WithObserver has an Observer watch the
// connections' traffic.
func Listen(ctx context.Context, addr, upstream string, cfg Config, opts ...ListenOption) (*Link, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	clk, err := newRealClock(!cfg.Spin)
	if err != nil {
		return nil, fmt.Errorf("latency: clock: %w", err)
	}
	return listenWith(ctx, addr, upstream, cfg, clk, opts...)
}

func listenWith(ctx context.Context, addr, upstream string, cfg Config, clk clock, opts ...ListenOption) (*Link, error) {
	var o listenOptions
	for _, f := range opts {
		f(&o)
	}
	d := net.Dialer{Timeout: dialTimeout}
	c, err := d.DialContext(ctx, "tcp", upstream)
	if err != nil {
		return nil, fmt.Errorf("upstream %s unreachable: %s", upstream, cause(err))
	}
	c.Close()
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("latency: listen: %w", err)
	}
	e := newEnv(cfg, clk)
	if e.dirs[up].line() || e.dirs[down].line() {
		if e.rel, err = newReleaser(clk); err != nil {
			ln.Close()
			return nil, fmt.Errorf("latency: releaser: %w", err)
		}
	}
	l := &Link{ln: ln, upstream: upstream, cfg: cfg, obs: o.obs, env: e, conns: make(map[member]struct{})}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	l.wg.Add(1)
	go l.acceptLoop()
	return l, nil
}

// cause returns the innermost message of a dial error ("connection refused", "i/o timeout",
// "no such host"), without the "dial tcp ...:" prefixes that repeat the address.
func cause(err error) string {
	var se *os.SyscallError
	if errors.As(err, &se) {
		return se.Err.Error()
	}
	var de *net.DNSError
	if errors.As(err, &de) {
		return de.Err
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		return oe.Err.Error()
	}
	return err.Error()
}

// Addr returns the address clients should connect to ("127.0.0.1:41234").
func (l *Link) Addr() string { return l.ln.Addr().String() }

// Upstream returns the address the link forwards to.
func (l *Link) Upstream() string { return l.upstream }

// Config returns the configuration the link was started with.
func (l *Link) Config() Config { return l.cfg }

func (l *Link) acceptLoop() {
	defer l.wg.Done()
	var backoff time.Duration
	for {
		c, err := l.ln.Accept()
		if err != nil {
			if l.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of file descriptors or similar: back off as net/http does, 5 ms doubling
			// to 1 s, so the loop does not spin while the condition lasts.
			l.noteErr(fmt.Errorf("accept: %w", err))
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			select {
			case <-time.After(backoff):
			case <-l.ctx.Done():
				return
			}
			continue
		}
		backoff = 0
		at := l.env.clk.now()
		l.accepted.Add(1)
		id := l.nextID.Add(1) - 1
		l.wg.Add(1)
		go l.handle(c, id, at)
	}
}

func (l *Link) noteErr(err error) {
	s := err.Error()
	l.lastErr.Store(&s)
}

// handle dials upstream for one accepted connection and starts proxying it.
func (l *Link) handle(client net.Conn, id uint64, at int64) {
	defer l.wg.Done()
	d := net.Dialer{Timeout: dialTimeout}
	server, err := d.DialContext(l.ctx, "tcp", l.upstream)
	if err != nil {
		if l.ctx.Err() == nil {
			l.failed.Add(1)
			l.noteErr(fmt.Errorf("upstream %s unreachable: %s", l.upstream, cause(err)))
		}
		abortive(client)
		client.Close()
		return
	}
	var ob ConnObserver
	if l.obs != nil {
		ob = l.obs.Open()
	}
	c := l.env.newConn(id, client, server, at, l.retire, ob)
	if !l.register(c) {
		client.Close()
		server.Close()
		if ob != nil {
			ob.Close(l.env.clk.now())
		}
		return
	}
	if err := c.start(l.spawn); err != nil {
		l.failed.Add(1)
		l.noteErr(err)
		l.retire(c)
		if ob != nil {
			ob.Close(l.env.clk.now()) // no goroutine of the connection ran to close it
		}
	}
}

// member is a connection of a link: proxied (conn) or in process (passConn, inlineConn).
type member interface {
	// counts returns the connection's traffic so far.
	counts() Counts
	// shutdown closes the connection, both sides.
	shutdown()
}

// register adds c to the link's open connections; it returns false when the link is
// closed.
func (l *Link) register(c member) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	l.conns[c] = struct{}{}
	return true
}

func (l *Link) spawn(f func()) {
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		f()
	}()
}

// retire moves an ended connection's traffic into the link's totals.
func (l *Link) retire(c member) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.conns[c]; ok {
		delete(l.conns, c)
		l.retired = l.retired.Add(c.counts())
	}
}

// Totals returns the traffic of all connections so far, ended and open (see Counts).
func (l *Link) Totals() Counts {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.retired
	for c := range l.conns {
		t = t.Add(c.counts())
	}
	return t
}

// Stats is a snapshot of a link's state.
type Stats struct {
	Totals Counts `json:"totals"`
	// Accepted counts client connections accepted, Active those still open, Failed those
	// reset because the upstream dial failed.
	Accepted int64 `json:"accepted"`
	Active   int64 `json:"active"`
	Failed   int64 `json:"failed"`
	// LastError is the latest accept or upstream-dial error, if any.
	LastError string `json:"last_error,omitempty"`
	// LatenessUp and LatenessDown are how late delayed chunks left compared with their
	// release time, per direction: the link's own timing error, measured in-band on the
	// real traffic, whatever the upstream. Up is the write to the server; down the write to
	// the client, or for an in-process conn (Link.Dial) the return of its Read. They exclude
	// chunks of zero-delay directions (never held) and the kernel's socket hops (a few µs
	// each; see Calibrate for those). Quantiles are bucket upper bounds (at most 12.5 % high).
	LatenessUp   Summary `json:"lateness_up"`
	LatenessDown Summary `json:"lateness_down"`
	// TimingCPU is the CPU the link spent on timing so far: its releaser's busy time
	// (waking, spinning, writing) and the spin of every precise wait of its timers. The
	// timer syscalls of waits without a spin are not in it.
	TimingCPU time.Duration `json:"timing_cpu_ns"`
	// DelayUp and DelayDown are the one-way delays the link applied to each chunk of a
	// shaped direction (jitter, bandwidth or loss: see delayStats), from its arrival to
	// its release time; zero for a direction with a delay alone, which applies exactly
	// that delay to every chunk (Config.OneWay). What a chunk took in all is its delay
	// plus its lateness.
	DelayUp   DelaySummary `json:"delay_up"`
	DelayDown DelaySummary `json:"delay_down"`
	// SpreadUp and SpreadDown are the delays of DelayUp and DelayDown that no loss
	// delayed (the chunk's own, or one ahead of it): their spread is the jitter's and the
	// bandwidth queue's, what Calibration.JitterOf reads. Without loss, the same as
	// DelayUp and DelayDown.
	SpreadUp   DelaySummary `json:"spread_up"`
	SpreadDown DelaySummary `json:"spread_down"`
	// LossUp and LossDown are what the link's loss did per direction (zero without loss).
	LossUp   LossCounts `json:"loss_up"`
	LossDown LossCounts `json:"loss_down"`
}

// spread returns the statistics of direction d's delays that no loss delayed.
func (c *dirConfig) spread() *delayStats {
	if c.clean != nil {
		return c.clean
	}
	return c.shape
}

// Stats returns counters and the in-band timing error of the link.
func (l *Link) Stats() Stats {
	e := l.env
	s := Stats{Totals: l.Totals(), Accepted: l.accepted.Load(), Failed: l.failed.Load(),
		LatenessUp: e.lateness[up].summary(), LatenessDown: e.lateness[down].summary(),
		TimingCPU: time.Duration(e.timingCPU()), LossUp: e.dirs[up].lost.counts(), LossDown: e.dirs[down].lost.counts()}
	if sh := e.dirs[up].shape; sh != nil {
		s.DelayUp, s.SpreadUp = sh.summary(), e.dirs[up].spread().summary()
	}
	if sh := e.dirs[down].shape; sh != nil {
		s.DelayDown, s.SpreadDown = sh.summary(), e.dirs[down].spread().summary()
	}
	l.mu.Lock()
	s.Active = int64(len(l.conns))
	l.mu.Unlock()
	if p := l.lastErr.Load(); p != nil {
		s.LastError = *p
	}
	return s
}

// Carried returns the bytes the link has delivered so far each way, for measuring the
// bandwidth it used: what its cable serialised where a bandwidth limit paces the direction
// (the bytes queued behind it left out), else its traffic counts (Totals), which count the
// client's bytes as they leave for the server and the server's as they arrive.
func (l *Link) Carried() (up, down int64) {
	t := l.Totals()
	now := l.env.clk.now()
	up, down = t.BytesUp, t.BytesDown
	if p := l.env.dirs[0].pacer; p != nil {
		up = p.sent(now)
	}
	if p := l.env.dirs[1].pacer; p != nil {
		down = p.sent(now)
	}
	return up, down
}

// Mark is a moment of a link's life from which StatsSince measures.
type Mark struct {
	totals   Counts
	up, down histSnap
	timing   int64
	delay    [2]delaySnap
	spread   [2]delaySnap
	loss     [2]LossCounts
}

// Mark returns the link's state now.
func (l *Link) Mark() Mark {
	e := l.env
	m := Mark{totals: l.Totals(), up: e.lateness[up].snapshot(), down: e.lateness[down].snapshot(),
		timing: e.timingCPU()}
	for d := range 2 {
		if sh := e.dirs[d].shape; sh != nil {
			m.delay[d], m.spread[d] = sh.snapshot(), e.dirs[d].spread().snapshot()
		}
		m.loss[d] = e.dirs[d].lost.counts()
	}
	return m
}

// StatsSince returns the link's traffic, lateness, timing CPU, applied delays and losses
// since m (a run's measurement window); Accepted, Active, Failed and LastError are the
// link's so far. The lateness's and delays' Max is the upper bound of its highest bucket.
func (l *Link) StatsSince(m Mark) Stats {
	e := l.env
	s := l.Stats()
	s.Totals = s.Totals.Sub(m.totals)
	s.LatenessUp = e.lateness[up].since(m.up)
	s.LatenessDown = e.lateness[down].since(m.down)
	s.TimingCPU = time.Duration(e.timingCPU() - m.timing)
	if sh := e.dirs[up].shape; sh != nil {
		s.DelayUp, s.SpreadUp = sh.since(m.delay[up]), e.dirs[up].spread().since(m.spread[up])
	}
	if sh := e.dirs[down].shape; sh != nil {
		s.DelayDown, s.SpreadDown = sh.since(m.delay[down]), e.dirs[down].spread().since(m.spread[down])
	}
	s.LossUp, s.LossDown = s.LossUp.Sub(m.loss[up]), s.LossDown.Sub(m.loss[down])
	return s
}

// Close stops accepting, closes every connection (both sides) and waits until all of the
// link's goroutines have returned. It is idempotent and returns the listener's close error.
func (l *Link) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	conns := make([]member, 0, len(l.conns))
	for c := range l.conns {
		conns = append(conns, c)
	}
	l.mu.Unlock()
	l.cancel()
	err := l.ln.Close()
	for _, c := range conns {
		c.shutdown()
	}
	l.wg.Wait()
	if l.env.rel != nil {
		l.env.rel.close()
	}
	l.env.timers.close()
	return err
}
