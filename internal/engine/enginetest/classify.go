package enginetest

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/engine"
)

// waitLimit bounds every wait the classify checks provoke (a deadlock the server does not
// find, a lock never released): the check then fails with a canceled error instead of
// hanging the test binary. A minute is far above PostgreSQL's deadlock_timeout (1 s) and
// the few hundred milliseconds the other waits take.
const waitLimit = time.Minute

// cancelAfter is how long the canceled lock wait waits before its context ends: long
// enough for the statement to reach the server and wait there, short for a test.
const cancelAfter = 300 * time.Millisecond

// classify provokes errors on a database with a table ec of two rows (1 and 2, v = 0) and
// asks the engine's Classify about them.
type classify struct {
	e   engine.Engine
	d   engine.Dialect
	db  *sql.DB
	ctx context.Context
}

// checkClassify: a duplicate key is ClassOther; a deadlock (Expect.Deadlocks) and a
// snapshot's write conflict (Expect.SnapshotConflicts) are ClassRetryable; a lock wait
// whose context ends is ClassCanceled; a statement on a connection whose socket closed is
// ClassConnection.
func checkClassify(t *testing.T, e engine.Engine, dsn string, want Expect) {
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	c := &classify{e: e, d: e.Dialect(), db: open(t, e, dsn), ctx: ctx}
	c.exec(t, "CREATE TABLE ec (id integer NOT NULL PRIMARY KEY, v integer)")
	c.exec(t, "INSERT INTO ec (id, v) VALUES (1, 0)")
	c.exec(t, "INSERT INTO ec (id, v) VALUES (2, 0)")
	t.Run("duplicate key", func(t *testing.T) {
		c.want(t, "duplicate key", c.inTx(nil, "INSERT INTO ec (id, v) VALUES (1, 0)"), engine.ClassOther)
	})
	if want.Deadlocks {
		t.Run("deadlock", c.deadlock)
	}
	if want.SnapshotConflicts {
		t.Run("snapshot conflict", c.snapshotConflict)
	}
	t.Run("canceled lock wait", c.canceledLockWait)
	t.Run("connection lost", c.connectionLost)
}

// want checks that err is an error of class cl.
func (c *classify) want(t *testing.T, what string, err error, cl engine.ErrorClass) {
	t.Helper()
	got := c.e.Classify(err)
	t.Logf("%s: %v: %v", what, err, got)
	switch {
	case err == nil:
		t.Errorf("%s: no error", what)
	case got != cl:
		t.Errorf("%s: %v classified %v, want %v", what, err, got, cl)
	}
}

// exec runs q in a transaction of its own and fails the test if it fails.
func (c *classify) exec(t *testing.T, q string, args ...any) {
	t.Helper()
	if err := c.inTx(nil, q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// inTx runs q in a transaction of its own with opts and commits it.
func (c *classify) inTx(opts *sql.TxOptions, q string, args ...any) error {
	tx, err := c.db.BeginTx(c.ctx, opts)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(c.ctx, c.d.Rebind(q), args...); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// begin begins a transaction at isolation level iso, rolled back when t ends.
func (c *classify) begin(t *testing.T, iso sql.IsolationLevel) *sql.Tx {
	t.Helper()
	tx, err := c.db.BeginTx(c.ctx, &sql.TxOptions{Isolation: iso})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback() })
	return tx
}

// update adds 1 to row id's v in tx.
func (c *classify) update(ctx context.Context, tx *sql.Tx, id int) error {
	_, err := tx.ExecContext(ctx, c.d.Rebind("UPDATE ec SET v = v + 1 WHERE id = ?"), id)
	return err
}

// deadlock: two transactions lock rows 1 and 2 in opposite orders. Whichever of the
// closing updates reaches the server first, the two wait for each other, and the server
// fails one of them.
func (c *classify) deadlock(t *testing.T) {
	tx1, tx2 := c.begin(t, c.d.LockingIsolation), c.begin(t, c.d.LockingIsolation)
	if err := c.update(c.ctx, tx1, 1); err != nil {
		t.Fatal(err)
	}
	if err := c.update(c.ctx, tx2, 2); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 2)
	go func() { errs <- c.update(c.ctx, tx1, 2) }()
	go func() { errs <- c.update(c.ctx, tx2, 1) }()
	var failed []error
	for range 2 {
		if err := <-errs; err != nil {
			failed = append(failed, err)
		}
	}
	if len(failed) == 0 {
		t.Fatal("two transactions locked two rows in opposite orders and both went on")
	}
	for _, err := range failed {
		c.want(t, "deadlock", err, engine.ClassRetryable)
	}
}

// snapshotConflict: a transaction reads row 1 (taking its snapshot), another changes the
// row and commits, and the first then writes the row.
func (c *classify) snapshotConflict(t *testing.T) {
	tx := c.begin(t, c.d.SnapshotIsolation)
	var v int
	if err := tx.QueryRowContext(c.ctx, c.d.Rebind("SELECT v FROM ec WHERE id = ?"), 1).Scan(&v); err != nil {
		t.Fatal(err)
	}
	c.exec(t, "UPDATE ec SET v = v + 1 WHERE id = ?", 1)
	c.want(t, "write after a concurrent committed write", c.update(c.ctx, tx, 1), engine.ClassRetryable)
}

// canceledLockWait: an update waits for a row another transaction has locked until its
// context ends.
func (c *classify) canceledLockWait(t *testing.T) {
	holder, waiter := c.begin(t, c.d.LockingIsolation), c.begin(t, c.d.LockingIsolation)
	if err := c.update(c.ctx, holder, 1); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(c.ctx, cancelAfter)
	defer cancel()
	c.want(t, "lock wait canceled", c.update(ctx, waiter, 1), engine.ClassCanceled)
}

// connectionLost: the socket under a connection is closed on the client's side, and the
// connection is then used.
func (c *classify) connectionLost(t *testing.T) {
	conn, sock := newConn(t, c.db)
	if err := sock.Close(); err != nil {
		t.Fatal(err)
	}
	tx, err := conn.BeginTx(c.ctx, nil)
	if err == nil {
		var n int
		err = tx.QueryRowContext(c.ctx, "SELECT 1"+c.d.Dual).Scan(&n)
		_ = tx.Rollback()
	}
	c.want(t, "statement on a closed socket", err, engine.ClassConnection)
}
