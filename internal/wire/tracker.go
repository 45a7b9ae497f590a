package wire

import (
	"fmt"
)

// Bounds of a Tracker's memory.
const (
	// sniffLimit is how many bytes per direction a Tracker keeps while no protocol has
	// recognised the connection: every handshake the engines know tells within its first
	// message (PostgreSQL's startup packet, MySQL's greeting, Firebird's op_connect), so a
	// connection still undecided after 4 KiB speaks none of them.
	sniffLimit = 4 << 10
	// maxPending bounds the requests sent and not yet completed. A client waits for its
	// answers long before this (pgbench's deepest pipelines hold a few hundred requests), so
	// more means the decoder lost track of the answers.
	maxPending = 4096
	// cacheLimit bounds each of the statement-text caches; a full cache is emptied.
	cacheLimit = 4096
	// shapeTextLimit is how many bytes of one normalised statement a Shape's text keeps,
	// and shapeStatements how many statements; the hash covers all of them.
	shapeTextLimit  = 2048
	shapeStatements = 64
)

// SplitPause is the shortest pause between two chunks of one direction within one flight
// that a Tracker counts as a split (Counts.ClientSplits, ServerSplits). A client that
// writes one request in several writes reaches the proxy in several chunks microseconds
// apart; a pause this long means its second write was held back. Linux delays an ACK by
// at least 40 ms (other systems by up to 200 ms), and Nagle's algorithm holds a small
// write until the data before it is acknowledged: a request written in two writes, or
// written after one that the server does not answer (MySQL's COM_STMT_CLOSE), waits for
// that ACK. 10 ms is well below those delays and above a busy machine's scheduling
// jitter.
const SplitPause = 10_000_000

// Counts is traffic of a connection or of a transaction. A round trip is a turn of the
// conversation, server data after client data, as latency.Meter counts them.
type Counts struct {
	RoundTrips int64 `json:"round_trips"`
	BytesUp    int64 `json:"bytes_up"`
	BytesDown  int64 `json:"bytes_down"`
	// ServerNs sums, over round trips, the wait from the last client chunk of a request to
	// the last server chunk of its answer, as the proxy saw them.
	ServerNs int64 `json:"server_ns"`
	// ClientNs sums the gaps from a server chunk to the next client chunk: the time the
	// application spent between its round trips.
	ClientNs int64 `json:"client_ns"`
	// ClientSplits counts the pauses of SplitPause or more between two client chunks of
	// one flight (the server had not answered: the rest of the request was held back), and
	// ClientSplitNs sums them: time in neither ServerNs nor ClientNs. ServerSplits and
	// ServerSplitNs are the same for the chunks of one answer (counted in ServerNs too: the
	// proxy cannot tell a server that computes from one whose write was held back).
	ClientSplits  int64 `json:"client_splits,omitempty"`
	ClientSplitNs int64 `json:"client_split_ns,omitempty"`
	ServerSplits  int64 `json:"server_splits,omitempty"`
	ServerSplitNs int64 `json:"server_split_ns,omitempty"`
}

func (c Counts) sub(d Counts) Counts {
	return Counts{c.RoundTrips - d.RoundTrips, c.BytesUp - d.BytesUp, c.BytesDown - d.BytesDown,
		c.ServerNs - d.ServerNs, c.ClientNs - d.ClientNs, c.ClientSplits - d.ClientSplits,
		c.ClientSplitNs - d.ClientSplitNs, c.ServerSplits - d.ServerSplits, c.ServerSplitNs - d.ServerSplitNs}
}

func (c Counts) add(d Counts) Counts {
	return Counts{c.RoundTrips + d.RoundTrips, c.BytesUp + d.BytesUp, c.BytesDown + d.BytesDown,
		c.ServerNs + d.ServerNs, c.ClientNs + d.ClientNs, c.ClientSplits + d.ClientSplits,
		c.ClientSplitNs + d.ClientSplitNs, c.ServerSplits + d.ServerSplits, c.ServerSplitNs + d.ServerSplitNs}
}

