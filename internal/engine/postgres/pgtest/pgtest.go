// Package pgtest gives tests a real, dblat-managed PostgreSQL server: one per test binary,
// started on first use and stopped when the tests end, with a fresh database per test.
//
// Use it as
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
//	func TestX(t *testing.T) { dsn := pgtest.NewDatabase(t); ... }
//
// When the server binaries are missing, tests are skipped with a message saying what to
// install, unless DBLAT_REQUIRE_SERVERS=1 (set by `make test`), in which case they fail.
// A server left running by a test binary that died (a panic, go test's -timeout, a kill) is
// stopped by the next one.
package pgtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/dblat/dblat/internal/engine/postgres"
	"github.com/dblat/dblat/internal/managed"
)

var (
	once     sync.Once
	inst     *managed.Instance
	startErr error
	dbSeq    atomic.Int64
	baseDir  string
)

// Main runs the tests and stops the shared server afterwards. Use it from TestMain.
func Main(m *testing.M) int {
	code := m.Run()
	Shutdown()
	return code
}

// Shutdown stops the shared server if one was started, and removes its files.
func Shutdown() {
	if inst != nil {
		_ = postgres.Launcher{}.Stop(context.Background(), inst)
		inst = nil
	}
	if baseDir != "" {
		_ = os.RemoveAll(baseDir)
	}
}

// Required reports whether missing servers must fail tests rather than skip them.
func Required() bool { return os.Getenv("DBLAT_REQUIRE_SERVERS") == "1" }

// dirs are this package's directories under os.TempDir: a server left by a dead test
// binary is found by PostgreSQL's own lock file (the postmaster's PID on its first line,
// removed at a clean shutdown) and stopped with an immediate shutdown (its files are removed
// next), then SIGKILL.
var dirs = managed.TestDirs{
	Prefix:   "dblat-pgtest-",
	PIDFiles: filepath.Join("*", "data", "postmaster.pid"),
	// Arguments are NUL-separated: "postgres\x00-D\x00<dir>/pg/data\x00".
	Marker: func(dir string) string { return "\x00" + dir + "/" },
	Signal: syscall.SIGQUIT,
}

// Server returns the shared managed server, starting it on first use.
func Server(t testing.TB) *managed.Instance {
	t.Helper()
	once.Do(func() {
		if _, err := postgres.FindBinaries(""); err != nil {
			startErr = err
			return
		}
		dirs.Sweep(os.TempDir())
		if baseDir, startErr = dirs.Make(""); startErr != nil {
			return
		}
		i := &managed.Instance{Name: "pgtest", Engine: "postgres", Dir: filepath.Join(baseDir, "pg"),
			Settings: map[string]string{"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off",
				"max_connections": "300", "shared_buffers": "128MB"}}
		if startErr = os.MkdirAll(i.Dir, 0o755); startErr != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if startErr = (postgres.Launcher{}).Start(ctx, i); startErr == nil {
			inst = i
		}
	})
	if startErr != nil {
		if Required() || !strings.Contains(startErr.Error(), "no PostgreSQL server binaries") {
			t.Fatalf("managed PostgreSQL: %v", startErr)
		}
		t.Skipf("skipping: %v", startErr)
	}
	return inst
}

// NewDatabase creates an empty database on the shared server for this test, drops it when
// the test ends, and returns its DSN.
func NewDatabase(t testing.TB) string {
	t.Helper()
	srv := Server(t)
	name := fmt.Sprintf("t%d_%d", os.Getpid(), dbSeq.Add(1))
	admin := fmt.Sprintf("postgres://dblat@127.0.0.1:%d/postgres?sslmode=disable", srv.Port)
	ctx := context.Background()
	c, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatalf("connect to managed PostgreSQL: %v", err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(ctx, admin)
		if err != nil {
			return
		}
		defer c.Close(ctx)
		_, _ = c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		_, _ = c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+"_pristine WITH (FORCE)")
	})
	return fmt.Sprintf("postgres://dblat@127.0.0.1:%d/%s?sslmode=disable", srv.Port, name)
}

// Conns opens n connections of the bare driver (pgconn: no database/sql, none of dblat) to
// dsn, closed when the test ends: a plain Go client to measure dblat against.
func Conns(t testing.TB, dsn string, n int) []*pgconn.PgConn {
	t.Helper()
	conns := make([]*pgconn.PgConn, n)
	for i := range conns {
		c, err := pgconn.Connect(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close(context.Background()) })
		conns[i] = c
	}
	return conns
}
