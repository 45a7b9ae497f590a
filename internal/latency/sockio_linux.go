//go:build linux

package latency

import (
	"net"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// reader reads chunks from one socket. On a TCP socket it uses recvmsg with SO_TIMESTAMPNS,
// so each chunk comes with the time its last byte reached the socket (the kernel's receive
// timestamp), not the later time the goroutine woke up to read it. The difference is the
// netpoller wake-up latency, 30-85 µs on an idle VM here, which would otherwise be added to
// every delay. It also takes a buffer from the pool only once data is there, so idle
// connections hold none. Other net.Conns fall back to Read and the clock's now.
// A reader is used by one goroutine.
type reader struct {
	conn   net.Conn
	clk    clock
	rc     syscall.RawConn // nil: plain Read
	fn     func(fd uintptr) bool
	stamps bool // SO_TIMESTAMPNS is on
	buf    *[]byte
	limit  int
	n      int
	wall   int64 // kernel receive timestamp (CLOCK_REALTIME ns) or 0
	errno  syscall.Errno
	msg    unix.Msghdr
	iov    unix.Iovec
	oob    [8]uint64 // room for one SCM_TIMESTAMPNS message (16-byte header + 16-byte timespec), 8-aligned
}

// newReader returns a reader for c; stamps asks for kernel receive timestamps (only delay
// lines use them; a pass-through direction does not pay for the control message).
func newReader(c net.Conn, clk clock, stamps bool) *reader {
	r := &reader{conn: c, clk: clk}
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return r
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return r
	}
	if stamps {
		var serr error
		if err := rc.Control(func(fd uintptr) {
			serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
		}); err == nil && serr == nil {
			r.stamps = true
		}
	}
	r.rc = rc
	r.fn = r.recv
	return r
}

// recv is the RawConn.Read callback: one non-blocking recvmsg.
func (r *reader) recv(fd uintptr) bool {
	if r.buf == nil {
		r.buf = getBuf(maxChunk)
	}
	b := *r.buf
	r.iov.Base = &b[0]
	r.iov.SetLen(r.limit)
	r.msg.Iov = &r.iov
	r.msg.Iovlen = 1
	if r.stamps {
		r.msg.Control = (*byte)(unsafe.Pointer(&r.oob[0]))
		r.msg.SetControllen(len(r.oob) * 8)
	}
	for {
		// RawSyscall, as sysRead and for its reasons: a non-blocking recvmsg never waits.
		n, _, e := unix.RawSyscall(unix.SYS_RECVMSG, fd, uintptr(unsafe.Pointer(&r.msg)), unix.MSG_CMSG_CLOEXEC)
		switch e {
		case 0:
			r.n, r.errno, r.wall = int(n), 0, 0
			if r.stamps {
				r.wall = r.timestamp()
			}
			return true
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			// Nothing to read: give the buffer back while the netpoller waits.
			putBuf(r.buf)
			r.buf = nil
			return false
		default:
			r.n, r.errno = 0, e
			return true
		}
	}
}

// timestamp extracts the SCM_TIMESTAMPNS control message of the last recvmsg, or 0.
func (r *reader) timestamp() int64 {
	oob := unsafe.Slice((*byte)(unsafe.Pointer(&r.oob[0])), len(r.oob)*8)[:r.msg.Controllen]
	for len(oob) >= unix.SizeofCmsghdr {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
		if h.Len < unix.SizeofCmsghdr || int(h.Len) > len(oob) {
			return 0
		}
		if h.Level == unix.SOL_SOCKET && h.Type == unix.SO_TIMESTAMPNS &&
			int(h.Len) >= unix.CmsgLen(int(unsafe.Sizeof(unix.Timespec{}))) {
			ts := (*unix.Timespec)(unsafe.Pointer(&oob[unix.CmsgLen(0)]))
			return ts.Nano()
		}
		oob = oob[min(unix.CmsgSpace(int(h.Len)-unix.CmsgLen(0)), len(oob)):]
	}
	return 0
}

// read reads at most limit bytes. It returns a pooled buffer holding n > 0 bytes (nil when
// n == 0), the arrival time of the data on the reader's clock, and io.EOF at end of stream.
func (r *reader) read(limit int) (b *[]byte, n int, at int64, err error) {
	if r.rc == nil {
		return r.plainRead(limit)
	}
	r.limit = limit
	if err := r.rc.Read(r.fn); err != nil {
		if r.buf != nil {
			putBuf(r.buf)
			r.buf = nil
		}
		return nil, 0, 0, err
	}
	now := r.clk.now()
	if r.errno != 0 {
		return nil, 0, now, &net.OpError{Op: "read", Net: "tcp", Source: r.conn.LocalAddr(), Addr: r.conn.RemoteAddr(), Err: r.errno}
	}
	if r.n == 0 {
		putBuf(r.buf)
		r.buf = nil
		return nil, 0, now, eof
	}
	b, r.buf = r.buf, nil
	at = now
	if r.wall != 0 {
		// A stamp in the future or more than a second old means the wall clock was stepped
		// between the kernel's stamp and now; then now is the better guess.
		if t, ok := r.clk.fromWall(r.wall); ok && t <= now && now-t < 1e9 {
			at = t
		}
	}
	return b, r.n, at, nil
}
