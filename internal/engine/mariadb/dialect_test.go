package mariadb_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/engine/mariadb"
	"github.com/dblat/dblat/internal/engine/mariadb/mariadbtest"
)

// TestDialectRuns runs every spelling the dialect gives on the server.
func TestDialectRuns(t *testing.T) {
	db := open(t, mariadbtest.NewDatabase(t), engine.OpenOptions{})
	d := mariadb.Engine{}.Dialect()
	ctx := context.Background()
	if q := "SELECT ? FROM t WHERE a = ?"; d.Rebind(q) != q {
		t.Errorf("Rebind(%q) = %q", q, d.Rebind(q))
	}
	mustExec(t, db, d.DropTable("t"))
	mustExec(t, db, "CREATE TABLE t (id int PRIMARY KEY, amount "+d.Decimal(12, 2)+", at "+d.Timestamp+
		", name "+d.Varchar(16)+", state "+d.Char(2)+")")
	mustExec(t, db, d.Rebind("INSERT INTO t VALUES (?, ?, ?, ?, ?)"), 1, "10.50", "2026-11-21 12:00:00.123456", "x", "CA")
	mustExec(t, db, d.Analyze("t", nil))
	mustExec(t, db, d.Analyze("t", []string{"amount", "state"}))
	tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: d.LockingIsolation})
	if err != nil {
		t.Fatal(err)
	}
	var amount string
	if err := tx.QueryRowContext(ctx, d.LimitOne("SELECT amount FROM t WHERE id = ?")+d.ForUpdate, 1).Scan(&amount); err != nil || amount != "10.50" {
		t.Errorf("locking read: %q, %v", amount, err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	ro, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: d.SnapshotIsolation, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var at string
	if err := ro.QueryRowContext(ctx, "SELECT CAST(at AS CHAR) FROM t").Scan(&at); err != nil || at != "2026-11-21 12:00:00.123456" {
		t.Errorf("timestamp %q, %v", at, err)
	}
	_ = ro.Commit()
	mustExec(t, db, d.DropTable("t"))
	mustExec(t, db, d.DropTable("t"))
}
