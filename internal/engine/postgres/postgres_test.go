package postgres_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/engine/postgres"
	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func TestInspectReadsBackSettings(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	ctx := context.Background()
	e := postgres.Engine{}
	db, err := e.Open(ctx, dsn, engine.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	info, err := e.Inspect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(info.Version, "PostgreSQL") {
		t.Errorf("version = %q", info.Version)
	}
	// The shared test server is started with fsync=off: the read-back must say so.
	if got := info.Settings["fsync"]; got != "off" {
		t.Errorf("fsync read back as %q, want off", got)
	}
	if got := info.Settings["shared_buffers"]; got != "16384 8kB" {
		t.Errorf("shared_buffers read back as %q, want 16384 8kB (128MB)", got)
	}
	if info.DatabaseBytes <= 0 {
		t.Errorf("database size %d", info.DatabaseBytes)
	}
	st, err := e.Stats(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := st["pg_stat_database.xact_commit"]; !ok {
		t.Errorf("stats lack xact_commit: %v", st)
	}
}

func TestClassify(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	ctx := context.Background()
	e := postgres.Engine{}
	db, err := e.Open(ctx, dsn, engine.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, err = db.ExecContext(ctx, "SELECT 1/0")
	if c := e.Classify(err); c != engine.ClassOther {
		t.Errorf("division by zero classified %v", c)
	}
	_, err = db.ExecContext(ctx, `DO $$ BEGIN RAISE EXCEPTION USING ERRCODE = '40001'; END $$`)
	if c := e.Classify(err); c != engine.ClassRetryable {
		t.Errorf("serialization failure classified %v", c)
	}
	if c := e.Classify(context.Canceled); c != engine.ClassCanceled {
		t.Errorf("canceled classified %v", c)
	}
	if c := e.Classify(errors.New("unexpected EOF")); c != engine.ClassConnection {
		t.Errorf("EOF classified %v", c)
	}
}

func TestOpenWrongPasswordIsOneLine(t *testing.T) {
	_, err := postgres.Engine{}.Open(context.Background(), "postgres://nobody:secret@127.0.0.1:1/x?sslmode=disable&connect_timeout=2", engine.OpenOptions{})
	if err == nil {
		t.Fatal("connected to port 1")
	}
	if strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "\n") {
		t.Errorf("error leaks password or spans lines: %q", err)
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u:pw@h:5/db":             "postgres://u:xxxxx@h:5/db",
		"postgres://u@h/db?password=pw":      "postgres://u@h/db?password=xxxxx",
		"host=h user=u password=pw dbname=d": "host=h user=u password=xxxxx dbname=d",
	} {
		if got := (postgres.Engine{}).Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPristineCopyRestoresData(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	ctx := context.Background()
	e := postgres.Engine{}
	exec := func(q string) {
		t.Helper()
		db, err := e.Open(ctx, dsn, engine.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
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
		return n
	}
	if ok, err := e.HasPristine(ctx, dsn); err != nil || ok {
		t.Fatalf("HasPristine before save: %v %v", ok, err)
	}
	exec("CREATE TABLE t AS SELECT generate_series(1, 100) AS x")
	if err := e.SavePristine(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	exec("INSERT INTO t SELECT generate_series(1, 50)")
	if n := count(); n != 150 {
		t.Fatalf("count %d", n)
	}
	if err := e.RestorePristine(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 100 {
		t.Errorf("after restore: %d rows, want the pristine 100", n)
	}
	if ok, err := e.HasPristine(ctx, dsn); err != nil || !ok {
		t.Errorf("HasPristine after save: %v %v", ok, err)
	}
}
