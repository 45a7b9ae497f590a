package script

import (
	"context"
	"database/sql"

	"testing"

	_ "github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/dblat/dblat/internal/engine/mariadb"
	"github.com/dblat/dblat/internal/engine/mariadb/mariadbtest"
	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
)

// sqlExecutor is the simplest Executor over database/sql: Exec for statements whose rows
// are not wanted, Query and CaptureRows for the others.
type sqlExecutor struct {
	conn *sql.Conn
	args []any
}

func (e *sqlExecutor) Exec(ctx context.Context, st *Stmt) error {
	e.args = AppendArgs(e.args[:0], st.Args)
	if st.Capture == CaptureNone {
		_, err := e.conn.ExecContext(ctx, st.SQL, e.args...)
		return err
	}
	rows, err := e.conn.QueryContext(ctx, st.SQL, e.args...)
	if err != nil {
		return err
	}
	return CaptureRows(rows, st)
}

func openConn(t *testing.T, driver, dsn string) *sql.Conn {
	t.Helper()
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// TestCaptureRowsPostgres runs \gset and \aset against PostgreSQL through pgx's
// database/sql driver, in both modes.
func TestCaptureRowsPostgres(t *testing.T) {
	conn := openConn(t, "pgx", pgtest.NewDatabase(t))
	s := mustParse(t, `SELECT 1 AS one, NULL AS nothing, 'te''xt' AS t, 2.50::numeric AS n, true AS b \gset p_
SELECT :p_one + 1 AS two \gset
\set three :two + 1
\if :p_b
SELECT :three * 2 AS six, :p_n::numeric * 2 AS five \aset
\endif
SELECT x FROM generate_series(1, 3) x \aset
SELECT x AS none FROM generate_series(1, 0) x \aset
`)
	for _, mode := range []Mode{Literal, Params} {
		c := mustClient(t, Config{Mode: mode})
		c.Begin(s)
		if err := c.Run(context.Background(), &sqlExecutor{conn: conn}); err != nil {
			t.Fatalf("mode %v: %v", mode, err)
		}
		for name, want := range map[string]string{"p_one": "1", "p_nothing": "", "p_t": "te'xt", "p_n": "2.50",
			"two": "2", "six": "6", "five": "5.00", "x": "3"} {
			if v := c.Var(name); v.Kind() != KindText || v.String() != want {
				t.Errorf("mode %v: %s = %v (%v), want %q", mode, name, v, v.Kind(), want)
			}
		}
		if v := c.Var("none"); v.Kind() != KindNone {
			t.Errorf("mode %v: an empty result set none = %v", mode, v)
		}
	}
	c := mustClient(t, Config{})
	c.Begin(mustParse(t, "SELECT 0;\nSELECT x FROM generate_series(1, 2) x \\gset"))
	if err := c.Run(context.Background(), &sqlExecutor{conn: conn}); err == nil || err.Error() != `t.sql:2: \gset expects one row, got 2` {
		t.Errorf("two rows: %v", err)
	}
}

// TestCaptureRowsMariaDB runs combined statements (\;) with \aset on MariaDB, whose driver
// returns each statement's result set: every one with rows stores its last row.
func TestCaptureRowsMariaDB(t *testing.T) {
	cfg, err := mariadb.ParseDSN(mariadbtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.MultiStatements = true
	conn := openConn(t, "mysql", cfg.FormatDSN())
	s := mustParse(t, "SELECT 1 AS a\\; SELECT 2 AS b FROM DUAL WHERE 1 = 0\\; SELECT 3 AS c UNION ALL SELECT 4 \\aset\n"+
		"SELECT :a + :c AS s, NULL AS n \\gset\n")
	c := mustClient(t, Config{})
	c.Begin(s)
	if err := c.Run(context.Background(), &sqlExecutor{conn: conn}); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"a": "1", "c": "4", "s": "5", "n": ""} {
		if v := c.Var(name); v.String() != want {
			t.Errorf("%s = %q, want %q", name, v, want)
		}
	}
	if v := c.Var("b"); v.Kind() != KindNone {
		t.Errorf("b = %v from an empty result", v)
	}
}
