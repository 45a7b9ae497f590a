package tpcc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// unusedItem is the item number of New-Order's designed rollback (§2.4.1.4): I_ID has room
// for 200,000 IDs of which 1..100,000 are populated (§1.3, §4.3.3.1), so 100,001 is a
// valid but unused ID. Being above every valid ID, it is processed last (see newOrder).
const unusedItem = numItems + 1

// orderLineInput is one item of a New-Order (§2.4.1.5).
type orderLineInput struct {
	number    int // OL_NUMBER: position in the input, 1-based
	iID       int
	supplyWID int
	quantity  int
}

// newOrderInput is the terminal input of one New-Order (§2.4.1).
type newOrderInput struct {
	wID, dID, cID int
	lines         []orderLineInput
	rbk           bool // the last item is unusedItem (§2.4.1.4)
	remoteLines   int  // lines with OL_SUPPLY_W_ID != W_ID (§2.4.1.5)
}

func (t *terminal) newOrderInput() newOrderInput {
	in := newOrderInput{wID: t.wID, dID: t.district(), cID: t.customerID()}
	olCnt := randInt(t.r, 5, 15)       // ol_cnt random within [5..15] (§2.4.1.3)
	in.rbk = randInt(t.r, 1, 100) == 1 // rbk random within [1..100]; 1 means roll back (§2.4.1.4)
	in.lines = make([]orderLineInput, olCnt)
	for i := range in.lines {
		l := orderLineInput{number: i + 1, supplyWID: t.wID}
		l.iID = nurand(t.r, aOLIID, t.w.c.cItem, 1, numItems) // NURand(8191, 1, 100000) (§2.4.1.5.1)
		if in.rbk && i == olCnt-1 {
			l.iID = unusedItem // the last item is unused when rbk = 1 (§2.4.1.5.1)
		}
		// x random within [1..100]: 1 % of lines are supplied by a remote warehouse (§2.4.1.5.2).
		if randInt(t.r, 1, 100) == 1 {
			l.supplyWID = t.otherWarehouse()
		}
		if l.supplyWID != t.wID {
			in.remoteLines++
		}
		l.quantity = randInt(t.r, 1, 10) // random within [1..10] (§2.4.1.5.3)
		in.lines[i] = l
	}
	return in
}

// processingOrder returns the lines in the order every mode processes them: by
// (OL_I_ID, OL_SUPPLY_W_ID), input order among equals (see newOrder).
func (in newOrderInput) processingOrder() []orderLineInput {
	order := slices.Clone(in.lines)
	slices.SortStableFunc(order, func(a, b orderLineInput) int {
		if a.iID != b.iID {
			return a.iID - b.iID
		}
		return a.supplyWID - b.supplyWID
	})
	return order
}

// allLocal is O_ALL_LOCAL: 1 only if every line is home (§2.4.2.2).
func (in newOrderInput) allLocal() int {
	if in.remoteLines > 0 {
		return 0
	}
	return 1
}

// brand is brand-generic (§2.4.2.2): 'B' if both I_DATA and S_DATA contain "ORIGINAL",
// else 'G'.
func brand(iData, sData string) byte {
	if strings.Contains(iData, "ORIGINAL") && strings.Contains(sData, "ORIGINAL") {
		return 'B'
	}
	return 'G'
}

// newOrderOutput is what the terminal would display (§2.4.3.3), kept for tests.
type newOrderOutput struct {
	oID         int
	cLast       string
	cCredit     string
	total       int64 // total_amount in 10^-10 units (cents × 10^-4 × 10^-4)
	lineAmounts []money
	brands      []byte // 'B' or 'G' per line, in OL_NUMBER order
}

type newOrderStmts struct {
	noWarehouse, noDistrict, noDistrictRead, noCustomer   *sql.Stmt
	noInsertOrder, noInsertNewOrder, noItem, noInsertLine *sql.Stmt
	// Per D_ID, because the S_DIST_xx column read depends on it (§2.4.2.2).
	noStock, noStockRead [districtsPerW]*sql.Stmt
}

