package firebird_test

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nakagami/firebirdsql"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/engine/firebird"
	"github.com/dblat/dblat/internal/engine/firebird/fbtest"
)

func TestMain(m *testing.M) { os.Exit(fbtest.Main(m)) }

// open opens dsn and closes the pool when the test ends (before fbtest drops the database).
func open(t *testing.T, dsn string, opts engine.OpenOptions) *sql.DB {
	t.Helper()
	db, err := firebird.Engine{}.Open(context.Background(), dsn, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// dbPath is the database file a DSN names.
func dbPath(t testing.TB, dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return u.Path
}

func TestInspectAndStats(t *testing.T) {
	for _, arch := range fbtest.Architectures {
		t.Run(arch, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			dsn := fbtest.NewDatabase(t, arch)
			db := open(t, dsn, engine.OpenOptions{})
			e := firebird.Engine{}
			info, err := e.Inspect(ctx, db)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(info.Version, "Firebird 3.0.") {
				t.Errorf("version %q", info.Version)
			}
			// Firebird's defaults, read back: 2048 shared pages in Super, 256 per attachment
			// otherwise.
			buffers := map[string]string{"Super": "2048", "SuperClassic": "256", "Classic": "256"}[arch]
			for k, want := range map[string]string{firebird.KeyServerMode: arch, firebird.KeyPageSize: "8192",
				firebird.KeyPageBuffers: buffers, firebird.KeyForcedWrites: "off", firebird.KeyWireEncrypted: "TRUE",
				"wire_compressed": "FALSE", "character_set": "UTF8", "ods_version": "12.0", "sql_dialect": "3"} {
				if got := info.Settings[k]; got != want {
					t.Errorf("%s = %q, want %q", k, got, want)
				}
			}
			if st, err := os.Stat(dbPath(t, dsn)); err != nil || st.Size() != info.DatabaseBytes {
				t.Errorf("DatabaseBytes %d, file: %v %v", info.DatabaseBytes, st.Size(), err)
			}

			before, err := e.Stats(ctx, db)
			if err != nil {
				t.Fatal(err)
			}
			mustExec(t, db, "CREATE TABLE s (id INTEGER)")
			mustExec(t, db, "INSERT INTO s VALUES (1)", "INSERT INTO s VALUES (2)", "INSERT INTO s VALUES (3)")
			after, err := e.Stats(ctx, db)
			if err != nil {
				t.Fatal(err)
			}
			keys := []string{"mon$database.oldest_transaction", "mon$database.oldest_active", "mon$database.oldest_snapshot",
				"mon$database.next_transaction", "mon$database.pages", "mon$io_stats.page_reads", "mon$io_stats.page_writes",
				"mon$io_stats.page_fetches", "mon$io_stats.page_marks", "mon$record_stats.record_inserts",
				"mon$record_stats.record_updates", "mon$record_stats.record_idx_reads", "mon$record_stats.record_seq_reads",
				"mon$record_stats.record_conflicts", "mon$record_stats.backversion_reads", "mon$attachments.count",
				"mon$transactions.count", "stats.database_level"}
			for _, k := range keys {
				if _, ok := after[k]; !ok {
					t.Errorf("Stats lacks %s", k)
				}
			}
			d := after.Delta(before)
			if d["mon$record_stats.record_inserts"] < 3 {
				t.Errorf("record_inserts grew by %v, want >= 3", d["mon$record_stats.record_inserts"])
			}
			if d["mon$database.next_transaction"] < 3 {
				t.Errorf("next_transaction grew by %v", d["mon$database.next_transaction"])
			}
			wantLevel := map[string]float64{"Super": 1, "SuperClassic": 0, "Classic": 0}[arch]
			if after["stats.database_level"] != wantLevel {
				t.Errorf("stats.database_level = %v, want %v", after["stats.database_level"], wantLevel)
			}
			// Explicit transactions only: nothing pins the oldest snapshot.
			if gap := after["mon$database.next_transaction"] - after["mon$database.oldest_snapshot"]; gap > 3 {
				t.Errorf("Next - OST = %v after committed work: a transaction is left open", gap)
			}
		})
	}
}

// fbCodes returns the GDS codes of a Firebird error, for failure messages.
func fbCodes(err error) []int {
	var fe *firebirdsql.FbError
	if errors.As(err, &fe) {
		return fe.GDSCodes
	}
	return nil
}

func TestClassify(t *testing.T) {
	ctx := context.Background()
	dsn := fbtest.NewDatabase(t, "Super")
	// RECORD_VERSION, so that a waiting UPDATE meets the conflict its read caused (with the
	// default NO_RECORD_VERSION it waits and succeeds: TestTxParamsConflict).
	db := open(t, dsn+"&record_version=rec_version", engine.OpenOptions{})
	e := firebird.Engine{}
	mustExec(t, db, "CREATE TABLE c (id INTEGER NOT NULL PRIMARY KEY, v INTEGER)")
	mustExec(t, db, "INSERT INTO c VALUES (1, 0)")

	begin := func(level sql.IsolationLevel) *sql.Tx {
		tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: level})
		if err != nil {
			t.Fatal(err)
		}
		return tx
	}
	update := func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "UPDATE c SET v = v + 1 WHERE id = 1")
		return err
	}

	t.Run("lock conflict NO WAIT", func(t *testing.T) {
		tx1 := begin(sql.LevelReadCommitted)
		defer tx1.Rollback()
		if err := update(ctx, tx1); err != nil {
			t.Fatal(err)
		}
		tx2 := begin(firebirdsql.LevelReadCommittedNoWait)
		defer tx2.Rollback()
		err := update(ctx, tx2)
		if c := e.Classify(err); c != engine.ClassRetryable {
			t.Errorf("%v (codes %v) classified %v, want retryable", err, fbCodes(err), c)
		}
	})
	t.Run("snapshot update conflict", func(t *testing.T) {
		tx2 := begin(sql.LevelRepeatableRead)
		defer tx2.Rollback()
		var v int
		if err := tx2.QueryRowContext(ctx, "SELECT v FROM c WHERE id = 1").Scan(&v); err != nil {
			t.Fatal(err)
		}
		mustExec(t, db, "UPDATE c SET v = v + 1 WHERE id = 1")
		err := update(ctx, tx2)
		if c := e.Classify(err); c != engine.ClassRetryable {
			t.Errorf("%v (codes %v) classified %v, want retryable", err, fbCodes(err), c)
		}
	})
	t.Run("READ COMMITTED WAIT after the other commits", func(t *testing.T) {
		// Firebird 3.0 has no statement restart: the waiting UPDATE fails once the writer
		// it waited for commits (Dialect.LockingIsolation's caveat).
		tx1 := begin(sql.LevelReadCommitted)
		defer tx1.Rollback()
		if err := update(ctx, tx1); err != nil {
			t.Fatal(err)
		}
		tx2 := begin(sql.LevelReadCommitted)
		defer tx2.Rollback()
		done := make(chan error, 1)
		go func() { done <- update(ctx, tx2) }()
		select {
		case err := <-done:
			t.Fatalf("UPDATE did not wait for the concurrent writer: %v", err)
		case <-time.After(300 * time.Millisecond):
		}
		if err := tx1.Commit(); err != nil {
			t.Fatal(err)
		}
		err := <-done
		if c := e.Classify(err); c != engine.ClassRetryable {
			t.Errorf("%v (codes %v) classified %v, want retryable", err, fbCodes(err), c)
		}
	})
	t.Run("lock wait canceled", func(t *testing.T) {
		tx1 := begin(sql.LevelReadCommitted)
		defer tx1.Rollback()
		if err := update(ctx, tx1); err != nil {
			t.Fatal(err)
		}
		tx2 := begin(sql.LevelReadCommitted)
		defer tx2.Rollback()
		cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		err := update(cctx, tx2)
		if c := e.Classify(err); c != engine.ClassCanceled {
			t.Errorf("%v (codes %v) classified %v, want canceled", err, fbCodes(err), c)
		}
	})
	t.Run("attachment killed", func(t *testing.T) {
		victim := open(t, dsn, engine.OpenOptions{})
		victim.SetMaxOpenConns(1)
		var id int64
		tx := must(victim.BeginTx(ctx, nil))
		if err := tx.QueryRowContext(ctx, "SELECT CURRENT_CONNECTION FROM RDB$DATABASE").Scan(&id); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		mustExec(t, db, "DELETE FROM MON$ATTACHMENTS WHERE MON$ATTACHMENT_ID = "+itoa(id))
		tx, err := victim.BeginTx(ctx, nil)
		if err == nil {
			err = tx.QueryRowContext(ctx, "SELECT 1 FROM RDB$DATABASE").Scan(new(int))
			tx.Rollback()
		}
		if c := e.Classify(err); c != engine.ClassConnection {
			t.Errorf("%v (codes %v) classified %v, want connection", err, fbCodes(err), c)
		}
	})
	t.Run("others", func(t *testing.T) {
		tx := begin(sql.LevelReadCommitted)
		defer tx.Rollback()
		_, err := tx.ExecContext(ctx, "INSERT INTO c VALUES (1, 0)")
		if c := e.Classify(err); c != engine.ClassOther {
			t.Errorf("duplicate key %v classified %v", err, c)
		}
		for err, want := range map[error]engine.ErrorClass{
			nil: engine.ClassOther, context.Canceled: engine.ClassCanceled, context.DeadlineExceeded: engine.ClassCanceled,
			errors.New("boom"): engine.ClassOther, &net.OpError{Op: "read", Err: errors.New("reset")}: engine.ClassConnection,
		} {
			if c := e.Classify(err); c != want {
				t.Errorf("%v classified %v, want %v", err, c, want)
			}
		}
	})
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestDialect(t *testing.T) {
	ctx := context.Background()
	db := open(t, fbtest.NewDatabase(t, "Super"), engine.OpenOptions{})
	d := firebird.Engine{}.Dialect()
	mustExec(t, db, d.DropTable("district")) // absent: no error
	mustExec(t, db, "CREATE TABLE district (d_id "+"smallint NOT NULL PRIMARY KEY, d_name "+d.Varchar(10)+", d_state "+d.Char(2)+
		", d_tax "+d.Decimal(4, 4)+", d_ytd "+d.Decimal(12, 2)+", d_next_o_id integer, d_since "+d.Timestamp+")")
	mustExec(t, db, "CREATE INDEX district_name ON district (d_name)")
	mustExec(t, db, d.Rebind("INSERT INTO district VALUES (1, 'one', 'CA', 0.1234, 30000.00, 3001, CURRENT_TIMESTAMP)"),
		"INSERT INTO district VALUES (2, 'two', 'NY', 0.0500, 30000.00, 3001, CURRENT_TIMESTAMP)")
	mustExec(t, db, d.Analyze("district", nil), d.Analyze("district", []string{"d_name"}))

	tx := must(db.BeginTx(ctx, &sql.TxOptions{Isolation: d.LockingIsolation}))
	defer tx.Rollback()
	var name string
	q := d.LimitOne("SELECT d_name FROM district WHERE d_id >= " + d.Placeholder(1) + " ORDER BY d_id" + d.ForUpdate)
	if err := tx.QueryRowContext(ctx, q, 1).Scan(&name); err != nil || name != "one" {
		t.Errorf("%s: %q %v", q, name, err)
	}
	if !d.SupportsReturning {
		t.Fatal("SupportsReturning is false")
	}
	var next int
	if err := tx.QueryRowContext(ctx, d.Rebind("UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_id = ? RETURNING d_next_o_id"), 2).Scan(&next); err != nil || next != 3002 {
		t.Errorf("UPDATE ... RETURNING: %d %v", next, err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, d.DropTable("district"))
	var n int
	tx = must(db.BeginTx(ctx, nil))
	defer tx.Rollback()
	if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM RDB$RELATIONS WHERE RDB$RELATION_NAME = 'DISTRICT'").Scan(&n); err != nil || n != 0 {
		t.Errorf("table still there after DropTable: %d %v", n, err)
	}
	if got := d.LimitOne("SELECT a FROM t WITH LOCK"); got != "SELECT a FROM t ROWS 1 WITH LOCK" {
		t.Errorf("LimitOne kept the lock clause in the wrong place: %s", got)
	}
}

