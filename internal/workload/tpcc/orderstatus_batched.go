package tpcc

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/dblat/dblat/internal/engine"
)

// Order-Status's batched SQL: the customer's last order and its lines, found on the
// server as the order with the largest O_ID of (W, D, C) (§2.6.2.2).
const (
	osLastOrderIDSQL = "(SELECT MAX(o_id) FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ?)"
	osLastOrderSQL   = "SELECT o_id, o_entry_d, o_carrier_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = " + osLastOrderIDSQL
	osLastLinesSQL   = "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = " + osLastOrderIDSQL
)

// orderStatusBatched runs the Order-Status profile (§2.6.2.2) in one read-only batch at
// the dialect's snapshot isolation when the customer is chosen by number: BEGIN; SELECT
// the customer; SELECT the customer's last order; SELECT its lines; COMMIT. By last name
// the customers of that name come first, in a batch of their own, since the client picks
// the middle one. The snapshot makes the three reads agree, as in ModeClient.
func (w *Workload) orderStatusBatched(ctx context.Context, conn *sql.Conn, in orderStatusInput) (out orderStatusOutput, err error) {
	btx, err := w.beginBatch(ctx, conn, w.ro)
	if err != nil {
		return out, err
	}
	var first, middleName, last string
	var cust *engine.BatchStmt
	if in.byName {
		byName := w.bstmt(5, osCustomersByNameSQL, in.wID, in.dID, in.cLast)
		if err := btx.Send(ctx, byName); err != nil {
			return out, err
		}
		if len(byName.Rows) == 0 {
			return out, abort(ctx, btx, fmt.Errorf("tpcc: no customer named %s in district %d/%d", in.cLast, in.wID, in.dID))
		}
		// Position ⌈n/2⌉ sorted by C_FIRST (§2.6.2.2).
		if err := scanValues(byName.Rows[middle(len(byName.Rows))], &out.cID, &out.balance, &first, &middleName, &last); err != nil {
			return out, abort(ctx, btx, err)
		}
	} else {
		out.cID = in.cID
		cust = w.bstmt(4, osCustomerSQL, in.wID, in.dID, in.cID)
	}
	order := w.bstmt(3, osLastOrderSQL, in.wID, in.dID, in.wID, in.dID, out.cID)
	lines := w.bstmt(5, osLastLinesSQL, in.wID, in.dID, in.wID, in.dID, out.cID)
	if err := btx.Commit(ctx, stmts(cust, order, lines)...); err != nil {
		return out, err
	}
	if cust != nil {
		if err := single(cust, &out.balance, &first, &middleName, &last); err != nil {
			return out, notFound(err, "customer %d/%d/%d", in.wID, in.dID, in.cID)
		}
	}
	var entry displayTime
	// Every customer has an order from the load (§4.3.3.1: O_C_ID is a permutation).
	if err := single(order, &out.oID, &entry, &out.carrier); err != nil {
		return out, notFound(err, "order of customer %d/%d/%d", in.wID, in.dID, out.cID)
	}
	for _, r := range lines.Rows {
		var iID, supplyWID, qty int
		var amount money
		var delivery displayTime
		if err := scanValues(r, &iID, &supplyWID, &qty, &amount, &delivery); err != nil {
			return out, err
		}
		out.lines++
	}
	return out, nil
}
