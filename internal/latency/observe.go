package latency

// Observer watches the connections of a link started with Listen and WithObserver: it is
// shown every chunk the link reads, without knowing or caring what protocol it carries
// (package observe follows database protocols with it; this package knows no database).
//
// Open is called once per accepted connection, after its upstream is dialled and before any
// of its data passes, from the connection's goroutine; it returns what watches that
// connection, or nil to leave it unwatched. Open must be safe for concurrent use.
type Observer interface {
	Open() ConnObserver
}

// ConnObserver watches one connection.
//
// The link calls Data with every chunk it reads, on the goroutine that read it, before the
// chunk can reach the other side (before it is written on, or queued in a delay line): a
// reply is therefore always shown after the request it answers. The two directions are
// read by two goroutines, so Data is called concurrently for the two directions and the
// ConnObserver serialises them itself. toServer is true for client→server chunks; at is
// the chunk's arrival on the link's clock, in nanoseconds (the kernel's receive timestamp
// where there is one). Data must not block, and must not retain b after it returns.
//
// Data returns what to do with the chunk: the zero Alter forwards it unchanged, which is
// what an observer does with every chunk but the few it must change (a TLS request declined
// during a handshake). The link never changes a byte otherwise.
//
// Close is called once, when both directions have ended, with the time; no Data follows.
type ConnObserver interface {
	Data(toServer bool, b []byte, at int64) Alter
	Close(at int64)
}

// Alter is a ConnObserver's instruction for one chunk; the zero value forwards it.
type Alter struct {
	// Replace, when not nil, is forwarded instead of the chunk.
	Replace []byte
	// Answer, when not nil, is sent back to the chunk's sender, and nothing is forwarded.
	Answer []byte
}

// ListenOption adds to what Listen starts.
type ListenOption func(*listenOptions)

type listenOptions struct {
	obs Observer
}

// WithObserver has obs watch every connection the link accepts (see Observer). A link
// without one has no observation code on its data path but a nil check per chunk.
func WithObserver(obs Observer) ListenOption {
	return func(o *listenOptions) { o.obs = obs }
}

// observed shows a chunk of n bytes in *b (a pooled buffer) to the connection's observer
// and applies its answer: it returns the buffer and length to forward, or ok false when
// nothing is to be forwarded (the observer answered the sender, or replaced the chunk by
// nothing). The buffer may be replaced; the one returned is still the caller's to recycle.
func (x *direction) observed(ob ConnObserver, b *[]byte, n int, at int64) (*[]byte, int, bool) {
	a := ob.Data(x.d == up, (*b)[:n], at)
	switch {
	case a.Answer != nil:
		// Written on this goroutine: answers are given during a handshake, before the other
		// side has anything to send (PostgreSQL's SSLRequest), and net.Conn serialises
		// concurrent writes anyway.
		if len(a.Answer) > 0 {
			if _, err := x.src.Write(a.Answer); err != nil {
				x.c.teardown(true)
			}
		}
		return b, 0, false
	case a.Replace != nil:
		if len(a.Replace) == 0 {
			return b, 0, false
		}
		if len(a.Replace) > cap(*b) {
			nb := make([]byte, len(a.Replace)) // not pooled: putBuf drops it
			putBuf(b)
			b = &nb
		}
		return b, copy((*b)[:cap(*b)], a.Replace), true
	}
	return b, n, true
}
