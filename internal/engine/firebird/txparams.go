package firebird

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"sync/atomic"
	"unsafe" // for go:linkname and the driver connection's address

	"github.com/nakagami/firebirdsql"
)

// Transaction parameters: how a read-write READ COMMITTED transaction (Dialect's
// LockingIsolation: TPC-C's New-Order, Payment and Delivery, tpcb) behaves when it meets a
// row that a concurrent transaction has changed and not yet committed. They travel as DSN
// parameters of dblat's own (removed before the driver sees the DSN), which the run options
// of the same names (OptionLockResolution, OptionRecordVersion) set through RunDSN.
//
//   - lock_resolution=wait (isc_tpb_wait): wait until the other transaction ends. In 3.0,
//     if it commits, an UPDATE or DELETE of the row then fails with an update conflict
//     (there is no statement restart before 4.0).
//   - lock_resolution=nowait (isc_tpb_nowait): fail at once with a lock or update conflict.
//   - record_version=rec_version (isc_tpb_rec_version): a read returns the last committed
//     version of the row without waiting, so an UPDATE that reads a row another
//     transaction has changed waits for it and, when it commits, fails with an update
//     conflict: the version it read is no longer the latest.
//   - record_version=no_rec_version (isc_tpb_no_rec_version): a read of a row with an
//     uncommitted version waits for its transaction to end (with wait), then reads the
//     version it committed, so the UPDATE applies to the latest version and succeeds. Reads
//     of rows other transactions are changing wait too, which serializes readers behind
//     writers of hot rows (BenchmarkSQL's choice for Firebird).
//
// Read-only transactions, and SNAPSHOT ones (LevelRepeatableRead, LevelSerializable), are
// left as the driver starts them: READ COMMITTED RECORD_VERSION WAIT READ ONLY, and
// SNAPSHOT (TABLE STABILITY) WAIT.
//
// What the driver can send: github.com/nakagami/firebirdsql (v0.9.23) builds the
// transaction parameter block (TPB) from a fixed list of isolation levels. Its public API
// reaches READ COMMITTED RECORD_VERSION WAIT (sql.LevelReadCommitted) and NOWAIT
// (firebirdsql.LevelReadCommittedNoWait). Its internal list also has READ COMMITTED
// NO_RECORD_VERSION WAIT (firebirdsql.ISOLATION_LEVEL_READ_COMMITED_LEGACY), which no
// sql.IsolationLevel maps to; dblat starts such transactions through the driver's unexported
// (*firebirdsqlConn).begin, reached with go:linkname (driverBegin). So NO_RECORD_VERSION
// comes only with WAIT, and no lock time-out can be sent (the driver never writes
// isc_tpb_lock_timeout): a wait lasts until the other transaction ends. TestTxParams reads
// what each combination starts back from MON$TRANSACTIONS, so a driver upgrade that changes
// any of this fails it.
const (
	// ParamLockResolution is the DSN parameter of the lock resolution: "wait" or "nowait".
	ParamLockResolution = "lock_resolution"
	// ParamRecordVersion is the DSN parameter of the record-version mode: "rec_version" or
	// "no_rec_version".
	ParamRecordVersion = "record_version"
)

// The values of the transaction parameters, and the defaults used when a DSN has none.
const (
	LockWait           = "wait"
	LockNoWait         = "nowait"
	RecVersion         = "rec_version"
	NoRecVersion       = "no_rec_version"
	DefaultLockResolve = LockWait
	DefaultRecVersion  = NoRecVersion
)

// txParams are the transaction parameters of a pool's connections.
type txParams struct {
	noWait       bool
	noRecVersion bool
}

// String renders p as DSN parameters.
func (p txParams) String() string {
	lr, rv := LockWait, RecVersion
	if p.noWait {
		lr = LockNoWait
	}
	if p.noRecVersion {
		rv = NoRecVersion
	}
	return ParamLockResolution + "=" + lr + "&" + ParamRecordVersion + "=" + rv
}

