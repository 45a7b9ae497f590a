package tpcc

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/workload"
)

// newOrderBatched runs the New-Order profile (§2.4.2.2) in two batches:
//
//  1. BEGIN; SELECT W_TAX; UPDATE DISTRICT (D_NEXT_O_ID + 1, read D_TAX and the O_ID);
//     SELECT the customer; SELECT every item (one IN list); SELECT S_DIST_xx and S_DATA of
//     every stock row (one statement).
//  2. INSERT ORDER and NEW-ORDER; for each valid line, in the processing order of
//     newOrder, UPDATE STOCK (S_QUANTITY read back) and INSERT ORDER-LINE; then COMMIT,
//     or ROLLBACK when an item was not found: §2.4.2.3 wants the complete profile for
//     every valid item, then the rollback.
//
// Two, because the client must see which items exist (and their prices) before it may
// commit and before it can write the order lines. S_DIST_xx and S_DATA are read in batch
// 1 without a lock, like I_PRICE: no transaction ever changes them, so the stock rows are
// locked only by their UPDATEs in batch 2, in the order of ModeClient (doc.go,
// "Isolation"). Round trips: the engine's cost of two batches (2 on PostgreSQL and
// MariaDB), against 5 + 3 per line (+1 per statement without RETURNING) in ModeClient.
func (w *Workload) newOrderBatched(ctx context.Context, conn *sql.Conn, in newOrderInput) (out newOrderOutput, err error) {
	order := in.processingOrder()
	now := time.Now()
	btx, err := w.beginBatch(ctx, conn, w.rw)
	if err != nil {
		return out, err
	}

	wh := w.bstmt(1, noWarehouseSQL, in.wID)
	key := []any{in.wID, in.dID}
	dist, distRead := w.batchUpdateRead(2, noDistrictSQL, "d_tax, d_next_o_id", key, noDistrictReadSQL, key)
	cust := w.bstmt(3, noCustomerSQL, in.wID, in.dID, in.cID)
	var ids []any
	for i, l := range order {
		if i == 0 || l.iID != order[i-1].iID { // order is sorted by item
			ids = append(ids, l.iID)
		}
	}
	items := w.bstmt(4, "SELECT i_id, i_price, i_name, i_data FROM item WHERE i_id IN ("+placeholders(maxLines)+")", padArgs(ids, maxLines)...)
	stock := w.stockDataStmt(order, in.dID)
	if err := btx.Send(ctx, stmts(wh, dist, distRead, cust, items, stock)...); err != nil {
		return out, err
	}

	var wTax, dTax, cDiscount rate
	var nextOID int
	if err := single(wh, &wTax); err != nil {
		return out, abort(ctx, btx, notFound(err, "warehouse %d", in.wID))
	}
	if err := w.checkUpdated(dist, fmt.Sprintf("district %d/%d", in.wID, in.dID)); err != nil {
		return out, abort(ctx, btx, err)
	}
	if err := single(distRead, &dTax, &nextOID); err != nil {
		return out, abort(ctx, btx, notFound(err, "district %d/%d", in.wID, in.dID))
	}
	out.oID = nextOID - 1 // O_ID is the value before the increment
	if err := single(cust, &cDiscount, &out.cLast, &out.cCredit); err != nil {
		return out, abort(ctx, btx, notFound(err, "customer %d/%d/%d", in.wID, in.dID, in.cID))
	}
	itemOf, stockOf, err := batchedItems(items, stock)
	if err != nil {
		return out, abort(ctx, btx, err)
	}

	batch := []*engine.BatchStmt{
		w.bstmt(0, noInsertOrderSQL, out.oID, in.dID, in.wID, in.cID, now, len(in.lines), in.allLocal()),
		w.bstmt(0, noInsertNewOrderSQL, out.oID, in.dID, in.wID),
	}
	insertLine := noInsertLineWith(w.decimal(6, 2))
	out.lineAmounts = make([]money, len(in.lines)+1)
	out.brands = make([]byte, len(in.lines)+1)
	var sum money
	rollback := false
	var stockUpdates []*engine.BatchStmt
	for _, l := range order {
		it, ok := itemOf[l.iID]
		if !ok && l.iID == unusedItem {
			// "Item number is not valid" (§2.4.2.3). It sorts last, so every valid item
			// has its statements in the batch; the rest of this item's steps are the ones
			// §2.4.2.3 allows to skip.
			rollback = true
			break
		}
		if !ok {
			return out, abort(ctx, btx, fmt.Errorf("tpcc: item %d not found", l.iID))
		}
		s, ok := stockOf[stockKey{l.supplyWID, l.iID}]
		if !ok {
			return out, abort(ctx, btx, fmt.Errorf("tpcc: stock %d/%d not found", l.supplyWID, l.iID))
		}
		amount := money(l.quantity) * it.price // OL_AMOUNT = OL_QUANTITY × I_PRICE (§2.4.2.2)
		sum += amount
		out.lineAmounts[l.number] = amount
		out.brands[l.number] = brand(it.data, s.data)
		upd, read := w.batchUpdateRead(1, noStockSQL, "s_quantity", stockArgs(l, in.wID),
			"SELECT s_quantity FROM stock WHERE s_i_id = ? AND s_w_id = ?", []any{l.iID, l.supplyWID})
		stockUpdates = append(stockUpdates, upd)
		batch = append(batch, stmts(upd, read)...)
		batch = append(batch, w.bstmt(0, insertLine, out.oID, in.dID, in.wID, l.number, l.iID, l.supplyWID, l.quantity, amount, s.dist))
	}
	out.total = totalAmount(sum, cDiscount, wTax, dTax)
	if rollback {
		if err := btx.Rollback(ctx, batch...); err != nil {
			return out, err
		}
		return out, workload.ErrExpectedRollback
	}
	if err := btx.Commit(ctx, batch...); err != nil {
		return out, err
	}
	return out, w.checkNewOrderBatch(batch, stockUpdates)
}

