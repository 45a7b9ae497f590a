package tpcc

import (
	"context"
	"database/sql"
)

// stockLevelInput is the terminal input of one Stock-Level (§2.8.1).
type stockLevelInput struct {
	wID, dID  int
	threshold int
}

func (t *terminal) stockLevelInput() stockLevelInput {
	// W_ID and D_ID are the terminal's own (§2.8.1.1); threshold random within [10..20]
	// (§2.8.1.2).
	return stockLevelInput{wID: t.wID, dID: t.slDistrict, threshold: randInt(t.r, 10, 20)}
}

// stockLevelLookback is how many of the district's latest orders Stock-Level examines:
// the last 20 (§2.8.2.2).
const stockLevelLookback = 20

type stockLevelStmts struct {
	slNextOrder, slLowStock *sql.Stmt
}

func (s *stockLevelStmts) prepare(p *preparer) {
	s.slNextOrder = p.prep("SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?")
	// Appendix A's single query: distinct items of the last 20 orders whose home-warehouse
	// stock is below the threshold; an item ordered twice counts once (§2.8.2.2).
	s.slLowStock = p.prep("SELECT COUNT(DISTINCT s_i_id) FROM order_line, stock " +
		"WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id < ? AND ol_o_id >= ? " +
		"AND s_w_id = ? AND s_i_id = ol_i_id AND s_quantity < ?")
}

// stockLevel runs the Stock-Level profile (§2.8.2.2) in one read-only transaction at the
// dialect's snapshot isolation; §2.8.2.3 would allow read committed, and the snapshot
// costs nothing extra on a read-only transaction. It returns low_stock.
func (w *Workload) stockLevel(ctx context.Context, conn *sql.Conn, in stockLevelInput) (lowStock int, err error) {
	st := w.st
	err = inTx(ctx, conn, w.ro, func(tx *sql.Tx) error {
		var next int
		if err := tx.StmtContext(ctx, st.slNextOrder).QueryRowContext(ctx, in.wID, in.dID).Scan(&next); err != nil {
			return notFound(err, "district %d/%d", in.wID, in.dID)
		}
		return tx.StmtContext(ctx, st.slLowStock).QueryRowContext(ctx, in.wID, in.dID, next, next-stockLevelLookback, in.wID, in.threshold).Scan(&lowStock)
	})
	return lowStock, err
}
