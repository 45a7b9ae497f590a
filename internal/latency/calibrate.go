package latency

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"time"
)

// CalibrateOptions shape a calibration run. Zero fields take the defaults in brackets.
type CalibrateOptions struct {
	// Conns is the number of connections ping-ponging at the same time [1].
	Conns int
	// Samples is the number of round trips measured on each path, spread over the
	// connections [1000].
	Samples int
	// Size is the size of each ping and of its echo, in bytes [1].
	Size int
	// Warmup is the number of round trips per connection done and discarded before measuring
	// (connection set-up, DelayConnect's first RTT, cold caches) [10, and at most 1000/Conns
	// but at least 1 with more than 100 connections: 10,000 connections warm with one each].
	// Warm-ups are paced like measurements, and measuring starts when every connection is
	// warm.
	Warmup int
	// MaxDuration stops measuring a path early, keeping the samples so far; 0 = no limit.
	MaxDuration time.Duration
	// Inline measures connections made with Link.Dial (in-process, as dblat's terminals use
	// a link) instead of connections to Link.Addr (as external clients such as pgbench do).
	Inline bool
	// EchoAddr, when set, is the address of an echo server to ping instead of the one
	// Calibrate starts in this process (ServeEcho): thousands of connections need a second
	// process, whose sockets do not count against this one's open-file limit, and whose
	// CPU is not the link's.
	EchoAddr string `json:"echo_addr,omitempty"`
	// MaxRate caps the pings per second of all connections together [10,000]: each
	// connection sends at most one ping per max(requested RTT, Conns/MaxRate). Without a cap,
	// 32 connections ping-ponging back to back at a sub-millisecond RTT saturate a small
	// machine (on 2 vCPUs the direct run alone queued for 230-330 µs), and the calibration
	// would measure the CPU's queue instead of the link.
	MaxRate float64
}

// defaultMaxRate is CalibrateOptions.MaxRate's default: at the 30-60 µs of CPU a round trip
// through the link, client and echo server costs, about a third of one CPU.
const defaultMaxRate = 10_000

func (o CalibrateOptions) withDefaults() CalibrateOptions {
	if o.Conns <= 0 {
		o.Conns = 1
	}
	if o.Samples <= 0 {
		o.Samples = 1000
	}
	if o.Size <= 0 {
		o.Size = 1
	}
	if o.MaxRate <= 0 {
		o.MaxRate = defaultMaxRate
	}
	if o.Warmup < 0 {
		o.Warmup = 0
	} else if o.Warmup == 0 {
		o.Warmup = min(10, max(1, 1000/o.Conns))
	}
	return o
}

// Interval returns how often each connection pings when calibrating a link that adds rtt:
// the larger of rtt and Conns/MaxRate (defaults applied).
func (o CalibrateOptions) Interval(rtt time.Duration) time.Duration {
	o = o.withDefaults()
	return max(rtt, time.Duration(float64(o.Conns)/o.MaxRate*float64(time.Second)))
}

// Calibration is the outcome of Calibrate: requested against achieved round-trip time.
type Calibration struct {
	Config    Config           `json:"config"`
	Options   CalibrateOptions `json:"options"`
	Requested time.Duration    `json:"requested_ns"` // Config.AddedRTT()
	// Direct is the RTT of the ping-pong without the link (loopback, echo server, Go
	// runtime): the baseline.
	Direct Summary `json:"direct"`
	// Linked is the RTT of the same ping-pong through the link.
	Linked Summary `json:"linked"`
	// Added is, per sample, the linked RTT minus the direct median: what the link adds,
	// including its own overhead (two more socket hops) at zero delay.
	Added Summary `json:"added"`
	// Error is Added minus Requested: the link's accuracy. Its P50 is the figure to quote.
	Error Summary `json:"error"`
	// LatenessUp and LatenessDown are the link's in-band timing error during the
	// calibration, per direction (Stats.LatenessUp, LatenessDown).
	LatenessUp   Summary `json:"lateness_up"`
	LatenessDown Summary `json:"lateness_down"`
	// DelayUp and DelayDown are the one-way delays the link applied to the pings and echoes,
	// per direction, where jitter, bandwidth or loss shape them (Stats.DelayUp, DelayDown);
	// SpreadUp and SpreadDown those no loss delayed, from which JitterOf reads the jitter
	// they achieved. LossUp and LossDown count the segments the pings and echoes were and
	// those lost (Stats.LossUp, LossDown).
	DelayUp    DelaySummary `json:"delay_up"`
	DelayDown  DelaySummary `json:"delay_down"`
	SpreadUp   DelaySummary `json:"spread_up"`
	SpreadDown DelaySummary `json:"spread_down"`
	LossUp     LossCounts   `json:"loss_up"`
	LossDown   LossCounts   `json:"loss_down"`
	// Pings are the linked round trips in the order each connection measured them, the
	// connections one after another (what Linked summarises).
	Pings []time.Duration `json:"-"`
}

