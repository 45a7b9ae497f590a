package tpcc

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/dblat/dblat/internal/engine"
)

// paymentBatched runs the Payment profile (§2.5.2.2) in one batch when the customer is
// chosen by number and in two when by last name (60 %):
//
//  1. BEGIN; UPDATE WAREHOUSE (W_YTD + H_AMOUNT) and read its name and address; the same
//     for DISTRICT; by last name: SELECT the customers of that name, and send.
//  2. UPDATE CUSTOMER (C_BALANCE, C_YTD_PAYMENT, C_PAYMENT_CNT and, for bad credit, the
//     new C_DATA built on the server: the payment's line at the left of the old data, cut
//     at 500 characters) and read it back; INSERT HISTORY with H_DATA = W_NAME, four
//     spaces and D_NAME, read on the server; COMMIT.
//
// The server combines C_DATA and H_DATA so that no value has to travel to the client and
// back; the rows are locked in the order of ModeClient. The checks that the customer was
// found come after the commit: with C_ID drawn from 1..3000 (or from the customers of a
// name) it always is in a sound database, and an error is reported if not.
func (w *Workload) paymentBatched(ctx context.Context, conn *sql.Conn, in paymentInput) (out paymentOutput, err error) {
	now := time.Now()
	btx, err := w.beginBatch(ctx, conn, w.rw)
	if err != nil {
		return out, err
	}
	amount := w.decimal(6, 2) // H_AMOUNT is NUMERIC(6,2) (§1.3)
	wUpd, wRead := w.batchUpdateRead(6, "UPDATE warehouse SET w_ytd = w_ytd + "+amount+" WHERE w_id = ?", pyWCols,
		[]any{in.amount, in.wID}, pyWarehouseReadSQL, []any{in.wID})
	dUpd, dRead := w.batchUpdateRead(6, "UPDATE district SET d_ytd = d_ytd + "+amount+" WHERE d_w_id = ? AND d_id = ?", pyDCols,
		[]any{in.amount, in.wID, in.dID}, pyDistrictReadSQL, []any{in.wID, in.dID})
	var byName *engine.BatchStmt
	if in.byName {
		byName = w.bstmt(1, pyCustomersByNameSQL, in.cWID, in.cDID, in.cLast)
		if err := btx.Send(ctx, stmts(wUpd, wRead, dUpd, dRead, byName)...); err != nil {
			return out, err
		}
		if err := w.checkWarehouseDistrict(wUpd, dUpd, in); err != nil {
			return out, abort(ctx, btx, err)
		}
		if len(byName.Rows) == 0 {
			return out, abort(ctx, btx, fmt.Errorf("tpcc: no customer named %s in district %d/%d", in.cLast, in.cWID, in.cDID))
		}
		// The customer at position ⌈n/2⌉ sorted by C_FIRST (§2.5.2.2).
		if err := scanValues(byName.Rows[middle(len(byName.Rows))], &out.cID); err != nil {
			return out, abort(ctx, btx, err)
		}
	} else {
		out.cID = in.cID
	}

	key := []any{in.cWID, in.cDID, out.cID}
	// C_BALANCE -= H_AMOUNT, C_YTD_PAYMENT += H_AMOUNT, C_PAYMENT_CNT += 1 and, for bad
	// credit, C_DATA = left(prefix || C_DATA, 500) (§2.5.2.2), then read.
	cData := "SUBSTRING(" + w.d.Concat("CAST(? AS "+w.d.Varchar(500)+")", "c_data") + " FROM 1 FOR 500)"
	cUpd, cRead := w.batchUpdateRead(15, "UPDATE customer SET c_balance = c_balance - "+amount+", c_ytd_payment = c_ytd_payment + "+amount+
		", c_payment_cnt = c_payment_cnt + 1, c_data = CASE WHEN c_credit = 'BC' THEN "+cData+" ELSE c_data END"+pyCWhere, pyCCols,
		append([]any{in.amount, in.amount, cDataPrefix(out.cID, in.cDID, in.cWID, in.dID, in.wID, in.amount)}, key...),
		pyCustomerReadSQL, key)
	// H_DATA = W_NAME + 4 spaces + D_NAME (§2.5.2.2), at most 24 characters.
	history := w.bstmt(0, "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data) "+
		"SELECT ?, ?, ?, ?, ?, ?, "+amount+", "+w.d.Concat("w_name", "'    '", "d_name")+
		" FROM warehouse, district WHERE w_id = ? AND d_w_id = ? AND d_id = ?",
		out.cID, in.cDID, in.cWID, in.dID, in.wID, now, in.amount, in.wID, in.wID, in.dID)
	last := stmts(cUpd, cRead, history)
	if byName == nil {
		last = stmts(wUpd, wRead, dUpd, dRead, cUpd, cRead, history)
	}
	if err := btx.Commit(ctx, last...); err != nil {
		return out, err
	}

	if byName == nil {
		if err := w.checkWarehouseDistrict(wUpd, dUpd, in); err != nil {
			return out, err
		}
	}
	if err := w.checkUpdated(cUpd, fmt.Sprintf("customer %d/%d/%d", in.cWID, in.cDID, out.cID)); err != nil {
		return out, err
	}
	var c struct {
		first, middle, last, st1, st2, city, state, zip, phone string
		since                                                  displayTime
		creditLim                                              money
		discount                                               rate
	}
	if err := single(cRead, &c.first, &c.middle, &c.last, &c.st1, &c.st2, &c.city, &c.state, &c.zip, &c.phone, &c.since,
		&out.credit, &c.creditLim, &c.discount, &out.balance, &out.cData); err != nil {
		return out, err
	}
	out.cData = out.cData[:min(len(out.cData), 200)] // the screen shows the first 200 characters (§2.5.3.3)
	var wa, da [6]string
	if err := single(wRead, &wa[0], &wa[1], &wa[2], &wa[3], &wa[4], &wa[5]); err != nil {
		return out, err
	}
	if err := single(dRead, &da[0], &da[1], &da[2], &da[3], &da[4], &da[5]); err != nil {
		return out, err
	}
	return out, affected(history, 1, "history insert")
}

// checkWarehouseDistrict checks that Payment's warehouse and district updates found their
// rows.
func (w *Workload) checkWarehouseDistrict(wUpd, dUpd *engine.BatchStmt, in paymentInput) error {
	if err := w.checkUpdated(wUpd, fmt.Sprintf("warehouse %d", in.wID)); err != nil {
		return err
	}
	return w.checkUpdated(dUpd, fmt.Sprintf("district %d/%d", in.wID, in.dID))
}
