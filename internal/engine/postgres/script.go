package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/dblat/dblat/internal/engine"
)

var _ engine.ScriptConns = Engine{}

// Script protocols, as pgbench -M names them.
const (
	protoSimple   = "simple"
	protoExtended = "extended"
	protoPrepared = "prepared"
)

// ScriptProtocols implements engine.ScriptConns: pgbench's -M simple (its default),
// extended and prepared.
func (Engine) ScriptProtocols() []string { return []string{protoSimple, protoExtended, protoPrepared} }

// ScriptPipelines implements engine.ScriptConns: pipelines need the extended query
// protocol (libpq's pipeline mode; pgbench refuses -M simple with \startpipeline).
func (Engine) ScriptPipelines(protocol string) bool { return protocol != protoSimple }

// NewScriptConn implements engine.ScriptConns. Statements run on the pgconn.PgConn beneath
// the pool connection, as libpq runs pgbench's: -M simple sends a Query message with the
// values written in (one round trip, several statements allowed); extended sends Parse,
// Bind, Describe, Execute and Sync of the unnamed statement in one flight; prepared
// parses each statement once per connection under its name (one round trip the first
// time) and then sends Bind, Describe, Execute and Sync. Parameters travel as text with
// their types left to the server and results come back as text, as pgbench's do: no
// value is converted on the client.
func (Engine) NewScriptConn(protocol string) (engine.ScriptConn, error) {
	if !slices.Contains(Engine{}.ScriptProtocols(), protocol) {
		return nil, fmt.Errorf("postgres: no query protocol %q (simple, extended or prepared)", protocol)
	}
	return &scriptConn{protocol: protocol, prepared: map[string]struct{}{}}, nil
}

// scriptConn is one pool connection's script executor.
type scriptConn struct {
	protocol string
	// prepared holds the names of the statements prepared on the connection.
	prepared map[string]struct{}

	pc   *pgconn.PgConn // bound during Do
	pipe *pgconn.Pipeline
	// pending lists what the pipeline has sent and not yet read back, in order: a
	// prepare (its name), a query ("") or a sync point (sync).
	pending []pipeRequest
	// cols and last hold a captured result's columns and last row.
	cols []string
	last [][]byte
	buf  []byte
}

type pipeRequest struct {
	name string // the statement a prepare prepares
	kind byte   // 'p' prepare, 'q' query, 's' sync
}

// Do implements engine.ScriptConn. A transaction still open when fn returns (in progress,
// or failed by fn's error) is rolled back with one more round trip, as pgbench does.
func (c *scriptConn) Do(ctx context.Context, conn *sql.Conn, fn func() error) (open bool, err error) {
	err = conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("postgres: not a pgx connection: %T", dc)
		}
		c.pc = sc.Conn().PgConn()
		defer func() { c.pc = nil }()
		ferr := fn()
		if c.pipe != nil {
			c.AbortPipeline()
		}
		if c.pc.TxStatus() == 'I' || c.pc.IsClosed() {
			return ferr
		}
		open = ferr == nil
		rerr := c.pc.Exec(context.WithoutCancel(ctx), "ROLLBACK").Close()
		return errors.Join(ferr, rerr)
	})
	return open, err
}

// Exec implements engine.ScriptConn.
func (c *scriptConn) Exec(ctx context.Context, st *engine.ScriptStmt) error {
	if c.pipe != nil {
		return c.queue(st)
	}
	switch c.protocol {
	case protoSimple:
		mrr := c.pc.Exec(ctx, st.SQL)
		for mrr.NextResult() {
			if err := c.read(mrr.ResultReader(), st.Rows); err != nil {
				_ = mrr.Close()
				return err
			}
		}
		return mrr.Close()
	case protoExtended:
		return c.read(c.pc.ExecParams(ctx, st.SQL, st.Args, nil, nil, nil), st.Rows)
	}
	if _, ok := c.prepared[st.Name]; !ok {
		if _, err := c.pc.Prepare(ctx, st.Name, st.SQL, nil); err != nil {
			return err
		}
		c.prepared[st.Name] = struct{}{}
	}
	return c.read(c.pc.ExecPrepared(ctx, st.Name, st.Args, nil, nil), st.Rows)
}