// JitterOf returns the jitter that the standard deviation of a direction's applied
// delays (SpreadUp or SpreadDown: those no loss delayed) stands for in the configuration's
// distribution (DelaySummary.SD over Distribution.Unit): what the link achieved, to set
// beside Config.Jitter. It is 0 when the direction recorded no delays.
func (c *Calibration) JitterOf(d DelaySummary) time.Duration {
	return time.Duration(float64(d.SD) / c.Config.Distribution.Unit())
}

// String summarises the calibration in one line.
func (c *Calibration) String() string {
	us := func(d time.Duration) string { return fmt.Sprintf("%+.1fµs", float64(d)/1e3) }
	return fmt.Sprintf("rtt %v conns %d: direct p50 %.1fµs, linked p50 %v, error p50 %s p99 %s p99.9 %s",
		c.Requested, c.Options.Conns, float64(c.Direct.P50)/1e3, c.Linked.P50.Round(time.Microsecond/10),
		us(c.Error.P50), us(c.Error.P99), us(c.Error.P999))
}

// Calibrate measures what a link with cfg actually adds to the round-trip time. It starts a
// small echo server on loopback and measures an application-level ping-pong (Size-byte
// messages, opts.Conns connections at once, each waiting for its echo before the next ping)
// through a link with cfg in front of it, then directly, and compares the two. It blocks
// until done or ctx is cancelled and leaves nothing running.
//
// Both runs see the same load: each connection sends one ping per interval, the larger of
// the requested RTT and Conns/MaxRate (through the link a ping takes about the RTT, so with
// few connections that is back to back), and the connections start staggered evenly over
// one interval, so they do not hit the link in lock-step bursts. The direct run thus has the
// linked run's request rate and the same idle gaps before a ping reaches the echo server;
// what remains in Error is the link's own doing plus one wake-up of the client after it has
// been idle for an RTT, which a real network of that RTT costs too.
//
// It measures the link, not the path to a particular server: the upstream is always the
// built-in echo server. To watch the link in front of a real upstream, read
// Link.Stats().LatenessUp and LatenessDown during the run, which record how late every
// delayed chunk left.
func Calibrate(ctx context.Context, cfg Config, opts CalibrateOptions) (*Calibration, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	echoAddr := opts.EchoAddr
	if echoAddr == "" {
		echo, err := startEcho()
		if err != nil {
			return nil, err
		}
		defer echo.close()
		echoAddr = echo.addr()
	}

	clk, err := newRealClock(true)
	if err != nil {
		return nil, err
	}
	period := opts.Interval(cfg.AddedRTT())
	l, err := Listen(ctx, "", echoAddr, cfg)
	if err != nil {
		return nil, err
	}
	dialLink := func(ctx context.Context) (net.Conn, error) { return dialTCP(ctx, l.Addr()) }
	if opts.Inline {
		dialLink = l.Dial
	}
	linked, err := pingPong(ctx, clk, dialLink, opts, period)
	pings := slices.Clone(linked)
	st := l.Stats()
	l.Close()
	if err != nil {
		return nil, fmt.Errorf("latency: calibrate through link: %w", err)
	}
	direct, err := pingPong(ctx, clk, func(ctx context.Context) (net.Conn, error) { return dialTCP(ctx, echoAddr) }, opts, period)
	if err != nil {
		return nil, fmt.Errorf("latency: calibrate direct: %w", err)
	}
	c := &Calibration{Config: cfg, Options: opts, Requested: cfg.AddedRTT(), LatenessUp: st.LatenessUp, LatenessDown: st.LatenessDown,
		DelayUp: st.DelayUp, DelayDown: st.DelayDown, SpreadUp: st.SpreadUp, SpreadDown: st.SpreadDown,
		LossUp: st.LossUp, LossDown: st.LossDown, Pings: pings}
	c.Direct = summarize(direct)
	added := make([]time.Duration, len(linked))
	errs := make([]time.Duration, len(linked))
	for i, v := range linked {
		added[i] = v - c.Direct.P50
		errs[i] = added[i] - c.Requested
	}
	c.Linked = summarize(linked)
	c.Added = summarize(added)
	c.Error = summarize(errs)
	return c, nil
}

func dialTCP(ctx context.Context, addr string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, "tcp", addr)
}