// newTxParams checks a lock resolution and a record-version mode ("" for the default).
func newTxParams(lockResolution, recordVersion string) (txParams, error) {
	if lockResolution == "" {
		lockResolution = DefaultLockResolve
	}
	if recordVersion == "" {
		recordVersion = DefaultRecVersion
	}
	var p txParams
	switch lockResolution {
	case LockWait:
	case LockNoWait:
		p.noWait = true
	default:
		return p, fmt.Errorf("%s=%q: want %s or %s", ParamLockResolution, lockResolution, LockWait, LockNoWait)
	}
	switch recordVersion {
	case RecVersion:
	case NoRecVersion:
		p.noRecVersion = true
	default:
		return p, fmt.Errorf("%s=%q: want %s or %s", ParamRecordVersion, recordVersion, RecVersion, NoRecVersion)
	}
	if p.noWait && p.noRecVersion {
		return p, fmt.Errorf("%s=%s goes only with %s=%s: the Firebird driver starts NO RECORD_VERSION transactions only with WAIT (with %s=%s, set %s=%s)",
			ParamRecordVersion, NoRecVersion, ParamLockResolution, LockWait, ParamLockResolution, LockNoWait, ParamRecordVersion, RecVersion)
	}
	return p, nil
}

// takeTxParams removes the transaction parameters from u's query and returns them.
func takeTxParams(u *url.URL) (txParams, error) {
	q := u.Query()
	lr, rv := q.Get(ParamLockResolution), q.Get(ParamRecordVersion)
	if !q.Has(ParamLockResolution) && !q.Has(ParamRecordVersion) {
		return newTxParams("", "")
	}
	q.Del(ParamLockResolution)
	q.Del(ParamRecordVersion)
	u.RawQuery = q.Encode()
	return newTxParams(strings.ToLower(strings.TrimSpace(lr)), strings.ToLower(strings.TrimSpace(rv)))
}

// withTxParams returns dsn with the transaction parameters that vals set (by the names of
// the run options, which are those of the DSN parameters), keeping the rest of dsn as it
// was written (with or without the firebird:// scheme).
func withTxParams(dsn string, lockResolution, recordVersion string) (string, error) {
	if lockResolution == "" && recordVersion == "" {
		return dsn, nil
	}
	hasScheme := strings.HasPrefix(dsn, Scheme)
	u, err := url.Parse(Scheme + strings.TrimPrefix(dsn, Scheme))
	if err != nil {
		return "", errors.New("firebird DSN: not of the form user:password@host:port/path/db.fdb")
	}
	q := u.Query()
	if lockResolution != "" {
		q.Set(ParamLockResolution, lockResolution)
	}
	if recordVersion != "" {
		q.Set(ParamRecordVersion, recordVersion)
	}
	// Check the combination the DSN now asks for.
	if _, err := newTxParams(q.Get(ParamLockResolution), q.Get(ParamRecordVersion)); err != nil {
		return "", err
	}
	u.RawQuery = q.Encode()
	s := u.String()
	if !hasScheme {
		s = strings.TrimPrefix(s, Scheme)
	}
	return s, nil
}

// driverBegin is the driver's unexported (*firebirdsqlConn).begin(isolationLevel int): it
// sends op_transaction with the TPB of one of the driver's ISOLATION_LEVEL_* constants, makes
// the transaction the connection's current one and returns it. fc is the connection's
// address. See the comment at the top of this file for why dblat calls it.
//
//go:linkname driverBegin github.com/nakagami/firebirdsql.(*firebirdsqlConn).begin
func driverBegin(fc unsafe.Pointer, isolationLevel int) (driver.Tx, error)

// driverConnType is the type of the driver's connections, which driverBegin takes.
const driverConnType = "*firebirdsql.firebirdsqlConn"

// txConn is one of the driver's connections whose read-write READ COMMITTED transactions
// start with p's parameters, and which survives a failed begin (see lost). Everything else
// passes through to the driver's connection.
type txConn struct {
	base driver.Conn
	p    txParams

	// lost is set when a begin failed. The driver (v0.9.23) then leaves the connection with
	// no current transaction, and closing a statement prepared on it dereferences that
	// missing transaction and panics. database/sql closes a pooled connection's statements
	// before the connection itself when it discards it (a ping that fails after the server
	// went away), so a server killed during a run crashed dblat. A lost connection is not
	// valid, and its statements' Close does nothing: the server drops them with the
	// attachment, or has already gone.
	lost atomic.Bool
}