// Outcome is how a transaction ended.
type Outcome uint8

const (
	// Autocommit: the transaction went back to idle without an explicit COMMIT or ROLLBACK
	// (a statement run in autocommit mode).
	Autocommit Outcome = iota
	// Committed by an explicit COMMIT (or Firebird's commit retaining).
	Committed
	// RolledBack by an explicit ROLLBACK, or by a COMMIT of a failed transaction.
	RolledBack
)

func (o Outcome) String() string {
	switch o {
	case Committed:
		return "commit"
	case RolledBack:
		return "rollback"
	}
	return "autocommit"
}

// Shape identifies a sequence of normalised statements: the transactions that ran the same
// statements in the same order, whatever their literals and parameters.
type Shape struct {
	// Hash is FNV-1a (64 bit) over the FNV-1a hashes of the normalised statements in order:
	// the same on every run and machine.
	Hash uint64 `json:"hash"`
	// Text is the normalised statements joined by "; " (at most 64 statements, each cut at
	// 2 KiB, then a count of the rest).
	Text string `json:"text"`
}

// Tx is one transaction a Tracker saw.
type Tx struct {
	Shape *Shape
	// Statements counts the statements it ran (BEGIN and COMMIT included where the client
	// sent them as statements; Firebird's transaction operations count as the statements
	// START TRANSACTION, COMMIT, COMMIT RETAINING, ROLLBACK, ROLLBACK RETAINING).
	Statements int
	// Counts are its traffic, round trips, server time and client time.
	Counts
	// Start and End are the receive times of its first client chunk and of the server chunk
	// that completed it.
	Start, End int64
	// GapNs is the time from the end of the previous transaction on the connection to
	// Start; HasGap is false for a connection's first transaction.
	GapNs  int64
	HasGap bool
	// Outcome is how it ended; Failed reports that the server put it in a failed state
	// (PostgreSQL's E), Errors counts requests in it that the server answered with an error.
	Outcome Outcome
	Failed  bool
	Errors  int
}

// TrackerConfig says what a Tracker follows and whom it tells.
type TrackerConfig struct {
	// Protocols are the protocols the connection may speak, asked in order (Sniff); the
	// first that says Yes decodes it. None, or none that recognises the connection: the
	// Tracker counts bytes and round trips only.
	Protocols []Protocol
	// OnTx, when set, receives each transaction when it is reported (see Tracker). The Tx
	// is valid during the call only.
	OnTx func(*Tx)
	// Tap, when set, receives every event the decoder reports before the Tracker handles it
	// (for a recording of statements and parameters).
	Tap Sink
	// WatchOnly says that the bytes cannot be changed: the source only watches them (a
	// packet capture). Intercept then never asks the decoder's Interceptor, so that a TLS
	// request goes to the server as the client sent it, and the decoder sees the server's
	// answer to it as any other bytes (a server that accepts TLS ends the following).
	WatchOnly bool
	// Resume, when set, is the protocol of a connection followed from its middle (a capture
	// that started after it, or lost some of its bytes), and ResumeAt the scanner of
	// Resume's that found the point where the first chunk starts (no request outstanding,
	// no transaction open): the Tracker does not sniff, and decodes with ResumeAt's Decoder.
	Resume   Protocol
	ResumeAt ResumeScanner
}

