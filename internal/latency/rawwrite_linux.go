package latency

import (
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"unsafe"
)

// quickWrites returns the writer of c's writes: for a TCP or Unix socket (non-blocking,
// like every socket of package net) one that calls write(2) without telling the Go
// scheduler a system call is under way (see sysWrite), otherwise c itself.
func quickWrites(c net.Conn) io.Writer {
	var sc syscall.Conn
	switch s := c.(type) {
	case *net.TCPConn:
		sc = s
	case *net.UnixConn:
		sc = s
	default:
		return c
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return c
	}
	w := &rawWriter{rc: rc, network: c.LocalAddr().Network()}
	w.fn = w.write
	return w
}

// rawWriter writes to a non-blocking socket with sysWrite, and waits in the poller only
// while the socket's send buffer is full (deadlines apply as to net.Conn.Write).
type rawWriter struct {
	rc      syscall.RawConn
	network string                // for errors: "tcp" or "unix"
	fn      func(fd uintptr) bool // write, bound once
	mu      sync.Mutex            // one Write at a time: the fields below are its state
	p       []byte
	written int
	errno   syscall.Errno
}

// Write implements io.Writer; concurrent Writes go one after the other, as net.Conn's do.
func (w *rawWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.p, w.written, w.errno = p, 0, 0
	err := w.rc.Write(w.fn)
	n := w.written
	if err == nil && w.errno != 0 {
		err = &net.OpError{Op: "write", Net: w.network, Err: os.NewSyscallError("write", w.errno)}
	}
	w.p = nil
	return n, err
}

// write is the RawConn.Write callback: it writes what is left until done, the buffer is
// full (false: wait for room) or an error.
func (w *rawWriter) write(fd uintptr) bool {
	for w.written < len(w.p) {
		n, errno := sysWrite(fd, w.p[w.written:])
		switch errno {
		case 0:
			w.written += n
		case syscall.EAGAIN:
			return false
		default:
			w.errno = errno
			return true
		}
	}
	return true
}

// sysWrite is write(2) on the non-blocking socket fd, made with RawSyscall: the goroutine
// keeps its P while the kernel works. A write to a socket on this machine is not short —
// the kernel hands the bytes to the receiver inline and wakes it, ~10 µs here — and when a
// system call lasts past one of its 20 µs ticks, Go's monitor thread gives the P to
// another thread and keeps waking every 20 µs: context switches that cost a TPC-C or
// pgbench-like client 12–15 % of its CPU per transaction (BenchmarkClientCPU). A
// non-blocking write never waits, so holding the P costs nothing. EINTR is retried.
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
