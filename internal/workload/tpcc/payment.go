package tpcc

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// paymentInput is the terminal input of one Payment (§2.5.1).
type paymentInput struct {
	wID, dID   int
	cWID, cDID int
	byName     bool
	cID        int    // when !byName
	cLast      string // when byName
	amount     money  // H_AMOUNT
}

func (t *terminal) paymentInput() paymentInput {
	in := paymentInput{wID: t.wID, dID: t.district()}
	x, y := randInt(t.r, 1, 100), randInt(t.r, 1, 100) // (§2.5.1.2)
	if x <= 85 {
		in.cWID, in.cDID = in.wID, in.dID // home customer: 85 %
	} else {
		in.cDID = t.district() // remote customer: 15 %, from a random other warehouse
		in.cWID = t.otherWarehouse()
	}
	if y <= 60 {
		in.byName, in.cLast = true, t.customerLast() // by last name: 60 %
	} else {
		in.cID = t.customerID()
	}
	in.amount = money(randInt(t.r, 100, 500000)) // H_AMOUNT random within [1.00..5,000.00] (§2.5.1.3)
	return in
}

// paymentOutput is part of what the terminal would display (§2.5.3.3), kept for tests.
type paymentOutput struct {
	cID     int
	balance money
	credit  string
	cData   string // the first 200 characters of C_DATA when C_CREDIT = "BC"
}

type paymentStmts struct {
	pyWarehouse, pyWarehouseRead, pyDistrict, pyDistrictRead *sql.Stmt
	pyCustomersByName, pyCustomer, pyCustomerRead, pyCData   *sql.Stmt
	pyInsertHistory                                          *sql.Stmt
}

// Payment's SQL, shared by the client and batched modes.
const (
	pyWarehouseReadSQL = "SELECT " + pyWCols + " FROM warehouse WHERE w_id = ?"
	pyWCols            = "w_name, w_street_1, w_street_2, w_city, w_state, w_zip"
	pyDistrictReadSQL  = "SELECT " + pyDCols + " FROM district WHERE d_w_id = ? AND d_id = ?"
	pyDCols            = "d_name, d_street_1, d_street_2, d_city, d_state, d_zip"
	pyCWhere           = " WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"
	// C_DATA only matters for bad credit (§2.5.2.2), so it is only sent then.
	pyCCols = "c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since, " +
		"c_credit, c_credit_lim, c_discount, c_balance, CASE WHEN c_credit = 'BC' THEN c_data ELSE '' END"
	pyCustomerReadSQL = "SELECT " + pyCCols + " FROM customer" + pyCWhere
	// Customers are never inserted or deleted, so this list cannot change under the
	// transaction; only the chosen row is locked (by the UPDATE that follows). C_ID breaks
	// ties between equal first names, so every mode picks the same customer.
	pyCustomersByNameSQL = "SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first, c_id"
)

// cDataPrefix is what a payment puts at the left of a bad-credit customer's C_DATA
// (§2.5.2.2), in Appendix A's format, readable on a screen.
func cDataPrefix(cID, cDID, cWID, dID, wID int, amount money) string {
	return fmt.Sprintf("| %4d %2d %4d %2d %4d $%7s ", cID, cDID, cWID, dID, wID, amount)
}