// Tracker follows one connection: it counts its traffic, finds the protocol it speaks,
// feeds that protocol's Decoder and groups the decoder's requests into transactions.
//
// A transaction runs from the first request that runs a statement while no transaction is
// open to the answer that brings the status back to idle. It takes in:
//   - the requests that only prepare statements and complete, while none is open, right
//     before it (no other request between): their round trips, bytes and server time, and
//     the time between them as client time, which for a statement prepared long before its
//     first use is that wait;
//   - the COMMIT or ROLLBACK requests with nothing left to end that follow it before the
//     next statement (drivers that commit once more as they close a statement, pools that
//     roll back as a connection returns). A COMMIT or ROLLBACK with nothing to end
//     anywhere else is no transaction.
//
// A transaction is therefore reported (TrackerConfig.OnTx, Flush) when the next statement
// or preparation completes, or at Flush or Close. Requests pipelined into the same chunks
// share them: each transaction counts the round trips and bytes of the chunks it spans.
//
// Tracker implements Decoder and Interceptor for the proxy. It is not safe for concurrent
// use: the proxy calls it under one lock per connection (see Decoder).
type Tracker struct {
	cfg   TrackerConfig
	proto Protocol
	lex   Lexicon
	dec   Decoder
	icp   Interceptor
	sink  trackerSink

	// sniffing state: the first bytes of each direction and the chunks they came in.
	sniffDone  bool
	sniffBuf   [2][]byte
	sniffRecs  []sniffRec
	candidates []Protocol

	c                           Counts
	now                         int64
	last                        int8 // 0 nothing yet, 1 client, 2 server
	lastClientAt, lastServerAt  int64
	turn                        bool // server data continues a round trip
	flightMark                  Counts
	flightAt                    int64
	stopped                     string
	closed                      bool
	notes                       []string
	open                        unit // the request being sent, when hasOpen
	hasOpen                     bool
	pending                     []unit
	head                        int
	queue                       []*norm // statements of pending requests, in order
	qhead                       int
	status                      Status
	tx                          txState
	out                         Tx
	lastEnd                     int64
	hasEnd                      bool
	txs, stmts, abandoned       int64
	inTx                        Counts
	rawCache, normTab           map[string]*norm
	scratch                     []byte
	shapes                      map[uint64]*ShapeStats
	flushed                     Counts
	flushedInTx                 Counts
	flushedTxs, flushedAbandons int64
	reported                    bool
}

type sniffRec struct {
	dir Direction
	n   int
	at  int64
}

type unit struct {
	start   Counts
	startAt int64
	n       int // statements, in Tracker.queue
	control int // of those, statements that only end a transaction (Event.End on EvStatement)
	prepare bool
}

type norm struct {
	text string
	hash uint64
}

type txState struct {
	open       bool
	start      Counts
	startAt    int64
	stmts      []*norm
	n          int
	hash       uint64
	failed     bool
	errors     int
	end        End
	pre        bool // a run of preparing requests waits for the next transaction
	preStart   Counts
	preStartAt int64
	closing    bool // ended, not yet reported: a COMMIT or ROLLBACK may still follow
	endCounts  Counts
	endAt      int64
}

type trackerSink struct{ t *Tracker }

func (s *trackerSink) Event(e *Event) { s.t.event(e) }

// NewTracker returns a Tracker for one new connection.
func NewTracker(cfg TrackerConfig) *Tracker {
	t := &Tracker{cfg: cfg, status: StatusIdle, candidates: append([]Protocol(nil), cfg.Protocols...)}
	t.sink.t = t
	t.tx.hash = fnvOffset
	if cfg.Resume != nil && cfg.ResumeAt != nil {
		t.sniffDone, t.candidates = true, nil
		t.proto, t.lex = cfg.Resume, cfg.Resume.Lexicon()
		t.dec = cfg.ResumeAt.Decoder(&t.sink)
		return t
	}
	if len(t.candidates) == 0 {
		t.sniffDone = true
	}
	return t
}

// Protocol returns the name of the protocol the connection speaks, or "" while it is not
// known (or when none recognised it).
func (t *Tracker) Protocol() string {
	if t.proto == nil {
		return ""
	}
	return t.proto.Name()
}

// Stopped returns why the Tracker does not follow the connection (the decoder cannot, or no
// protocol recognised it), or "" while it does.
func (t *Tracker) Stopped() string { return t.stopped }

// Notes returns the decoder's notes about the connection (EvNote) so far.
func (t *Tracker) Notes() []string { return t.notes }