func TestCopyRows(t *testing.T) {
	for _, arch := range []string{"Super", "Classic"} {
		t.Run(arch, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := open(t, fbtest.NewDatabase(t, arch), engine.OpenOptions{})
			var loader engine.BulkLoader = firebird.Engine{}
			mustExec(t, db, "CREATE TABLE narrow "+narrowDDL, "CREATE TABLE wide "+wideDDL)

			// narrow: more rows than one block, NULLs and a []byte buffer reused by next.
			const nNarrow = 1234
			buf := make([]byte, 0, 32)
			i := 0
			n, err := loader.CopyRows(ctx, db, "narrow", narrowCols, func(row []any) bool {
				if i == nNarrow {
					return false
				}
				buf = append(buf[:0], "row "...)
				buf = append(buf, itoa(int64(i))...)
				b := i // a pointer to a value that changes after next returns
				row[0], row[1], row[2] = int64(i), &b, buf
				if i%100 == 7 {
					row[1], row[2] = nil, (*string)(nil)
				}
				i++
				return true
			})
			if err != nil || n != nNarrow {
				t.Fatalf("narrow: %d rows, %v", n, err)
			}
			var count, sumA, nulls int64
			var last string
			tx := must(db.BeginTx(ctx, nil))
			defer tx.Rollback()
			if err := tx.QueryRowContext(ctx, "SELECT COUNT(*), SUM(a), SUM(IIF(b IS NULL, 1, 0)), MAX(c) FROM narrow").Scan(&count, &sumA, &nulls, &last); err != nil {
				t.Fatal(err)
			}
			if count != nNarrow || sumA != nNarrow*(nNarrow-1)/2 || nulls != 13 || last != "row 999" {
				t.Errorf("narrow read back count %d sum %d nulls %d max %q", count, sumA, nulls, last)
			}
			var mismatched int64
			if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM narrow WHERE c <> 'row ' || a OR b <> a").Scan(&mismatched); err != nil || mismatched != 0 {
				t.Errorf("%d rows with values of another row (buffer reuse?): %v", mismatched, err)
			}
			tx.Rollback()

			// wide: TPC-C's customer.
			const nWide = 300
			i = 0
			n, err = loader.CopyRows(ctx, db, "wide", wideCols, func(row []any) bool {
				if i == nWide {
					return false
				}
				wideRow(i, row)
				i++
				return true
			})
			if err != nil || n != nWide {
				t.Fatalf("wide: %d rows, %v", n, err)
			}
			var sumLen int64
			var bal float64
			tx = must(db.BeginTx(ctx, nil))
			defer tx.Rollback()
			if err := tx.QueryRowContext(ctx, "SELECT COUNT(*), SUM(CHAR_LENGTH(c_data)), SUM(c_balance) FROM wide").Scan(&count, &sumLen, &bal); err != nil {
				t.Fatal(err)
			}
			var wantLen int64
			for j := 0; j < nWide; j++ {
				wantLen += int64(300 + j%200)
			}
			if count != nWide || sumLen != wantLen || bal != -10*nWide {
				t.Errorf("wide read back count %d, data length %d (want %d), balance %v", count, sumLen, wantLen, bal)
			}
			tx.Rollback()

			// A bad value fails the load and stores nothing.
			i = 0
			n, err = loader.CopyRows(ctx, db, "narrow", narrowCols, func(row []any) bool {
				if i == 600 {
					return false
				}
				row[0], row[1], row[2] = i, i, "x"
				if i == 590 {
					row[0] = "not a number"
				}
				i++
				return true
			})
			if err == nil || n != 0 {
				t.Errorf("bad value: %d rows, %v", n, err)
			}
			tx = must(db.BeginTx(ctx, nil))
			defer tx.Rollback()
			if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM narrow").Scan(&count); err != nil || count != nNarrow {
				t.Errorf("after a failed load: %d rows, %v", count, err)
			}
		})
	}
}

