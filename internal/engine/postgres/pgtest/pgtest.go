// Package pgtest gives tests a real, dblat-managed PostgreSQL server: one per test binary,
// started on first use and stopped when the tests end, with a fresh database per test.
//
// Use it as
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
//	func TestX(t *testing.T) { dsn := pgtest.NewDatabase(t); ... }
//
// Loaded gives a test a copy of data loaded once per test binary.
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
	return newDatabase(t, Server(t), "")
}

// newDatabase creates a database for t with the CREATE DATABASE options opts, dropped when
// t ends, and returns its DSN.
func newDatabase(t testing.TB, srv *managed.Instance, opts string) string {
	t.Helper()
	name := fmt.Sprintf("t%d_%d", os.Getpid(), dbSeq.Add(1))
	if err := adminExec(srv, "CREATE DATABASE "+name+opts); err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		_ = adminExec(srv, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		_ = adminExec(srv, "DROP DATABASE IF EXISTS "+name+"_pristine WITH (FORCE)")
	})
	return dsnOf(srv, name)
}

// templates holds, per key of Loaded, the template database loaded once per test binary.
var templates sync.Map // string → *template

type template struct {
	once sync.Once
	name string
	err  error
}

// Loaded returns a new database on the shared server holding what load put in a template
// database: load runs once per test binary and key (on the template's DSN, and must close
// its connections), and every call after it copies the template (CREATE DATABASE …
// TEMPLATE, a file copy), as dblat's own templates of loaded data do. The copy is dropped
// when the test ends; it is safe for concurrent use.
func Loaded(t testing.TB, key string, load func(dsn string) error) string {
	t.Helper()
	srv := Server(t)
	v, _ := templates.LoadOrStore(key, &template{})
	tpl := v.(*template)
	tpl.once.Do(func() {
		name := fmt.Sprintf("tpl%d_%d", os.Getpid(), dbSeq.Add(1))
		if tpl.err = adminExec(srv, "CREATE DATABASE "+name); tpl.err != nil {
			return
		}
		if tpl.err = load(dsnOf(srv, name)); tpl.err != nil {
			tpl.err = fmt.Errorf("load %s: %w", key, tpl.err)
			return
		}
		tpl.name = name
	})
	if tpl.err != nil {
		t.Fatalf("template database: %v", tpl.err)
	}
	return newDatabase(t, srv, " TEMPLATE "+tpl.name)
}

// adminExec runs sql on the shared server's postgres database.
func adminExec(srv *managed.Instance, sql string) error {
	ctx := context.Background()
	c, err := pgx.Connect(ctx, dsnOf(srv, "postgres"))
	if err != nil {
		return fmt.Errorf("connect to managed PostgreSQL: %w", err)
	}
	defer c.Close(ctx)
	_, err = c.Exec(ctx, sql)
	return err
}

func dsnOf(srv *managed.Instance, db string) string { return postgres.DatabaseDSN(srv, db) }

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

// ClientEnv returns the environment a libpq program (psql, pgbench) needs besides its host,
// port and user to log in to the shared server: PGPASSFILE, its pgpass file.
func ClientEnv(t testing.TB) []string {
	t.Helper()
	return []string{"PGPASSFILE=" + postgres.PassFile(Server(t))}
}
