package replay

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"
)

// connectTimeout bounds a session's connection and authentication.
const connectTimeout = 30 * time.Second

// minSleep is the shortest pause a session sleeps for: Go's timers round shorter sleeps up
// to about a millisecond (see package latency's doc), so shorter pauses are added up until
// they make one, and the session keeps the captured pauses in sum rather than each.
const minSleep = time.Millisecond

// carryLimit bounds the pauses a session carries inside a transaction (see send): a pause
// this long is the application's, and is slept where it was.
const carryLimit = 2 * time.Millisecond

// teeConn shows the session every byte it writes and reads: its own recording (observed
// once the replay has ended, out of the way of its round trips) and its answers.
type teeConn struct {
	net.Conn
	s *sess
}

func (c *teeConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.s.seen(false, b[:n])
	}
	return n, err
}

func (c *teeConn) Write(b []byte) (int, error) {
	// Shown before it goes: the answer cannot be read before the request is known.
	c.s.seen(true, b)
	return c.Conn.Write(b)
}

// seen handles bytes the session sent (toServer) or received.
func (s *sess) seen(toServer bool, b []byte) {
	t := time.Now()
	at := s.r.base.UnixNano() + int64(t.Sub(s.r.base))
	if s.firstAt.IsZero() {
		s.firstAt = t
	}
	s.lastAt = t
	s.mu.Lock()
	s.tape.Chunks = append(s.tape.Chunks, Chunk{ToServer: toServer, At: at, Data: append([]byte(nil), b...)})
	if toServer {
		s.ans.client(b)
	} else {
		s.srvChunks++
		s.lastSrv = t
		s.ans.server(b)
	}
	s.mu.Unlock()
}

// stop records why the session stopped before its end (the first reason only).
func (s *sess) stop(why string) {
	s.mu.Lock()
	if s.why == "" {
		s.why = why
	}
	s.mu.Unlock()
}

// run replays the session: it opens it when the capture's opened, authenticates as the
// target asks, and sends the client's messages as captured, each when what it waited for
// has come and after its pause.
func (s *sess) run(ctx context.Context) {
	r, p := s.r, s.p
	defer s.finishCommits()
	if !r.sleepUntil(ctx, p.opened) {
		s.stop("the replay was stopped before it opened")
		return
	}
	s.tape = &Conn{ID: p.conn.ID, Protocol: p.conn.Protocol}
	var addr string
	dial := func(ctx context.Context, network, a string) (net.Conn, error) {
		c, err := r.cfg.Dial(ctx, network, a)
		if err != nil {
			return nil, err
		}
		addr = a
		return &teeConn{Conn: c, s: s}, nil
	}
	s.ans = newAnswers(p.proto, false, s.onCommit)
	if da, ok := s.ans.(*decAnswers); ok {
		da.capIDs = p.stmtIDs
		da.onMismatch = func(c, got uint32) {
			r.note(fmt.Sprintf("a Firebird session's target gave handle %d where the captured server gave %d: dblat does not map Firebird's handles yet, and what follows may diverge", got, c))
		}
	}
	cctx, cancel := context.WithTimeout(ctx, connectTimeout)
	var (
		conn net.Conn
		err  error
	)
	switch p.proto.Name() {
	case protoPostgres:
		var pid uint32
		var key []byte
		conn, pid, key, err = pgConnect(cctx, r.cfg.DSN, pgStartup(p.startup), dial)
		if cpid, ckey := pgBackendKey(p.conn); err == nil && ckey != nil {
			r.keysMu.Lock()
			r.keys[keyString(cpid, ckey)] = cancelKey{pid, key, addr}
			r.keysMu.Unlock()
		}
	case protoMySQL:
		conn, err = myConnect(cctx, r.cfg.DSN, p.my, dial)
	case protoFirebird:
		conn, err = fbConnect(cctx, r.cfg.DSN, p.fb, dial)
	}
	cancel()
	if err != nil {
		s.stop("it could not connect to the target: " + err.Error())
		s.tape.Closed = r.now()
		r.note(s.why)
		return
	}
	_ = conn.SetDeadline(time.Time{})
	s.mu.Lock()
	s.ans.start()
	s.mu.Unlock()
	// The session reads on its own goroutine, as it waits: no hand-over between a reader
	// and a writer in each round trip. Stopping the replay closes the connection.
	defer context.AfterFunc(ctx, func() { conn.Close() })()
	s.buf = make([]byte, 64<<10)
	s.send(ctx, conn)
	conn.Close()
	s.tape.Closed = r.now()
	s.mu.Lock()
	if s.ans != nil {
		s.outcomes = s.ans.take()
	}
	s.mu.Unlock()
	if s.why != "" {
		r.note("a session stopped before its end: " + s.why)
	}
}

