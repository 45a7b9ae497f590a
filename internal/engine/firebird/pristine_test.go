package firebird_test

import (
	"context"
	"database/sql"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/engine/firebird"
	"github.com/dblat/dblat/internal/engine/firebird/fbtest"
	"github.com/dblat/dblat/internal/option"
)

func count(t *testing.T, db *sql.DB, table string) int {
	t.Helper()
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRestorePristine saves a database's pristine copy, changes the database, and restores
// it, in each architecture: after the pool is closed, and with a connection left open, which
// the restore disconnects.
func TestRestorePristine(t *testing.T) {
	e := firebird.Engine{}
	if e.CanRestore(false) || !e.CanRestore(true) {
		t.Errorf("CanRestore(false) = %v, CanRestore(true) = %v: want managed servers only", e.CanRestore(false), e.CanRestore(true))
	}
	for _, arch := range fbtest.Architectures {
		t.Run(arch, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			dsn := fbtest.NewDatabase(t, arch)
			path := dbPath(t, dsn)
			t.Cleanup(func() { os.Remove(path + ".pristine") })
			db, err := e.Open(ctx, dsn, engine.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			mustExec(t, db, "CREATE TABLE t (id INTEGER)")
			mustExec(t, db, "INSERT INTO t VALUES (1)", "INSERT INTO t VALUES (2)", "INSERT INTO t VALUES (3)")
			db.Close()

			if ok, err := e.HasPristine(ctx, dsn); ok || err != nil {
				t.Fatalf("HasPristine before saving: %v, %v", ok, err)
			}
			if err := e.SavePristine(ctx, dsn); err != nil {
				t.Fatal(err)
			}
			if ok, err := e.HasPristine(ctx, dsn); !ok || err != nil {
				t.Fatalf("HasPristine after saving: %v, %v", ok, err)
			}
			orig, _ := os.Stat(path)
			copied, _ := os.Stat(path + ".pristine")
			if o, c := orig.Sys().(*syscall.Stat_t), copied.Sys().(*syscall.Stat_t); o.Uid != c.Uid || orig.Mode() != copied.Mode() {
				t.Errorf("pristine copy owned by %d mode %v, database by %d mode %v", c.Uid, copied.Mode(), o.Uid, orig.Mode())
			}

			db = open(t, dsn, engine.OpenOptions{})
			mustExec(t, db, "DELETE FROM t WHERE id = 1", "INSERT INTO t VALUES (4)", "INSERT INTO t VALUES (5)")
			db.Close()
			if err := e.RestorePristine(ctx, dsn); err != nil {
				t.Fatal(err)
			}
			db = open(t, dsn, engine.OpenOptions{})
			if n := count(t, db, "t"); n != 3 {
				t.Errorf("%d rows after the restore, want the pristine 3", n)
			}
			// A connection left open is disconnected after a few seconds.
			mustExec(t, db, "INSERT INTO t VALUES (6)")
			start := time.Now()
			if err := e.RestorePristine(ctx, dsn); err != nil {
				t.Fatal(err)
			}
			t.Logf("restore with a connection open took %v", time.Since(start))
			db.Close()
			db = open(t, dsn, engine.OpenOptions{})
			if n := count(t, db, "t"); n != 3 {
				t.Errorf("%d rows after the second restore, want the pristine 3", n)
			}
		})
	}
}

func TestRestoreRefusesRemoteDatabases(t *testing.T) {
	e := firebird.Engine{}
	_, err := e.HasPristine(context.Background(), "SYSDBA:pw@192.0.2.1:3050/srv/bench.fdb")
	if err == nil || !strings.Contains(err.Error(), "not on this machine") || strings.Contains(err.Error(), ":pw@") {
		t.Errorf("remote database: %v", err)
	}
}

// TestDatabasePageSize creates a database per page size on one server, and checks that
// sweep and gstat work on the run's database rather than bench.fdb.
func TestDatabasePageSize(t *testing.T) {
	ctx := context.Background()
	e := firebird.Engine{}
	inst := fbtest.Server(t, "Super")
	for _, vals := range []option.Values{{}, {firebird.OptionPageSize: "8192"}} {
		if dsn, err := e.Database(ctx, inst, vals); err != nil || dsn != inst.DSN {
			t.Errorf("Database(%v) = %s, %v; want the server's own database (8192-byte pages)", vals, dsn, err)
		}
	}
	if _, err := e.DatabaseOptions().Check(map[string]string{firebird.OptionPageSize: "32768"}); err == nil {
		t.Error("page_size 32768 accepted")
	}
	dsn, err := e.Database(ctx, inst, option.Values{firebird.OptionPageSize: "4096"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(dsn, "bench-p4096.fdb") {
		t.Errorf("4096-byte database %s", dsn)
	}
	db := open(t, dsn, engine.OpenOptions{})
	info, err := e.Inspect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if got := info.Settings[firebird.KeyPageSize]; got != "4096" {
		t.Errorf("page size %s, want 4096", got)
	}
	// RECREATE: the package's servers live as long as its tests (-count=N runs this again).
	mustExec(t, db, "RECREATE TABLE paged (id INTEGER)")
	mustExec(t, db, "INSERT INTO paged VALUES (1)", "UPDATE paged SET id = 2")
	db.Close()
	again, err := e.Database(ctx, inst, option.Values{firebird.OptionPageSize: "4096"})
	if err != nil || again != dsn {
		t.Fatalf("second Database: %s, %v; want %s", again, err, dsn)
	}
	db = open(t, dsn, engine.OpenOptions{})
	if n := count(t, db, "paged"); n != 1 {
		t.Errorf("the database was recreated: %d rows", n)
	}
	db.Close()

	if _, err := firebird.SweepDatabase(ctx, inst, dsn); err != nil {
		t.Fatal(err)
	}
	st, err := firebird.DatabaseRecordStats(ctx, inst, dsn)
	if err != nil {
		t.Fatal(err)
	}
	if st["gstat.PAGED.records"] != 1 {
		t.Errorf("gstat of the 4096-byte database: %v", st)
	}
	bench, err := firebird.DatabaseRecordStats(ctx, inst, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := bench["gstat.PAGED.records"]; ok {
		t.Errorf("gstat of bench.fdb shows the other database's table")
	}
	other := strings.Replace(dsn, "/data/bench-p4096.fdb", "/bench-p4096.fdb", 1)
	if _, err := firebird.SweepDatabase(ctx, inst, other); err == nil || !strings.Contains(err.Error(), "not a database of server") {
		t.Errorf("sweep of a file outside the data directory: %v", err)
	}
}