// Counts returns the connection's traffic so far.
func (t *Tracker) Counts() Counts { return t.c }

// Transactions returns how many transactions have ended on the connection so far.
func (t *Tracker) Transactions() int64 { return t.txs }

// Intercept implements Interceptor: while the protocol is not known it asks the protocols
// whether this chunk tells (so that a first chunk that needs an answer, PostgreSQL's
// SSLRequest, reaches the decoder's Interceptor), then passes the chunk to the decoder's
// Interceptor, if it has one.
func (t *Tracker) Intercept(from Direction, b []byte) Intercept {
	if t.stopped != "" || len(b) == 0 || t.cfg.WatchOnly {
		return Intercept{}
	}
	defer t.recoverDecoder()
	if !t.sniffDone {
		t.sniff(from, b)
	}
	if t.icp == nil || t.stopped != "" {
		return Intercept{}
	}
	return t.icp.Intercept(from, b)
}

// ClientData counts a chunk the client sent and feeds it to the decoder.
func (t *Tracker) ClientData(b []byte, at int64) {
	if len(b) == 0 || t.closed {
		return
	}
	t.now = at
	if t.last != 1 {
		// A new flight: the gap since the last answer is client time, which belongs to a
		// transaction only if one is open (the mark taken after it starts one).
		if t.last == 2 {
			t.c.ClientNs += max(0, at-t.lastServerAt)
		}
		t.flightMark, t.flightAt = t.c, at
	} else if gap := at - t.lastClientAt; gap >= SplitPause {
		// The rest of the flight was held back while the server had nothing to answer.
		t.c.ClientSplits++
		t.c.ClientSplitNs += gap
	}
	t.c.BytesUp += int64(len(b))
	t.last, t.lastClientAt, t.turn = 1, at, false
	t.feed(Client, b, at)
}

// ServerData counts a chunk the server sent and feeds it to the decoder.
func (t *Tracker) ServerData(b []byte, at int64) {
	if len(b) == 0 || t.closed {
		return
	}
	t.now = at
	switch {
	case t.last == 1:
		t.c.RoundTrips++
		t.c.ServerNs += max(0, at-t.lastClientAt)
		t.turn = true
	case t.turn:
		gap := max(0, at-t.lastServerAt)
		t.c.ServerNs += gap
		if gap >= SplitPause {
			t.c.ServerSplits++
			t.c.ServerSplitNs += gap
		}
	}
	t.c.BytesDown += int64(len(b))
	t.last, t.lastServerAt = 2, at
	t.feed(Server, b, at)
}

// Close ends the connection: the decoder's Close, and a transaction still open is counted
// as abandoned. Later calls do nothing.
func (t *Tracker) Close(at int64) {
	if t.closed {
		return
	}
	t.now = at
	if t.dec != nil && t.stopped == "" {
		func() {
			defer t.recoverDecoder()
			t.dec.Close(at)
		}()
	}
	t.report()
	if t.tx.open {
		t.abandoned++
		t.tx.open = false
	}
	t.closed = true
}

func (t *Tracker) feed(d Direction, b []byte, at int64) {
	defer t.recoverDecoder()
	if !t.sniffDone {
		t.sniffBuf[d] = append(t.sniffBuf[d], b...)
		t.sniffRecs = append(t.sniffRecs, sniffRec{d, len(b), at})
		t.sniff(d, nil)
		return
	}
	if t.dec == nil || t.stopped != "" {
		return
	}
	if d == Client {
		t.dec.ClientData(b, at)
	} else {
		t.dec.ServerData(b, at)
	}
}

