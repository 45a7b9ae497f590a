package observe

import (
	"bytes"
	"fmt"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dblat/dblat/internal/latency"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/wire"
)

// Config says what an Observer follows and how it reports.
type Config struct {
	// Protocols are the protocols a connection may speak, asked in order (wire.Protocol's
	// Sniff). None: connections are counted only.
	Protocols []wire.Protocol
	// Engine names the engine whose protocol was asked for, for the Observation.
	Engine string
	// Upstream is the server's address, for the Observation.
	Upstream string
	// Up and Down are the one-way delays the source adds: the proxy's (latency.Config's
	// split), 0 for a source that adds none.
	Up, Down time.Duration
	// Record keeps samples of statements with their values for Script (see Recorder).
	Record bool
	// Source says what shows the Observer the bytes: SourceProxy (the default), SourcePcap
	// or SourceInterface. Passive is set for a source that only watches the bytes and
	// cannot change them (a capture): the trackers run watch-only (wire.TrackerConfig's
	// WatchOnly), and the proxy's TLS decline cannot apply.
	Source  string
	Passive bool
	// Now is the Observer's clock for the Observation's Started and Ended (time.Now when
	// nil): a capture's clock is its packets' timestamps.
	Now func() time.Time
	// Complete, when set, is called with each Observation Snapshot makes, before it is
	// returned: the source adds what it alone knows (a capture's network RTT and the
	// connections it could not follow). It runs on the snapshot's goroutine.
	Complete func(*Observation)
	// OnNote, when set, is called once for each distinct reason a connection cannot be
	// followed and each distinct decoder note, as soon as it is known. It must not block
	// for long: it is called on the source's goroutine (the proxy's, for its link).
	OnNote func(note string, cannotFollow bool)
	// Tape, when set, is shown every chunk of every connection as it was forwarded, with
	// its time: the whole conversation, for a replay (package replay writes it as a
	// recording). Unlike an Observation it holds the application's data.
	Tape Tape
}

// Tape keeps whole conversations, chunk by chunk (Config.Tape). Open is safe for concurrent
// use; each TapeConn is called under its connection's lock, one call at a time.
type Tape interface {
	// Open starts the record of one connection; resume is the protocol of a connection
	// followed from its middle (wire.Resumer), nil for one followed from its start.
	Open(resume wire.Protocol) TapeConn
}

// TapeConn keeps one connection's chunks (Tape).
type TapeConn interface {
	// Chunk is one chunk, toServer true for the client's; it must not retain b.
	Chunk(toServer bool, b []byte, at int64)
	// Close ends the record; protocol is what the connection was followed as ("" none).
	Close(at int64, protocol string)
}

// Bounds of an Observer's memory.
const (
	// maxPendingRTs bounds the round trips a connection keeps while no transaction claims
	// them (a connection that is not followed, a long transaction): the oldest half goes.
	maxPendingRTs = 4096
	// ringTxs is how many recent transactions per shape the serial analysis keeps, and
	// ringShapes for how many shapes (the first that reach ringMinCount transactions);
	// ringPositions bounds the round trips of a transaction it looks at, and ringBudget the
	// bytes of all rings (a ring of 7-round-trip transactions takes 376 KiB, one of 64
	// round trips 3.1 MiB). 2048 transactions are 2 s at 1,000 a second, enough to see
	// whether sections overlap.
	ringTxs       = 2048
	ringShapes    = 32
	ringMinCount  = 20
	ringPositions = 64
	ringBudget    = 32 << 20
	// Histogram bounds, as the runner's: 1 µs to 10 minutes, 3 significant digits.
	histMinUs   = 1
	histMaxUs   = 10 * 60 * 1_000_000
	histSigFigs = 3
)