// send sends the session's steps, then waits for the answers the capture's server gave.
func (s *sess) send(ctx context.Context, conn net.Conn) {
	r, p := s.r, s.p
	var (
		srvAtSend int64
		lastSend  time.Time
		debt      time.Duration
	)
	for i, st := range p.steps {
		if !s.wait(ctx, conn, st.completed, st.answered, srvAtSend) {
			return
		}
		if r.cfg.OrderCommits && st.idle {
			if n := r.commitsBefore(st.at); !r.waitCommits(ctx, n, r.cfg.StallTimeout) {
				if ctx.Err() == nil {
					s.stop(fmt.Sprintf("a transaction waited %s for the commits before it in the capture", r.cfg.StallTimeout))
				}
				return
			}
		}
		switch {
		case i == 0:
			if !r.cfg.Fast && !r.sleepUntil(ctx, st.at) {
				return
			}
		case st.pause > 0 && !r.cfg.Fast:
			s.mu.Lock()
			ready, lastSrv := lastSend, s.lastSrv
			s.mu.Unlock()
			if lastSrv.After(ready) {
				ready = lastSrv
			}
			pause := r.pause(st.pause)
			if st.call > 0 && r.cfg.AutoCorrect && lastSrv.After(lastSend) {
				// The answer took longer than the capture's (and the link's RTT): the
				// client's pause after it is shortened by as much.
				if excess := lastSrv.Sub(lastSend) - r.scale(st.call) - r.rtt; excess > 0 {
					pause = max(0, pause-excess)
				}
			}
			if wait := time.Until(ready.Add(pause)); wait > 0 {
				debt += wait
			}
			// A pause shorter than minSleep inside a transaction is the client's own work
			// between two messages, which the replay's own work stands in for; it is
			// carried to the next point where no transaction is open, so that the session
			// keeps its pauses in sum without holding a transaction's locks longer.
			if debt >= minSleep && (st.idle || debt >= carryLimit) {
				t0 := time.Now()
				time.Sleep(debt)
				debt -= time.Since(t0)
				debt = max(debt, -minSleep)
			}
		}
		s.mu.Lock()
		srvAtSend = s.srvChunks
		s.mu.Unlock()
		data := st.data
		if rw, ok := s.ans.(rewriter); ok {
			s.mu.Lock()
			data = rw.rewrite(data)
			s.mu.Unlock()
		}
		if _, err := conn.Write(data); err != nil {
			s.stop("the target closed the connection: " + err.Error())
			return
		}
		lastSend = time.Now()
		s.mu.Lock()
		s.sent++
		s.mu.Unlock()
	}
	s.wait(ctx, conn, p.completions, false, 0)
}

// wait reads the target's answers until it has completed n requests since the first
// replayed message and, when answered, sent something since srvAtSend; false when the
// session cannot go on (the server closed the connection, it stalled, ctx ended).
func (s *sess) wait(ctx context.Context, conn net.Conn, n int, answered bool, srvAtSend int64) bool {
	deadline := false
	for {
		s.mu.Lock()
		ok := s.ans.completed() >= n && (!answered || s.srvChunks > srvAtSend)
		s.mu.Unlock()
		if ok {
			return true
		}
		if !deadline {
			_ = conn.SetReadDeadline(time.Now().Add(s.r.cfg.StallTimeout))
			deadline = true
		}
		if _, err := conn.Read(s.buf); err != nil {
			var ne net.Error
			switch {
			case ctx.Err() != nil:
				s.stop("the replay was stopped")
			case errors.As(err, &ne) && ne.Timeout():
				s.stop(fmt.Sprintf("the target did not answer within %s as the capture's server did", s.r.cfg.StallTimeout))
			default:
				s.stop("the target closed the connection before answering as the capture's server did")
			}
			return false
		}
	}
}

// onCommit is the replay's sink's: the session's k-th commit is replayed (under s.mu).
func (s *sess) onCommit(k int) {
	if k < len(s.p.commitTimes) {
		s.r.committed(s.p.commitTimes[k])
	}
	s.commits = k + 1
}

// finishCommits marks the session's commits that were not replayed as done, so that no
// other session waits for them.
func (s *sess) finishCommits() {
	s.mu.Lock()
	from := s.commits
	s.mu.Unlock()
	for _, at := range s.p.commitTimes[min(from, len(s.p.commitTimes)):] {
		s.r.committed(at)
	}
}