// sniff asks the candidate protocols about the bytes so far plus extra (a chunk not yet
// fed, from dir). On a Yes it starts that protocol's decoder and replays what was kept.
func (t *Tracker) sniff(dir Direction, extra []byte) {
	client, server := t.sniffBuf[Client], t.sniffBuf[Server]
	if len(extra) > 0 {
		// Look at the chunk without keeping it: it is fed (and kept) when it is forwarded.
		if dir == Client {
			client = append(client[:len(client):len(client)], extra...)
		} else {
			server = append(server[:len(server):len(server)], extra...)
		}
	}
	kept := t.candidates[:0]
	for _, p := range t.candidates {
		switch p.Sniff(client, server) {
		case Yes:
			t.start(p)
			return
		case NeedMore:
			kept = append(kept, p)
		}
	}
	t.candidates = kept
	if len(kept) == 0 || len(client) > sniffLimit || len(server) > sniffLimit {
		t.sniffDone = true
		t.stopped = unrecognised(t.cfg.Protocols, client, server)
		t.sniffBuf = [2][]byte{}
		t.sniffRecs = nil
	}
}

func (t *Tracker) start(p Protocol) {
	t.sniffDone = true
	t.proto, t.lex = p, p.Lexicon()
	t.dec = p.NewDecoder(&t.sink)
	if !t.cfg.WatchOnly {
		t.icp, _ = t.dec.(Interceptor)
	}
	var off [2]int
	for _, r := range t.sniffRecs {
		if t.stopped != "" {
			break
		}
		b := t.sniffBuf[r.dir][off[r.dir] : off[r.dir]+r.n]
		off[r.dir] += r.n
		if r.dir == Client {
			t.dec.ClientData(b, r.at)
		} else {
			t.dec.ServerData(b, r.at)
		}
	}
	t.sniffBuf = [2][]byte{}
	t.sniffRecs = nil
}

// unrecognised says, in one line, that no protocol recognised the connection.
func unrecognised(ps []Protocol, client, server []byte) string {
	if len(client) >= 3 && client[0] == 0x16 && client[1] == 0x03 && client[2] <= 0x04 {
		// A TLS record (handshake, version 3.x) from the first byte: a client that starts
		// TLS before the database protocol (PostgreSQL 17's sslnegotiation=direct).
		return "the client speaks TLS from its first byte: it cannot be followed; connect without TLS " +
			"(or, for PostgreSQL 17+, with sslnegotiation=postgres so that the proxy can decline it)"
	}
	first := func(b []byte) string {
		if len(b) > 8 {
			b = b[:8]
		}
		return fmt.Sprintf("% x", b)
	}
	names := ""
	for i, p := range ps {
		if i > 0 {
			names += ", "
		}
		names += p.Name()
	}
	return fmt.Sprintf("not %s traffic (first bytes: client %q, server %q): counting bytes and round trips only",
		names, first(client), first(server))
}

// event handles one decoder event (see EventKind).
func (t *Tracker) event(e *Event) {
	if t.cfg.Tap != nil {
		t.cfg.Tap.Event(e)
	}
	if t.stopped != "" {
		return
	}
	switch e.Kind {
	case EvStatement:
		n := t.norm(e.Text)
		if n == nil {
			return
		}
		u := t.cur()
		u.n++
		if e.End != EndNone {
			u.control++
		}
		t.queue = append(t.queue, n)
	case EvPrepare:
		t.cur().prepare = true
	case EvSent:
		t.cur()
		if len(t.pending)-t.head >= maxPending {
			t.stop(fmt.Sprintf("more than %d requests without an answer: the decoder lost track of the answers", maxPending))
			return
		}
		t.pending = append(t.pending, t.open)
		t.hasOpen = false
	case EvCompleted:
		t.completed(e)
	case EvCannotFollow:
		t.stop(e.Reason)
	case EvNote:
		if len(t.notes) < 8 {
			t.notes = append(t.notes, e.Reason)
		}
	}
}

