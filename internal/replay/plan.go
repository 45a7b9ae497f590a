package replay

import (
	"github.com/dblat/dblat/internal/wire"
)

// step is one client chunk to resend, with what it waited for in the capture.
type step struct {
	data []byte
	// at is when the client sent it, on the recording's clock.
	at int64
	// pause is how long the client waited, in the capture, after it could have sent it:
	// from the later of its previous chunk and the last server chunk before it.
	pause int64
	// call is, for a message sent after the server answered the previous one, how long
	// the server took to answer it in the capture (from the previous message to the last
	// answer before this one); 0 otherwise.
	call int64
	// completed is how many requests the capture's server had completed since the first
	// replayed chunk when the client sent it: the replay waits for as many.
	completed int
	// answered is set when the server sent something between the client's previous chunk
	// and this one (a turn of the conversation): the replay waits for the server too.
	answered bool
	// idle is set when no transaction was open when it was sent (a transaction starts with
	// it, for --order commits).
	idle bool
}

// request is one request of a session as the capture saw it: its statements and the
// server's answer.
type request struct {
	stmts []string // as sent (values included)
	// prepared is set for a request that only prepares (no statement ran).
	prepared bool
	// failed is the decoder's verdict on the answer (an error).
	failed bool
	// outcomes are the protocol's answers per statement; answered is set once the
	// server answered the request in the capture.
	outcomes []outcome
	answered bool
	// at is the answer's time.
	at int64
}

// outcome is the server's answer to one statement: its command tag (with the rows it
// affected or returned, as the protocol writes them), the rows it returned, or the error.
type outcome struct {
	Tag  string `json:"tag,omitempty"`
	Rows int64  `json:"rows"`
	Err  string `json:"error,omitempty"`
}

func (o outcome) String() string {
	if o.Err != "" {
		return "error " + o.Err
	}
	if o.Tag == "" {
		return "ok"
	}
	return o.Tag
}

// plan is one session prepared for replay.
type plan struct {
	conn  *Conn
	proto wire.Protocol
	// why, when not "", says why the session is not replayed (one line).
	why   string
	steps []step
	reqs  []request
	// opened is when the session opened, on the recording's clock.
	opened int64
	// startup holds the client's start-up chunks (authentication), which are not resent.
	startup [][]byte
	// commitTimes are the capture times of its commits, in order.
	commitTimes []int64
	// completions counts the requests the capture's server completed from the first
	// replayed message on.
	completions int
	// stmtIDs are the statement ids the captured server gave, by request (MySQL).
	stmtIDs map[int]uint32
	// my is what a MySQL client asked for in its handshake; fb the protocol version and
	// type a Firebird client came to.
	my myHandshake
	fb [2]uint32
}

// planSink collects a captured session's events.
type planSink struct {
	p         *plan
	started   bool // the first request was seen
	reqOpen   bool // statements go to the request being sent
	next      int  // the next request to complete
	status    wire.Status
	completed int
	stop      string
	at        int64
	hadStmt   []bool
	lex       wire.Lexicon
}

func (s *planSink) Event(e *wire.Event) {
	switch e.Kind {
	case wire.EvStatement, wire.EvPrepare:
		s.started = true
		if !s.reqOpen {
			s.p.reqs = append(s.p.reqs, request{prepared: true})
			s.hadStmt = append(s.hadStmt, false)
			s.reqOpen = true
		}
		r := &s.p.reqs[len(s.p.reqs)-1]
		if e.Kind == wire.EvStatement {
			r.prepared = false
			r.stmts = append(r.stmts, string(e.Text))
			s.hadStmt[len(s.hadStmt)-1] = true
		}
	case wire.EvSent:
		s.started = true
		if !s.reqOpen {
			s.p.reqs = append(s.p.reqs, request{})
			s.hadStmt = append(s.hadStmt, false)
		}
		s.reqOpen = false
	case wire.EvCompleted:
		if s.next < len(s.p.reqs) {
			r := &s.p.reqs[s.next]
			r.failed, r.at = e.Failed, s.at
		}
		s.next++
		s.completed++
		if e.Status != wire.StatusUnknown {
			s.status = e.Status
		}
	case wire.EvCannotFollow:
		if s.stop == "" {
			s.stop = e.Reason
		}
	}
}

// answers reads a protocol's answers from a session's bytes, both ways from its first:
// after start (the first replayed message goes) it counts the requests completed, tells of
// each commit (onCommit, numbered from 0), and keeps the outcomes per statement of each
// request completed (take). Every protocol the replay replays has one.
type answers interface {
	client(b []byte)
	server(b []byte)
	start()
	completed() int
	take() [][]outcome
}

// rewriter is an optional capability of answers: the client's bytes with what the server
// assigned (MySQL's statement ids) mapped from the captured server's to the target's.
type rewriter interface {
	rewrite(b []byte) []byte
}