// wrapConn returns c with p applied and its failed begins survived.
func wrapConn(c driver.Conn, p txParams) (driver.Conn, error) {
	if p.noRecVersion && reflect.TypeOf(c).String() != driverConnType {
		c.Close()
		return nil, fmt.Errorf("%s=%s needs the connections of github.com/nakagami/firebirdsql, got %T", ParamRecordVersion, NoRecVersion, c)
	}
	return &txConn{base: c, p: p}, nil
}

var (
	_ driver.Conn               = (*txConn)(nil)
	_ driver.ConnBeginTx        = (*txConn)(nil)
	_ driver.ConnPrepareContext = (*txConn)(nil)
	_ driver.ExecerContext      = (*txConn)(nil)
	_ driver.QueryerContext     = (*txConn)(nil)
	_ driver.Pinger             = (*txConn)(nil)
	_ driver.Validator          = (*txConn)(nil)
	_ driver.NamedValueChecker  = (*txConn)(nil)
)

// BeginTx starts a transaction. Read-write READ COMMITTED ones (sql.LevelDefault and
// sql.LevelReadCommitted) get the connection's parameters; a NO RECORD_VERSION one is begun
// through driverBegin, whose single round trip ctx does not bound (the driver's BeginTx
// would), and whose Commit is not bounded by ctx either.
func (c *txConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	tx, err := c.beginTx(ctx, opts)
	if err != nil {
		c.lost.Store(true)
	}
	return tx, err
}

func (c *txConn) beginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	level := sql.IsolationLevel(opts.Isolation)
	if opts.ReadOnly || (level != sql.LevelDefault && level != sql.LevelReadCommitted) {
		return c.base.(driver.ConnBeginTx).BeginTx(ctx, opts)
	}
	if c.p.noRecVersion {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return driverBegin(reflect.ValueOf(c.base).UnsafePointer(), firebirdsql.ISOLATION_LEVEL_READ_COMMITED_LEGACY)
	}
	if c.p.noWait {
		opts.Isolation = driver.IsolationLevel(firebirdsql.LevelReadCommittedNoWait)
	}
	return c.base.(driver.ConnBeginTx).BeginTx(ctx, opts)
}

// Begin starts a read-write READ COMMITTED transaction (driver.Conn's deprecated method).
func (c *txConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

// Prepare implements driver.Conn.
func (c *txConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

// Close implements driver.Conn.
func (c *txConn) Close() error { return c.base.Close() }

// PrepareContext implements driver.ConnPrepareContext.
func (c *txConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	s, err := c.base.(driver.ConnPrepareContext).PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	return &txStmt{Stmt: s, c: c}, nil
}

// ExecContext implements driver.ExecerContext.
func (c *txConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	return c.base.(driver.ExecerContext).ExecContext(ctx, query, args)
}

// QueryContext implements driver.QueryerContext.
func (c *txConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	return c.base.(driver.QueryerContext).QueryContext(ctx, query, args)
}

// Ping implements driver.Pinger.
func (c *txConn) Ping(ctx context.Context) error { return c.base.(driver.Pinger).Ping(ctx) }

// IsValid implements driver.Validator.
func (c *txConn) IsValid() bool {
	if c.lost.Load() {
		return false
	}
	v, ok := c.base.(driver.Validator)
	return !ok || v.IsValid()
}

// CheckNamedValue implements driver.NamedValueChecker.
func (c *txConn) CheckNamedValue(nv *driver.NamedValue) error {
	if ch, ok := c.base.(driver.NamedValueChecker); ok {
		return ch.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}

// Unwrap returns the driver's connection, for callers of (*sql.Conn).Raw that need the
// driver's own methods.
func (c *txConn) Unwrap() driver.Conn { return c.base }

// txStmt is a statement of a txConn: its Close does nothing once the connection is lost.
type txStmt struct {
	driver.Stmt
	c *txConn
}

var (
	_ driver.StmtExecContext  = (*txStmt)(nil)
	_ driver.StmtQueryContext = (*txStmt)(nil)
)

// Close implements driver.Stmt.
func (s *txStmt) Close() error {
	if s.c.lost.Load() {
		return nil
	}
	return s.Stmt.Close()
}

// ExecContext implements driver.StmtExecContext.
func (s *txStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	return s.Stmt.(driver.StmtExecContext).ExecContext(ctx, args)
}

// QueryContext implements driver.StmtQueryContext.
func (s *txStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	return s.Stmt.(driver.StmtQueryContext).QueryContext(ctx, args)
}
