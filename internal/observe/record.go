package observe

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"

	"github.com/dblat/dblat/internal/wire"
)

// Bounds of a recording.
const (
	// samplesPerShape is how many transactions a Recorder keeps per shape (a uniform
	// sample of all of them, by reservoir sampling): enough to see which values repeat and
	// over what range the others spread.
	samplesPerShape = 256
	// maxRecordShapes bounds the shapes recorded; later new shapes are counted only.
	maxRecordShapes = 1000
	// maxRecordBytes bounds the text and values a Recorder keeps in all.
	maxRecordBytes = 64 << 20
	// maxTapQueue bounds the statements a connection keeps while no transaction claims
	// them; past it the connection is no longer recorded.
	maxTapQueue = 4096
)

// tapStmt is a statement as the client sent it, with its parameter values.
type tapStmt struct {
	text   []byte
	params []wire.Param
	hidden bool
	req    int64 // the request it was sent in (statements sent together share it)
}

// txSample is one recorded transaction.
type txSample struct {
	stmts []tapStmt
	size  int
}

// tap is the Tracker's Tap of one recorded connection: it queues the statements the
// decoder reports until the Tracker reports the transaction they belong to.
type tap struct {
	c        *conn
	lex      wire.Lexicon
	lexSet   bool
	q        []tapStmt
	req      int64
	overflow bool
	scratch  []byte
}

// Event implements wire.Sink.
func (t *tap) Event(e *wire.Event) {
	switch e.Kind {
	case wire.EvSent:
		t.req++
	case wire.EvStatement:
		if t.overflow {
			return
		}
		if !t.lexSet {
			t.lex, t.lexSet = t.c.lexicon()
		}
		if wire.Blank(e.Text, t.lex) {
			return // the Tracker does not count it either
		}
		if len(t.q) >= maxTapQueue {
			t.overflow, t.q = true, nil
			return
		}
		s := tapStmt{text: append([]byte(nil), e.Text...), hidden: e.ParamsHidden, req: t.req}
		if len(e.Params) > 0 {
			s.params = make([]wire.Param, len(e.Params))
			for i, p := range e.Params {
				s.params[i] = wire.Param{Null: p.Null, Text: append([]byte(nil), p.Text...)}
			}
		}
		t.q = append(t.q, s)
	}
}

// lexicon returns the lexicon of the protocol the connection speaks.
func (c *conn) lexicon() (wire.Lexicon, bool) {
	name := c.tr.Protocol()
	for _, p := range c.o.cfg.Protocols {
		if p.Name() == name {
			return p.Lexicon(), true
		}
	}
	return wire.Lexicon{}, false
}

// take removes from the queue the statements of tx and returns them, or nil when they
// cannot be told (the queue overflowed, or no run of the queued statements has tx's shape).
// The transaction's statements are consecutive in the queue: before them there may be
// COMMITs or ROLLBACKs with nothing to end, which the Tracker counts in no transaction.
func (t *tap) take(tx *wire.Tx) *txSample {
	if t.overflow {
		return nil
	}
	n := tx.Statements
	if n <= 0 {
		return nil
	}
	for off := 0; off <= 4 && off+n <= len(t.q); off++ {
		if t.shapeText(t.q[off:off+n]) != tx.Shape.Text {
			continue
		}
		s := &txSample{stmts: make([]tapStmt, n)}
		copy(s.stmts, t.q[off:off+n])
		for _, st := range s.stmts {
			s.size += len(st.text) + 16
			for _, p := range st.params {
				s.size += len(p.Text) + 8
			}
		}
		t.drop(off + n)
		return s
	}
	t.drop(min(n, len(t.q)))
	return nil
}

func (t *tap) drop(n int) {
	clear(t.q[:n])
	t.q = append(t.q[:0], t.q[n:]...)
}

// shapeText renders statements as wire.Tracker renders a shape's text (wire.Shape.Text):
// normalised, joined by "; ", each cut at 2 KiB, at most 64 of them.
func (t *tap) shapeText(stmts []tapStmt) string {
	const textLimit, stmtLimit = 2048, 64
	var b strings.Builder
	for i, s := range stmts {
		if i == stmtLimit {
			fmt.Fprintf(&b, "; … (%d more)", len(stmts)-stmtLimit)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		t.scratch, _ = wire.Normalize(t.scratch[:0], s.text, t.lex)
		if len(t.scratch) > textLimit {
			b.Write(t.scratch[:textLimit])
			b.WriteString("…")
		} else {
			b.Write(t.scratch)
		}
	}
	return b.String()
}

// Recorder keeps a uniform sample of each shape's transactions with their statements'
// literal and parameter values, from which Script writes a replayable script. It is safe
// for concurrent use.
type Recorder struct {
	mu     sync.Mutex
	shapes map[uint64]*recShape
	others int64 // transactions of shapes beyond maxRecordShapes
	bytes  int
	rng    *rand.Rand
	lex    wire.Lexicon
	proto  string
}

type recShape struct {
	hash    uint64
	text    string
	count   int64
	samples []*txSample
	// unreadable counts transactions whose statements could not be recorded.
	unreadable int64
}

func newRecorder() *Recorder {
	// Seeded: the same traffic gives the same recording.
	return &Recorder{shapes: map[uint64]*recShape{}, rng: rand.New(rand.NewPCG(24, 1))}
}

// add records a transaction of shape sh; s is nil when its statements could not be told.
func (r *Recorder) add(sh *wire.Shape, s *txSample, proto string, lex wire.Lexicon) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.proto == "" && proto != "" {
		r.proto, r.lex = proto, lex
	}
	rs := r.shapes[sh.Hash]
	if rs == nil {
		if len(r.shapes) >= maxRecordShapes {
			r.others++
			return
		}
		rs = &recShape{hash: sh.Hash, text: sh.Text}
		r.shapes[sh.Hash] = rs
	}
	rs.count++
	if s == nil {
		rs.unreadable++
		return
	}
	if len(rs.samples) < samplesPerShape {
		if r.bytes+s.size <= maxRecordBytes || len(rs.samples) == 0 {
			rs.samples = append(rs.samples, s)
			r.bytes += s.size
		}
		return
	}
	if j := r.rng.Int64N(rs.count); j < samplesPerShape {
		r.bytes += s.size - rs.samples[j].size
		rs.samples[j] = s
	}
}
