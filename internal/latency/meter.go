package latency

import (
	"io"
	"net"
	"sync/atomic"
)

// Counts is what a Meter has seen on one connection or a set of connections. "Up" is the
// client→server direction, "Down" server→client.
type Counts struct {
	// RoundTrips counts turns of the conversation: server→client data that follows at least
	// one client→server chunk since the previous server→client chunk. A request answered
	// in several chunks is one round trip; a pipelined batch of requests answered together
	// is one round trip too, which is what it costs in latency.
	RoundTrips int64 `json:"round_trips"`
	// BytesUp and BytesDown are payload bytes in each direction.
	BytesUp   int64 `json:"bytes_up"`
	BytesDown int64 `json:"bytes_down"`
	// ChunksUp and ChunksDown count the pieces the bytes came in: on the link, one read from
	// the sender (roughly one send by it when it is not saturating the link); on a
	// MeteredConn, one Write call (up) and one Read call that returned data (down).
	ChunksUp   int64 `json:"chunks_up"`
	ChunksDown int64 `json:"chunks_down"`
}

// Add returns c+d, field by field.
func (c Counts) Add(d Counts) Counts {
	return Counts{c.RoundTrips + d.RoundTrips, c.BytesUp + d.BytesUp, c.BytesDown + d.BytesDown,
		c.ChunksUp + d.ChunksUp, c.ChunksDown + d.ChunksDown}
}

// Sub returns c−d, field by field: the traffic between two snapshots when d was taken first.
func (c Counts) Sub(d Counts) Counts {
	return Counts{c.RoundTrips - d.RoundTrips, c.BytesUp - d.BytesUp, c.BytesDown - d.BytesDown,
		c.ChunksUp - d.ChunksUp, c.ChunksDown - d.ChunksDown}
}

// Meter counts round trips, bytes and chunks of one conversation. The zero value is ready.
// All methods are safe for concurrent use and never block; Up and Down are each expected
// to be called from one goroutine at a time (the one sending, the one receiving), which is
// what makes "turn" well defined.
type Meter struct {
	roundTrips, bytesUp, bytesDown, chunksUp, chunksDown atomic.Int64
	// upSinceDown is set by Up and cleared by Down; a Down that clears it is a new turn.
	upSinceDown atomic.Bool
}

// Up records a client→server chunk of n bytes (n <= 0 is ignored). Call it before the bytes
// can reach the server (before the write): a reply that arrives before the write call
// returns must find the turn already open.
func (m *Meter) Up(n int) {
	if n <= 0 {
		return
	}
	m.bytesUp.Add(int64(n))
	m.chunksUp.Add(1)
	if !m.upSinceDown.Load() { // avoid dirtying the cache line on every chunk of a stream
		m.upSinceDown.Store(true)
	}
}

// Down records a server→client chunk of n bytes (n <= 0 is ignored), counting a round trip
// when it is the first since a client→server chunk.
func (m *Meter) Down(n int) {
	if n <= 0 {
		return
	}
	m.bytesDown.Add(int64(n))
	m.chunksDown.Add(1)
	if m.upSinceDown.Load() && m.upSinceDown.Swap(false) {
		m.roundTrips.Add(1)
	}
}

// Snapshot returns the counts so far. Fields are read one by one, so a snapshot taken while
// traffic flows may be off by the chunk in flight; snapshots taken when the connection is idle
// (between transactions) are exact.
func (m *Meter) Snapshot() Counts {
	return Counts{
		RoundTrips: m.roundTrips.Load(),
		BytesUp:    m.bytesUp.Load(),
		BytesDown:  m.bytesDown.Load(),
		ChunksUp:   m.chunksUp.Load(),
		ChunksDown: m.chunksDown.Load(),
	}
}

// MeteredConn is a net.Conn that counts, as the client sees them, the round trips, bytes and
// chunks that pass through it: each Write is an up chunk, each Read that returns data a down
// chunk, and a Read that returns data after at least one Write since the previous data-
// returning Read is a round trip. It is as safe for concurrent use as the conn it wraps.
type MeteredConn struct {
	net.Conn
	meter Meter
	r     io.Reader // Conn's reads (quickIO)
	w     io.Writer // Conn's writes (quickIO)
}

// MeterConn wraps c so that its traffic is counted. The runner wraps every database
// connection with it (through the driver's dialer) and snapshots Counts before and after each
// transaction.
func MeterConn(c net.Conn) *MeteredConn {
	r, w := quickIO(c)
	return &MeteredConn{Conn: c, r: r, w: w}
}

// Read reads from the wrapped conn and counts the bytes returned.
func (c *MeteredConn) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.meter.Down(n)
	return n, err
}

// Write writes to the wrapped conn and counts the bytes accepted. The chunk is counted
// before the write (see Meter.Up) and corrected if the write fails part-way.
func (c *MeteredConn) Write(p []byte) (int, error) {
	c.meter.Up(len(p))
	n, err := c.w.Write(p)
	if n < len(p) {
		c.meter.bytesUp.Add(int64(n - len(p)))
	}
	return n, err
}

// Counts returns the traffic so far (see Meter.Snapshot).
func (c *MeteredConn) Counts() Counts { return c.meter.Snapshot() }

// Unwrap returns the wrapped conn.
func (c *MeteredConn) Unwrap() net.Conn { return c.Conn }
