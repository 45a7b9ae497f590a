package latency

import (
	"bytes"
	"io"
	"sync"
	"testing"
	"time"
)

// recorder is an Observer that keeps every chunk it is shown and, for the test of Alter,
// answers a client chunk "ping?" itself and replaces a client chunk "old" by "new!".
type recorder struct {
	mu     sync.Mutex
	conns  []*connRecord
	closed chan struct{}
}

type connRecord struct {
	r        *recorder
	mu       sync.Mutex
	up, down bytes.Buffer
	lastAt   [2]int64
	ordered  bool // arrival times never went backwards, per direction
	closes   int
}

func (r *recorder) Open() ConnObserver {
	c := &connRecord{r: r, ordered: true}
	r.mu.Lock()
	r.conns = append(r.conns, c)
	r.mu.Unlock()
	return c
}

func (c *connRecord) Data(toServer bool, b []byte, at int64) Alter {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := 1
	if toServer {
		d = 0
	}
	if at < c.lastAt[d] {
		c.ordered = false
	}
	c.lastAt[d] = at
	switch {
	case toServer && string(b) == "ping?":
		return Alter{Answer: []byte("pong!")}
	case toServer && string(b) == "old":
		c.up.WriteString("new!")
		return Alter{Replace: []byte("new!")}
	}
	if toServer {
		c.up.Write(b)
	} else {
		c.down.Write(b)
	}
	return Alter{}
}

func (c *connRecord) Close(int64) {
	c.mu.Lock()
	c.closes++
	c.mu.Unlock()
	c.r.closed <- struct{}{}
}

// TestObserver: an observer sees every byte each way, in order, before the other side does;
// the bytes forwarded are the bytes read unless it alters them; Close is called once.
func TestObserver(t *testing.T) {
	for _, lc := range linkConfigs {
		t.Run(lc.name, func(t *testing.T) {
			s := startServer(t, echo)
			rec := &recorder{closed: make(chan struct{}, 4)}
			l, err := Listen(t.Context(), "", s.addr(), lc.cfg, WithObserver(rec))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { l.Close() })
			c := dial(t, l.Addr())
			var sent bytes.Buffer
			for i := range 50 {
				msg := bytes.Repeat([]byte{byte('a' + i%26)}, 1+i*37)
				sent.Write(msg)
				if _, err := c.Write(msg); err != nil {
					t.Fatal(err)
				}
				got := make([]byte, len(msg))
				if _, err := io.ReadFull(c, got); err != nil || !bytes.Equal(got, msg) {
					t.Fatalf("message %d: echoed %d bytes unlike those sent (%v)", i, len(got), err)
				}
			}
			// Answered by the observer: the server never sees it.
			if _, err := c.Write([]byte("ping?")); err != nil {
				t.Fatal(err)
			}
			got := make([]byte, 5)
			if _, err := io.ReadFull(c, got); err != nil || string(got) != "pong!" {
				t.Fatalf("answer %q, %v", got, err)
			}
			// Replaced: the server sees, and echoes, the replacement.
			if _, err := c.Write([]byte("old")); err != nil {
				t.Fatal(err)
			}
			got = make([]byte, 4)
			if _, err := io.ReadFull(c, got); err != nil || string(got) != "new!" {
				t.Fatalf("replacement echoed as %q, %v", got, err)
			}
			sent.WriteString("new!")
			c.Close()
			select {
			case <-rec.closed:
			case <-time.After(10 * time.Second):
				t.Fatal("the observer's Close was not called")
			}
			cr := rec.conns[0]
			cr.mu.Lock()
			defer cr.mu.Unlock()
			if !bytes.Equal(cr.up.Bytes(), sent.Bytes()) || !bytes.Equal(cr.down.Bytes(), sent.Bytes()) {
				t.Errorf("observed %d bytes up and %d down, want %d each, the same bytes", cr.up.Len(), cr.down.Len(), sent.Len())
			}
			if !cr.ordered {
				t.Error("arrival times went backwards within a direction")
			}
			if cr.closes != 1 {
				t.Errorf("Close called %d times", cr.closes)
			}
			if tot := l.Totals(); tot.BytesUp != int64(sent.Len()) {
				t.Errorf("link counted %d bytes up, want the %d forwarded", tot.BytesUp, sent.Len())
			}
		})
	}
}

// TestObserverOrder: a reply is shown after the request it answers, even on two
// goroutines: the server answers each client chunk, and the observer must never see more
// server bytes than client bytes.
func TestObserverOrder(t *testing.T) {
	for _, lc := range linkConfigs[:2] {
		t.Run(lc.name, func(t *testing.T) {
			s := startServer(t, echo)
			var mu sync.Mutex
			var up, down int
			bad := false
			obs := observerFunc(func(toServer bool, b []byte) {
				mu.Lock()
				defer mu.Unlock()
				if toServer {
					up += len(b)
				} else {
					down += len(b)
					if down > up {
						bad = true
					}
				}
			})
			l, err := Listen(t.Context(), "", s.addr(), lc.cfg, WithObserver(obs))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { l.Close() })
			c := dial(t, l.Addr())
			buf := make([]byte, 64)
			for range 200 {
				if _, err := c.Write(buf[:10]); err != nil {
					t.Fatal(err)
				}
				if _, err := io.ReadFull(c, buf[:10]); err != nil {
					t.Fatal(err)
				}
			}
			c.Close()
			mu.Lock()
			defer mu.Unlock()
			if bad {
				t.Error("a reply was shown to the observer before its request")
			}
		})
	}
}

type observerFunc func(toServer bool, b []byte)

func (f observerFunc) Open() ConnObserver { return f }
func (f observerFunc) Data(toServer bool, b []byte, _ int64) Alter {
	f(toServer, b)
	return Alter{}
}
func (f observerFunc) Close(int64) {}