// countingConn counts the bytes a connection carries and notes its closing.
type countingConn struct {
	net.Conn
	read, written *atomic.Int64
	closed        chan struct{}
	once          sync.Once
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.read.Add(int64(n))
	return n, err
}

func (c *countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.written.Add(int64(n))
	return n, err
}

func (c *countingConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return c.Conn.Close()
}

type ctxKey struct{}

func TestOpenDial(t *testing.T) {
	dsn := fbtest.NewDatabase(t, "Super")
	var read, written atomic.Int64
	var mu sync.Mutex
	var conns []*countingConn
	var tags []any
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		cc := &countingConn{Conn: c, read: &read, written: &written, closed: make(chan struct{})}
		mu.Lock()
		conns = append(conns, cc)
		tags = append(tags, ctx.Value(ctxKey{}))
		mu.Unlock()
		return cc, nil
	}
	ctx := context.Background()
	db, err := firebird.Engine{}.Open(ctx, dsn, engine.OpenOptions{Dial: dial})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	idle, err := db.Conn(ctx) // the ping's connection, so that the next one is dialled
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	conn, err := db.Conn(context.WithValue(ctx, ctxKey{}, "terminal 7"))
	if err != nil {
		t.Fatal(err)
	}
	before := read.Load()
	tx := must(conn.BeginTx(ctx, nil))
	var one int
	if err := tx.QueryRowContext(ctx, "SELECT 1 FROM RDB$DATABASE").Scan(&one); err != nil || one != 1 {
		t.Fatalf("query through Dial: %v", err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if read.Load() == before || written.Load() == 0 {
		t.Errorf("the query's bytes did not pass the Dial-ed connection (read %d, written %d)", read.Load(), written.Load())
	}
	mu.Lock()
	if len(conns) < 2 || tags[len(tags)-1] != "terminal 7" {
		t.Errorf("dials %d, contexts %v: want the ping's and the terminal's connection, the latter with its context", len(conns), tags)
	}
	mu.Unlock()
	conn.Close()
	idle.Close()
	db.Close()
	for i, c := range conns {
		select {
		case <-c.closed:
		case <-time.After(5 * time.Second):
			t.Errorf("Dial-ed connection %d not closed after db.Close", i)
		}
	}
}

func TestOpenErrors(t *testing.T) {
	srv := fbtest.Server(t, "Super")
	u, _ := url.Parse(srv.DSN)
	u.User = url.UserPassword("SYSDBA", "wrong-secret")
	u.RawQuery = ""
	_, err := firebird.Engine{}.Open(context.Background(), u.String(), engine.OpenOptions{})
	if err == nil {
		t.Fatal("connected with a wrong password")
	}
	if strings.Contains(err.Error(), "wrong-secret") || strings.Contains(err.Error(), "\n") {
		t.Errorf("error leaks the password or spans lines: %q", err)
	}
	_, err = firebird.Engine{}.Open(context.Background(), "SYSDBA@127.0.0.1:1/x.fdb?password_file=/nonexistent", engine.OpenOptions{})
	if err == nil || !strings.Contains(err.Error(), "password_file") {
		t.Errorf("missing password file: %v", err)
	}
	_, err = firebird.Engine{}.Open(context.Background(), "127.0.0.1:1/x.fdb", engine.OpenOptions{})
	if err == nil || !strings.Contains(err.Error(), "no user") {
		t.Errorf("DSN without a user: %v", err)
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"SYSDBA:masterkey@127.0.0.1:3050/var/db/a.fdb": "SYSDBA:xxxxx@127.0.0.1:3050/var/db/a.fdb",
		"firebird://u:pw@h/db.fdb?wire_crypt=false":    "firebird://u:xxxxx@h/db.fdb?wire_crypt=false",
		"u@h:3050/a.fdb?password_file=%2Fs%2Fpw":       "u@h:3050/a.fdb?password_file=%2Fs%2Fpw",
		"u@h/a.fdb?password=pw":                        "u@h/a.fdb?password=xxxxx",
		"u:p@ss@h/db":                                  "u:xxxxx@h/db",
		"u:12/34@h/db":                                 "u:xxxxx@h/db",
		"u:a?b@h/db":                                   "u:xxxxx@h/db",
		"firebird://u:x@y:1?b@h/db":                    "firebird://u:xxxxx@h/db",
		"u:pw@h:1/data/a@b.fdb":                        "u:xxxxx@b.fdb",
		"firebird://SYSDBA@127.0.0.1:41/tmp/x/bench.fdb?password_file=%2Ftmp%2Fx%2Fsysdba.password": "firebird://SYSDBA@127.0.0.1:41/tmp/x/bench.fdb?password_file=%2Ftmp%2Fx%2Fsysdba.password",
	} {
		if got := (firebird.Engine{}).Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}