// Observer follows the connections a source shows it (it implements latency.Observer: the
// proxy's link is one such source; Session owns one). All its methods are safe for
// concurrent use.
type Observer struct {
	cfg     Config
	started time.Time
	agg     wire.Aggregate
	rec     *Recorder // nil unless Config.Record

	mu        sync.Mutex // guards what follows
	open      map[*conn]struct{}
	conns     int64
	maxOpen   int64
	shapes    map[uint64]*shapeObs
	rings     int
	ringBytes int
	txs       int64
	firstAt   int64 // earliest transaction start; valid when any
	lastAt    int64 // latest transaction end
	anyTx     bool
	spans     []span // the connections that ran transactions, for Clients
	gapNs     int64  // sum of the gaps before transactions, over the gaps ones that had one
	gaps      int64
	nextID    uint64
	noted     map[string]bool
	unfollow  Unfollowed
}

// span is a connection's life in transactions: from its first transaction's start to its
// last one's end, and how much of that it spent in transactions or between them.
type span struct{ first, last, busy int64 }

// maxSpans bounds the connections whose spans an Observer keeps (24 bytes each); later ones
// count by their busy time alone.
const maxSpans = 1 << 17

// shapeObs is what the Observer adds to wire.Aggregate's figures for one shape.
type shapeObs struct {
	durNs int64
	hist  *hdrhistogram.Histogram
	ring  *ring
}

// Sources of an Observation (Config.Source, Observation.Source).
const (
	// SourceProxy: dblat proxy --observe.
	SourceProxy = "proxy"
	// SourcePcap: a capture file (dblat observe --pcap).
	SourcePcap = "pcap"
	// SourceInterface: a live capture on a network interface (dblat observe --interface).
	SourceInterface = "interface"
	// SourceReplay: dblat replay's own sessions (package replay).
	SourceReplay = "replay"
)

// New returns an Observer.
func New(cfg Config) *Observer {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Source == "" {
		cfg.Source = SourceProxy
	}
	o := &Observer{cfg: cfg, started: cfg.Now(), open: map[*conn]struct{}{}, shapes: map[uint64]*shapeObs{},
		noted: map[string]bool{}}
	if cfg.Record {
		o.rec = newRecorder()
	}
	return o
}

// Recorder returns the Observer's recorder, nil unless Config.Record was set.
func (o *Observer) Recorder() *Recorder { return o.rec }

// conn follows one connection.
type conn struct {
	o  *Observer
	id uint64
	mu sync.Mutex
	tr *wire.Tracker
	// Round trips since the last transaction was reported: when the request's last chunk
	// was read, and the first and last chunk of its answer.
	rts          []rtTimes
	last         int8 // 0 nothing yet, 1 client, 2 server
	lastClientAt int64
	stopped      bool     // the tracker stopped following; reported
	notes        int      // decoder notes reported so far
	tap          *tap     // nil unless recording
	tape         TapeConn // nil unless Config.Tape
	closed       bool
	span         int // 1 + its index in Observer.spans once it ran a transaction; 0 before
}

type rtTimes struct{ sent, first, last int64 }

// Open implements latency.Observer.
func (o *Observer) Open() latency.ConnObserver { return o.open1(nil, nil, false) }

// Resume returns what watches a connection followed from its middle in protocol p, from
// the point p's scanner at found (wire.Resumer): a connection whose start a capture did not
// see, or whose following stopped at a gap in the capture. again says that the connection
// was shown to the Observer before (it is not counted twice).
func (o *Observer) Resume(p wire.Protocol, at wire.ResumeScanner, again bool) latency.ConnObserver {
	return o.open1(p, at, again)
}

func (o *Observer) open1(resume wire.Protocol, at wire.ResumeScanner, again bool) latency.ConnObserver {
	c := &conn{o: o}
	cfg := wire.TrackerConfig{Protocols: o.cfg.Protocols, OnTx: c.onTx, WatchOnly: o.cfg.Passive, Resume: resume, ResumeAt: at}
	if o.rec != nil {
		c.tap = &tap{c: c}
		cfg.Tap = c.tap
	}
	c.tr = wire.NewTracker(cfg)
	if o.cfg.Tape != nil {
		c.tape = o.cfg.Tape.Open(resume)
	}
	o.mu.Lock()
	c.id = o.nextID
	o.nextID++
	o.open[c] = struct{}{}
	if !again {
		o.conns++
	}
	o.maxOpen = max(o.maxOpen, int64(len(o.open)))
	o.mu.Unlock()
	return c
}

