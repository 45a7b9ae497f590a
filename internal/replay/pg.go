package replay

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"strconv"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// pgAnswers reads PostgreSQL's answers per statement (protocol.html, "Message Formats"):
// CommandComplete's tag, the DataRows before it, EmptyQueryResponse, PortalSuspended,
// ErrorResponse's SQLSTATE; ReadyForQuery ends a request (a Sync or a Query), as the wire
// decoder's EvCompleted does. It is fed the server's bytes after the start-up.
//
// A commit, for --order commits, is a ReadyForQuery with status idle after a request
// whose last command was not a ROLLBACK and did not fail: the end of a transaction block,
// or a statement run in autocommit mode.
type pgAnswers struct {
	started  bool
	buf      []byte
	cur      []outcome
	rows     int64
	done     [][]outcome
	n        int
	commits  int
	onCommit func(k int)
}

func (a *pgAnswers) completed() int { return a.n }
func (a *pgAnswers) client([]byte)  {}
func (a *pgAnswers) start()         { a.started = true }

func (a *pgAnswers) server(b []byte) {
	if !a.started {
		return // the start-up's answers
	}
	a.buf = append(a.buf, b...)
	for len(a.buf) >= 5 {
		n := int(binary.BigEndian.Uint32(a.buf[1:]))
		if n < 4 || len(a.buf) < 1+n {
			if n < 4 {
				a.buf = a.buf[:0] // not PostgreSQL: nothing more to read
			}
			break
		}
		a.message(a.buf[0], a.buf[5:1+n])
		a.buf = a.buf[1+n:]
	}
	if len(a.buf) == 0 {
		a.buf = nil
	}
}

func (a *pgAnswers) message(t byte, body []byte) {
	switch t {
	case 'D':
		a.rows++
	case 'C':
		tag := string(bytes.TrimRight(body, "\x00"))
		a.cur = append(a.cur, outcome{Tag: tag, Rows: a.rows})
		a.rows = 0
	case 'I':
		a.cur = append(a.cur, outcome{Tag: "EMPTY"})
		a.rows = 0
	case 's':
		a.cur = append(a.cur, outcome{Tag: "SUSPENDED", Rows: a.rows})
		a.rows = 0
	case 'E':
		a.cur = append(a.cur, outcome{Err: pgErrorCode(body)})
		a.rows = 0
	case 'Z':
		if len(body) == 1 && body[0] == 'I' && len(a.cur) > 0 {
			if last := a.cur[len(a.cur)-1]; last.Err == "" && last.Tag != "ROLLBACK" {
				if a.onCommit != nil {
					a.onCommit(a.commits)
				}
				a.commits++
			}
		}
		a.done = append(a.done, a.cur)
		a.cur, a.rows = nil, 0
		a.n++
	}
}

func (a *pgAnswers) take() [][]outcome {
	d := a.done
	a.done = nil
	return d
}

// pgErrorCode returns an ErrorResponse's SQLSTATE: its message may hold the
// application's values, which a Result never does.
func pgErrorCode(body []byte) string {
	for len(body) > 1 && body[0] != 0 {
		f := body[0]
		end := bytes.IndexByte(body[1:], 0)
		if end < 0 {
			break
		}
		if f == 'C' {
			return "SQLSTATE " + string(body[1:1+end])
		}
		body = body[2+end:]
	}
	return "unknown"
}

// pgStartup reads the parameters of a captured start-up message (the client's first
// message, after an SSLRequest declined), nil when there is none.
func pgStartup(chunks [][]byte) map[string]string {
	b := bytes.Join(chunks, nil)
	for len(b) >= 8 {
		n := int(binary.BigEndian.Uint32(b))
		if n < 8 || n > len(b) {
			return nil
		}
		code := binary.BigEndian.Uint32(b[4:])
		if code == pgproto3.ProtocolVersion30 || code == pgproto3.ProtocolVersion32 {
			var sm pgproto3.StartupMessage
			if sm.Decode(b[4:n]) != nil {
				return nil
			}
			return sm.Parameters
		}
		b = b[n:]
	}
	return nil
}

