package replay

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/dblat/dblat/internal/latency"
	"github.com/dblat/dblat/internal/observe"
	"github.com/dblat/dblat/internal/wire"
)

// Config says what Run replays, against what and how.
type Config struct {
	// Recording is what to replay.
	Recording *Recording
	// Protocols are the protocols a recorded connection may have been followed as
	// (engine.WireProtocols()): each session is decoded with its own.
	Protocols []wire.Protocol
	// DSN says how a session connects to the target: who, to which database, with what
	// credentials. It may hold a password, which Run never prints or stores.
	DSN string
	// Dial connects to the target's server at addr, the DSN's (through the latency link:
	// Link.Dial; net.Dialer's DialContext for none).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Up and Down are the one-way delays Dial adds, which the replay's Observation reports
	// as the RTT its times contain; Target names the target (no password) for it.
	Up, Down time.Duration
	Target   string
	// Speed divides every time of the capture (1: as captured; 2: twice as fast; 0 is 1).
	// ThinkScale multiplies the pauses within sessions on top (0 is 1; use Fast for none).
	// Fast sends each message as soon as what it waited for in the capture has come.
	Speed, ThinkScale float64
	Fast              bool
	// AutoCorrect shortens the pause after an answer that took longer than the captured
	// server's (beyond the RTT the link adds) by the difference, as Oracle Database
	// Replay's think-time auto-correct does: the replay's own wake-up for each answer is
	// otherwise counted twice, in its wait and in the captured client's pause that already
	// holds the application's.
	AutoCorrect bool
	// OrderCommits has a transaction wait until the commits that preceded its start in the
	// capture have been replayed (--order commits).
	OrderCommits bool
	// StallTimeout bounds a session's wait for an answer the capture's server gave (0: a
	// minute): past it the session stops, and says so.
	StallTimeout time.Duration
	// OnNote, when set, is told each line worth printing as soon as it is known (a session
	// not replayed and why): from any goroutine, one call at a time.
	OnNote func(string)
}

// cancelKey is what cancels a replayed PostgreSQL session: its backend's PID and key, and
// the server's address.
type cancelKey struct {
	pid  uint32
	key  []byte
	addr string
}

// sess is one session being replayed.
type sess struct {
	r *runner
	p *plan
	// tape is what the session sent and received, observed once the replay has ended.
	tape *Conn

	mu        sync.Mutex // guards what follows
	ans       answers
	srvChunks int64
	lastSrv   time.Time
	buf       []byte // what the session reads into
	// firstAt and lastAt are its first and last bytes either way (its goroutine's only).
	firstAt, lastAt time.Time
	commits         int // commits replayed so far
	outcomes        [][]outcome
	why             string // why it stopped early, "" when it ran to its end
	sent            int    // steps sent
}

// runner is one Run.
type runner struct {
	cfg   Config
	rtt   time.Duration // the link's
	base  time.Time
	start int64 // the recording's first chunk
	notes func(string)

	commitMu    sync.Mutex
	commitTimes []int64 // every commit of the capture, in time order
	commitDone  []bool
	commitNext  int // the first commit not yet replayed
	commitWake  chan struct{}

	keysMu sync.Mutex
	keys   map[string]cancelKey // a captured session's cancel key → its replay's

	noteMu   sync.Mutex
	notified map[string]int
}

// now is the replay's clock in nanoseconds, monotonic.
func (r *runner) now() int64 { return r.base.UnixNano() + int64(time.Since(r.base)) }

func (r *runner) note(s string) {
	r.noteMu.Lock()
	defer r.noteMu.Unlock()
	r.notified[s]++
	if r.notified[s] == 1 && r.notes != nil {
		r.notes(s)
	}
}

// scale turns a span of capture time into replay time.
func (r *runner) scale(ns int64) time.Duration {
	sp := r.cfg.Speed
	if sp <= 0 {
		sp = 1
	}
	return time.Duration(float64(ns) / sp)
}

