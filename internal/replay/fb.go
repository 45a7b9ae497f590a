package replay

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/dblat/dblat/internal/engine/firebird"
)

// Firebird's operations the replay looks for (src/remote/protocol.h, enum P_OP).
const (
	fbOpResponse = 9
	fbOpAttach   = 19
	fbOpCreate   = 20
)

// fbAccept reads the protocol version and type the server accepted (op_accept,
// op_accept_data, op_cond_accept) from the start of a server chunk; ok is false when b
// starts with none.
func fbAccept(b []byte) (version, ptype uint32, ok bool) {
	if len(b) < 16 {
		return 0, 0, false
	}
	switch binary.BigEndian.Uint32(b) {
	case 3, 94, 98:
		return binary.BigEndian.Uint32(b[4:]) & 0x7fff, binary.BigEndian.Uint32(b[12:]) & 0xff, true
	}
	return 0, 0, false
}

// fbCaptured returns what the captured session's server accepted.
func fbCaptured(c *Conn) (version, ptype uint32, ok bool) {
	for _, ch := range c.Chunks {
		if !ch.ToServer {
			if v, t, ok := fbAccept(ch.Data); ok {
				return v, t, true
			}
		}
	}
	return 0, 0, false
}

// fbAttachAnswer returns the index of the first server chunk after the client's op_attach
// (or op_create): where a captured Firebird session's start-up ends. -1 when there is none.
func fbAttachAnswer(c *Conn) int {
	sent := false
	for i, ch := range c.Chunks {
		switch {
		case ch.ToServer && len(ch.Data) >= 4:
			if op := binary.BigEndian.Uint32(ch.Data); op == fbOpAttach || op == fbOpCreate {
				sent = true
			}
		case !ch.ToServer && sent:
			return i
		}
	}
	return -1
}

// fbConnect opens a Firebird session on the target: the engine's driver connects and
// attaches as the target's DSN says (Srp authentication, wire encryption off), through a
// bridge that forwards its bytes to the connection dial made until the server has answered
// its op_attach; then the bridge stops, the driver's connection is dropped before it sends
// anything more, and the attachment is the replay's, idle, with nothing opened on it.
//
// The driver must come to the protocol version and type the captured client came to
// (want: fbCaptured's), as the client's operations are laid out for them.
func fbConnect(ctx context.Context, dsn string, want [2]uint32, dial func(context.Context, string, string) (net.Conn, error)) (net.Conn, error) {
	u, err := firebird.DriverURL(dsn)
	if err != nil {
		return nil, err
	}
	up, err := dial(ctx, "tcp", u.Host)
	if err != nil {
		return nil, err
	}
	ln, err := net.ListenTCP("tcp4", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		up.Close()
		return nil, err
	}
	defer ln.Close()
	q := u.Query()
	q.Set("wire_crypt", "false")
	u.RawQuery = q.Encode()
	local := *u
	local.Host = ln.Addr().String()
	db, err := sql.Open("firebirdsql", local.String())
	if err != nil {
		up.Close()
		return nil, err
	}
	defer db.Close()
	dctx, cancel := context.WithCancel(ctx)
	defer cancel()
	driverDone := make(chan error, 1)
	go func() {
		c, err := db.Conn(dctx)
		if err == nil {
			// The driver attached: the bridge let its op_attach's answer through, which
			// it never does. Nothing of this connection reaches the server any more.
			_ = c.Raw(func(any) error { return nil })
			err = errors.New("the driver attached past the bridge")
		}
		driverDone <- err
	}()
	if dl, ok := ctx.Deadline(); ok {
		_ = ln.SetDeadline(dl)
	}
	down, err := ln.AcceptTCP()
	if err != nil {
		up.Close()
		return nil, err
	}
	defer down.Close()
	var (
		mu       sync.Mutex
		attachAt bool
		done     = make(chan error, 1)
	)
	// The driver's bytes go up as they come; after op_attach it waits for the answer,
	// which it never gets.
	go func() {
		buf := make([]byte, 32<<10)
		for {
			n, err := down.Read(buf)
			if n > 0 {
				mu.Lock()
				if n >= 4 {
					if op := binary.BigEndian.Uint32(buf); op == fbOpAttach || op == fbOpCreate {
						attachAt = true
					}
				}
				mu.Unlock()
				if _, werr := up.Write(buf[:n]); werr != nil {
					err = werr
				}
			}
			if err != nil {
				return // the driver's side ended: closed below, or it gave up (driverDone)
			}
		}
	}()
	// The server's bytes go down until its answer to op_attach, which is kept.
	go func() {
		buf := make([]byte, 32<<10)
		for {
			n, err := up.Read(buf)
			if err != nil {
				done <- err
				return
			}
			if v, t, ok := fbAccept(buf[:n]); ok && (v != want[0] || t != want[1]) {
				done <- fmt.Errorf("the target's driver came to protocol %d (type %d) where the application came to %d (type %d): its operations would not read alike", v, t, want[0], want[1])
				return
			}
			mu.Lock()
			attached := attachAt
			mu.Unlock()
			if attached {
				if n >= 4 && binary.BigEndian.Uint32(buf) == fbOpResponse && !fbFailed(buf[:n]) {
					done <- nil
				} else {
					done <- errors.New("the server refused the attachment (check the target's DSN: user, password, path)")
				}
				return
			}
			if _, err := down.Write(buf[:n]); err != nil {
				done <- err
				return
			}
		}
	}()
	if dl, ok := ctx.Deadline(); ok {
		_ = up.SetReadDeadline(dl)
	}
	select {
	case err = <-done:
	case err = <-driverDone:
		// The driver gave up before attaching (its error says why: authentication).
		if err == nil {
			err = errors.New("the driver ended before attaching")
		}
	}
	down.Close()
	cancel()
	_ = up.SetReadDeadline(time.Time{})
	if err != nil {
		up.Close()
		return nil, err
	}
	return up, nil
}

// fbFailed reports whether an op_response in b carries an error: its status vector (after
// the handle, the blob id and the data buffer) starts with isc_arg_gds and a non-zero code.
func fbFailed(b []byte) bool {
	if len(b) < 20 {
		return true
	}
	n := int(binary.BigEndian.Uint32(b[16:]))
	off := 20 + (n+3)&^3
	if len(b) < off+8 {
		return true
	}
	return binary.BigEndian.Uint32(b[off:]) == 1 && binary.BigEndian.Uint32(b[off+4:]) != 0
}