// pingPong runs the ping-pong over connections made by dial and returns the measured RTTs. Connection i
// starts measuring i·period/Conns after the others and sends one ping per period (back to
// back when a ping took longer).
func pingPong(ctx context.Context, clk clock, dial func(context.Context) (net.Conn, error), o CalibrateOptions, period time.Duration) ([]time.Duration, error) {
	per := (o.Samples + o.Conns - 1) / o.Conns
	var deadline time.Time
	if o.MaxDuration > 0 {
		deadline = time.Now().Add(o.MaxDuration)
	}
	conns := make([]net.Conn, o.Conns)
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	}()
	for i := range conns {
		c, err := dial(ctx)
		if err != nil {
			return nil, err
		}
		conns[i] = c
	}
	stop := context.AfterFunc(ctx, func() {
		for _, c := range conns {
			_ = c.SetDeadline(time.Unix(1, 0))
		}
	})
	defer stop()

	results := make([][]time.Duration, o.Conns)
	errs := make([]error, o.Conns)
	var start, warm, wg sync.WaitGroup
	start.Add(1)
	warm.Add(o.Conns)
	t0 := clk.now()
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			msg := make([]byte, o.Size)
			buf := make([]byte, o.Size)
			res := make([]time.Duration, 0, per)
			// Pacing needs no precision: a Go timer (no file descriptor per connection, where
			// thousands of connections would not fit the open-file limit).
			tm := newGoTimerOn(clk)
			defer tm.close()
			// Warm up at the measurement's pace, staggered the same way, so that thousands of
			// connections do not hit the link and the echo server in one burst.
			next := t0 + int64(period)*int64(i)/int64(o.Conns)
			for k := range o.Warmup {
				tm.wait(next)
				next = max(next+int64(period), clk.now())
				msg[0] = byte(k)
				if _, err := rtt(c, msg, buf); err != nil {
					errs[i] = err
					warm.Done()
					return
				}
			}
			warm.Done()
			start.Wait()
			next = clk.now() + int64(period)*int64(i)/int64(o.Conns)
			for k := range per {
				if !deadline.IsZero() && time.Now().After(deadline) {
					break
				}
				tm.wait(next)
				next = max(next+int64(period), clk.now())
				msg[0] = byte(k)
				d, err := rtt(c, msg, buf)
				if err != nil {
					errs[i] = err
					return
				}
				res = append(res, d)
			}
			results[i] = res
		}()
	}
	warm.Wait()
	start.Done()
	wg.Wait()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	var all []time.Duration
	for i := range results {
		if errs[i] != nil {
			return nil, errs[i]
		}
		all = append(all, results[i]...)
	}
	return all, nil
}

// rtt sends msg and waits for its echo.
func rtt(c net.Conn, msg, buf []byte) (time.Duration, error) {
	t := time.Now()
	if _, err := c.Write(msg); err != nil {
		return 0, err
	}
	if _, err := io.ReadFull(c, buf); err != nil {
		return 0, err
	}
	d := time.Since(t)
	if buf[0] != msg[0] {
		return 0, errors.New("echo out of step")
	}
	return d, nil
}

// ServeEcho echoes every byte each connection of ln sends, until ln is closed; then it
// closes the connections and returns. It is the upstream Calibrate measures against, for
// running in a process of its own (CalibrateOptions.EchoAddr).
func ServeEcho(ln net.Listener) {
	s := &echoServer{ln: ln, cs: make(map[net.Conn]struct{})}
	s.serve()
	s.close()
}

// echoServer echoes every byte it receives, on loopback.
type echoServer struct {
	ln net.Listener
	wg sync.WaitGroup
	mu sync.Mutex
	cs map[net.Conn]struct{}
}

func startEcho() (*echoServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("latency: echo server: %w", err)
	}
	s := &echoServer{ln: ln, cs: make(map[net.Conn]struct{})}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.serve()
	}()
	return s, nil
}

// serve accepts connections and echoes each on a goroutine of its own, until the listener
// closes.
func (s *echoServer) serve() {
	ln := s.ln
	{
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.cs[c] = struct{}{}
			s.mu.Unlock()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				buf := make([]byte, 64<<10)
				for {
					n, err := c.Read(buf)
					if n > 0 {
						if _, werr := c.Write(buf[:n]); werr != nil {
							break
						}
					}
					if err != nil {
						break
					}
				}
				c.Close()
				s.mu.Lock()
				delete(s.cs, c)
				s.mu.Unlock()
			}()
		}
	}
}

func (s *echoServer) addr() string { return s.ln.Addr().String() }