// Data implements latency.ConnObserver.
func (c *conn) Data(toServer bool, b []byte, at int64) latency.Alter {
	from := wire.Server
	if toServer {
		from = wire.Client
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return latency.Alter{}
	}
	var alter latency.Alter
	if c.o.cfg.Passive {
		// Nothing can be changed: the Tracker runs watch-only.
	} else if ic := c.tr.Intercept(from, b); ic.Action != wire.Forward {
		// The bytes are valid until the next call of the Interceptor, which the other
		// direction may make as soon as the lock is released: the link gets a copy.
		if ic.Action == wire.Answer {
			return latency.Alter{Answer: bytes.Clone(ic.Bytes)}
		}
		b = bytes.Clone(ic.Bytes)
		alter.Replace = b
	}
	if c.tape != nil {
		c.tape.Chunk(toServer, b, at)
	}
	if !c.stopped {
		c.timeline(toServer, at)
	}
	if toServer {
		c.tr.ClientData(b, at)
	} else {
		c.tr.ServerData(b, at)
	}
	c.checkNotes()
	return alter
}

// Protocol returns the name of the protocol the connection speaks, "" while it is not
// known (a capture resumes following a connection in it after a gap).
func (c *conn) Protocol() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tr.Protocol()
}

// timeline records the times of the connection's round trips (see conn.rts).
func (c *conn) timeline(toServer bool, at int64) {
	if toServer {
		c.last, c.lastClientAt = 1, at
		return
	}
	switch c.last {
	case 1:
		if len(c.rts) >= maxPendingRTs {
			c.rts = append(c.rts[:0], c.rts[len(c.rts)/2:]...)
		}
		c.rts = append(c.rts, rtTimes{sent: c.lastClientAt, first: at, last: at})
	case 2:
		if n := len(c.rts); n > 0 {
			c.rts[n-1].last = at
		}
	}
	c.last = 2
}

// checkNotes reports the tracker's new notes and why it stopped, once each per Observer.
func (c *conn) checkNotes() {
	if c.o.cfg.OnNote == nil {
		return
	}
	if notes := c.tr.Notes(); len(notes) > c.notes {
		for _, n := range notes[c.notes:] {
			c.o.note(n, false)
		}
		c.notes = len(notes)
	}
	if !c.stopped {
		if s := c.tr.Stopped(); s != "" {
			c.stopped = true
			c.rts = nil
			c.o.note(s, true)
		}
	}
}

func (o *Observer) note(s string, cannotFollow bool) {
	o.mu.Lock()
	seen := o.noted[s]
	o.noted[s] = true
	o.mu.Unlock()
	if !seen {
		o.cfg.OnNote(s, cannotFollow)
	}
}

// Close implements latency.ConnObserver.
func (c *conn) Close(at int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.tr.Close(at)
	c.checkNotes()
	c.closed = true
	if c.tape != nil {
		c.tape.Close(at, c.tr.Protocol())
	}
	o := c.o
	o.mu.Lock()
	delete(o.open, c)
	if c.tr.Protocol() == "" || c.tr.Stopped() != "" && c.tr.Transactions() == 0 {
		k := c.tr.Counts()
		o.unfollow.Connections++
		o.unfollow.BytesUp += k.BytesUp
		o.unfollow.BytesDown += k.BytesDown
		o.unfollow.RoundTrips += k.RoundTrips
	}
	o.mu.Unlock()
	c.tr.Flush(&o.agg)
	c.rts = nil
}

// onTx is the Tracker's OnTx: it runs under c.mu, within a Tracker call.
func (c *conn) onTx(tx *wire.Tx) {
	// The round trips of the transaction: those whose request was sent after it started
	// and whose answer ended by its end. Earlier ones belong to no transaction.
	i := 0
	for i < len(c.rts) && c.rts[i].sent < tx.Start {
		i++
	}
	j := i
	for j < len(c.rts) && c.rts[j].last <= tx.End {
		j++
	}
	rts := c.rts[i:j]
	var sample *txSample
	if c.tap != nil {
		sample = c.tap.take(tx)
	}
	c.o.addTx(tx, rts, sample, c)
	c.rts = append(c.rts[:0], c.rts[j:]...)
}

