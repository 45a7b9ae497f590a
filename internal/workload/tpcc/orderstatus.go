package tpcc

import (
	"context"
	"database/sql"
	"fmt"
)

// orderStatusInput is the terminal input of one Order-Status (§2.6.1): the customer is
// always from the home warehouse.
type orderStatusInput struct {
	wID, dID int
	byName   bool
	cID      int
	cLast    string
}

func (t *terminal) orderStatusInput() orderStatusInput {
	in := orderStatusInput{wID: t.wID, dID: t.district()}
	if randInt(t.r, 1, 100) <= 60 { // y random within [1..100]; by last name if y <= 60 (§2.6.1.2)
		in.byName, in.cLast = true, t.customerLast()
	} else {
		in.cID = t.customerID()
	}
	return in
}

// orderStatusOutput is part of what the terminal would display (§2.6.3.3), kept for tests.
type orderStatusOutput struct {
	cID     int
	balance money
	oID     int
	carrier sql.NullInt64
	lines   int
}

// Order-Status's SQL, shared by the client and batched modes. C_ID breaks ties between
// equal first names, as in Payment.
const (
	osCustomersByNameSQL = "SELECT c_id, c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first, c_id"
	osCustomerSQL        = "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"
	osLinesSQL           = "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?"
)

type orderStatusStmts struct {
	osCustomersByName, osCustomer, osLastOrder, osLines *sql.Stmt
}

func (s *orderStatusStmts) prepare(p *preparer) {
	s.osCustomersByName = p.prep(osCustomersByNameSQL)
	s.osCustomer = p.prep(osCustomerSQL)
	// The customer's order with the largest O_ID (§2.6.2.2), through the index on
	// (o_w_id, o_d_id, o_c_id, o_id). Without a dialect spelling for "first row only", all
	// of the customer's orders are sent and the client keeps the first.
	last := "SELECT o_id, o_entry_d, o_carrier_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? ORDER BY o_id DESC"
	if p.d.LimitOne != nil {
		last = p.d.LimitOne(last)
	}
	s.osLastOrder = p.prep(last)
	s.osLines = p.prep(osLinesSQL)
}

// orderStatus runs the Order-Status profile (§2.6.2.2) in one read-only transaction at
// the dialect's snapshot isolation: its three reads see one committed state, so a
// concurrent New-Order or Delivery is seen entirely or not at all (isolation tests 1, 2
// and 9 of §3.4.2). The transaction is committed, although §2.6.2.2 Comment would allow
// skipping that.
func (w *Workload) orderStatus(ctx context.Context, conn *sql.Conn, in orderStatusInput) (out orderStatusOutput, err error) {
	st := w.st
	err = inTx(ctx, conn, w.ro, func(tx *sql.Tx) error {
		var first, middleName, last string
		if in.byName {
			rows, err := tx.StmtContext(ctx, st.osCustomersByName).QueryContext(ctx, in.wID, in.dID, in.cLast)
			if err != nil {
				return err
			}
			type cust struct {
				id                  int
				balance             money
				first, middle, last string
			}
			var cs []cust
			for rows.Next() {
				var c cust
				if err := rows.Scan(&c.id, &c.balance, &c.first, &c.middle, &c.last); err != nil {
					rows.Close()
					return err
				}
				cs = append(cs, c)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			if len(cs) == 0 {
				return fmt.Errorf("tpcc: no customer named %s in district %d/%d", in.cLast, in.wID, in.dID)
			}
			c := cs[middle(len(cs))] // position ⌈n/2⌉ sorted by C_FIRST (§2.6.2.2)
			out.cID, out.balance, first, middleName, last = c.id, c.balance, c.first, c.middle, c.last
		} else {
			out.cID = in.cID
			err := tx.StmtContext(ctx, st.osCustomer).QueryRowContext(ctx, in.wID, in.dID, in.cID).Scan(&out.balance, &first, &middleName, &last)
			if err != nil {
				return notFound(err, "customer %d/%d/%d", in.wID, in.dID, in.cID)
			}
		}
		var entry displayTime
		// QueryRow reads the first row and discards the rest (the case without LimitOne).
		err := tx.StmtContext(ctx, st.osLastOrder).QueryRowContext(ctx, in.wID, in.dID, out.cID).Scan(&out.oID, &entry, &out.carrier)
		if err != nil {
			// Every customer has an order from the load (§4.3.3.1: O_C_ID is a permutation).
			return notFound(err, "order of customer %d/%d/%d", in.wID, in.dID, out.cID)
		}
		rows, err := tx.StmtContext(ctx, st.osLines).QueryContext(ctx, in.wID, in.dID, out.oID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var iID, supplyWID, qty int
			var amount money
			var delivery displayTime
			if err := rows.Scan(&iID, &supplyWID, &qty, &amount, &delivery); err != nil {
				return err
			}
			out.lines++
		}
		return rows.Err()
	})
	return out, err
}
