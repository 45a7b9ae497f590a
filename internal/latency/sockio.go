package latency

import (
	"io"
	"net"
)

// eof is io.EOF, named for the readers.
var eof = io.EOF

// plainRead is the portable read path: a pooled buffer, Read, and the clock's now.
func (r *reader) plainRead(limit int) (*[]byte, int, int64, error) {
	b := getBuf(maxChunk)
	n, err := r.conn.Read((*b)[:limit])
	at := r.clk.now()
	if n == 0 {
		putBuf(b)
		b = nil
	}
	return b, n, at, err
}

// closeWrite half-closes c (sends FIN) when it can; otherwise it closes c.
func closeWrite(c net.Conn) error {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Close()
}

// abortive arranges for c's Close to send RST instead of FIN (SO_LINGER 0), so that the
// peer sees "connection reset" when its counterpart on the other side of the link reset.
func abortive(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
}