// addTx adds one transaction to the Observer's per-shape figures.
func (o *Observer) addTx(tx *wire.Tx, rts []rtTimes, sample *txSample, c *conn) {
	dur := max(0, tx.End-tx.Start)
	o.mu.Lock()
	defer o.mu.Unlock()
	s := o.shapes[tx.Shape.Hash]
	if s == nil {
		s = &shapeObs{hist: hdrhistogram.New(histMinUs, histMaxUs, histSigFigs)}
		o.shapes[tx.Shape.Hash] = s
	}
	s.durNs += dur
	us := min(max(dur/1000, histMinUs), histMaxUs)
	_ = s.hist.RecordValue(us) // clamped to the histogram's range: cannot fail
	if !o.anyTx || tx.Start < o.firstAt {
		o.firstAt = tx.Start
	}
	if !o.anyTx || tx.End > o.lastAt {
		o.lastAt = tx.End
	}
	o.anyTx = true
	if c.span == 0 && len(o.spans) < maxSpans {
		o.spans = append(o.spans, span{first: tx.Start})
		c.span = len(o.spans)
	}
	if c.span > 0 {
		sp := &o.spans[c.span-1]
		sp.last = tx.End
		sp.busy += dur
		if tx.HasGap {
			sp.busy += tx.GapNs
		}
	}
	if tx.HasGap {
		o.gapNs += tx.GapNs
		o.gaps++
	}
	o.txs++
	if s.ring == nil && s.hist.TotalCount() >= ringMinCount && o.rings < ringShapes &&
		int64(len(rts)) == tx.RoundTrips && len(rts) > 0 && len(rts) <= ringPositions &&
		o.ringBytes+ringSize(len(rts)) <= ringBudget {
		s.ring = newRing(len(rts))
		o.rings++
		o.ringBytes += ringSize(len(rts))
	}
	if s.ring != nil && len(rts) == s.ring.rts && int64(len(rts)) == tx.RoundTrips {
		s.ring.add(c.id, tx.Start, tx.End, rts)
	}
	if o.rec != nil && c.tap != nil {
		o.rec.add(tx.Shape, sample, c.tr.Protocol(), c.tap.lex)
	}
}

// Transactions returns how many transactions the Observer has seen end so far: cheap, for
// progress lines (Snapshot gives everything).
func (o *Observer) Transactions() int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.txs
}

// Snapshot returns what the Observer saw so far: it moves the figures of the open
// connections into its totals (their transactions that ended are counted; those open are
// not) and summarises. It may be called at any time, from any goroutine.
func (o *Observer) Snapshot() *Observation {
	ob := o.snapshot()
	if o.cfg.Complete != nil {
		// Outside o.mu: the source takes its own locks, which it holds while it shows the
		// Observer its chunks.
		o.cfg.Complete(ob)
	}
	return ob
}

