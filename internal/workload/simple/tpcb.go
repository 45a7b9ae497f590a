package simple

import (
	"context"
	"database/sql"
)

// tpcb runs pgbench's built-in TPC-B-like transaction (PG 15 pgbench.c, "tpcb-like"):
//
//	\set aid random(1, 100000 * :scale)
//	\set bid random(1, 1 * :scale)
//	\set tid random(1, 10 * :scale)
//	\set delta random(-5000, 5000)
//	BEGIN;
//	UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
//	SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
//	UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
//	UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
//	INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
//	END;
//
// bid is drawn independently of tid, as in pgbench. The transaction runs at
// Dialect.LockingIsolation: every row is locked by its UPDATE before it is read, and
// concurrent transactions lock accounts, tellers and branches in that order, so they queue
// and never deadlock on PostgreSQL and InnoDB. On Firebird 3.0 with record_version=rec_version
// an UPDATE that waited for a concurrent writer which then committed fails with an update
// conflict (retryable): at small scales most concurrent transactions meet on the branch row.
// The variables are drawn by Next, in the script's order, so that a retry sends the same ones.
func (t *terminal) tpcb(ctx context.Context, conn *sql.Conn) error {
	w := t.w
	aid, bid, tid, delta := t.in.aid, t.in.bid, t.in.tid, t.in.delta
	a := t.args[:]
	return inTx(ctx, conn, w.rw, func(tx *sql.Tx) error {
		a[0], a[1] = delta, aid
		if err := w.updAccount.exec(ctx, tx, a[:2]); err != nil {
			return err
		}
		var abalance int64
		a[0] = aid
		if err := w.selAccount.queryRow(ctx, conn, tx, a[:1], &abalance); err != nil {
			return err
		}
		a[0], a[1] = delta, tid
		if err := w.updTeller.exec(ctx, tx, a[:2]); err != nil {
			return err
		}
		a[0], a[1] = delta, bid
		if err := w.updBranch.exec(ctx, tx, a[:2]); err != nil {
			return err
		}
		a[0], a[1], a[2], a[3] = tid, bid, aid, delta
		return w.insHistory.exec(ctx, tx, a[:4])
	})
}
