package mariadb_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/engine/mariadb"
	"github.com/dblat/dblat/internal/engine/mariadb/mariadbtest"
)

func TestMain(m *testing.M) { os.Exit(mariadbtest.Main(m)) }

func open(t testing.TB, dsn string, opts engine.OpenOptions) *sql.DB {
	t.Helper()
	db, err := mariadb.Engine{}.Open(context.Background(), dsn, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func mustExec(t testing.TB, db interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, query string, args ...any) {
	t.Helper()
	if _, err := db.ExecContext(context.Background(), query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

func TestRegistered(t *testing.T) {
	e, err := engine.Lookup("mariadb")
	if err != nil {
		t.Fatal(err)
	}
	if engine.Caps(e).BulkLoader == nil {
		t.Error("mariadb engine is not a BulkLoader")
	}
}

func TestParseDSN(t *testing.T) {
	for _, tc := range []struct {
		dsn                        string
		user, pass, net, addr, db  string
		interpolate, parse, multis bool
	}{
		{dsn: "mysql://u:p%40ss@db.example:3307/bench?interpolateParams=true&parseTime=true",
			user: "u", pass: "p@ss", net: "tcp", addr: "db.example:3307", db: "bench", interpolate: true, parse: true},
		{dsn: "mariadb://u@127.0.0.1/bench?multiStatements=true",
			user: "u", net: "tcp", addr: "127.0.0.1:3306", db: "bench", multis: true},
		{dsn: "mysql://u:pw@unix(/tmp/x y/mysqld.sock)/bench?parseTime=true",
			user: "u", pass: "pw", net: "unix", addr: "/tmp/x y/mysqld.sock", db: "bench", parse: true},
		{dsn: "mysql://u@localhost/bench?socket=%2Frun%2Fmysqld.sock",
			user: "u", net: "unix", addr: "/run/mysqld.sock", db: "bench"},
		{dsn: "mysql://u@localhost/bench?socket=/run/mysqld.sock&loc=Europe/Paris",
			user: "u", net: "unix", addr: "/run/mysqld.sock", db: "bench"},
		{dsn: "mysql://[::1]:3310/",
			net: "tcp", addr: "[::1]:3310"},
		{dsn: "u:p/w@tcp(10.0.0.1:3306)/bench?interpolateParams=true",
			user: "u", pass: "p/w", net: "tcp", addr: "10.0.0.1:3306", db: "bench", interpolate: true},
	} {
		cfg, err := mariadb.ParseDSN(tc.dsn)
		if err != nil {
			t.Errorf("ParseDSN(%q): %v", tc.dsn, err)
			continue
		}
		got := []any{cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName, cfg.InterpolateParams, cfg.ParseTime, cfg.MultiStatements}
		want := []any{tc.user, tc.pass, tc.net, tc.addr, tc.db, tc.interpolate, tc.parse, tc.multis}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("ParseDSN(%q) = %v, want %v", tc.dsn, got, want)
		}
	}
	for _, bad := range []string{"mysql://u@h/db?password=x", "mysql://u@unix(/tmp/s/db", "mysql://u@h/a/b"} {
		if _, err := mariadb.ParseDSN(bad); err == nil {
			t.Errorf("ParseDSN(%q) accepted", bad)
		}
	}
}

// TestParseDSNReadsTheOptionFile: option_file gives the password (and the user when the DSN
// has none) from the client groups of a MySQL option file, in the clients' syntax; a
// password in the DSN wins; a file that cannot be read is one line naming the parameter.
func TestParseDSNReadsTheOptionFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "my.cnf")
	if err := os.WriteFile(file, []byte(`# a comment
[mysqld]
password=not-this
[client]
user = app
password = first
; another comment
[client-mariadb]
password = "se#cr\\et" # the last one wins
[mysql]
password=not-this-either
`), 0o600); err != nil {
		t.Fatal(err)
	}
	for dsn, want := range map[string][2]string{
		"mysql://127.0.0.1:3306/db?option_file=" + file:                     {"app", `se#cr\et`},
		"mysql://dblat@127.0.0.1/db?option_file=" + url.QueryEscape(file):   {"dblat", `se#cr\et`},
		"mysql://dblat:given@127.0.0.1/db?option_file=" + file:              {"dblat", "given"},
		"dblat@tcp(127.0.0.1:3306)/db?option_file=" + url.QueryEscape(file): {"dblat", `se#cr\et`},
	} {
		cfg, err := mariadb.ParseDSN(dsn)
		if err != nil {
			t.Errorf("ParseDSN(%q): %v", dsn, err)
			continue
		}
		if cfg.User != want[0] || cfg.Passwd != want[1] || len(cfg.Params) != 0 {
			t.Errorf("ParseDSN(%q): user %q, password %q, params %v; want %q, %q", dsn, cfg.User, cfg.Passwd, cfg.Params, want[0], want[1])
		}
		if got := mariadb.Redact(dsn); got != dsn && !strings.Contains(dsn, ":given@") {
			t.Errorf("Redact changed a DSN without a password: %s", got)
		}
	}
	_, err := mariadb.ParseDSN("mysql://dblat@127.0.0.1/db?option_file=" + filepath.Join(dir, "none.cnf"))
	if err == nil || !strings.Contains(err.Error(), "option_file") || strings.Contains(err.Error(), "\n") {
		t.Errorf("a missing option file: %v", err)
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"mysql://u:pw@h:3306/db?parseTime=true":  "mysql://u:xxxxx@h:3306/db?parseTime=true",
		"mysql://u@h/db":                         "mysql://u@h/db",
		"mysql://u:p%40w@unix(/tmp/s.sock)/db":   "mysql://u:xxxxx@unix(/tmp/s.sock)/db",
		"mysql://u@h/db?password=pw&x=1":         "mysql://u@h/db?password=xxxxx&x=1",
		"u:p@ss/w@tcp(h:3306)/db?x=1":            "u:xxxxx@tcp(h:3306)/db?x=1",
		"u@unix(/run/mysqld/mysqld.sock)/db":     "u@unix(/run/mysqld/mysqld.sock)/db",
		"root:secret@/db":                        "root:xxxxx@/db",
		"MySQL://u:pw@h/db":                      "MySQL://u:xxxxx@h/db",
		"mysql://u:pw@h:3306/db?socket=/tmp/s.s": "mysql://u:xxxxx@h:3306/db?socket=/tmp/s.s",
	} {
		if got := (mariadb.Engine{}).Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestOpenErrorHidesPassword(t *testing.T) {
	_, err := mariadb.Engine{}.Open(context.Background(), "mysql://nobody:secret@127.0.0.1:1/x?timeout=2s", engine.OpenOptions{})
	if err == nil {
		t.Fatal("connected to port 1")
	}
	if strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "\n") {
		t.Errorf("error leaks password or spans lines: %q", err)
	}
	if c := (mariadb.Engine{}).Classify(err); c != engine.ClassConnection {
		t.Errorf("refused connection classified %v", c)
	}
}

func TestInspectAndStats(t *testing.T) {
	db := open(t, mariadbtest.NewDatabase(t), engine.OpenOptions{})
	mustExec(t, db, "CREATE TABLE t (id int PRIMARY KEY, v varchar(100))")
	mustExec(t, db, "INSERT INTO t VALUES (1, 'a'), (2, 'b')")
	ctx := context.Background()
	e := mariadb.Engine{}
	info, err := e.Inspect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(info.Version, "MariaDB") {
		t.Errorf("version = %q", info.Version)
	}
	// The shared test server runs with these settings: the read-back must say so.
	for k, want := range map[string]string{
		"innodb_buffer_pool_size":        "67108864",
		"innodb_flush_log_at_trx_commit": "2",
		"log_bin":                        "OFF",
		"character_set_server":           "utf8mb4",
		"tx_isolation":                   "REPEATABLE-READ",
	} {
		if got := info.Settings[k]; got != want {
			t.Errorf("%s read back as %q, want %q", k, got, want)
		}
	}
	if len(info.Settings) < 300 {
		t.Errorf("only %d variables read", len(info.Settings))
	}
	if info.DatabaseBytes <= 0 {
		t.Errorf("database size %d", info.DatabaseBytes)
	}
	before, err := e.Stats(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"status.Innodb_buffer_pool_read_requests", "status.Innodb_buffer_pool_reads",
		"status.Innodb_row_lock_waits", "status.Innodb_deadlocks", "status.Com_commit", "status.Com_rollback",
		"status.Bytes_sent", "status.Bytes_received", "status.Innodb_data_fsyncs", "status.Innodb_os_log_written",
		"status.Questions", "status.Handler_read_key", "status.Com_stmt_prepare"} {
		if _, ok := before[k]; !ok {
			t.Errorf("stats lack %s", k)
		}
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, tx, "UPDATE t SET v = 'c' WHERE id = ?", 1)
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	after, err := e.Stats(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	d := after.Delta(before)
	if d["status.Com_commit"] < 1 || d["status.Handler_update"] < 1 || d["status.Bytes_received"] <= 0 {
		t.Errorf("a committed update did not show: Com_commit %v, Handler_update %v, Bytes_received %v",
			d["status.Com_commit"], d["status.Handler_update"], d["status.Bytes_received"])
	}
}

func TestClassify(t *testing.T) {
	dsn := mariadbtest.NewDatabase(t)
	db := open(t, dsn, engine.OpenOptions{})
	e := mariadb.Engine{}
	ctx := context.Background()
	mustExec(t, db, "CREATE TABLE d (id int PRIMARY KEY, v int)")
	mustExec(t, db, "INSERT INTO d VALUES (1, 0), (2, 0)")

	t.Run("deadlock", func(t *testing.T) {
		// Two transactions lock two rows in opposite order; InnoDB's deadlock detector
		// rolls one of them back at once with 1213.
		tx1, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tx1.Rollback()
		tx2, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tx2.Rollback()
		mustExec(t, tx1, "UPDATE d SET v = v + 1 WHERE id = 1")
		mustExec(t, tx2, "UPDATE d SET v = v + 1 WHERE id = 2")
		errs := make(chan error, 2)
		go func() {
			_, err := tx1.ExecContext(ctx, "UPDATE d SET v = v + 1 WHERE id = 2") // waits for tx2
			errs <- err
		}()
		waitForLockWait(t, db)
		_, err = tx2.ExecContext(ctx, "UPDATE d SET v = v + 1 WHERE id = 1") // closes the cycle
		errs <- err
		var deadlock error
		for range 2 {
			if err := <-errs; err != nil {
				deadlock = err
			}
		}
		var me *mysql.MySQLError
		if !errors.As(deadlock, &me) || me.Number != 1213 {
			t.Fatalf("want error 1213, got %v", deadlock)
		}
		if c := e.Classify(deadlock); c != engine.ClassRetryable {
			t.Errorf("deadlock classified %v", c)
		}
		if c := e.Classify(fmt.Errorf("new order: %w", deadlock)); c != engine.ClassRetryable {
			t.Errorf("wrapped deadlock classified %v", c)
		}
	})

	t.Run("lock wait timeout", func(t *testing.T) {
		tx1, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tx1.Rollback()
		mustExec(t, tx1, "UPDATE d SET v = v + 1 WHERE id = 1")
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		mustExec(t, c, "SET SESSION innodb_lock_wait_timeout = 1")
		_, err = c.ExecContext(ctx, "UPDATE d SET v = v + 1 WHERE id = 1")
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != 1205 {
			t.Fatalf("want error 1205, got %v", err)
		}
		if c := e.Classify(err); c != engine.ClassRetryable {
			t.Errorf("lock wait timeout classified %v", c)
		}
	})

	t.Run("killed connection", func(t *testing.T) {
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var id int64
		if err := c.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
			t.Fatal(err)
		}
		mustExec(t, db, fmt.Sprintf("KILL %d", id))
		_, err = c.ExecContext(ctx, "SELECT 1")
		if err == nil {
			t.Fatal("query on a killed connection succeeded")
		}
		if cl := e.Classify(err); cl != engine.ClassConnection {
			t.Errorf("killed connection (%v) classified %v", err, cl)
		}
	})

	t.Run("canceled", func(t *testing.T) {
		cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		_, err := db.ExecContext(cctx, "SELECT SLEEP(5)")
		if cl := e.Classify(err); cl != engine.ClassCanceled {
			t.Errorf("timed-out query (%v) classified %v", err, cl)
		}
	})

	t.Run("other", func(t *testing.T) {
		_, err := db.ExecContext(ctx, "INSERT INTO d VALUES (1, 0)")
		if c := e.Classify(err); c != engine.ClassOther {
			t.Errorf("duplicate key (%v) classified %v", err, c)
		}
		for _, err := range []error{driver.ErrBadConn, mysql.ErrInvalidConn, io.ErrUnexpectedEOF,
			&mysql.MySQLError{Number: 2013}, &net.OpError{Op: "read", Err: errors.New("reset")}} {
			if c := e.Classify(err); c != engine.ClassConnection {
				t.Errorf("%v classified %v", err, c)
			}
		}
		if c := e.Classify(nil); c != engine.ClassOther {
			t.Errorf("nil classified %v", c)
		}
	})
}

// waitForLockWait returns once some transaction waits for a row lock.
func waitForLockWait(t *testing.T, db *sql.DB) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		var n int
		err := db.QueryRow("SELECT COUNT(*) FROM information_schema.innodb_trx WHERE trx_state = 'LOCK WAIT'").Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Not seen (a busy machine, or information_schema lagging): carry on. The two updates
	// still close a cycle whichever runs first, so the deadlock assertions stay meaningful.
	t.Log("no LOCK WAIT seen in information_schema.innodb_trx within 10 s; going on")
}

type ctxKey struct{}

// TestDialSeesConnContext checks that OpenOptions.Dial gets the very context passed to
// (*sql.DB).Conn when that call makes a new connection, also through the driver's dial
// timeout (which derives a context from it).
func TestDialSeesConnContext(t *testing.T) {
	dsn := mariadbtest.WithParam(mariadbtest.NewDatabase(t), "timeout=5s")
	var mu sync.Mutex
	var seen []any
	var nets []string
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		mu.Lock()
		seen = append(seen, ctx.Value(ctxKey{}))
		nets = append(nets, network)
		mu.Unlock()
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	db := open(t, dsn, engine.OpenOptions{Dial: dial})
	ctx := context.Background()
	// Open's ping left one idle connection; hold it, so the next Conn must dial.
	c1, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Close()
	c2, err := db.Conn(context.WithValue(ctx, ctxKey{}, "terminal 7"))
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if err := c2.PingContext(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 || seen[0] != nil || seen[1] != "terminal 7" {
		t.Errorf("dialer saw context values %v, want [<nil> terminal 7]", seen)
	}
	if nets[len(nets)-1] != "tcp" {
		t.Errorf("dialed %v", nets)
	}
}

func TestUnixSocketDSN(t *testing.T) {
	sockDSN := mariadbtest.NewSocketDatabase(t)
	var network string
	db := open(t, sockDSN, engine.OpenOptions{Dial: func(ctx context.Context, n, addr string) (net.Conn, error) {
		network = n
		var d net.Dialer
		return d.DialContext(ctx, n, addr)
	}})
	if network != "unix" {
		t.Errorf("socket DSN dialed %q", network)
	}
	mustExec(t, db, "CREATE TABLE s (id int PRIMARY KEY)")
	mustExec(t, db, "INSERT INTO s VALUES (?)", 1)
	var host string
	if err := db.QueryRow("SELECT USER()").Scan(&host); err != nil {
		t.Fatal(err)
	}
	if host != "dblat@localhost" {
		t.Errorf("connected as %s, want dblat@localhost (the socket)", host)
	}
	// The ?socket= spelling reaches the same server.
	srv := mariadbtest.Server(t)
	db2 := open(t, "mysql://dblat@localhost/dblat?socket="+mariadb.SocketPath(srv)+"&option_file="+mariadb.OptionFile(srv), engine.OpenOptions{})
	if err := db2.QueryRow("SELECT USER()").Scan(&host); err != nil || host != "dblat@localhost" {
		t.Errorf("?socket= DSN: %v %s", err, host)
	}
	db3 := open(t, mariadb.SocketDSN(srv), engine.OpenOptions{})
	if err := db3.Ping(); err != nil {
		t.Error(err)
	}
}
