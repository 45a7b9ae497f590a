package postgres_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/engine/postgres"
	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
)

// TestTemplateRestoresData keeps a database as a template (a template database of its
// server) and restores it over the changed database, which gets it as its pristine copy
// too; the key names the server's cluster, since the copy works within it only.
func TestTemplateRestoresData(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	inst := pgtest.Server(t)
	ctx := context.Background()
	e := postgres.Engine{}
	db, err := e.Open(ctx, dsn, engine.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "CREATE TABLE t AS SELECT generate_series(1, 100) AS x"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	key, ok, err := e.TemplateKey(ctx, dsn, inst)
	if err != nil || !ok || key["cluster"] != inst.Dir || key["version"] == "" || key["block_size"] != "8192" {
		t.Fatalf("key %v %v %v", key, ok, err)
	}
	if _, ok, _ := e.TemplateKey(ctx, dsn, nil); ok {
		t.Error("a template of a server dblat does not manage")
	}
	dir := t.TempDir()
	if err := e.SaveTemplate(ctx, dsn, dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "database"))
	if err != nil {
		t.Fatal(err)
	}
	tpl := strings.TrimSpace(string(b))
	t.Cleanup(func() {
		if c, err := pgx.Connect(context.Background(), inst.DSN); err == nil {
			_, _ = c.Exec(context.Background(), "DROP DATABASE IF EXISTS "+pgx.Identifier{tpl}.Sanitize())
			c.Close(context.Background())
		}
	})
	// count returns the rows of t, then deletes ten of them.
	count := func() (n int) {
		t.Helper()
		db, err := e.Open(ctx, dsn, engine.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if err := db.QueryRowContext(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, "DELETE FROM t WHERE x > (SELECT max(x) - 10 FROM t)"); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(); n != 100 {
		t.Fatalf("count %d", n)
	}
	if err := e.RestoreTemplate(ctx, dsn, dir); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 100 {
		t.Errorf("after restoring the template: %d rows, want 100", n)
	}
	if ok, err := e.HasPristine(ctx, dsn); !ok || err != nil {
		t.Fatalf("no pristine copy after restoring the template: %v %v", ok, err)
	}
	if err := e.RestorePristine(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 100 {
		t.Errorf("after restoring the pristine copy: %d rows, want 100", n)
	}
}