// New-Order's SQL, shared by the client and batched modes.
const (
	noWarehouseSQL = "SELECT w_tax FROM warehouse WHERE w_id = ?"
	// D_NEXT_O_ID is incremented in the same statement that reads it: the UPDATE locks the
	// row, so concurrent New-Orders of one district queue here and each gets its own O_ID.
	noDistrictSQL          = "UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = ? AND d_id = ?"
	noDistrictReturningSQL = noDistrictSQL + " RETURNING d_tax, d_next_o_id"
	noDistrictReadSQL      = "SELECT d_tax, d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?"
	noCustomerSQL          = "SELECT c_discount, c_last, c_credit FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"
	noInsertOrderSQL       = "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local) VALUES (?, ?, ?, ?, ?, NULL, ?, ?)"
	noInsertNewOrderSQL    = "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)"
	noItemSQL              = "SELECT i_price, i_name, i_data FROM item WHERE i_id = ?"
	// The S_QUANTITY rule of §2.4.2.2 in SQL: the first parameter is OL_QUANTITY + 10.
	// Arguments: stockArgs.
	noStockSQL = "UPDATE stock SET s_quantity = CASE WHEN s_quantity >= ? THEN s_quantity - ? ELSE s_quantity - ? + 91 END, " +
		"s_ytd = s_ytd + ?, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + ? WHERE s_i_id = ? AND s_w_id = ?"
	noInsertLineSQL = "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) " +
		"VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?, ?)"
)

// noInsertLineWith is noInsertLineSQL with amount (a placeholder expression) for OL_AMOUNT.
func noInsertLineWith(amount string) string {
	return strings.Replace(noInsertLineSQL, "NULL, ?, ?, ?)", "NULL, ?, "+amount+", ?)", 1)
}

// sDist is the S_DIST_xx column of district dID (§2.4.2.2).
func sDist(dID int) string { return fmt.Sprintf("s_dist_%02d", dID) }

// noStockReturningSQL updates a stock row and reads it back, for district dID.
func noStockReturningSQL(dID int) string {
	return noStockSQL + " RETURNING s_quantity, " + sDist(dID) + ", s_data"
}

// noStockReadSQL reads a stock row, for district dID.
func noStockReadSQL(dID int) string {
	return "SELECT s_quantity, " + sDist(dID) + ", s_data FROM stock WHERE s_i_id = ? AND s_w_id = ?"
}

// stockArgs are noStockSQL's arguments for line l of an order of home warehouse wID.
func stockArgs(l orderLineInput, wID int) []any {
	remote := 0
	if l.supplyWID != wID {
		remote = 1 // S_REMOTE_CNT += 1 for remote lines (§2.4.2.2)
	}
	return []any{l.quantity + 10, l.quantity, l.quantity, l.quantity, remote, l.iID, l.supplyWID}
}

func (s *newOrderStmts) prepare(p *preparer) {
	s.noWarehouse = p.prep(noWarehouseSQL)
	if p.d.SupportsReturning {
		s.noDistrict = p.prep(noDistrictReturningSQL)
	} else {
		s.noDistrict = p.prep(noDistrictSQL)
		s.noDistrictRead = p.prep(noDistrictReadSQL)
	}
	s.noCustomer = p.prep(noCustomerSQL)
	s.noInsertOrder = p.prep(noInsertOrderSQL)
	s.noInsertNewOrder = p.prep(noInsertNewOrderSQL)
	s.noItem = p.prep(noItemSQL)
	for d := 1; d <= districtsPerW; d++ {
		if p.d.SupportsReturning {
			s.noStock[d-1] = p.prep(noStockReturningSQL(d))
		} else {
			s.noStock[d-1] = p.prep(noStockSQL)
			s.noStockRead[d-1] = p.prep(noStockReadSQL(d))
		}
	}
	s.noInsertLine = p.prep(noInsertLineSQL)
}

