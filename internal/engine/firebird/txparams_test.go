package firebird_test

import (
	"context"
	"database/sql"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/engine/firebird"
	"github.com/dblat/dblat/internal/engine/firebird/fbtest"
	"github.com/dblat/dblat/internal/option"
)

// txState is what MON$TRANSACTIONS says of a transaction: MON$ISOLATION_MODE (0 consistency,
// 1 concurrency, 2 read committed record version, 3 read committed no record version),
// MON$LOCK_TIMEOUT (-1 wait, 0 nowait) and MON$READ_ONLY.
type txState struct {
	isolation, lockTimeout, readOnly int
}

func currentTx(t *testing.T, db *sql.DB, opts *sql.TxOptions) txState {
	t.Helper()
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var s txState
	err = tx.QueryRowContext(ctx, `SELECT MON$ISOLATION_MODE, MON$LOCK_TIMEOUT, MON$READ_ONLY FROM MON$TRANSACTIONS
		WHERE MON$TRANSACTION_ID = CURRENT_TRANSACTION`).Scan(&s.isolation, &s.lockTimeout, &s.readOnly)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestTxParams reads back, for each combination of the run options, what the server says
// the transactions are, and checks the one the driver cannot start is refused.
func TestTxParams(t *testing.T) {
	dsn := fbtest.NewDatabase(t, "Super")
	e := firebird.Engine{}
	readOnly := txState{isolation: 2, lockTimeout: -1, readOnly: 1}
	snapshot := txState{isolation: 1, lockTimeout: -1}
	for _, tc := range []struct {
		lr, rv string
		want   txState // of a read-write READ COMMITTED transaction
	}{
		{"wait", "rec_version", txState{isolation: 2, lockTimeout: -1}},
		{"nowait", "rec_version", txState{isolation: 2, lockTimeout: 0}},
		{"wait", "no_rec_version", txState{isolation: 3, lockTimeout: -1}},
	} {
		t.Run(tc.lr+"/"+tc.rv, func(t *testing.T) {
			vals, err := e.RunOptions().Check(map[string]string{
				firebird.OptionLockResolution: tc.lr, firebird.OptionRecordVersion: tc.rv})
			if err != nil {
				t.Fatal(err)
			}
			runDSN, err := e.RunDSN(dsn, vals)
			if err != nil {
				t.Fatal(err)
			}
			db := open(t, runDSN, engine.OpenOptions{})
			for _, level := range []sql.IsolationLevel{sql.LevelDefault, sql.LevelReadCommitted} {
				if got := currentTx(t, db, &sql.TxOptions{Isolation: level}); got != tc.want {
					t.Errorf("%v: %+v, want %+v", level, got, tc.want)
				}
			}
			if got := currentTx(t, db, &sql.TxOptions{ReadOnly: true}); got != readOnly {
				t.Errorf("read only: %+v, want %+v", got, readOnly)
			}
			if got := currentTx(t, db, &sql.TxOptions{Isolation: sql.LevelRepeatableRead}); got != snapshot {
				t.Errorf("snapshot: %+v, want %+v", got, snapshot)
			}
		})
	}
	// The defaults, from a DSN without the parameters.
	db := open(t, dsn, engine.OpenOptions{})
	want := txState{isolation: 2, lockTimeout: -1}
	if firebird.DefaultRecVersion == firebird.NoRecVersion {
		want.isolation = 3
	}
	if firebird.DefaultLockResolve == firebird.LockNoWait {
		want.lockTimeout = 0
	}
	if got := currentTx(t, db, nil); got != want {
		t.Errorf("defaults: %+v, want %+v", got, want)
	}

	vals := option.Values{firebird.OptionLockResolution: "nowait", firebird.OptionRecordVersion: "no_rec_version"}
	if _, err := e.RunDSN(dsn, vals); err == nil || !strings.Contains(err.Error(), "record_version=rec_version") {
		t.Errorf("nowait with no_rec_version: %v, want an error naming the fix", err)
	}
	if _, err := e.Open(context.Background(), dsn+"&lock_resolution=sometimes", engine.OpenOptions{}); err == nil ||
		!strings.Contains(err.Error(), "want wait or nowait") {
		t.Errorf("bad lock_resolution: %v", err)
	}
}

// TestTxParamsConflict shows what the parameters change: a transaction updates a row that
// another one has updated and not yet committed, which then commits. With rec_version the
// waiting UPDATE fails with an update conflict once the other commits; with no_rec_version
// it applies to the committed row; with nowait it fails at once.
func TestTxParamsConflict(t *testing.T) {
	dsn := fbtest.NewDatabase(t, "Super")
	setup := open(t, dsn, engine.OpenOptions{})
	mustExec(t, setup, "CREATE TABLE t (id INTEGER NOT NULL PRIMARY KEY, v INTEGER)")
	mustExec(t, setup, "INSERT INTO t VALUES (1, 0)")
	e := firebird.Engine{}
	// hold is how long the first transaction keeps its update before committing: long
	// enough for the second to begin its UPDATE (and, with nowait, fail) in the meantime.
	const hold = 500 * time.Millisecond
	for _, tc := range []struct {
		lr, rv   string
		conflict bool // the second UPDATE fails
		waits    bool // ... after the first transaction commits
	}{
		{"wait", "rec_version", true, true},
		{"wait", "no_rec_version", false, true},
		{"nowait", "rec_version", true, false},
	} {
		t.Run(tc.lr+"/"+tc.rv, func(t *testing.T) {
			ctx := context.Background()
			runDSN, err := e.RunDSN(dsn, option.Values{firebird.OptionLockResolution: tc.lr, firebird.OptionRecordVersion: tc.rv})
			if err != nil {
				t.Fatal(err)
			}
			db := open(t, runDSN, engine.OpenOptions{})
			first, err := db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := first.ExecContext(ctx, "UPDATE t SET v = v + 1 WHERE id = 1"); err != nil {
				t.Fatal(err)
			}
			// The first commits a while later; whether the second UPDATE waited for it is
			// whether it returned after the commit began, however long either took.
			var committing atomic.Int64
			committed := make(chan error, 1)
			time.AfterFunc(hold, func() {
				committing.Store(time.Now().UnixNano())
				committed <- first.Commit()
			})
			second, err := db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer second.Rollback()
			_, err = second.ExecContext(ctx, "UPDATE t SET v = v + 1 WHERE id = 1")
			returned := time.Now().UnixNano()
			if tc.conflict != (err != nil) {
				t.Fatalf("second UPDATE: %v, want a conflict: %v", err, tc.conflict)
			}
			if err != nil {
				if c := e.Classify(err); c != engine.ClassRetryable {
					t.Errorf("%v classified %v, want retryable", err, c)
				}
			}
			if c := committing.Load(); tc.waits != (c != 0 && returned > c) {
				t.Errorf("second UPDATE returned before the first began to commit: %v; want it to wait for that: %v", c == 0 || returned <= c, tc.waits)
			}
			if err == nil {
				if err := second.Commit(); err != nil {
					t.Fatal(err)
				}
			}
			if err := <-committed; err != nil { // before the next case
				t.Fatal(err)
			}
		})
	}
}

// TestLostConnectionIsDiscardedCleanly makes a pooled connection's server go silent, as a
// server killed during a run can (what is written is taken, nothing comes back), after a
// statement was prepared on the connection: the next transaction's begin fails, and
// database/sql discards the connection, closing its statements first. With the driver's own
// connection that Close panicked (a failed begin leaves it with no current transaction) and
// took the whole run down.
func TestLostConnectionIsDiscardedCleanly(t *testing.T) {
	dsn := fbtest.NewDatabase(t, "Super")
	ctx := context.Background()
	var mu sync.Mutex
	var sockets []*silencing
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		s := &silencing{Conn: c, silent: make(chan struct{})}
		mu.Lock()
		sockets = append(sockets, s)
		mu.Unlock()
		return s, nil
	}
	// rec_version: its begin is bounded by the context (no_rec_version's is not).
	runDSN, err := firebird.Engine{}.RunDSN(dsn, option.Values{firebird.OptionRecordVersion: firebird.RecVersion})
	if err != nil {
		t.Fatal(err)
	}
	db := open(t, runDSN, engine.OpenOptions{Dial: dial})
	st, err := db.PrepareContext(ctx, "SELECT 1 FROM RDB$DATABASE")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var one int
	if err := tx.StmtContext(ctx, st).QueryRowContext(ctx).Scan(&one); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	for _, s := range sockets {
		s.silence()
	}
	sockets = nil
	mu.Unlock()
	bctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	if _, err := conn.BeginTx(bctx, nil); err == nil {
		t.Fatal("a transaction began on a connection whose server is silent")
	}
	if err := conn.PingContext(ctx); err == nil {
		t.Fatal("a connection whose server is silent answered a ping")
	}
	// The pool dials a new connection for the next statement.
	if err := st.QueryRowContext(ctx).Scan(&one); err != nil || one != 1 {
		t.Fatalf("after the lost connection: %d, %v", one, err)
	}
}

