package tpcc

import (
	"context"
	"database/sql"
	"strconv"
)

// stockLevelBatched runs the Stock-Level profile (§2.8.2.2) in one read-only batch at the
// dialect's snapshot isolation: BEGIN; SELECT D_NEXT_O_ID; the low-stock count of
// stockLevel, with D_NEXT_O_ID read again by the server in subqueries instead of sent
// back by the client; COMMIT. Under the snapshot both reads see the same D_NEXT_O_ID.
func (w *Workload) stockLevelBatched(ctx context.Context, conn *sql.Conn, in stockLevelInput) (lowStock int, err error) {
	btx, err := w.beginBatch(ctx, conn, w.ro)
	if err != nil {
		return 0, err
	}
	const next = "(SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?)"
	nextOrder := w.bstmt(1, "SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?", in.wID, in.dID)
	low := w.bstmt(1, "SELECT COUNT(DISTINCT s_i_id) FROM order_line, stock "+
		"WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id < "+next+" AND ol_o_id >= "+next+" - "+strconv.Itoa(stockLevelLookback)+" "+
		"AND s_w_id = ? AND s_i_id = ol_i_id AND s_quantity < ?",
		in.wID, in.dID, in.wID, in.dID, in.wID, in.dID, in.wID, in.threshold)
	if err := btx.Commit(ctx, nextOrder, low); err != nil {
		return 0, err
	}
	var nextOID int
	if err := single(nextOrder, &nextOID); err != nil {
		return 0, notFound(err, "district %d/%d", in.wID, in.dID)
	}
	err = single(low, &lowStock)
	return lowStock, err
}
