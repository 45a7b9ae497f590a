package mariadb_test

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/engine/mariadb"
	"github.com/dblat/dblat/internal/engine/mariadb/mariadbtest"
)

// turnCounter counts round trips on one connection: one each time the server starts
// answering (a read returns data) after the client has written. It is safe for concurrent
// use (the driver's cancel watcher may write while a query reads).
type turnCounter struct {
	mu    sync.Mutex
	wrote bool
	turns int
}

func (c *turnCounter) get() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.turns
}

type countedConn struct {
	net.Conn
	c *turnCounter
}

func (cc countedConn) Write(p []byte) (int, error) {
	n, err := cc.Conn.Write(p)
	if n > 0 {
		cc.c.mu.Lock()
		cc.c.wrote = true
		cc.c.mu.Unlock()
	}
	return n, err
}

func (cc countedConn) Read(p []byte) (int, error) {
	n, err := cc.Conn.Read(p)
	if n > 0 {
		cc.c.mu.Lock()
		if cc.c.wrote {
			cc.c.turns++
			cc.c.wrote = false
		}
		cc.c.mu.Unlock()
	}
	return n, err
}

type counterKey struct{}

// countingDial wraps the connection in the counter found in the context passed to
// (*sql.DB).Conn: the accounting the Dial hook exists for.
func countingDial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, network, addr)
	if c, ok := ctx.Value(counterKey{}).(*turnCounter); ok && err == nil {
		return countedConn{conn, c}, nil
	}
	return conn, err
}

// TestRoundTrips measures the round trips of the operations a workload is made of, with
// server-side prepared statements (the default) and with interpolateParams=true, and
// checks them against what they were when measured first (go-sql-driver/mysql v1.10.1,
// MariaDB 10.11): a change here changes every latency result.
func TestRoundTrips(t *testing.T) {
	base := mariadbtest.NewDatabase(t)
	setup := open(t, base, engine.OpenOptions{})
	mustExec(t, setup, "CREATE TABLE r (id int PRIMARY KEY, v int)")
	mustExec(t, setup, "INSERT INTO r VALUES (1, 0), (2, 0)")
	d := mariadb.Engine{}.Dialect()

	type op struct {
		name string
		run  func(ctx context.Context, c *sql.Conn) error
	}
	exec := func(q string, args ...any) func(context.Context, *sql.Conn) error {
		return func(ctx context.Context, c *sql.Conn) error { _, err := c.ExecContext(ctx, q, args...); return err }
	}
	queryRow := func(q string, args ...any) func(context.Context, *sql.Conn) error {
		return func(ctx context.Context, c *sql.Conn) error {
			var v int
			return c.QueryRowContext(ctx, q, args...).Scan(&v)
		}
	}
	tx := func(opts *sql.TxOptions, stmts int) func(context.Context, *sql.Conn) error {
		return func(ctx context.Context, c *sql.Conn) error {
			tx, err := c.BeginTx(ctx, opts)
			if err != nil {
				return err
			}
			defer tx.Rollback()
			for i := range stmts {
				if _, err := tx.ExecContext(ctx, "UPDATE r SET v = v + 1 WHERE id = ?", i%2+1); err != nil {
					return err
				}
			}
			return tx.Commit()
		}
	}
	ops := []op{
		{"SELECT 1 (no args)", queryRow("SELECT 1")},
		{"SELECT ? (first use)", queryRow("SELECT v FROM r WHERE id = ?", 1)},
		{"SELECT ? (again)", queryRow("SELECT v FROM r WHERE id = ?", 1)},
		{"UPDATE ... WHERE id = ?", exec("UPDATE r SET v = v + 1 WHERE id = ?", 1)},
		{"BeginTx + Commit (default level)", tx(nil, 0)},
		{"BeginTx + Commit (LockingIsolation)", tx(&sql.TxOptions{Isolation: d.LockingIsolation}, 0)},
		{"BeginTx + Commit (SnapshotIsolation, read-only)", tx(&sql.TxOptions{Isolation: d.SnapshotIsolation, ReadOnly: true}, 0)},
		{"tx: begin, 3 UPDATE ?, commit (default level)", tx(nil, 3)},
		{"Prepare, then Exec the statement", func(ctx context.Context, c *sql.Conn) error {
			s, err := c.PrepareContext(ctx, "UPDATE r SET v = v + 1 WHERE id = ?")
			if err != nil {
				return err
			}
			_, err = s.ExecContext(ctx, 2)
			s.Close()
			return err
		}},
	}
	// want[op] = {default, interpolateParams=true}; "connect" counts from the TCP handshake's
	// end to the first use of the connection.
	want := map[string][2]int{
		"connect":                                         {1, 1},
		"SELECT 1 (no args)":                              {1, 1},
		"SELECT ? (first use)":                            {2, 1},
		"SELECT ? (again)":                                {2, 1},
		"UPDATE ... WHERE id = ?":                         {2, 1},
		"BeginTx + Commit (default level)":                {2, 2},
		"BeginTx + Commit (LockingIsolation)":             {3, 3},
		"BeginTx + Commit (SnapshotIsolation, read-only)": {3, 3},
		"tx: begin, 3 UPDATE ?, commit (default level)":   {8, 5},
		"Prepare, then Exec the statement":                {2, 2},
	}
	got := map[string][2]int{}
	for mode, param := range []string{"", "interpolateParams=true"} {
		db := open(t, mariadbtest.WithParam(base, param), engine.OpenOptions{Dial: countingDial})
		ctx := context.WithValue(context.Background(), counterKey{}, &turnCounter{})
		counter := ctx.Value(counterKey{}).(*turnCounter)
		// Open's ping connection is idle in the pool; hold it so that Conn dials afresh.
		idle, err := db.Conn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		r := got["connect"]
		r[mode] = counter.get()
		got["connect"] = r
		for _, o := range ops {
			before := counter.get()
			if err := o.run(ctx, c); err != nil {
				t.Fatalf("%s: %v", o.name, err)
			}
			r := got[o.name]
			r[mode] = counter.get() - before
			got[o.name] = r
		}
		c.Close()
		idle.Close()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "round trips per operation (go-sql-driver/mysql -> %s):\n", "MariaDB")
	fmt.Fprintf(&b, "  %-50s %8s %12s\n", "operation", "default", "interpolate")
	names := []string{"connect"}
	for _, o := range ops {
		names = append(names, o.name)
	}
	for _, name := range names {
		fmt.Fprintf(&b, "  %-50s %8d %12d\n", name, got[name][0], got[name][1])
		if got[name] != want[name] {
			t.Errorf("%s: %v round trips, want %v", name, got[name], want[name])
		}
	}
	t.Log(b.String())
}