// silencing is a connection whose peer can be made silent: writes are then accepted and
// dropped, and reads wait until the connection is closed.
type silencing struct {
	net.Conn
	once   sync.Once
	silent chan struct{}
}

func (s *silencing) silence() { s.once.Do(func() { close(s.silent) }) }

func (s *silencing) Write(p []byte) (int, error) {
	select {
	case <-s.silent:
		return len(p), nil
	default:
		return s.Conn.Write(p)
	}
}

func (s *silencing) Read(p []byte) (int, error) {
	select {
	case <-s.silent:
		return 0, io.EOF
	default:
	}
	n, err := s.Conn.Read(p)
	select {
	case <-s.silent:
		return 0, io.EOF
	default:
		return n, err
	}
}

// TestDriverTalksOnTheDialedConnection: with OpenOptions.Dial the driver attaches through a
// loopback bridge, which is then taken out: its wire channel reads and writes the Dial-ed
// connection itself, and statements run on it.
func TestDriverTalksOnTheDialedConnection(t *testing.T) {
	dsn := fbtest.NewDatabase(t, "Super")
	ctx := context.Background()
	var mu sync.Mutex
	dialed := map[net.Conn]bool{}
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, network, addr)
		if err == nil {
			mu.Lock()
			dialed[c] = true
			mu.Unlock()
		}
		return c, err
	}
	db := open(t, dsn, engine.OpenOptions{Dial: dial})
	for range 3 {
		conn, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var one int
		if err := conn.QueryRowContext(ctx, "SELECT 1 FROM RDB$DATABASE").Scan(&one); err != nil || one != 1 {
			t.Fatalf("SELECT 1: %d, %v", one, err)
		}
		nc, err := firebird.WireConn(conn)
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		direct := dialed[nc]
		mu.Unlock()
		if !direct {
			t.Errorf("the driver's wire is %T %v, not a Dial-ed connection", nc, nc.LocalAddr())
		}
		conn.Close()
	}
}
