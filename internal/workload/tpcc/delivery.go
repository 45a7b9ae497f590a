package tpcc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/dblat/dblat/internal/engine"
)

// deliveryInput is the terminal input of one Delivery (§2.7.1).
type deliveryInput struct {
	wID       int
	carrierID int
}

func (t *terminal) deliveryInput() deliveryInput {
	return deliveryInput{wID: t.wID, carrierID: randInt(t.r, 1, 10)} // O_CARRIER_ID random within [1..10] (§2.7.1.2)
}

// deliveryOutput is what the result file would record (§2.7.2.2): the delivered O_ID per
// district, 0 for a skipped district.
type deliveryOutput struct {
	delivered [districtsPerW]int
	skipped   int
}

// maxDeliveryRetries bounds how often one district's oldest NEW-ORDER row may vanish under
// a Delivery (taken by a concurrent Delivery of the same warehouse) before it gives up. With
// the locking read of dlOldestLockedSQL, which every mode uses where the dialect has one
// (canLockOldest), a row does not vanish once read; only ModeClient on a dialect without
// one retries: Deliveries of one warehouse then queue for each district's oldest row, the
// last of k finds it gone at least k−1 times, and later ones can overtake it. 100 is ten
// times TPC-C's 10 terminals per warehouse.
const maxDeliveryRetries = 100

type deliveryStmts struct {
	dlOldest, dlDelete, dlOrder, dlOrderRead, dlLines, dlLinesSum, dlCustomer *sql.Stmt
}

func (s *deliveryStmts) prepare(p *preparer) {
	// The oldest row, locked as it is read (§2.7.4.2; the spec's example program reads it
	// with a cursor and deletes WHERE CURRENT OF). Deliveries of one warehouse then queue
	// for it, and one whose row was taken while it waited gets the next one in the same
	// statement. Without a lock, a waiter found the row gone after the wait and looked
	// again, and later Deliveries overtook it: 644 of 1,244 Deliveries failed with 16
	// terminals on one warehouse and an 80 % Delivery mix. A dialect that cannot lock a
	// read falls back to MIN, and the DELETE says whether the row was still there.
	if canLockOldest(p.d) {
		s.dlOldest = p.prep(dlOldestLockedSQL(p.d))
	} else {
		s.dlOldest = p.prep("SELECT MIN(no_o_id) FROM new_order WHERE no_w_id = ? AND no_d_id = ?")
	}
	s.dlDelete = p.prep("DELETE FROM new_order WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?")
	const (
		oSet  = "UPDATE orders SET o_carrier_id = ? WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?"
		olSet = "UPDATE order_line SET ol_delivery_d = ? WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?"
	)
	if p.d.SupportsReturning {
		s.dlOrder = p.prep(oSet + " RETURNING o_c_id")
	} else {
		s.dlOrder = p.prep(oSet)
		s.dlOrderRead = p.prep("SELECT o_c_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?")
	}
	// The order's lines are several rows: RETURNING of many rows is not portable (Firebird
	// 3 returns one row at most), so the sum is read after the update, on every engine.
	s.dlLines = p.prep(olSet)
	s.dlLinesSum = p.prep("SELECT SUM(ol_amount) FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?")
	s.dlCustomer = p.prep("UPDATE customer SET c_balance = c_balance + ?, c_delivery_cnt = c_delivery_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?")
}

