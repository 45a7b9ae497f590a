package replay

import (
	"context"
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

// teeConn shows the session every byte it writes and reads: the replay's own observation,
// its decoder and its answers.
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
	at := s.r.now()
	s.mu.Lock()
	s.co.Data(toServer, b, at)
	if toServer {
		s.dec.ClientData(b, at)
	} else {
		s.dec.ServerData(b, at)
		s.srvChunks++
		s.lastSrv = t
		if s.live && s.ans != nil {
			s.ans.server(b)
		}
	}
	s.mu.Unlock()
	s.r.activity(t)
	s.wake()
}

func (s *sess) wake() {
	select {
	case s.notify <- struct{}{}:
	default:
	}
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
	s.sink = &planSink{p: &plan{}, onCommit: s.onCommit}
	s.dec = p.proto.NewDecoder(s.sink)
	s.co = r.obs.Open()
	dial := func(ctx context.Context) (net.Conn, error) {
		c, err := r.cfg.Dial(ctx)
		if err != nil {
			return nil, err
		}
		return &teeConn{Conn: c, s: s}, nil
	}
	cctx, cancel := context.WithTimeout(ctx, connectTimeout)
	conn, pid, key, err := pgConnect(cctx, r.cfg.DSN, pgStartup(p.startup), dial)
	cancel()
	if err != nil {
		s.stop("it could not connect to the target: " + err.Error())
		s.co.Close(r.now())
		r.note(s.why)
		return
	}
	if cpid, ckey := pgBackendKey(p.conn); ckey != nil {
		r.keysMu.Lock()
		r.keys[keyString(cpid, ckey)] = [2]any{pid, key}
		r.keysMu.Unlock()
	}
	_ = conn.SetDeadline(time.Time{})
	s.mu.Lock()
	s.live, s.base, s.ans = true, s.sink.completed, newAnswers(p.proto.Name())
	s.mu.Unlock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 64<<10)
		for {
			if _, err := conn.Read(buf); err != nil {
				s.mu.Lock()
				s.eof = true
				s.mu.Unlock()
				s.wake()
				return
			}
		}
	}()
	s.send(ctx, conn)
	conn.Close()
	<-done
	s.co.Close(r.now())
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
		if !s.wait(ctx, st.completed, st.answered, srvAtSend) {
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
			ready := lastSend
			if s.lastSrv.After(ready) {
				ready = s.lastSrv
			}
			s.mu.Unlock()
			wait := time.Until(ready.Add(r.pause(st.pause)))
			if wait > 0 {
				debt += wait
			}
			if debt >= minSleep {
				t0 := time.Now()
				time.Sleep(debt)
				debt -= time.Since(t0)
				debt = max(debt, -minSleep)
			}
		}
		s.mu.Lock()
		srvAtSend = s.srvChunks
		s.mu.Unlock()
		if _, err := conn.Write(st.data); err != nil {
			s.stop("the target closed the connection: " + err.Error())
			return
		}
		lastSend = time.Now()
		s.mu.Lock()
		s.sent++
		s.mu.Unlock()
	}
	s.wait(ctx, p.completions, false, 0)
}

// wait waits until the replay's server has completed n requests since the first replayed
// message and, when answered, sent something since srvAtSend; false when the session
// cannot go on (the server closed the connection, it stalled, ctx ended).
func (s *sess) wait(ctx context.Context, n int, answered bool, srvAtSend int64) bool {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		s.mu.Lock()
		ok := s.sink.completed-s.base >= n && (!answered || s.srvChunks > srvAtSend)
		eof := s.eof
		s.mu.Unlock()
		if ok {
			return true
		}
		if eof {
			s.stop("the target closed the connection before answering as the capture's server did")
			return false
		}
		if timer == nil {
			timer = time.NewTimer(s.r.cfg.StallTimeout)
		}
		select {
		case <-s.notify:
		case <-timer.C:
			s.stop(fmt.Sprintf("the target did not answer within %s as the capture's server did", s.r.cfg.StallTimeout))
			return false
		case <-ctx.Done():
			s.stop("the replay was stopped")
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
