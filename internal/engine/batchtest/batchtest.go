// Package batchtest is the conformance test of the engine.Batcher capability, run by each
// engine package that implements it against its own real managed server, so that the three
// engines are held to one contract instead of three copies of it.
package batchtest

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"strconv"
	"testing"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/latency"
)

// batchDial meters the connection into the context's latency.MeterSlot.
func batchDial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return latency.MeterInto(ctx, c), nil
}

// Expect is what differs between engines in the conformance test.
type Expect struct {
	// IsolationQuery selects one row and column: the current transaction's isolation level.
	IsolationQuery string
	// ReadCommitted is how IsolationQuery spells READ COMMITTED.
	ReadCommitted string
	// RoundTrips is what begin, two batches and commit cost once statements are prepared.
	RoundTrips int64
}

// Run runs transactions of batches on a fresh database dsn of e, which must implement
// engine.Batcher: results and row counts in order, arguments with quotes and backslashes,
// the isolation asked for, commit and rollback with statements, a failing batch that rolls
// back and leaves the connection usable, and the round trips a transaction of two batches
// costs (BEGIN and COMMIT included).
func Run(t *testing.T, eng engine.Engine, dsn string, want Expect) {
	t.Helper()
	ctx := context.Background()
	e := engine.Caps(eng).Batcher
	if e == nil {
		t.Fatalf("%s does not implement engine.Batcher", eng.Name())
	}
	db, err := eng.Open(ctx, dsn, engine.OpenOptions{Dial: batchDial})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s := &suite{t: t, ctx: ctx, eng: eng, b: e, d: eng.Dialect(), db: db, want: want}
	s.exec("CREATE TABLE bt (id integer PRIMARY KEY, v integer, d decimal(12,2), s varchar(40))")
	s.exec("INSERT INTO bt (id, v, d, s) VALUES (1, 10, 1.00, 'a')")
	s.exec("INSERT INTO bt (id, v, d, s) VALUES (2, 20, 2.00, 'b')")

	db.SetMaxIdleConns(0)
	db.SetMaxIdleConns(2)
	mctx, slot := latency.WithMeterSlot(ctx)
	conn, err := db.Conn(mctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if slot.Conn == nil {
		t.Fatal("connection not metered")
	}
	s.conn, s.meter = conn, slot.Conn
	for round := range 3 {
		s.commitRound(round)
	}
	if v := s.value(100 + 2); v != 1 {
		t.Errorf("committed row has v = %d", v)
	}
	s.rollbackWithStatements()
	s.failingBatch()
}

// suite is one run of the conformance test: the engine, its database and the metered
// connection the batches run on.
type suite struct {
	t     *testing.T
	ctx   context.Context
	eng   engine.Engine
	b     engine.Batcher
	d     engine.Dialect
	db    *sql.DB
	conn  *sql.Conn
	meter *latency.MeteredConn
	want  Expect
}

// exec runs q in a transaction of its own.
func (s *suite) exec(q string, args ...any) {
	s.t.Helper()
	tx, err := s.db.BeginTx(s.ctx, nil)
	if err != nil {
		s.t.Fatal(err)
	}
	if _, err := tx.ExecContext(s.ctx, s.d.Rebind(q), args...); err != nil {
		s.t.Fatalf("%s: %v", q, err)
	}
	if err := tx.Commit(); err != nil {
		s.t.Fatal(err)
	}
}

// value reads row id's v.
func (s *suite) value(id int) (v int) {
	s.t.Helper()
	tx, err := s.db.BeginTx(s.ctx, nil)
	if err != nil {
		s.t.Fatal(err)
	}
	defer tx.Rollback()
	if err := tx.QueryRowContext(s.ctx, s.d.Rebind("SELECT v FROM bt WHERE id = ?"), id).Scan(&v); err != nil {
		s.t.Fatal(err)
	}
	return v
}

func (s *suite) stmt(cols int, q string, args ...any) *engine.BatchStmt {
	return &engine.BatchStmt{SQL: s.d.Rebind(q), Args: args, Columns: cols}
}

// commitRound runs a transaction of two batches that commits: results and row counts in
// order, text with quotes and backslashes, the isolation asked for, and (once statements
// are prepared, after round 0) the round trips.
func (s *suite) commitRound(round int) {
	t, ctx := s.t, s.ctx
	const text = `O'Brien \ said "hi"`
	before := s.meter.Counts()
	btx, err := s.b.BeginBatch(ctx, s.conn, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		t.Fatal(err)
	}
	upd := s.stmt(0, "UPDATE bt SET v = v + ?, d = d + CAST(? AS decimal(12,2)), s = ? WHERE id = ?", 1, "0.25", text, 1)
	none := s.stmt(0, "UPDATE bt SET v = v + 1 WHERE id = ?", 99)
	sel := s.stmt(4, "SELECT id, v, d, s FROM bt WHERE id IN (?, ?) ORDER BY id", 1, 2)
	iso := s.stmt(1, s.want.IsolationQuery)
	if err := btx.Send(ctx, upd, none, sel, iso); err != nil {
		t.Fatal(err)
	}
	if upd.RowsAffected != 1 || none.RowsAffected != 0 || len(sel.Rows) != 2 || len(iso.Rows) != 1 {
		t.Fatalf("round %d: rows affected %d and %d, %d rows and %d", round, upd.RowsAffected, none.RowsAffected, len(sel.Rows), len(iso.Rows))
	}
	if got := asText(sel.Rows[0][3]); got != text {
		t.Errorf("round %d: s = %q, want %q", round, got, text)
	}
	if got := asText(sel.Rows[0][1]); got != strconv.Itoa(11+round) {
		t.Errorf("round %d: v = %s, want %d", round, got, 11+round)
	}
	if got := asText(iso.Rows[0][0]); got != s.want.ReadCommitted {
		t.Errorf("isolation %q, want %q", got, s.want.ReadCommitted)
	}
	ins := s.stmt(0, "INSERT INTO bt (id, v, d, s) VALUES (?, ?, CAST(? AS decimal(12,2)), ?)", 100+round, 1, "1.50", "x")
	if err := btx.Commit(ctx, ins); err != nil {
		t.Fatal(err)
	}
	if ins.RowsAffected != 1 {
		t.Errorf("insert: %d rows", ins.RowsAffected)
	}
	if err := btx.Rollback(ctx); !errors.Is(err, sql.ErrTxDone) {
		t.Errorf("Rollback after Commit: %v, want sql.ErrTxDone", err)
	}
	rt := s.meter.Counts().Sub(before).RoundTrips
	t.Logf("round %d: begin, 2 batches, commit: %d round trips", round, rt)
	if round > 0 && rt != s.want.RoundTrips {
		t.Errorf("round %d: %d round trips, want %d", round, rt, s.want.RoundTrips)
	}
}

// rollbackWithStatements: the statements of a Rollback run, then are undone.
func (s *suite) rollbackWithStatements() {
	btx, err := s.b.BeginBatch(s.ctx, s.conn, nil)
	if err != nil {
		s.t.Fatal(err)
	}
	zero := s.stmt(0, "UPDATE bt SET v = 0 WHERE id = ?", 2)
	if err := btx.Rollback(s.ctx, zero); err != nil {
		s.t.Fatal(err)
	}
	if zero.RowsAffected != 1 || s.value(2) != 20 {
		s.t.Errorf("rolled back update: %d rows, v = %d", zero.RowsAffected, s.value(2))
	}
}

// failingBatch: a failing batch rolls back what came before it and ends the transaction,
// and the connection stays usable.
func (s *suite) failingBatch() {
	t, ctx := s.t, s.ctx
	btx, err := s.b.BeginBatch(ctx, s.conn, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		t.Fatal(err)
	}
	err = btx.Send(ctx, s.stmt(0, "UPDATE bt SET v = 0 WHERE id = ?", 2), s.stmt(1, "SELECT nosuch FROM bt"))
	if err == nil {
		t.Fatal("a batch with an unknown column succeeded")
	}
	if c := s.eng.Classify(err); c != engine.ClassOther {
		t.Errorf("Classify(%v) = %v", err, c)
	}
	if err := btx.Commit(ctx); !errors.Is(err, sql.ErrTxDone) {
		t.Errorf("Commit after a failed batch: %v, want sql.ErrTxDone", err)
	}
	if v := s.value(2); v != 20 {
		t.Errorf("the failed batch's update stayed: v = %d", v)
	}
	// The connection is clean: a new batched transaction works on it.
	btx, err = s.b.BeginBatch(ctx, s.conn, nil)
	if err != nil {
		t.Fatal(err)
	}
	one := s.stmt(1, "SELECT v FROM bt WHERE id = ?", 2)
	if err := btx.Commit(ctx, one); err != nil || len(one.Rows) != 1 || asText(one.Rows[0][0]) != "20" {
		t.Errorf("after a failed batch: %v, %v", err, one.Rows)
	}
}

// asText renders a scanned column value as text.
func asText(v any) string {
	switch x := v.(type) {
	case []byte:
		return string(x)
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	}
	return ""
}
