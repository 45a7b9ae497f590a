package simple

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"

	"github.com/dblat/dblat/internal/engine"
)

// Protocols lists the values of Config.Protocol; "" means "prepared".
var Protocols = []string{"prepared", "simple", "extended"}

// statement is one SQL statement of a workload, run the way Config.Protocol says: as text
// with the engine's protocol-selecting leading arguments (QueryProtocols), or, with the
// prepared protocol on engines that leave preparing to this package, through statements
// prepared once per connection. It is safe for concurrent use.
type statement struct {
	sql string // in the dialect's placeholders
	// lead selects the protocol of an ad hoc statement; only used when pool is nil.
	lead []any
	// raw, when set, runs the statement alone on a connection (RowQuerier).
	raw engine.RowQuerier
	// pool is prepared on the pool, and bound to a transaction's connection by
	// (*sql.Tx).StmtContext, which database/sql prepares once per connection and reuses.
	pool *sql.Stmt
	// conns holds the statement prepared on single connections (*sql.Conn → *sql.Stmt) for
	// use outside a transaction, where database/sql offers no per-connection reuse of a
	// pool statement.
	conns sync.Map
}

// prepare makes s run with the prepared protocol, preparing it on db.
func (s *statement) prepare(ctx context.Context, db *sql.DB) error {
	p, err := db.PrepareContext(ctx, s.sql)
	if err != nil {
		return fmt.Errorf("prepare %s: %w", s.sql, err)
	}
	s.pool = p
	return nil
}

// onConn returns s prepared on c, preparing it on first use.
func (s *statement) onConn(ctx context.Context, c *sql.Conn) (*sql.Stmt, error) {
	if v, ok := s.conns.Load(c); ok {
		return v.(*sql.Stmt), nil
	}
	st, err := c.PrepareContext(ctx, s.sql)
	if err != nil {
		return nil, err
	}
	s.conns.Store(c, st)
	return st, nil
}

// forget drops the statement prepared on c after it failed: the connection may be gone (the
// runner then replaces it, and the entry would never be used again), and if not, the next
// use prepares it anew.
func (s *statement) forget(c *sql.Conn) {
	if v, ok := s.conns.LoadAndDelete(c); ok {
		_ = v.(*sql.Stmt).Close()
	}
}

// args returns the protocol's leading arguments followed by a.
func (s *statement) args(a []any) []any {
	if len(s.lead) == 0 {
		return a
	}
	return append(append(make([]any, 0, len(s.lead)+len(a)), s.lead...), a...)
}

// queryRow runs s in tx, or alone on c when tx is nil, and scans its single row into dest.
func (s *statement) queryRow(ctx context.Context, c *sql.Conn, tx *sql.Tx, args []any, dest ...any) error {
	switch {
	case s.pool == nil && tx != nil:
		return tx.QueryRowContext(ctx, s.sql, s.args(args)...).Scan(dest...)
	case s.pool == nil && s.raw != nil:
		return s.raw.QueryRowRaw(ctx, c, s.sql, s.args(args), dest...)
	case s.pool == nil:
		return c.QueryRowContext(ctx, s.sql, s.args(args)...).Scan(dest...)
	case tx != nil:
		return tx.StmtContext(ctx, s.pool).QueryRowContext(ctx, args...).Scan(dest...)
	}
	st, err := s.onConn(ctx, c)
	if err != nil {
		return err
	}
	if err := st.QueryRowContext(ctx, args...).Scan(dest...); err != nil {
		if !errors.Is(err, sql.ErrNoRows) {
			s.forget(c)
		}
		return err
	}
	return nil
}

// query runs s in tx, or alone on c when tx is nil; the caller closes the rows.
func (s *statement) query(ctx context.Context, c *sql.Conn, tx *sql.Tx, args []any) (*sql.Rows, error) {
	switch {
	case s.pool == nil && tx != nil:
		return tx.QueryContext(ctx, s.sql, s.args(args)...)
	case s.pool == nil:
		return c.QueryContext(ctx, s.sql, s.args(args)...)
	case tx != nil:
		return tx.StmtContext(ctx, s.pool).QueryContext(ctx, args...)
	}
	st, err := s.onConn(ctx, c)
	if err != nil {
		return nil, err
	}
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		s.forget(c)
	}
	return rows, err
}

// exec runs s in tx (statements that change data always run in a transaction here).
func (s *statement) exec(ctx context.Context, tx *sql.Tx, args []any) error {
	var err error
	if s.pool == nil {
		_, err = tx.ExecContext(ctx, s.sql, s.args(args)...)
	} else {
		_, err = tx.StmtContext(ctx, s.pool).ExecContext(ctx, args...)
	}
	return err
}

// close releases every prepared copy of s.
func (s *statement) close() {
	if s.pool != nil {
		_ = s.pool.Close()
		s.pool = nil
	}
	s.conns.Range(func(k, v any) bool {
		_ = v.(*sql.Stmt).Close()
		s.conns.Delete(k)
		return true
	})
}