// recoverDecoder, deferred around every call into a protocol's code, turns a panic of that
// code into the end of the following: a decoding failure stops only the decoding, never the
// connection the proxy forwards or the proxy itself (whose other connections a panic would
// take down). The note asks for a report: a decoder must not panic on any input.
func (t *Tracker) recoverDecoder() {
	if r := recover(); r != nil {
		name := "protocol"
		if t.proto != nil {
			name = t.proto.Name()
		}
		t.stop(fmt.Sprintf("the %s decoder failed (%v): the connection is forwarded but no longer followed; this is a bug in dblat, please report it", name, r))
	}
}

// stop gives up following the connection: a transaction still open is abandoned.
func (t *Tracker) stop(reason string) {
	if reason == "" {
		reason = "the decoder stopped"
	}
	t.stopped = reason
	t.report()
	if t.tx.open {
		t.abandoned++
		t.tx.open = false
	}
	t.pending, t.head, t.hasOpen = nil, 0, false
	t.queue, t.qhead = nil, 0
}

// cur returns the request being sent, starting one in the current flight if none is.
func (t *Tracker) cur() *unit {
	if !t.hasOpen {
		t.open, t.hasOpen = unit{start: t.flightMark, startAt: t.flightAt}, true
	}
	return &t.open
}

// completed applies the answer to the oldest pending request.
func (t *Tracker) completed(e *Event) {
	var u unit
	if t.head < len(t.pending) {
		u = t.pending[t.head]
		t.head++
		if t.head == len(t.pending) {
			t.pending, t.head = t.pending[:0], 0
		}
	} else {
		// An answer to a request the decoder did not report (the handshake): it has no
		// statements and starts now.
		u = unit{start: t.flightMark, startAt: t.flightAt}
	}
	stmts := t.queue[t.qhead : t.qhead+u.n]
	t.qhead += u.n
	tx := &t.tx
	if !tx.open && u.n > 0 && u.control == u.n && e.Status != StatusInTx && e.Status != StatusFailed {
		// A COMMIT or ROLLBACK with no transaction to end. Right after one ended (drivers
		// that commit again as they close a statement, pools that roll back as a connection
		// returns), it is part of that one; otherwise it is no transaction.
		switch {
		case tx.closing && !e.Failed:
			tx.add(stmts, e)
			tx.endCounts, tx.endAt = t.c, t.now
		case tx.closing:
			t.report() // a failed one (a handle already ended) ends the run
		}
		if e.Status != StatusUnknown {
			t.status = e.Status
		}
		t.dropQueue()
		return
	}
	if tx.closing && (u.n > 0 || u.prepare) {
		t.report()
	}
	if !tx.open {
		switch {
		case u.n > 0:
			tx.open = true
			tx.start, tx.startAt = u.start, u.startAt
			if tx.pre {
				tx.start, tx.startAt = tx.preStart, tx.preStartAt
			}
			tx.pre = false
		case u.prepare:
			if !tx.pre {
				tx.pre, tx.preStart, tx.preStartAt = true, u.start, u.startAt
			}
		default:
			tx.pre = false
		}
	}
	if tx.open {
		tx.add(stmts, e)
	}
	if e.Status != StatusUnknown {
		t.status = e.Status
	}
	if tx.open && t.status == StatusFailed {
		tx.failed = true
	}
	if tx.open && t.status == StatusIdle {
		// The transaction ended with the current server chunk; it is reported when the
		// next request shows it does not only end it once more (see report).
		tx.open, tx.closing = false, true
		tx.endCounts, tx.endAt = t.c, t.now
	}
	t.dropQueue()
}

// add adds a completed request's statements and outcome to the transaction.
func (tx *txState) add(stmts []*norm, e *Event) {
	for _, n := range stmts {
		tx.n++
		tx.hash = fnvWord(tx.hash, n.hash)
		if len(tx.stmts) < shapeStatements {
			tx.stmts = append(tx.stmts, n)
		}
	}
	if e.Failed {
		tx.errors++
	}
	if e.End != EndNone && !e.Failed {
		tx.end = e.End
	}
}