func (s *echoServer) close() {
	s.ln.Close()
	s.mu.Lock()
	for c := range s.cs {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// goTimerOn sleeps with a Go timer until an instant of a clock's scale.
type goTimerOn struct {
	clk clock
	t   *time.Timer
}

func newGoTimerOn(clk clock) *goTimerOn { return &goTimerOn{clk: clk, t: time.NewTimer(time.Hour)} }

func (g *goTimerOn) wait(until int64) {
	if d := until - g.clk.now(); d > 0 {
		g.t.Reset(time.Duration(d))
		<-g.t.C
	}
}

func (g *goTimerOn) close() { g.t.Stop() }

// Throughput is the outcome of CalibrateBandwidth: what a bulk transfer achieved through a
// link, each way.
type Throughput struct {
	Config Config `json:"config"`
	// Bytes is the size of each transfer.
	Bytes int64 `json:"bytes"`
	// Up and Down are the bytes per second each transfer achieved: its size over the time
	// from its first byte sent to its last byte received, less the direction's delay.
	Up   float64 `json:"up_bytes_per_s"`
	Down float64 `json:"down_bytes_per_s"`
}

// CalibrateBandwidth measures the bandwidth a link with cfg achieves: it moves size bytes
// through it to a sink on loopback, then size bytes from a source back, one connection at
// a time (in process with inline, as dblat's terminals do; else through the proxy), after
// a round trip that opens the connection (DelayConnect's wait is not counted). With a
// bandwidth limit the link serialises each direction at its rate, so a transfer of a few
// seconds' worth reads the rate to within the machine's timer error. It blocks until done
// or ctx is cancelled and leaves nothing running.
func CalibrateBandwidth(ctx context.Context, cfg Config, size int64, inline bool) (*Throughput, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if size <= 0 {
		return nil, errors.New("latency: calibrate bandwidth: size must be positive")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("latency: bulk server: %w", err)
	}
	defer ln.Close()
	upDelay, downDelay := cfg.oneWay()
	type result struct {
		at  time.Time // the sink's last byte, or the source's first
		err error
	}
	// The server answers the opening byte, then sinks size bytes (mode 'u') or sends them
	// (mode 'd').
	served := make(chan result, 1)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				one := make([]byte, 1)
				if _, err := io.ReadFull(c, one); err != nil {
					return // Listen's probe of the upstream, or a client that gave up
				}
				if _, err := c.Write(one); err != nil {
					served <- result{err: err}
					return
				}
				buf := make([]byte, 256<<10)
				if one[0] == 'u' {
					_, err := io.CopyBuffer(io.Discard, io.LimitReader(c, size), buf)
					served <- result{at: time.Now(), err: err}
					return
				}
				served <- result{at: time.Now()}
				for left := size; left > 0; {
					n, err := c.Write(buf[:min(left, int64(len(buf)))])
					if err != nil {
						return
					}
					left -= int64(n)
				}
			}()
		}
	}()
	l, err := Listen(ctx, "", ln.Addr().String(), cfg)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	dial := func() (net.Conn, error) {
		if inline {
			return l.Dial(ctx)
		}
		return dialTCP(ctx, l.Addr())
	}
	open := func(mode byte) (net.Conn, error) {
		c, err := dial()
		if err != nil {
			return nil, err
		}
		stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
		b := []byte{mode}
		if _, err = c.Write(b); err == nil {
			_, err = io.ReadFull(c, b)
		}
		if err != nil || !stop() {
			c.Close()
			return nil, cmpErr(ctx, err)
		}
		return c, nil
	}
	t := &Throughput{Config: cfg, Bytes: size}
	// Up: from the first byte written to the sink's last byte read.
	c, err := open('u')
	if err != nil {
		return nil, err
	}
	start := time.Now()
	buf := make([]byte, 256<<10)
	for left := size; left > 0; {
		n, err := c.Write(buf[:min(left, int64(len(buf)))])
		if err != nil {
			c.Close()
			return nil, err
		}
		left -= int64(n)
	}
	r := <-served
	c.Close()
	if r.err != nil {
		return nil, fmt.Errorf("latency: calibrate bandwidth up: %w", r.err)
	}
	t.Up = float64(size) / max(r.at.Sub(start)-upDelay, time.Microsecond).Seconds()
	// Down: from the source's first byte written to the last byte read here.
	if c, err = open('d'); err != nil {
		return nil, err
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if _, err := io.CopyBuffer(io.Discard, io.LimitReader(c, size), buf); err != nil {
		return nil, fmt.Errorf("latency: calibrate bandwidth down: %w", cmpErr(ctx, err))
	}
	end := time.Now()
	r = <-served
	t.Down = float64(size) / max(end.Sub(r.at)-downDelay, time.Microsecond).Seconds()
	return t, nil
}

// cmpErr returns ctx's error when it was cancelled, else err.
func cmpErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}
