package mariadb_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/engine/mariadb"
	"github.com/dblat/dblat/internal/engine/mariadb/mariadbtest"
)

func tableRows(t *testing.T, db *sql.DB) string {
	t.Helper()
	var n, sum int
	var maxID sql.NullInt64
	if err := db.QueryRow("SELECT count(*), coalesce(sum(v), 0), max(id) FROM t FORCE INDEX (t_v)").Scan(&n, &sum, &maxID); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%d rows, sum %d, max id %d", n, sum, maxID.Int64)
}

// TestRestorePristine saves a database's pristine copy (its tables' tablespaces), changes
// the database, and restores it; then keeps it as a template and restores the template into
// another database, which lacks the tables (they are created from their saved definitions)
// and gets the template as its pristine copy.
func TestRestorePristine(t *testing.T) {
	e := mariadb.Engine{}
	if e.CanRestore(false) || !e.CanRestore(true) {
		t.Errorf("CanRestore(false) = %v, CanRestore(true) = %v: want managed servers only", e.CanRestore(false), e.CanRestore(true))
	}
	ctx := context.Background()
	dsn := mariadbtest.NewDatabase(t)
	db := open(t, dsn, engine.OpenOptions{})
	for _, q := range []string{
		"CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, v INT NOT NULL, KEY t_v (v)) ENGINE=InnoDB",
		"CREATE TABLE u (k VARCHAR(10) PRIMARY KEY) ENGINE=InnoDB",
		"INSERT INTO t (v) VALUES (1), (2), (3), (40)",
		"INSERT INTO u VALUES ('a')",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	want := tableRows(t, db)
	if ok, err := e.HasPristine(ctx, dsn); ok || err != nil {
		t.Fatalf("HasPristine before saving: %v, %v", ok, err)
	}
	start := time.Now()
	if err := e.SavePristine(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	saved := time.Since(start)
	if ok, err := e.HasPristine(ctx, dsn); !ok || err != nil {
		t.Fatalf("HasPristine after saving: %v, %v", ok, err)
	}
	for _, q := range []string{"INSERT INTO t (v) VALUES (5)", "DELETE FROM t WHERE v = 1", "UPDATE t SET v = v + 100"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if tableRows(t, db) == want {
		t.Fatal("the changes changed nothing")
	}
	db.Close()
	start = time.Now()
	if err := e.RestorePristine(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	t.Logf("tiny tables: saved in %v, restored in %v", saved, time.Since(start))
	db = open(t, dsn, engine.OpenOptions{})
	if got := tableRows(t, db); got != want {
		t.Errorf("after restore: %s, want %s", got, want)
	}
	// The auto-increment counter came back too: the next id follows the pristine rows.
	if _, err := db.Exec("INSERT INTO t (v) VALUES (6)"); err != nil {
		t.Fatal(err)
	}
	var last int
	if err := db.QueryRow("SELECT max(id) FROM t").Scan(&last); err != nil || last != 5 {
		t.Errorf("next id %d (%v), want 5", last, err)
	}
	db.Close()

	// A template, restored into a database without the tables.
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := e.RestorePristine(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	if err := e.SaveTemplate(ctx, dsn, dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "t.ibd")); err != nil {
		t.Errorf("template holds no tablespace: %v", err)
	}
	other := mariadbtest.NewDatabase(t)
	key, ok, err := e.TemplateKey(ctx, other, mariadbtest.Server(t))
	if err != nil || !ok || key["version"] == "" || key["innodb_page_size"] != "16384" {
		t.Errorf("template key %v, %v, %v", key, ok, err)
	}
	if _, ok, _ := e.TemplateKey(ctx, other, nil); ok {
		t.Error("a template of a server dblat does not manage")
	}
	if err := e.RestoreTemplate(ctx, other, dir); err != nil {
		t.Fatal(err)
	}
	odb := open(t, other, engine.OpenOptions{})
	if got := tableRows(t, odb); got != want {
		t.Errorf("template restored: %s, want %s", got, want)
	}
	if _, err := odb.Exec("DELETE FROM t"); err != nil {
		t.Fatal(err)
	}
	odb.Close()
	if ok, err := e.HasPristine(ctx, other); !ok || err != nil {
		t.Fatalf("the template is not the new database's pristine copy: %v, %v", ok, err)
	}
	if err := e.RestorePristine(ctx, other); err != nil {
		t.Fatal(err)
	}
	odb = open(t, other, engine.OpenOptions{})
	defer odb.Close()
	if got := tableRows(t, odb); got != want {
		t.Errorf("pristine of the restored template: %s, want %s", got, want)
	}
}
