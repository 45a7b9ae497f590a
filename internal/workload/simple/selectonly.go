package simple

import (
	"context"
	"database/sql"
)

// selectOnly runs pgbench's built-in select-only script (PG 15 pgbench.c, "select-only"):
//
//	\set aid random(1, 100000 * :scale)
//	SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
//
// pgbench sends it without BEGIN/END, so the server commits it on its own: one statement,
// one round trip. It runs alone on conn here too, except on engines whose autocommit is
// unsafe (TxOnly), where it runs in a read-only transaction: BEGIN and COMMIT then cost two
// more round trips, which Workload.ExplicitTx reports.
func (t *terminal) selectOnly(ctx context.Context, conn *sql.Conn) error {
	a := t.args[:1]
	a[0] = t.in.aid // drawn by Next
	var abalance int64
	return t.single(ctx, conn, func(tx *sql.Tx) error {
		return t.w.selAccount.queryRow(ctx, conn, tx, a, &abalance)
	})
}