// delivery runs the deferred part of Delivery (§2.7.4.2) for all 10 districts in one
// database transaction, which §2.7.4.1 Comment allows. It runs inline: the queue of
// §2.7.2 (answer "queued" at once, deliver within 80 s, write a result file) is not
// modelled, as in cockroach, go-tpc and BenchBase, so the time measured is the whole
// delivery.
func (w *Workload) delivery(ctx context.Context, conn *sql.Conn, in deliveryInput) (out deliveryOutput, err error) {
	st := w.st
	now := time.Now()
	err = inTx(ctx, conn, w.rw, func(tx *sql.Tx) error {
		oldest := tx.StmtContext(ctx, st.dlOldest)
		del := tx.StmtContext(ctx, st.dlDelete)
		for d := 1; d <= districtsPerW; d++ {
			oID, err := takeOldestNewOrder(ctx, oldest, del, canLockOldest(w.d), in.wID, d)
			if err != nil {
				return err
			}
			if oID == 0 {
				// No undelivered order: skip this district only (§2.7.4.2).
				out.skipped++
				continue
			}
			out.delivered[d-1] = oID
			var cID int
			// O_CARRIER_ID = the input, and read O_C_ID.
			if err := w.updateRead(ctx, tx, st.dlOrder, st.dlOrderRead, []any{in.carrierID, in.wID, d, oID}, []any{in.wID, d, oID}, &cID); err != nil {
				return notFound(err, "order %d/%d/%d", in.wID, d, oID)
			}
			// OL_DELIVERY_D = now for every line, and Σ OL_AMOUNT.
			sum, err := w.deliverLines(ctx, tx, now, in.wID, d, oID)
			if err != nil {
				return err
			}
			// C_BALANCE += Σ OL_AMOUNT, C_DELIVERY_CNT += 1.
			if err := execOne(ctx, tx.StmtContext(ctx, st.dlCustomer), "customer", sum.arg(), in.wID, d, cID); err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}

// takeOldestNewOrder deletes the NEW-ORDER row with the lowest NO_O_ID of district (w, d)
// and returns its O_ID, or 0 if the district has none (§2.7.4.2). When locked, oldest
// locks the row it reads (dlOldestLockedSQL), so the DELETE must find it, as in the other
// modes, and an error says when it did not. Otherwise, if a concurrent Delivery took the
// row first, the DELETE finds nothing once that one commits, and the next oldest is looked
// up with a fresh statement snapshot, at most maxDeliveryRetries times.
func takeOldestNewOrder(ctx context.Context, oldest, del *sql.Stmt, locked bool, w, d int) (int, error) {
	for range maxDeliveryRetries {
		var oID sql.NullInt64
		if err := oldest.QueryRowContext(ctx, w, d).Scan(&oID); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return 0, err
		}
		if !oID.Valid {
			return 0, nil
		}
		res, err := del.ExecContext(ctx, w, d, oID.Int64)
		if err != nil {
			return 0, err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return 0, err
		}
		if n == 1 {
			return int(oID.Int64), nil
		}
		if locked {
			return 0, fmt.Errorf("tpcc: delivery: new order %d/%d/%d, read with a lock, not found", w, d, oID.Int64)
		}
	}
	return 0, fmt.Errorf("tpcc: delivery %d/%d: the oldest new order vanished %d times", w, d, maxDeliveryRetries)
}

// canLockOldest reports whether dialect d can read a district's oldest NEW-ORDER row with
// a lock (dlOldestLockedSQL): it needs a spelling of "first row only" and a locking read.
// ModeBatched requires it (checkMode); ModeClient falls back to MIN and a retry without.
func canLockOldest(d engine.Dialect) bool { return d.LimitOne != nil && d.ForUpdate != "" }

// dlOldestLockedSQL reads the oldest NEW-ORDER row of district (no_w_id, no_d_id) = (?, ?)
// and locks it until the transaction ends (§2.7.4.2): ... ORDER BY no_o_id LIMIT 1 FOR
// UPDATE, or ROWS 1 WITH LOCK. Every mode reads it so, one district after another in
// district order, the procedures in their own language (procedures_*.go); a transaction
// that waited for the row reads the next oldest once the holder commits (PostgreSQL's
// LockRows, InnoDB's locking read and Firebird's NO_RECORD_VERSION read all skip a row
// deleted meanwhile). It returns no row when the district has no undelivered order.
func dlOldestLockedSQL(d engine.Dialect) string {
	return d.LimitOne("SELECT no_o_id FROM new_order WHERE no_w_id = ? AND no_d_id = ? ORDER BY no_o_id") + d.ForUpdate
}

// deliverLines sets OL_DELIVERY_D of order (w, d, o)'s lines and returns Σ OL_AMOUNT,
// read after the update has locked the lines.
func (w *Workload) deliverLines(ctx context.Context, tx *sql.Tx, now time.Time, wID, d, o int) (money, error) {
	res, err := tx.StmtContext(ctx, w.st.dlLines).ExecContext(ctx, now, wID, d, o)
	if err != nil {
		return 0, err
	}
	if n, err := res.RowsAffected(); err != nil {
		return 0, err
	} else if n == 0 {
		return 0, fmt.Errorf("tpcc: delivered order %d/%d/%d has no lines", wID, d, o)
	}
	var sum money
	err = tx.StmtContext(ctx, w.st.dlLinesSum).QueryRowContext(ctx, wID, d, o).Scan(&sum)
	return sum, err
}