func (s *paymentStmts) prepare(p *preparer) {
	const (
		wSet   = "UPDATE warehouse SET w_ytd = w_ytd + ? WHERE w_id = ?"
		wCols  = pyWCols
		dSet   = "UPDATE district SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND d_id = ?"
		dCols  = pyDCols
		cSet   = "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"
		cWhere = pyCWhere
		cCols  = pyCCols
	)
	if p.d.SupportsReturning {
		s.pyWarehouse = p.prep(wSet + " RETURNING " + wCols)
		s.pyDistrict = p.prep(dSet + " RETURNING " + dCols)
		s.pyCustomer = p.prep(cSet + " RETURNING " + cCols)
	} else {
		s.pyWarehouse = p.prep(wSet)
		s.pyWarehouseRead = p.prep(pyWarehouseReadSQL)
		s.pyDistrict = p.prep(dSet)
		s.pyDistrictRead = p.prep(pyDistrictReadSQL)
		s.pyCustomer = p.prep(cSet)
		s.pyCustomerRead = p.prep(pyCustomerReadSQL)
	}
	s.pyCustomersByName = p.prep(pyCustomersByNameSQL)
	s.pyCData = p.prep("UPDATE customer SET c_data = ?" + cWhere)
	s.pyInsertHistory = p.prep("INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
}

// payment runs the Payment profile (§2.5.2.2) in one database transaction. Every
// read-modify-write is an UPDATE that adds in SQL (W_YTD, D_YTD, C_BALANCE, ...), so a
// concurrent Payment waits for the row lock and then adds to the committed value: no lost
// update, no serialization failure. The only value computed on the client, the new C_DATA,
// is read after the customer row is locked.
func (w *Workload) payment(ctx context.Context, conn *sql.Conn, in paymentInput) (out paymentOutput, err error) {
	st := w.st
	now := time.Now()
	amount := in.amount.arg()
	err = inTx(ctx, conn, w.rw, func(tx *sql.Tx) error {
		var wa, da [6]string // name, street 1, street 2, city, state, zip
		// W_YTD += H_AMOUNT, then read the warehouse's name and address.
		if err := w.updateRead(ctx, tx, st.pyWarehouse, st.pyWarehouseRead, []any{amount, in.wID}, []any{in.wID},
			&wa[0], &wa[1], &wa[2], &wa[3], &wa[4], &wa[5]); err != nil {
			return notFound(err, "warehouse %d", in.wID)
		}
		// D_YTD += H_AMOUNT, then read the district's name and address.
		if err := w.updateRead(ctx, tx, st.pyDistrict, st.pyDistrictRead, []any{amount, in.wID, in.dID}, []any{in.wID, in.dID},
			&da[0], &da[1], &da[2], &da[3], &da[4], &da[5]); err != nil {
			return notFound(err, "district %d/%d", in.wID, in.dID)
		}
		out.cID = in.cID
		if in.byName {
			id, err := customerByName(ctx, tx.StmtContext(ctx, st.pyCustomersByName), in.cWID, in.cDID, in.cLast)
			if err != nil {
				return err
			}
			out.cID = id
		}
		var c struct {
			first, middle, last, st1, st2, city, state, zip, phone string
			since                                                  displayTime
			creditLim                                              money
			discount                                               rate
		}
		key := []any{in.cWID, in.cDID, out.cID}
		// C_BALANCE -= H_AMOUNT, C_YTD_PAYMENT += H_AMOUNT, C_PAYMENT_CNT += 1, then read.
		if err := w.updateRead(ctx, tx, st.pyCustomer, st.pyCustomerRead, append([]any{amount, amount}, key...), key,
			&c.first, &c.middle, &c.last, &c.st1, &c.st2, &c.city, &c.state, &c.zip, &c.phone, &c.since,
			&out.credit, &c.creditLim, &c.discount, &out.balance, &out.cData); err != nil {
			return notFound(err, "customer %d/%d/%d", in.cWID, in.cDID, out.cID)
		}
		if out.credit == "BC" {
			// Bad credit: the payment's data goes to the left of C_DATA, the old content
			// shifts right, and the result is cut at 500 characters (§2.5.2.2). The format is
			// Appendix A's, readable on a screen.
			data := cDataPrefix(out.cID, in.cDID, in.cWID, in.dID, in.wID, in.amount) + out.cData
			data = data[:min(len(data), 500)]
			if err := execOne(ctx, tx.StmtContext(ctx, st.pyCData), "customer", append([]any{data}, key...)...); err != nil {
				return err
			}
			out.cData = data[:min(len(data), 200)] // the screen shows the first 200 characters (§2.5.3.3)
		}
		// H_DATA = W_NAME + 4 spaces + D_NAME (§2.5.2.2): at most 10 + 4 + 10 = 24 characters.
		hData := wa[0] + "    " + da[0]
		_, err := tx.StmtContext(ctx, st.pyInsertHistory).ExecContext(ctx, out.cID, in.cDID, in.cWID, in.dID, in.wID, now, amount, hData)
		return err
	})
	return out, err
}

// updateRead runs an UPDATE that changes one row and scans that row's columns into dest:
// with RETURNING in one statement (upd), otherwise as the UPDATE followed by read, a SELECT
// that sees the row the transaction has just changed and locked.
func (w *Workload) updateRead(ctx context.Context, tx *sql.Tx, upd, read *sql.Stmt, updArgs, readArgs []any, dest ...any) error {
	if w.returning() {
		return tx.StmtContext(ctx, upd).QueryRowContext(ctx, updArgs...).Scan(dest...)
	}
	if err := execOne(ctx, tx.StmtContext(ctx, upd), "update", updArgs...); err != nil {
		return err
	}
	return tx.StmtContext(ctx, read).QueryRowContext(ctx, readArgs...).Scan(dest...)
}

// customerByName returns the C_ID of the customer at position ⌈n/2⌉ among the n customers
// of (wID, dID) named last, sorted by C_FIRST (§2.5.2.2, §2.6.2.2). s must select c_id
// first.
func customerByName(ctx context.Context, s *sql.Stmt, wID, dID int, last string) (int, error) {
	rows, err := s.QueryContext(ctx, wID, dID, last)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var ids []int
	for rows.Next() {
		var id int
		if err := rows.Scan(&id); err != nil {
			return 0, err
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	if len(ids) == 0 {
		// Every district has every C_LAST (customers 1..1000 iterate 0..999, §4.3.3.1).
		return 0, fmt.Errorf("tpcc: no customer named %s in district %d/%d", last, wID, dID)
	}
	return ids[middle(len(ids))], nil
}