// pause turns a captured pause into the replay's.
func (r *runner) pause(ns int64) time.Duration {
	if r.cfg.Fast {
		return 0
	}
	ts := r.cfg.ThinkScale
	if ts <= 0 {
		ts = 1
	}
	return time.Duration(float64(r.scale(ns)) * ts)
}

// ErrEmpty is Run's error for a recording with no session to replay.
var ErrEmpty = errors.New("the recording holds no session that can be replayed")

// Run replays a recording against the target and returns what it measured and where
// the target answered otherwise than the captured server. It assumes the target holds
// what the captured server held when the capture started (restored by the caller); a
// target that does not is not an error: its divergences are reported. ctx stops it: the
// sessions are closed and what was replayed so far is returned.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	rec := cfg.Recording
	if cfg.StallTimeout <= 0 {
		cfg.StallTimeout = time.Minute
	}
	r := &runner{cfg: cfg, rtt: cfg.Up + cfg.Down, start: rec.Start(), notes: cfg.OnNote, keys: map[string]cancelKey{},
		commitWake: make(chan struct{}), notified: map[string]int{}}
	res := &Result{Speed: max(cfg.Speed, 0), ThinkScale: cfg.ThinkScale, Fast: cfg.Fast, AutoCorrect: cfg.AutoCorrect, OrderCommits: cfg.OrderCommits}
	if res.Speed == 0 {
		res.Speed = 1
	}
	if res.ThinkScale == 0 {
		res.ThinkScale = 1
	}

	// The capture, observed again from the recording: the figures the replay is set against.
	capObs := observeRecording(rec, cfg.Protocols, observe.Config{})
	res.Capture = capObs

	var plans []*plan
	type cancel struct {
		at  int64
		key string
	}
	var cancels []cancel
	for _, c := range rec.Conns {
		if pid, key, ok := pgIsCancel(c); ok {
			cancels = append(cancels, cancel{c.Opened(), keyString(pid, key)})
			continue
		}
		p := makePlan(c, cfg.Protocols)
		res.Sessions++
		if p.why != "" {
			res.NotReplayed++
			r.note(fmt.Sprintf("a session of the capture is not replayed: %s", p.why))
			continue
		}
		plans = append(plans, p)
	}
	if len(plans) == 0 {
		return res, ErrEmpty
	}
	for _, p := range plans {
		r.commitTimes = append(r.commitTimes, p.commitTimes...)
	}
	slices.Sort(r.commitTimes)
	r.commitDone = make([]bool, len(r.commitTimes))

	r.base = time.Now()
	sessions := make([]*sess, len(plans))
	var wg sync.WaitGroup
	for i, p := range plans {
		s := &sess{r: r, p: p}
		sessions[i] = s
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.run(ctx)
		}()
	}
	for _, c := range cancels {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.cancel(ctx, c.at, c.key)
		}()
	}
	wg.Wait()
	own := &Recording{Header: Header{Source: observe.SourceReplay, Upstream: cfg.Target}}
	for _, s := range sessions {
		if s.tape != nil && len(s.tape.Chunks) > 0 {
			own.Conns = append(own.Conns, s.tape)
		}
	}
	res.Replay = observeRecording(own, cfg.Protocols, observe.Config{Source: observe.SourceReplay, Up: cfg.Up, Down: cfg.Down})
	res.finish(r, sessions, rec)
	return res, nil
}

// cancel replays a captured CancelRequest at its time, with the key the target gave the
// session it names.
func (r *runner) cancel(ctx context.Context, at int64, key string) {
	if !r.sleepUntil(ctx, at) {
		return
	}
	r.keysMu.Lock()
	k, ok := r.keys[key]
	r.keysMu.Unlock()
	if !ok {
		r.note("a cancel request of the capture is not replayed: the session it cancels is not open")
		return
	}
	if err := pgCancel(ctx, k.pid, k.key, k.addr, r.cfg.Dial); err != nil {
		r.note("a cancel request of the capture could not be sent: " + err.Error())
	}
}

