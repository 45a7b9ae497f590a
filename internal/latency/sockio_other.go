//go:build !linux

package latency

import "net"

// reader reads chunks from one connection with Read; kernel receive timestamps are used on
// Linux only. A reader is used by one goroutine.
type reader struct {
	conn net.Conn
	clk  clock
}

func newReader(c net.Conn, clk clock, _ bool) *reader { return &reader{conn: c, clk: clk} }

// read reads at most limit bytes into a pooled buffer (nil when n == 0) and stamps them
// with the clock's now.
func (r *reader) read(limit int) (*[]byte, int, int64, error) { return r.plainRead(limit) }