// newAnswers returns the answer reader of a protocol the replay replays.
func newAnswers(proto wire.Protocol, resumed bool, onCommit func(k int)) answers {
	switch proto.Name() {
	case protoPostgres:
		return &pgAnswers{started: resumed, onCommit: onCommit}
	case protoMySQL, protoFirebird:
		return newDecAnswers(proto, resumed, onCommit)
	}
	return nil
}

// replayedProtocol is the protocol of protos that replays c, or why none does.
func replayedProtocol(c *Conn, protos []wire.Protocol) (wire.Protocol, string) {
	for _, pr := range protos {
		if pr.Name() != c.Protocol {
			continue
		}
		if !replays(pr.Name()) {
			return nil, "dblat does not replay " + pr.Name()
		}
		return pr, ""
	}
	if c.Protocol == "" {
		return nil, "its protocol was not followed in the capture"
	}
	return nil, "dblat does not replay " + c.Protocol
}

// makePlan prepares a recorded connection for replay with the protocols known.
func makePlan(c *Conn, protos []wire.Protocol) *plan {
	p := &plan{conn: c, opened: c.Opened()}
	if len(c.Chunks) == 0 {
		p.why = "it sent nothing"
		return p
	}
	if p.proto, p.why = replayedProtocol(c, protos); p.proto == nil {
		return p
	}
	sink := &planSink{p: p, lex: p.proto.Lexicon()}
	var dec wire.Decoder
	if c.Resumed {
		r, ok := p.proto.(wire.Resumer)
		if !ok {
			p.why = "it was followed from its middle, which " + p.proto.Name() + " cannot be"
			return p
		}
		dec = r.ResumeScanner().Decoder(sink)
		sink.started = true
	} else {
		dec = p.proto.NewDecoder(sink)
	}
	// Firebird reports its start-up's operations (op_connect, op_attach) as requests: its
	// start-up ends with the server's answer to op_attach (or op_create).
	attached := -1
	if p.proto.Name() == protoFirebird && !c.Resumed {
		if attached = fbAttachAnswer(c); attached < 0 {
			p.why = "its attachment to the database is not in the capture"
			return p
		}
	}
	var at int64
	ans := newAnswers(p.proto, c.Resumed, func(int) { p.commitTimes = append(p.commitTimes, at) })
	if c.Resumed {
		ans.start()
	}
	var (
		first     = -1 // the first replayed chunk
		base      int  // completions before it
		lastSrv   int64
		lastCli   int64
		answered  bool
		haveSteps bool
	)
	for i, ch := range c.Chunks {
		sink.at = ch.At
		if ch.ToServer {
			before := sink.started
			status := sink.status
			completed := sink.completed
			dec.ClientData(ch.Data, ch.At)
			startup := !sink.started && !before
			if attached >= 0 {
				startup = i < attached
			}
			if !startup && first < 0 {
				ans.start()
			}
			ans.client(ch.Data)
			if startup {
				p.startup = append(p.startup, ch.Data)
				lastCli = ch.At
				continue
			}
			if first < 0 {
				first, base = i, completed
				lastSrv, answered = 0, false
			}
			ready := max(lastCli, lastSrv)
			st := step{data: ch.Data, at: ch.At, completed: completed - base, answered: answered && haveSteps,
				idle: status != wire.StatusInTx && status != wire.StatusFailed}
			if haveSteps {
				st.pause = max(0, ch.At-ready)
				if st.answered && lastSrv > lastCli {
					st.call = lastSrv - lastCli
				}
			}
			p.steps = append(p.steps, st)
			haveSteps = true
			lastCli, answered = ch.At, false
			continue
		}
		dec.ServerData(ch.Data, ch.At)
		at = ch.At
		ans.server(ch.Data)
		lastSrv, answered = ch.At, true
	}
	dec.Close(c.Closed)
	if first >= 0 {
		p.completions = sink.completed - base
	}
	if sink.stop != "" && len(p.steps) == 0 {
		p.why = "it could not be followed: " + sink.stop
		return p
	}
	if len(p.steps) == 0 {
		p.why = "it ran no request"
		return p
	}
	for i, o := range ans.take() {
		if i < len(p.reqs) {
			p.reqs[i].outcomes, p.reqs[i].answered = o, true
		}
	}
	if my, ok := ans.(*decAnswers); ok {
		p.stmtIDs = my.ids
	}
	if p.proto.Name() == protoFirebird {
		if v, t, ok := fbCaptured(c); ok {
			p.fb = [2]uint32{v, t}
		}
	}
	if p.proto.Name() == protoMySQL {
		if hs, ok := myCaptured(c); ok {
			p.my = hs
		} else if !c.Resumed {
			p.why = "its handshake response is not in the capture"
		}
	}
	return p
}

// Names of the protocols replayed (wire.Protocol.Name).
const (
	protoPostgres = "PostgreSQL"
	protoMySQL    = "MySQL/MariaDB"
	protoFirebird = "Firebird"
)

// replays reports whether the replay can open sessions of a protocol.
func replays(proto string) bool {
	return proto == protoPostgres || proto == protoMySQL || proto == protoFirebird
}
