package firebird_test

import (
	"context"
	"database/sql"
	"testing"
)

// mustExec runs statements in one transaction and commits it.
func mustExec(t testing.TB, db *sql.DB, stmts ...string) {
	t.Helper()
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range stmts {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			tx.Rollback()
			t.Fatalf("%s: %v", s, err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}
