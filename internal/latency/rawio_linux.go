package latency

import (
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"unsafe"
)

// quickIO returns the reader and the writer of c's traffic: for a TCP or Unix socket
// (non-blocking, like every socket of package net) a rawSocket, which calls read(2) and
// write(2) without telling the Go scheduler a system call is under way (see sysWrite),
// otherwise c itself twice.
func quickIO(c net.Conn) (io.Reader, io.Writer) {
	var sc syscall.Conn
	switch s := c.(type) {
	case *net.TCPConn:
		sc = s
	case *net.UnixConn:
		sc = s
	default:
		return c, c
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return c, c
	}
	s := &rawSocket{c: c, rc: rc}
	s.r.fn, s.w.fn = s.read, s.write
	return rawReader{s}, rawWriter{s}
}

// rawSocket reads and writes a non-blocking socket with sysRead and sysWrite, and waits in
// the poller only when there is nothing to read or no room to write; deadlines apply as to
// net.Conn's Read and Write. One Read and one Write may run at the same time, as on a
// net.Conn; concurrent Reads (or Writes) go one after the other.
type rawSocket struct {
	c  net.Conn // for errors: its network and addresses
	rc syscall.RawConn
	r  rawOp
	w  rawOp
}

// rawOp is the state of the Read or the Write under way.
type rawOp struct {
	mu    sync.Mutex
	fn    func(fd uintptr) bool // the RawConn callback, bound once
	p     []byte
	n     int
	errno syscall.Errno
}

// rawReader is a rawSocket's io.Reader.
type rawReader struct{ s *rawSocket }

// rawWriter is a rawSocket's io.Writer.
type rawWriter struct{ s *rawSocket }

// Read implements io.Reader like net.Conn's Read: io.EOF at the end of the stream.
func (r rawReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	s := r.s
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	n, err := s.do(&s.r, "read", p)
	if err == nil && n == 0 {
		err = io.EOF
	}
	return n, err
}

// Write implements io.Writer like net.Conn's Write: all of p, or an error.
func (w rawWriter) Write(p []byte) (int, error) {
	s := w.s
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	return s.do(&s.w, "write", p)
}

// do runs op on p through the RawConn and returns what it did, with a failure wrapped as
// net.Conn wraps it.
func (s *rawSocket) do(op *rawOp, name string, p []byte) (int, error) {
	op.p, op.n, op.errno = p, 0, 0
	var err error
	if name == "read" {
		err = s.rc.Read(op.fn)
	} else {
		err = s.rc.Write(op.fn)
	}
	n := op.n
	if err == nil && op.errno != 0 {
		err = os.NewSyscallError(name, op.errno)
	}
	op.p = nil
	if err != nil {
		err = &net.OpError{Op: name, Net: s.c.LocalAddr().Network(), Source: s.c.LocalAddr(), Addr: s.c.RemoteAddr(), Err: err}
	}
	return n, err
}

// read is the RawConn.Read callback: one read, or false to wait for data.
func (s *rawSocket) read(fd uintptr) bool {
	n, errno := sysRead(fd, s.r.p)
	switch errno {
	case 0:
		s.r.n = n
	case syscall.EAGAIN:
		return false
	default:
		s.r.errno = errno
	}
	return true
}

// write is the RawConn.Write callback: it writes what is left until done, the buffer is
// full (false: wait for room) or an error.
func (s *rawSocket) write(fd uintptr) bool {
	for s.w.n < len(s.w.p) {
		n, errno := sysWrite(fd, s.w.p[s.w.n:])
		switch errno {
		case 0:
			s.w.n += n
		case syscall.EAGAIN:
			return false
		default:
			s.w.errno = errno
			return true
		}
	}
	return true
}

// sysWrite is write(2) on the non-blocking socket fd, made with RawSyscall: the goroutine
// keeps its P while the kernel works, and the scheduler is not told. A write to a socket
// on this machine is not short — the kernel hands the bytes to the receiver inline and
// wakes it, ~10 µs here — and when a system call lasts past one of its 20 µs ticks, Go's
// monitor thread (sysmon) gives the P to another thread. Worse, a system call entered
// while every P is idle wakes sysmon from its long sleep and sets it polling every 20 µs
// again: a client that waits for its server between round trips pays that wake-up on
// nearly every round trip (see sysRead). A non-blocking call never waits, so holding the P
// costs nothing. EINTR is retried.
func sysWrite(fd uintptr, p []byte) (int, syscall.Errno) {
	if len(p) == 0 {
		return 0, 0
	}
	for {
		n, _, errno := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
		if errno != syscall.EINTR {
			return int(n), errno
		}
	}
}

// sysRead is read(2) on the non-blocking socket fd, made with RawSyscall for sysWrite's
// reasons. The read that follows a wait in the poller is the first thing a goroutine does
// when its server answers, most often on a P that was idle a moment before, and as a
// system call it woke sysmon nearly every round trip. pgbench's tpcb-like, 8 clients on one
// branch, from a bare pgconn client: 238-264 µs of client CPU per transaction with
// net.Conn's reads, 177-190 µs with these (pgbench itself 128-141 µs), and 8 context
// switches per transaction instead of 13; from dblat's script workload, 208-280 → 154-213
// µs. EINTR is retried.
func sysRead(fd uintptr, p []byte) (int, syscall.Errno) {
	for {
		n, _, errno := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
		if errno != syscall.EINTR {
			return int(n), errno
		}
	}
}
