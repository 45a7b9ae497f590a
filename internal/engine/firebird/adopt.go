package firebird

import (
	"bufio"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"reflect"
	"sync"
	"sync/atomic"
	"time"
	"unsafe" // to reach the driver's unexported wire channel (see wireOf)
)

// The driver (github.com/nakagami/firebirdsql v0.9.23) dials the server itself, so a
// connection that must go through Open's Dial (metered, or through the latency link) is
// first bridged: the driver connects to a one-shot loopback listener and a pair of goroutines
// copy bytes between that socket and the Dial-ed connection. Once the driver has attached,
// the bridge is taken out: the driver's wire channel is pointed at the Dial-ed connection
// and the loopback socket is closed. Every round trip then costs what it costs on
// PostgreSQL's and MariaDB's drivers, which take a dialer, instead of two more socket
// writes, two more reads and two goroutine wake-ups: a Firebird TPC-C client spent 61.6 µs
// of CPU per round trip through the bridge, 52.5 µs without (BenchmarkClientCPU, medians of
// 3, same sitting), and the bridge's time was added, unmeasured, to every round trip through
// the link. Where the channel cannot be reached (another driver version) or is not idle,
// the bridge stays.

// driverWire is the driver connection's wire channel: the fields of its unexported wireChannel
// that carry bytes.
type driverWire struct {
	conn       reflect.Value // net.Conn
	reader     reflect.Value // *bufio.Reader
	writer     reflect.Value // *bufio.Writer
	compressed bool
}

// wireOf returns the wire channel of one of the driver's connections (*firebirdsqlConn:
// field wp, a *wireProtocol, whose field conn is the wireChannel), or false.
func wireOf(dc driver.Conn) (driverWire, bool) {
	v := reflect.ValueOf(dc)
	if v.Kind() != reflect.Pointer || v.Type().String() != driverConnType || v.IsNil() {
		return driverWire{}, false
	}
	wp := v.Elem().FieldByName("wp")
	if !wp.IsValid() || wp.Kind() != reflect.Pointer || wp.IsNil() {
		return driverWire{}, false
	}
	ch := wp.Elem().FieldByName("conn")
	if !ch.IsValid() || ch.Kind() != reflect.Struct {
		return driverWire{}, false
	}
	field := func(name string, t reflect.Type) reflect.Value {
		f := ch.FieldByName(name)
		if !f.IsValid() || f.Type() != t {
			return reflect.Value{}
		}
		return reflect.NewAt(t, unsafe.Pointer(f.UnsafeAddr())).Elem()
	}
	w := driverWire{
		conn:   field("conn", reflect.TypeFor[net.Conn]()),
		reader: field("reader", reflect.TypeFor[*bufio.Reader]()),
		writer: field("writer", reflect.TypeFor[*bufio.Writer]()),
	}
	comp := ch.FieldByName("compressor")
	if !w.conn.IsValid() || !w.reader.IsValid() || !w.writer.IsValid() || !comp.IsValid() || comp.Kind() != reflect.Pointer {
		return driverWire{}, false
	}
	w.compressed = !comp.IsNil()
	return w, true
}

// idle reports whether nothing is buffered either way, so that the channel may change
// connection between two messages.
func (w driverWire) idle() bool {
	r, _ := w.reader.Interface().(*bufio.Reader)
	wr, _ := w.writer.Interface().(*bufio.Writer)
	return !w.compressed && r != nil && wr != nil && r.Buffered() == 0 && wr.Buffered() == 0
}

// repoint makes the channel read and write c, and returns the connection it had.
func (w driverWire) repoint(c net.Conn) net.Conn {
	old, _ := w.conn.Interface().(net.Conn)
	w.conn.Set(reflect.ValueOf(&c).Elem())
	w.reader.Set(reflect.ValueOf(bufio.NewReader(c)))
	w.writer.Set(reflect.ValueOf(bufio.NewWriter(c)))
	return old
}

// bridge copies bytes between the driver's loopback socket (down) and the Dial-ed
// connection (up) until either side ends, then closes both, or until detach takes it out.
type bridge struct {
	down      *net.TCPConn
	up        net.Conn
	detaching atomic.Bool
	pumps     sync.WaitGroup
}

// run starts the copies both ways.
func (b *bridge) run() {
	b.pumps.Go(func() { b.pump(b.up, b.down) })
	b.pumps.Go(func() { b.pump(b.down, b.up) })
}

// pump copies src to dst. When it ends because detach interrupted its read, it leaves both
// connections open; otherwise it closes both, which ends the other pump too.
func (b *bridge) pump(dst io.Writer, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				err = werr
			}
		}
		if err != nil {
			if b.detaching.Load() {
				return
			}
			b.down.Close()
			b.up.Close()
			return
		}
	}
}

// detach stops both copies between two messages and leaves up open, for the driver to use
// directly; down is closed. It reports false, with the bridge closed, if a copy had
// already ended.
func (b *bridge) detach() bool {
	b.detaching.Store(true)
	now := time.Now()
	derr := b.down.SetReadDeadline(now)
	uerr := b.up.SetReadDeadline(now)
	b.pumps.Wait()
	b.down.Close()
	if err := errors.Join(derr, uerr, b.up.SetReadDeadline(time.Time{})); err != nil {
		b.up.Close()
		return false
	}
	return true
}
