package firebird_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/engine/firebird"
	"github.com/dblat/dblat/internal/engine/firebird/fbtest"
	"github.com/dblat/dblat/internal/option"
)

// TestTemplate keeps a database as a template and restores it over the changed database,
// whose pristine copy it becomes (a hard link: the template itself is never written); the
// template key follows the page size, so a database of another page size never takes it.
func TestTemplate(t *testing.T) {
	e := firebird.Engine{}
	ctx := context.Background()
	inst := fbtest.Server(t, "Super")
	dsn := fbtest.NewDatabase(t, "Super")
	path := dbPath(t, dsn)
	t.Cleanup(func() { os.Remove(path + ".pristine") })
	db := open(t, dsn, engine.OpenOptions{})
	mustExec(t, db, "CREATE TABLE t (id INTEGER)")
	mustExec(t, db, "INSERT INTO t VALUES (1)", "INSERT INTO t VALUES (2)", "INSERT INTO t VALUES (3)")
	db.Close()

	key, ok, err := e.TemplateKey(ctx, dsn, inst)
	if err != nil || !ok || key[firebird.KeyPageSize] != "8192" || key["version"] == "" || key["ods_version"] == "" {
		t.Fatalf("key %v %v %v", key, ok, err)
	}
	if _, ok, _ := e.TemplateKey(ctx, dsn, nil); ok {
		t.Error("a template of a server dblat does not manage")
	}
	other, err := e.Database(ctx, inst, option.Values{firebird.OptionPageSize: "16384"})
	if err != nil {
		t.Fatal(err)
	}
	if k16, _, err := e.TemplateKey(ctx, other, inst); err != nil || k16[firebird.KeyPageSize] != "16384" {
		t.Errorf("key of a 16 KB database: %v %v", k16, err)
	}

	dir := t.TempDir()
	if err := e.SaveTemplate(ctx, dsn, dir); err != nil {
		t.Fatal(err)
	}
	db = open(t, dsn, engine.OpenOptions{})
	mustExec(t, db, "DELETE FROM t", "INSERT INTO t VALUES (9)")
	db.Close()
	if err := e.RestoreTemplate(ctx, dsn, dir); err != nil {
		t.Fatal(err)
	}
	db = open(t, dsn, engine.OpenOptions{})
	if n := count(t, db, "t"); n != 3 {
		t.Errorf("%d rows after restoring the template, want 3", n)
	}
	mustExec(t, db, "DELETE FROM t")
	db.Close()
	tpl, _ := os.Stat(filepath.Join(dir, "database.fdb"))
	pristine, err := os.Stat(path + ".pristine")
	if err != nil || tpl.Sys().(*syscall.Stat_t).Ino != pristine.Sys().(*syscall.Stat_t).Ino {
		t.Errorf("the pristine copy is not the template's file: %v", err)
	}
	if err := e.RestorePristine(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	db = open(t, dsn, engine.OpenOptions{})
	defer db.Close()
	if n := count(t, db, "t"); n != 3 {
		t.Errorf("%d rows after restoring the pristine copy, want 3", n)
	}
}