// read reads a result to its end and, when rows is set, reports it.
func (c *scriptConn) read(rr *pgconn.ResultReader, rows func([]string, int, [][]byte) error) error {
	if rows == nil {
		_, err := rr.Close()
		return err
	}
	n := 0
	for rr.NextRow() {
		n++
		vals := rr.Values() // valid until the next row: keep a copy of each
		c.buf, c.last = c.buf[:0], c.last[:0]
		for _, v := range vals {
			if v == nil {
				c.last = append(c.last, nil)
				continue
			}
			start := len(c.buf)
			c.buf = append(c.buf, v...)
			c.last = append(c.last, c.buf[start:len(c.buf):len(c.buf)])
		}
	}
	if _, err := rr.Close(); err != nil {
		return err
	}
	// Slices into c.buf taken before it grew keep their bytes: the old array stays.
	fds := rr.FieldDescriptions()
	c.cols = c.cols[:0]
	for i := range fds {
		c.cols = append(c.cols, fds[i].Name)
	}
	if n == 0 {
		c.last = c.last[:0]
	}
	return rows(c.cols, n, c.last)
}

// queue sends st in the pipeline, prepared first where the protocol asks and the
// connection has not prepared it yet.
func (c *scriptConn) queue(st *engine.ScriptStmt) error {
	if c.protocol != protoPrepared {
		c.pipe.SendQueryParams(st.SQL, st.Args, nil, nil, nil)
		c.pending = append(c.pending, pipeRequest{kind: 'q'})
		return nil
	}
	if _, ok := c.prepared[st.Name]; !ok && !c.preparing(st.Name) {
		c.pipe.SendPrepare(st.Name, st.SQL, nil)
		c.pending = append(c.pending, pipeRequest{kind: 'p', name: st.Name})
	}
	c.pipe.SendQueryPrepared(st.Name, st.Args, nil, nil)
	c.pending = append(c.pending, pipeRequest{kind: 'q'})
	return nil
}

// preparing reports whether the pipeline already queued the prepare of name.
func (c *scriptConn) preparing(name string) bool {
	for _, p := range c.pending {
		if p.kind == 'p' && p.name == name {
			return true
		}
	}
	return false
}

// StartPipeline implements engine.ScriptConn.
func (c *scriptConn) StartPipeline(ctx context.Context) error {
	if c.protocol == protoSimple {
		return errors.New("pipelines need the extended or prepared protocol")
	}
	c.pipe = c.pc.StartPipeline(ctx)
	c.pending = c.pending[:0]
	return nil
}

// SyncPipeline implements engine.ScriptConn: it sends a synchronization point and stays
// in the pipeline; the results up to it are read at the end of the pipeline.
func (c *scriptConn) SyncPipeline(context.Context) error { return c.sync() }

func (c *scriptConn) sync() error {
	c.pending = append(c.pending, pipeRequest{kind: 's'})
	return c.pipe.Sync()
}

// EndPipeline implements engine.ScriptConn: a last synchronization point, then every
// result, the first error of the pipeline being its error.
func (c *scriptConn) EndPipeline(context.Context) error {
	if err := c.sync(); err != nil {
		_ = c.closePipe()
		return err
	}
	err := c.drain()
	return errors.Join(err, c.closePipe())
}

// AbortPipeline implements engine.ScriptConn: what is queued is synchronized and its
// results read (so that the statements it prepared are known), then the pipeline ends.
func (c *scriptConn) AbortPipeline() {
	if c.pipe == nil {
		return
	}
	if n := len(c.pending); n > 0 && c.pending[n-1].kind != 's' {
		if c.sync() != nil {
			_ = c.closePipe()
			return
		}
	}
	_ = c.drain()
	_ = c.closePipe()
}

func (c *scriptConn) closePipe() error {
	err := c.pipe.Close()
	c.pipe, c.pending = nil, c.pending[:0]
	return err
}

// drain reads the pipeline's results up to its last synchronization point and returns
// its first error. A statement that failed makes the server skip the rest of its
// segment, up to the next synchronization point: those requests return nothing.
func (c *scriptConn) drain() error {
	var first error
	fail := func(err error) {
		if first == nil {
			first = err
		}
		for len(c.pending) > 0 && c.pending[0].kind != 's' {
			c.pending = c.pending[1:]
		}
	}
	for len(c.pending) > 0 {
		res, err := c.pipe.GetResults()
		if err != nil {
			var pgErr *pgconn.PgError
			if !errors.As(err, &pgErr) {
				return err // the connection is gone
			}
			fail(err)
			continue
		}
		switch r := res.(type) {
		case *pgconn.ResultReader:
			c.pending = c.pending[1:]
			if _, err := r.Close(); err != nil {
				fail(err)
			}
		case *pgconn.StatementDescription:
			c.prepared[c.pending[0].name] = struct{}{}
			c.pending = c.pending[1:]
		case *pgconn.PipelineSync:
			c.pending = c.pending[1:]
		case nil:
			return errors.Join(first, errors.New("postgres: the pipeline ended before its results"))
		}
	}
	return first
}