// dropQueue forgets the statements of completed requests once none is pending.
func (t *Tracker) dropQueue() {
	if t.qhead == len(t.queue) {
		clear(t.queue)
		t.queue, t.qhead = t.queue[:0], 0
	}
}

// report records the transaction that ended, if one waits to be reported: its counts run
// to the answer that ended it, or to that of the last COMMIT or ROLLBACK that followed it
// with nothing to end. It is called when a request that belongs elsewhere completes, and
// by Close, Flush and stop.
func (t *Tracker) report() {
	tx := &t.tx
	if !tx.closing {
		return
	}
	r := &t.out // not a local: OnTx would make it escape, an allocation per transaction
	*r = Tx{Statements: tx.n, Counts: tx.endCounts.sub(tx.start), Start: tx.startAt, End: tx.endAt,
		Failed: tx.failed, Errors: tx.errors}
	if t.hasEnd {
		r.GapNs, r.HasGap = max(0, tx.startAt-t.lastEnd), true
	}
	switch tx.end {
	case EndCommit:
		r.Outcome = Committed
	case EndRollback:
		r.Outcome = RolledBack
	}
	if t.shapes == nil {
		t.shapes = map[uint64]*ShapeStats{}
	}
	st := t.shapes[tx.hash]
	if st == nil {
		st = &ShapeStats{Shape: Shape{Hash: tx.hash, Text: shapeText(tx.stmts, tx.n)}}
		t.shapes[tx.hash] = st
	}
	r.Shape = &st.Shape
	st.add(r)
	t.txs++
	t.stmts += int64(tx.n)
	t.inTx = t.inTx.add(r.Counts)
	t.lastEnd, t.hasEnd = tx.endAt, true
	if t.cfg.OnTx != nil {
		t.cfg.OnTx(r)
	}
	clear(tx.stmts)
	*tx = txState{stmts: tx.stmts[:0], hash: fnvOffset}
}

func shapeText(stmts []*norm, n int) string {
	size := 0
	for _, s := range stmts {
		size += len(s.text) + 2
	}
	b := make([]byte, 0, size+32)
	for i, s := range stmts {
		if i > 0 {
			b = append(b, "; "...)
		}
		b = append(b, s.text...)
	}
	if n > len(stmts) {
		b = fmt.Appendf(b, "; … (%d more)", n-len(stmts))
	}
	return string(b)
}

// norm returns the normalised form of a statement's text, from a cache where it can.
func (t *Tracker) norm(text []byte) *norm {
	if n, ok := t.rawCache[string(text)]; ok {
		return n
	}
	var lit bool
	t.scratch, lit = Normalize(t.scratch[:0], text, t.lex)
	if len(t.scratch) == 0 {
		return nil
	}
	n, ok := t.normTab[string(t.scratch)]
	if !ok {
		if t.normTab == nil || len(t.normTab) >= cacheLimit {
			t.normTab = make(map[string]*norm)
			t.rawCache = nil // it points into the table being dropped
		}
		s := t.scratch
		if len(s) > shapeTextLimit {
			s = append(s[:shapeTextLimit:shapeTextLimit], "…"...)
		}
		n = &norm{text: string(s), hash: fnvBytes(fnvOffset, t.scratch)}
		t.normTab[string(t.scratch)] = n
	}
	if !lit {
		// Texts without literals (prepared statements, parameter markers) recur verbatim;
		// texts with literals rarely do and would only fill the cache.
		if t.rawCache == nil || len(t.rawCache) >= cacheLimit {
			t.rawCache = make(map[string]*norm)
		}
		t.rawCache[string(text)] = n
	}
	return n
}

// FNV-1a, 64 bit.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func fnvBytes(h uint64, b []byte) uint64 {
	for _, c := range b {
		h ^= uint64(c)
		h *= fnvPrime
	}
	return h
}

func fnvWord(h, w uint64) uint64 {
	for range 8 {
		h ^= w & 0xff
		h *= fnvPrime
		w >>= 8
	}
	return h
}
