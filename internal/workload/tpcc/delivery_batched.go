package tpcc

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/dblat/dblat/internal/engine"
)

// deliveryBatched runs the deferred part of Delivery (§2.7.4.2) for all ten districts in
// one database transaction, like delivery, in three batches:
//
//  1. BEGIN; the oldest NEW-ORDER row of every district of the warehouse (one SELECT ...
//     GROUP BY no_d_id; a district without one is skipped).
//  2. DELETE each of those rows. The row counts say which were still there: the DELETE
//     locks the row, as in ModeClient.
//  3. For each delivered order: UPDATE ORDER (O_CARRIER_ID); UPDATE ORDER-LINE
//     (OL_DELIVERY_D); UPDATE CUSTOMER, adding Σ OL_AMOUNT and counting the delivery,
//     where the customer (O_C_ID) and the sum are read by the server in subqueries after
//     the updates above have locked those rows; COMMIT.
//
// When a concurrent Delivery took a district's oldest row between batches 1 and 2, that
// district's oldest row is looked up and deleted again (a batch each), at most
// maxDeliveryRetries times. That retry locks a row of its district after the rows of the
// later districts, which ModeClient never does, so it can deadlock with a third Delivery
// of the same warehouse; the engine detects that and the runner counts it as retryable
// (2 in about 100 Deliveries in one 5 s run of 10 terminals on one warehouse, none in
// the next two). The checks of batch 3 follow the commit; they cannot fail on a sound
// database (every order has its customer and at least five lines).
func (w *Workload) deliveryBatched(ctx context.Context, conn *sql.Conn, in deliveryInput) (out deliveryOutput, err error) {
	now := time.Now()
	btx, err := w.beginBatch(ctx, conn, w.rw)
	if err != nil {
		return out, err
	}
	// MIN needs neither "first row only" nor a lock: the DELETE that follows locks the row
	// and says whether it was still there.
	first := w.bstmt(2, "SELECT no_d_id, MIN(no_o_id) FROM new_order WHERE no_w_id = ? GROUP BY no_d_id", in.wID)
	if err := btx.Send(ctx, first); err != nil {
		return out, err
	}
	var oldest [districtsPerW]int // 0: none
	for _, r := range first.Rows {
		var d, o int
		if err := scanValues(r, &d, &o); err != nil {
			return out, abort(ctx, btx, err)
		}
		if d >= 1 && d <= districtsPerW {
			oldest[d-1] = o
		}
	}
	for attempt := 0; ; attempt++ {
		var dels []*engine.BatchStmt
		var ds []int
		for d := 1; d <= districtsPerW; d++ {
			if oldest[d-1] != 0 && out.delivered[d-1] == 0 {
				dels = append(dels, w.bstmt(0, "DELETE FROM new_order WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?", in.wID, d, oldest[d-1]))
				ds = append(ds, d)
			}
		}
		if len(dels) == 0 {
			break
		}
		if attempt == maxDeliveryRetries {
			return out, abort(ctx, btx, fmt.Errorf("tpcc: delivery %d/%d: the oldest new order vanished %d times", in.wID, ds[0], maxDeliveryRetries))
		}
		if err := btx.Send(ctx, dels...); err != nil {
			return out, err
		}
		var again []*engine.BatchStmt
		var againDs []int
		for i, d := range ds {
			if dels[i].RowsAffected == 1 {
				out.delivered[d-1] = oldest[d-1]
				continue
			}
			// Taken by a concurrent Delivery: look again, with a fresh statement snapshot.
			again = append(again, w.bstmt(1, "SELECT MIN(no_o_id) FROM new_order WHERE no_w_id = ? AND no_d_id = ?", in.wID, d))
			againDs = append(againDs, d)
		}
		if len(again) == 0 {
			break
		}
		if err := btx.Send(ctx, again...); err != nil {
			return out, err
		}
		for i, d := range againDs {
			var o sql.NullInt64
			if err := single(again[i], &o); err != nil {
				return out, abort(ctx, btx, err)
			}
			oldest[d-1] = int(o.Int64) // 0 when none is left
		}
	}

	var batch []*engine.BatchStmt
	for d := 1; d <= districtsPerW; d++ {
		o := out.delivered[d-1]
		if o == 0 {
			out.skipped++ // no undelivered order: skip this district only (§2.7.4.2)
			continue
		}
		batch = append(batch,
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
	for i, s := range batch {
		want := int64(1)
		if i%3 == 1 {
			want = -1 // the order's lines: at least one
		}
		if err := affected(s, want, "delivery"); err != nil {
			return out, err
		}
	}
	return out, nil
}