// sleepUntil waits until the replay's time of capture time at; false when ctx ended.
func (r *runner) sleepUntil(ctx context.Context, at int64) bool {
	d := time.Until(r.base.Add(r.scale(at - r.start)))
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// commitsBefore returns how many of the capture's commits came before capture time at.
func (r *runner) commitsBefore(at int64) int {
	return sort.Search(len(r.commitTimes), func(i int) bool { return r.commitTimes[i] >= at })
}

// committed marks the capture's commit of time at as replayed.
func (r *runner) committed(at int64) {
	r.commitMu.Lock()
	defer r.commitMu.Unlock()
	i := sort.Search(len(r.commitTimes), func(i int) bool { return r.commitTimes[i] >= at })
	for i < len(r.commitTimes) && r.commitDone[i] {
		i++ // commits of the same time: the next one not yet marked
	}
	if i >= len(r.commitTimes) {
		return
	}
	r.commitDone[i] = true
	advanced := false
	for r.commitNext < len(r.commitDone) && r.commitDone[r.commitNext] {
		r.commitNext++
		advanced = true
	}
	if advanced {
		close(r.commitWake)
		r.commitWake = make(chan struct{})
	}
}

// waitCommits waits until the first n commits of the capture have been replayed.
func (r *runner) waitCommits(ctx context.Context, n int, stall time.Duration) bool {
	t := time.NewTimer(stall)
	defer t.Stop()
	for {
		r.commitMu.Lock()
		done, wake := r.commitNext >= n, r.commitWake
		r.commitMu.Unlock()
		if done {
			return true
		}
		select {
		case <-wake:
		case <-t.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// observeRecording follows a recording's connections as its source did, in the order of
// their chunks' times, and returns the Observation; oc gives the Observer's Source (the
// recording's by default), Up and Down.
func observeRecording(rec *Recording, protos []wire.Protocol, oc observe.Config) *observe.Observation {
	type ref struct {
		c *Conn
		i int
	}
	var refs []ref
	for _, c := range rec.Conns {
		for i := range c.Chunks {
			refs = append(refs, ref{c, i})
		}
	}
	slices.SortStableFunc(refs, func(a, b ref) int {
		x, y := a.c.Chunks[a.i].At, b.c.Chunks[b.i].At
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	})
	var now int64
	if len(refs) > 0 {
		now = refs[0].c.Chunks[refs[0].i].At
	}
	if oc.Source == "" {
		oc.Source = rec.Header.Source
	}
	if oc.Source == "" {
		oc.Source = observe.SourcePcap
	}
	oc.Protocols, oc.Passive, oc.Upstream = protos, true, rec.Header.Upstream
	oc.Now = func() time.Time { return time.Unix(0, now) }
	o := observe.New(oc)
	cos := map[*Conn]latency.ConnObserver{}
	for _, rf := range refs {
		ch := rf.c.Chunks[rf.i]
		now = max(now, ch.At)
		co := cos[rf.c]
		if co == nil {
			co = openConn(o, rf.c, protos)
			cos[rf.c] = co
		}
		co.Data(ch.ToServer, ch.Data, ch.At)
		if rf.i == len(rf.c.Chunks)-1 {
			at := max(rf.c.Closed, ch.At)
			co.Close(at)
		}
	}
	return o.Snapshot()
}

// openConn shows the Observer a recorded connection: from its start, or from its middle
// in its protocol where it was followed so.
func openConn(o *observe.Observer, c *Conn, protos []wire.Protocol) latency.ConnObserver {
	if c.Resumed {
		for _, p := range protos {
			if r, ok := p.(wire.Resumer); ok && p.Name() == c.Protocol {
				return o.Resume(p, r.ResumeScanner(), false)
			}
		}
	}
	return o.Open()
}