func (o *Observer) snapshot() *Observation {
	o.mu.Lock()
	open := make([]*conn, 0, len(o.open))
	for c := range o.open {
		open = append(open, c)
	}
	o.mu.Unlock()
	for _, c := range open {
		c.mu.Lock()
		if !c.closed {
			c.tr.Flush(&o.agg)
		}
		c.mu.Unlock()
	}
	cs := o.agg.Conns()
	sums := o.agg.Shapes()
	ob := &Observation{Version: FormatVersion, Source: o.cfg.Source, Engine: o.cfg.Engine, Upstream: o.cfg.Upstream,
		Started: o.started, Ended: o.cfg.Now(), UpNs: int64(o.cfg.Up), DownNs: int64(o.cfg.Down),
		Transactions: cs.Transactions, Statements: cs.Statements, Abandoned: cs.Abandoned,
		Totals: cs.Totals, InTransactions: cs.InTransactions, CannotFollow: cs.CannotFollow, Notes: cs.Notes,
		Protocols: cs.Protocols}
	ob.RTTNs = ob.UpNs + ob.DownNs
	best := int64(0)
	for p, n := range cs.Protocols {
		if p != "" && (n > best || n == best && p < ob.Protocol) {
			ob.Protocol, best = p, n
		}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	ob.Connections, ob.MaxOpen, ob.Unfollowed = o.conns, o.maxOpen, o.unfollow
	for c := range o.open {
		if ob.Protocol == "" {
			ob.Protocol = c.tr.Protocol() // only open connections so far
		}
	}
	if o.anyTx {
		ob.WindowNs = o.lastAt - o.firstAt
	}
	if ob.WindowNs > 0 {
		w := float64(ob.WindowNs)
		ob.TPS = float64(ob.Transactions) / (w / 1e9)
		// A connection that lived at least half as long as the longest-lived one is a
		// client of the loop for the share of its life it spent in or between transactions
		// (pgbench's clients: 1 each, however late they started, its set-up connection
		// aside); a shorter-lived one counts by its busy time over the whole window.
		longest := 0.0
		for _, sp := range o.spans {
			longest = max(longest, float64(sp.last-sp.first))
		}
		for _, sp := range o.spans {
			life := float64(sp.last - sp.first)
			if life >= longest/2 && life > 0 {
				ob.Clients += min(1, float64(sp.busy)/life)
			} else {
				ob.Clients += float64(sp.busy) / w
			}
		}
	}
	var durSum, rtSum float64
	for _, s := range sums {
		so := o.shapes[s.Hash]
		sh := Shape{Shape: s.Text, Hash: fmt.Sprintf("%016x", s.Hash), Count: s.Count,
			RoundTripsMean: s.RoundTripsMean, RoundTripsP50: s.RoundTripsP50, RoundTripsMax: s.RoundTripsMax,
			StatementsMean: s.StatementsMean, BytesUpMean: s.BytesUpMean, BytesDownMean: s.BytesDownMean,
			ServerMsMean: s.ServerMsMean, ClientMsMean: s.ClientMsMean, BetweenMsMean: s.BetweenMsMean,
			Autocommits: s.Autocommits, Commits: s.Commits, Rollbacks: s.Rollbacks, Failed: s.Failed, Errors: s.Errors,
			ClientSplitsMean: s.ClientSplitsMean, ClientSplitMsMean: s.ClientSplitMsMean,
			ServerSplitsMean: s.ServerSplitsMean, ServerSplitMsMean: s.ServerSplitMsMean}
		if so != nil && so.hist.TotalCount() > 0 {
			n := float64(so.hist.TotalCount())
			sh.LatencyMsMean = float64(so.durNs) / n / 1e6
			sh.LatencyMsP50 = float64(so.hist.ValueAtQuantile(50)) / 1e3
			sh.LatencyMsP99 = float64(so.hist.ValueAtQuantile(99)) / 1e3
			sh.LatencyMsMax = float64(so.hist.Max()) / 1e3
			sh.Hist, _ = results.EncodeHist(so.hist)
			durSum += float64(so.durNs)
		}
		if so != nil && so.ring != nil {
			sh.RoundTripServerMs, sh.Serial = so.ring.analyse()
		}
		rtSum += s.RoundTripsMean * float64(s.Count)
		sh.Diagnoses = DiagnoseShape(&sh)
		ob.Shapes = append(ob.Shapes, sh)
	}
	if ob.Transactions > 0 {
		n := float64(ob.Transactions)
		ob.LatencyMsMean = durSum / n / 1e6
		ob.RoundTripsMean = rtSum / n
	}
	if o.gaps > 0 {
		ob.BetweenMsMean = float64(o.gapNs) / float64(o.gaps) / 1e6
	}
	if ob.Transactions > 0 {
		n := float64(ob.Transactions)
		ob.BetweenSplitMsMean = float64(ob.Totals.ClientSplitNs-ob.InTransactions.ClientSplitNs) / n / 1e6
		ob.Diagnoses = DiagnoseBetween(ob)
	}
	if ob.Shapes == nil {
		ob.Shapes = []Shape{}
	}
	return ob
}
