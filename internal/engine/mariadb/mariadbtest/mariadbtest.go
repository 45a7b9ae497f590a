// Package mariadbtest gives tests a real, dblat-managed MariaDB server: one per test binary,
// started on first use and stopped when the tests end, with a fresh database (schema) per
// test; and a C client on libmariadb that tests build with gcc (StmtClient).
//
// Use it as
//
//	func TestMain(m *testing.M) { os.Exit(mariadbtest.Main(m)) }
//	func TestX(t *testing.T) { dsn := mariadbtest.NewDatabase(t); ... }
//
// When the server binaries are missing, tests are skipped with a message saying what to
// install, unless DBLAT_REQUIRE_SERVERS=1 (set by `make test`), in which case they fail.
// It does not reset server-wide state between tests: a test that changes a global variable
// must restore it. Servers left running by a test binary that died (a panic, or go test's
// -timeout) are stopped by the next one.
package mariadbtest

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/engine/mariadb"
	"github.com/dblat/dblat/internal/managed"
)

var (
	once     sync.Once
	inst     *managed.Instance
	startErr error
	dbSeq    atomic.Int64
	baseDir  string
)

// Settings are the shared server's: small and fast to start (a 64 MB buffer pool, a 32 MB
// redo log), durable enough for tests only (the log is flushed once a second, not at each
// commit; no doublewrite buffer), no binary log.
var Settings = map[string]string{
	"innodb_buffer_pool_size":        "64M",
	"innodb_log_file_size":           "32M",
	"innodb_flush_log_at_trx_commit": "2",
	"innodb_doublewrite":             "OFF",
	"skip-log-bin":                   "",
	"max_connections":                "200",
}

// Main runs the tests and stops the shared server afterwards. Use it from TestMain.
func Main(m *testing.M) int {
	code := m.Run()
	Shutdown()
	return code
}

// Shutdown stops the shared server if one was started, and removes its files.
func Shutdown() {
	if inst != nil {
		_ = mariadb.Launcher{}.Stop(context.Background(), inst)
		inst = nil
	}
	if baseDir != "" {
		_ = os.RemoveAll(baseDir)
	}
}

// Required reports whether missing servers must fail tests rather than skip them.
func Required() bool { return os.Getenv("DBLAT_REQUIRE_SERVERS") == "1" }

// SkipIfMissing skips t (or fails it under DBLAT_REQUIRE_SERVERS=1) when the server
// binaries are missing.
func SkipIfMissing(t testing.TB) {
	t.Helper()
	if _, err := mariadb.FindBinaries(""); err != nil {
		if Required() {
			t.Fatalf("managed MariaDB: %v", err)
		}
		t.Skipf("skipping: %v", err)
	}
}

// Dir returns a new directory, removed when t ends, that the unprivileged server user can
// reach (t.TempDir is mode 0700, closed to it when tests run as root). Servers started in
// it are stopped by the next test binary if this one dies without stopping them.
func Dir(t testing.TB) string {
	t.Helper()
	d, err := dirs.Make("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// dirs are this package's directories under os.TempDir: a server left by a dead test
// binary is found by its PID file and stopped with SIGTERM, then SIGKILL.
var dirs = managed.TestDirs{
	Prefix:   "dblat-mariadbtest-",
	PIDFiles: filepath.Join("*", "run", "mysqld.pid"),
	Marker:   func(dir string) string { return "--datadir=" + dir + "/" },
	Signal:   syscall.SIGTERM,
}

// Server returns the shared managed server, starting it on first use.
func Server(t testing.TB) *managed.Instance {
	t.Helper()
	once.Do(func() {
		if _, startErr = mariadb.FindBinaries(""); startErr != nil {
			return
		}
		dirs.Sweep(os.TempDir())
		if baseDir, startErr = dirs.Make(""); startErr != nil {
			return
		}
		i := &managed.Instance{Name: "mariadbtest", Engine: "mariadb", Dir: filepath.Join(baseDir, "mdb"), Settings: maps.Clone(Settings)}
		if startErr = os.MkdirAll(i.Dir, 0o755); startErr != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if startErr = (mariadb.Launcher{}).Start(ctx, i); startErr == nil {
			inst = i
		}
	})
	if startErr != nil {
		if Required() || !strings.Contains(startErr.Error(), "no MariaDB server binaries") {
			t.Fatalf("managed MariaDB: %v", startErr)
		}
		t.Skipf("skipping: %v", startErr)
	}
	return inst
}

// NewDatabase creates an empty database on the shared server for this test, drops it when
// the test ends, and returns its DSN (TCP on 127.0.0.1).
func NewDatabase(t testing.TB) string {
	t.Helper()
	srv := Server(t)
	return mariadb.DatabaseDSN(srv, newDatabase(t, srv))
}

// NewSocketDatabase is NewDatabase with a DSN that connects through the server's Unix
// socket.
func NewSocketDatabase(t testing.TB) string {
	t.Helper()
	srv := Server(t)
	return mariadb.SocketDatabaseDSN(srv, newDatabase(t, srv))
}

func newDatabase(t testing.TB, srv *managed.Instance) string {
	t.Helper()
	name := fmt.Sprintf("t%d_%d", os.Getpid(), dbSeq.Add(1))
	ctx := context.Background()
	db, err := mariadb.Engine{}.Open(ctx, srv.DSN, engine.OpenOptions{})
	if err != nil {
		t.Fatalf("connect to managed MariaDB: %v", err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() { dropDatabase(srv.DSN, name) })
	return name
}

func dropDatabase(dsn, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db, err := mariadb.Engine{}.Open(ctx, dsn, engine.OpenOptions{})
	if err != nil {
		return
	}
	defer db.Close()
	// Connections a test left open would keep their metadata locks and block the DROP.
	killSessions(ctx, db, name)
	_, _ = db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name)
}

func killSessions(ctx context.Context, db *sql.DB, schema string) {
	rows, err := db.QueryContext(ctx, "SELECT id FROM information_schema.processlist WHERE db = ? AND id <> CONNECTION_ID()", schema)
	if err != nil {
		return
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if rows.Scan(&id) == nil {
			ids = append(ids, id)
		}
	}
	rows.Close()
	for _, id := range ids {
		_, _ = db.ExecContext(ctx, fmt.Sprintf("KILL %d", id))
	}
}

// ToolArgs returns the first arguments of a MariaDB client program (mariadb, mysqlslap,
// ...) that log it in to the shared server as dblat: --defaults-file, the server's option
// file, read instead of the system's.
func ToolArgs(t testing.TB) []string {
	t.Helper()
	return []string{"--defaults-file=" + mariadb.OptionFile(Server(t))}
}

// WithParam returns dsn with the DSN parameter kv ("parseTime=true") added; "" adds none.
func WithParam(dsn, kv string) string {
	switch {
	case kv == "":
		return dsn
	case strings.Contains(dsn, "?"):
		return dsn + "&" + kv
	}
	return dsn + "?" + kv
}
