package postgres_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/engine/postgres"
	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
)

// TestScriptConnCancel: canceling the context a script transaction's statements run on
// interrupts the statement in flight (a caller other than the runner, which cancels by
// closing the connection); a cancellation that comes after the last statement leaves the
// connection as it was.
func TestScriptConnCancel(t *testing.T) {
	db, err := sql.Open("pgx", pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	newConn := func() (*sql.Conn, engine.ScriptConn) {
		conn, err := db.Conn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		sc, err := postgres.Engine{}.NewScriptConn("simple")
		if err != nil {
			t.Fatal(err)
		}
		return conn, sc
	}

	conn, sc := newConn()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err = sc.Do(ctx, conn, func() error {
		if err := sc.Exec(ctx, &engine.ScriptStmt{SQL: "BEGIN"}); err != nil {
			return err
		}
		return sc.Exec(ctx, &engine.ScriptStmt{SQL: "SELECT pg_sleep(30)"})
	})
	if err == nil {
		t.Fatal("a canceled pg_sleep(30) returned no error")
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("the cancellation took %v to interrupt the statement", d)
	}

	conn, sc = newConn()
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	if _, err := sc.Do(ctx, conn, func() error {
		err := sc.Exec(ctx, &engine.ScriptStmt{SQL: "SELECT 1"})
		cancel() // after the last statement
		return err
	}); err != nil {
		t.Fatalf("a transaction canceled after its last statement: %v", err)
	}
	var got []string
	if _, err := sc.Do(context.Background(), conn, func() error {
		return sc.Exec(context.Background(), &engine.ScriptStmt{SQL: "SELECT 42", Rows: func(_ []string, _ int, last [][]byte) error {
			got = append(got, string(last[0]))
			return nil
		}})
	}); err != nil || len(got) != 1 || got[0] != "42" {
		t.Fatalf("the connection after a late cancellation: %v, rows %q", err, got)
	}
}
