package tpcc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/dblat/dblat/internal/engine"
)

// deliveryBatched runs the deferred part of Delivery (§2.7.4.2) for all ten districts in
// one database transaction, like delivery, in two batches:
//
//  1. BEGIN; for each district in turn, the oldest NEW-ORDER row, read with a lock
//     (dlOldestLockedSQL, the statement of ModeClient); a district without one is skipped.
//  2. For each delivered order: DELETE its NEW-ORDER row; UPDATE ORDER (O_CARRIER_ID);
//     UPDATE ORDER-LINE (OL_DELIVERY_D); UPDATE CUSTOMER, adding Σ OL_AMOUNT and counting
//     the delivery, where the customer (O_C_ID) and the sum are read by the server in
//     subqueries after the updates above have locked those rows; COMMIT.
//
// The locking reads run in district order, as ModeClient's do, so concurrent Deliveries of
// a warehouse queue for district 1's oldest row and never hold rows the others wait for
// out of order; one that waited gets the next oldest row in the same statement. Each row
// is locked until the commit, so the DELETE of batch 2 finds it. Reading the rows without
// a lock and retrying a DELETE that found its row gone (as this function once did) locked a
// district's row after later districts' rows: PostgreSQL reported deadlocks, and on
// Firebird 3.0, whose lock manager looks for deadlocks only after DeadlockTimeout (10 s)
// and restarts that clock whenever a waiter is woken, every terminal of a Delivery-heavy
// run waited in such a cycle until the window ended. The checks of batch 2 follow the
// commit; they cannot fail on a sound database (a locked row stays, every order has its
// customer and at least five lines).
func (w *Workload) deliveryBatched(ctx context.Context, conn *sql.Conn, in deliveryInput) (out deliveryOutput, err error) {
	now := time.Now()
	btx, err := w.beginBatch(ctx, conn, w.rw)
	if err != nil {
		return out, err
	}
	oldest := make([]*engine.BatchStmt, districtsPerW)
	for d := 1; d <= districtsPerW; d++ {
		oldest[d-1] = w.bstmt(1, dlOldestLockedSQL(w.d), in.wID, d)
	}
	if err := btx.Send(ctx, oldest...); err != nil {
		return out, err
	}
	var batch []*engine.BatchStmt
	var ds []int // the district of each group of four statements in batch
	for d := 1; d <= districtsPerW; d++ {
		var o int
		if err := single(oldest[d-1], &o); errors.Is(err, sql.ErrNoRows) {
			out.skipped++ // no undelivered order: skip this district only (§2.7.4.2)
			continue
		} else if err != nil {
			return out, abort(ctx, btx, err)
		}
		out.delivered[d-1] = o
		ds = append(ds, d)
		batch = append(batch,
			w.bstmt(0, "DELETE FROM new_order WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?", in.wID, d, o),
			// O_CARRIER_ID = the input.
			w.bstmt(0, "UPDATE orders SET o_carrier_id = ? WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?", in.carrierID, in.wID, d, o),
			// OL_DELIVERY_D = now for every line.
			w.bstmt(0, "UPDATE order_line SET ol_delivery_d = ? WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?", now, in.wID, d, o),
			// C_BALANCE += Σ OL_AMOUNT, C_DELIVERY_CNT += 1 for the order's customer.
			w.bstmt(0, "UPDATE customer SET c_balance = c_balance + "+
				"(SELECT SUM(ol_amount) FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?), "+
				"c_delivery_cnt = c_delivery_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND "+
				"c_id = (SELECT o_c_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?)",
				in.wID, d, o, in.wID, d, in.wID, d, o))
	}
	if err := btx.Commit(ctx, batch...); err != nil {
		return out, err
	}
	what := [4]string{"delivery: new order", "delivery: order", "delivery: order lines", "delivery: customer"}
	for i, s := range batch {
		want := int64(1)
		if i%4 == 2 {
			want = -1 // the order's lines: at least one
		}
		d := ds[i/4]
		if err := affected(s, want, fmt.Sprintf("%s %d/%d/%d", what[i%4], in.wID, d, out.delivered[d-1])); err != nil {
			return out, err
		}
	}
	return out, nil
}