// checkNewOrderBatch checks that New-Order's second batch changed one row per insert and
// per stock update. Batch 1 found every row these statements change, so the checks cannot
// fail on a sound database; if they do, the order is committed and reported as an error.
func (w *Workload) checkNewOrderBatch(batch, stockUpdates []*engine.BatchStmt) error {
	for _, s := range batch {
		if s.Columns == 0 && !slices.Contains(stockUpdates, s) {
			if err := affected(s, 1, "new order insert"); err != nil {
				return err
			}
		}
	}
	for _, u := range stockUpdates {
		if err := w.checkUpdated(u, "stock"); err != nil {
			return err
		}
	}
	return nil
}

// itemRow is an ITEM row New-Order reads; stockRow the STOCK columns it reads, by
// stockKey (supplying warehouse, item).
type (
	itemRow struct {
		price      money
		name, data string
	}
	stockKey struct{ w, i int }
	stockRow struct{ dist, data string }
)

// batchedItems reads the rows of the first batch's item and stock queries (stock nil: no
// stock query was sent).
func batchedItems(items, stock *engine.BatchStmt) (map[int]itemRow, map[stockKey]stockRow, error) {
	itemOf := make(map[int]itemRow, len(items.Rows))
	for _, r := range items.Rows {
		var id int
		var it itemRow
		if err := scanValues(r, &id, &it.price, &it.name, &it.data); err != nil {
			return nil, nil, err
		}
		itemOf[id] = it
	}
	stockOf := map[stockKey]stockRow{}
	if stock != nil {
		for _, r := range stock.Rows {
			var k stockKey
			var s stockRow
			if err := scanValues(r, &k.i, &k.w, &s.dist, &s.data); err != nil {
				return nil, nil, err
			}
			stockOf[k] = s
		}
	}
	return itemOf, stockOf, nil
}

// maxLines is the most lines an order has (§2.4.1.3: ol_cnt is at most 15).
const maxLines = 15

// padArgs pads args to n values by repeating the last one: an IN list or OR list of
// fixed length, whatever the order, is one SQL text, so one prepared statement (pgx's
// statement cache on PostgreSQL) serves every order instead of one per length.
func padArgs(args []any, n int) []any {
	for len(args) < n && len(args) > 0 {
		args = append(args, args[len(args)-1])
	}
	return args
}

// stockDataStmt reads S_DIST_xx (xx = dID, chosen by a CASE on a parameter, so that the
// text is the same for every district) and S_DATA of the stock rows of order's valid
// lines, by a list of maxLines (warehouse, item) pairs padded as padArgs does. It returns
// nil when there are no such lines. Rows: s_i_id, s_w_id, S_DIST_xx, S_DATA.
func (w *Workload) stockDataStmt(order []orderLineInput, dID int) *engine.BatchStmt {
	var pairs []any
	for i, l := range order {
		if l.iID == unusedItem || (i > 0 && l.iID == order[i-1].iID && l.supplyWID == order[i-1].supplyWID) {
			continue
		}
		pairs = append(pairs, [2]int{l.supplyWID, l.iID})
	}
	if len(pairs) == 0 {
		return nil
	}
	pairs = padArgs(pairs, maxLines)
	args := []any{dID}
	for _, p := range pairs {
		args = append(args, p.([2]int)[0], p.([2]int)[1])
	}
	where := strings.TrimSuffix(strings.Repeat("(s_w_id = ? AND s_i_id = ?) OR ", maxLines), " OR ")
	return w.bstmt(4, "SELECT s_i_id, s_w_id, "+sDistCase("CAST(? AS integer)")+", s_data FROM stock WHERE "+where, args...)
}