// pgCancelCode is a CancelRequest's code (protocol.html: 1234 << 16 | 5678).
const pgCancelCode = 80877102

// pgIsCancel reports whether a captured connection is a CancelRequest, and the key it
// names.
func pgIsCancel(c *Conn) (pid uint32, key []byte, ok bool) {
	for _, ch := range c.Chunks {
		if !ch.ToServer {
			continue
		}
		b := ch.Data
		if len(b) >= 16 && binary.BigEndian.Uint32(b) >= 16 && binary.BigEndian.Uint32(b[4:]) == pgCancelCode {
			n := int(binary.BigEndian.Uint32(b))
			if n > len(b) {
				return 0, nil, false
			}
			return binary.BigEndian.Uint32(b[8:]), bytes.Clone(b[12:n]), true
		}
		return 0, nil, false
	}
	return 0, nil, false
}

// pgBackendKey reads the BackendKeyData a captured session's server sent during its
// start-up, nil when there is none.
func pgBackendKey(c *Conn) (pid uint32, key []byte) {
	var buf []byte
	skip := false // the one-byte answer to an SSLRequest or GSSENCRequest comes first
	for i, ch := range c.Chunks {
		if ch.ToServer {
			if i == 0 && len(ch.Data) >= 8 {
				code := binary.BigEndian.Uint32(ch.Data[4:])
				skip = code == 80877103 || code == 80877104
			}
			continue
		}
		buf = append(buf, ch.Data...)
		if skip && len(buf) > 0 {
			buf, skip = buf[1:], false
		}
		for len(buf) >= 5 {
			n := int(binary.BigEndian.Uint32(buf[1:]))
			if n < 4 || len(buf) < 1+n {
				break
			}
			switch buf[0] {
			case 'K':
				if n >= 12 {
					return binary.BigEndian.Uint32(buf[5:]), bytes.Clone(buf[9 : 1+n])
				}
			case 'Z':
				return 0, nil
			}
			buf = buf[1+n:]
		}
	}
	return 0, nil
}

// pgConnect opens a PostgreSQL session on the target: the target's DSN says who connects
// to which database and how it authenticates (its password file or password); the
// captured start-up's other parameters (application_name, options, DateStyle …) are
// asked for as the application asked. TLS is not used: the replay's bytes are its own.
// It returns the connection, ready for the first replayed message, and the session's
// cancel key.
func pgConnect(ctx context.Context, dsn string, startup map[string]string, dial func(context.Context, string, string) (net.Conn, error)) (net.Conn, uint32, []byte, error) {
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return nil, 0, nil, err
	}
	cfg.TLSConfig, cfg.Fallbacks = nil, nil
	cfg.DialFunc = dial
	for k, v := range startup {
		switch k {
		case "user", "database", "replication":
		default:
			if cfg.RuntimeParams == nil {
				cfg.RuntimeParams = map[string]string{}
			}
			cfg.RuntimeParams[k] = v
		}
	}
	pc, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, 0, nil, err
	}
	hc, err := pc.Hijack()
	if err != nil {
		pc.Close(ctx)
		return nil, 0, nil, err
	}
	return hc.Conn, hc.PID, hc.SecretKey, nil
}

// pgCancel sends a CancelRequest for the session of pid and key on a new connection.
func pgCancel(ctx context.Context, pid uint32, key []byte, addr string, dial func(context.Context, string, string) (net.Conn, error)) error {
	c, err := dial(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	b := binary.BigEndian.AppendUint32(nil, uint32(12+len(key)))
	b = binary.BigEndian.AppendUint32(b, pgCancelCode)
	b = binary.BigEndian.AppendUint32(b, pid)
	b = append(b, key...)
	if _, err := c.Write(b); err != nil {
		return fmt.Errorf("cancel request: %w", err)
	}
	var one [1]byte
	_, _ = c.Read(one[:]) // the server closes the connection
	return nil
}

// keyString names a cancel key, for a map.
func keyString(pid uint32, key []byte) string {
	return strconv.FormatUint(uint64(pid), 10) + ":" + string(key)
}