// newOrder runs the New-Order profile (§2.4.2.2) in one database transaction.
//
// The order lines are processed in (OL_I_ID, OL_SUPPLY_W_ID) order, not in input order, so
// that concurrent New-Orders lock STOCK rows in one global order and cannot deadlock on
// them; §2.3.1 makes the order of a profile's data manipulations immaterial, and each line
// keeps its input position as OL_NUMBER. (cockroach and go-tpc sort or force distinct
// items too; duplicate items, which the spec allows, are kept.) The unused item of a
// rollback sorts last, so every valid item gets its full profile first, as §2.4.2.3
// requires, before the missing item is found and the transaction rolled back.
func (w *Workload) newOrder(ctx context.Context, conn *sql.Conn, in newOrderInput) (out newOrderOutput, err error) {
	st := w.st
	order := in.processingOrder()
	allLocal := in.allLocal()
	now := time.Now()
	err = inTx(ctx, conn, w.rw, func(tx *sql.Tx) error {
		var wTax, dTax, cDiscount rate
		if err := tx.StmtContext(ctx, st.noWarehouse).QueryRowContext(ctx, in.wID).Scan(&wTax); err != nil {
			return notFound(err, "warehouse %d", in.wID)
		}
		var nextOID int
		if w.returning() {
			err := tx.StmtContext(ctx, st.noDistrict).QueryRowContext(ctx, in.wID, in.dID).Scan(&dTax, &nextOID)
			if err != nil {
				return notFound(err, "district %d/%d", in.wID, in.dID)
			}
		} else {
			if err := execOne(ctx, tx.StmtContext(ctx, st.noDistrict), "district", in.wID, in.dID); err != nil {
				return err
			}
			if err := tx.StmtContext(ctx, st.noDistrictRead).QueryRowContext(ctx, in.wID, in.dID).Scan(&dTax, &nextOID); err != nil {
				return notFound(err, "district %d/%d", in.wID, in.dID)
			}
		}
		out.oID = nextOID - 1 // O_ID is the value before the increment
		if err := tx.StmtContext(ctx, st.noCustomer).QueryRowContext(ctx, in.wID, in.dID, in.cID).Scan(&cDiscount, &out.cLast, &out.cCredit); err != nil {
			return notFound(err, "customer %d/%d/%d", in.wID, in.dID, in.cID)
		}
		if _, err := tx.StmtContext(ctx, st.noInsertOrder).ExecContext(ctx, out.oID, in.dID, in.wID, in.cID, now, len(in.lines), allLocal); err != nil {
			return err
		}
		if _, err := tx.StmtContext(ctx, st.noInsertNewOrder).ExecContext(ctx, out.oID, in.dID, in.wID); err != nil {
			return err
		}
		item := tx.StmtContext(ctx, st.noItem)
		stock := tx.StmtContext(ctx, st.noStock[in.dID-1])
		var stockRead *sql.Stmt
		if !w.returning() {
			stockRead = tx.StmtContext(ctx, st.noStockRead[in.dID-1])
		}
		insertLine := tx.StmtContext(ctx, st.noInsertLine)
		out.lineAmounts = make([]money, len(in.lines)+1)
		out.brands = make([]byte, len(in.lines)+1)
		var sum money
		for _, l := range order {
			var price money
			var iName, iData string
			err := item.QueryRowContext(ctx, l.iID).Scan(&price, &iName, &iData)
			if errors.Is(err, sql.ErrNoRows) && l.iID == unusedItem {
				// "Item number is not valid": roll back (§2.4.2.3). The remaining steps
				// of this item are the ones §2.4.2.3 allows to skip.
				return errRollback
			}
			if err != nil {
				return notFound(err, "item %d", l.iID)
			}
			var sQty int
			var sDist, sData string
			args := stockArgs(l, in.wID)
			if w.returning() {
				err = stock.QueryRowContext(ctx, args...).Scan(&sQty, &sDist, &sData)
			} else if err = execOne(ctx, stock, "stock", args...); err == nil {
				err = stockRead.QueryRowContext(ctx, l.iID, l.supplyWID).Scan(&sQty, &sDist, &sData)
			}
			if err != nil {
				return notFound(err, "stock %d/%d", l.supplyWID, l.iID)
			}
			amount := money(l.quantity) * price // OL_AMOUNT = OL_QUANTITY × I_PRICE (§2.4.2.2)
			sum += amount
			out.lineAmounts[l.number] = amount
			out.brands[l.number] = brand(iData, sData)
			if _, err := insertLine.ExecContext(ctx, out.oID, in.dID, in.wID, l.number, l.iID, l.supplyWID, l.quantity, amount.arg(), sDist); err != nil {
				return err
			}
		}
		out.total = totalAmount(sum, cDiscount, wTax, dTax)
		return nil
	})
	return out, err
}

// totalAmount is total_amount = Σ OL_AMOUNT × (1 − C_DISCOUNT) × (1 + W_TAX + D_TAX)
// (§2.4.2.2), exact in 10^-10 units: at most 150,000 cents × 10^4 × 1.4·10^4 ≈ 2·10^13.
func totalAmount(sum money, cDiscount, wTax, dTax rate) int64 {
	return int64(sum) * int64(10000-cDiscount) * int64(10000+wTax+dTax)
}

// execOne runs s, an UPDATE or DELETE bound to the transaction, that must change exactly
// one row.
func execOne(ctx context.Context, s *sql.Stmt, what string, args ...any) error {
	res, err := s.ExecContext(ctx, args...)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n != 1 {
		return fmt.Errorf("tpcc: %s %v: %d rows changed, want 1", what, args, n)
	}
	return nil
}

// notFound turns sql.ErrNoRows on a key the transaction expects into an error naming it:
// such a transaction is invalid and must be rolled back (§2.3.6).
func notFound(err error, format string, args ...any) error {
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("tpcc: "+format+" not found", args...)
	}
	return err
}
