package tpcc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/engine/postgres"
	"github.com/dblat/dblat/internal/workload"
)

// prepared returns a prepared workload on tg.
func prepared(t *testing.T, tg workload.Target, cfg Config) *Workload {
	t.Helper()
	w, err := New(tg, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Prepare(context.Background(), tg.DB); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func conn(t *testing.T, db *sql.DB) *sql.Conn {
	t.Helper()
	c, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// allChecksHold runs Check and fails the test for any condition that does not hold.
func allChecksHold(t *testing.T, tg workload.Target) {
	t.Helper()
	res, err := Check(context.Background(), tg)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if !r.OK {
			t.Errorf("%s %s: %s", r.Clause, r.Name, r.Detail)
		}
	}
}

// TestTransactions loads two warehouses and runs each transaction with chosen inputs,
// checking its effects against the profiles of §2.4–§2.8, then many random transactions
// from concurrent terminals, through the PostgreSQL dialect and through the portable one,
// checking the consistency conditions after each phase.
func TestTransactions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tg := newTarget(t, postgres.Engine{})
	if err := Load(ctx, tg, LoadConfig{Warehouses: 2, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	db := tg.DB

	t.Run("prepare checks warehouses", func(t *testing.T) {
		w, err := New(tg, Config{Warehouses: 3})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Prepare(ctx, db); err == nil || !strings.Contains(err.Error(), "asked for 3 warehouses, 2 loaded") {
			t.Errorf("Prepare with 3 of 2 warehouses: %v", err)
		}
		if w := prepared(t, tg, Config{Warehouses: 1}); w.Warehouses() != 1 {
			t.Errorf("active warehouses %d, want 1", w.Warehouses())
		}
		if w := prepared(t, tg, Config{}); w.Warehouses() != 2 {
			t.Errorf("active warehouses %d, want all 2", w.Warehouses())
		}
	})

	w := prepared(t, tg, Config{Seed: 8})

	t.Run("new_order", func(t *testing.T) {
		type stock struct{ qty, ytd, orders, remote int }
		readStock := func(wID, iID int) (s stock) {
			err := db.QueryRow("SELECT s_quantity, s_ytd, s_order_cnt, s_remote_cnt FROM stock WHERE s_w_id = $1 AND s_i_id = $2", wID, iID).
				Scan(&s.qty, &s.ytd, &s.orders, &s.remote)
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
		// Item 7 twice (allowed, §3.4.2.7), one line from warehouse 2, one big quantity.
		in := newOrderInput{wID: 1, dID: 4, cID: 17, remoteLines: 1, lines: []orderLineInput{
			{number: 1, iID: 500, supplyWID: 1, quantity: 3},
			{number: 2, iID: 7, supplyWID: 1, quantity: 10},
			{number: 3, iID: 7, supplyWID: 1, quantity: 2},
			{number: 4, iID: 9, supplyWID: 2, quantity: 4},
			{number: 5, iID: 1, supplyWID: 1, quantity: 1},
		}}
		mustExec(t, db, "UPDATE stock SET s_quantity = 15 WHERE s_w_id = 1 AND s_i_id = 7")
		before := map[[2]int]stock{}
		for _, l := range in.lines {
			before[[2]int{l.supplyWID, l.iID}] = readStock(l.supplyWID, l.iID)
		}
		next := queryInt(t, db, "SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 4")
		out, err := w.newOrder(ctx, conn(t, db), in)
		if err != nil {
			t.Fatal(err)
		}
		if int64(out.oID) != next {
			t.Errorf("O_ID %d, want D_NEXT_O_ID %d", out.oID, next)
		}
		if got := queryInt(t, db, "SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 4"); got != next+1 {
			t.Errorf("D_NEXT_O_ID %d after the order, want %d", got, next+1)
		}
		var olCnt, allLocal int
		var carrier sql.NullInt64
		if err := db.QueryRow("SELECT o_ol_cnt, o_all_local, o_carrier_id FROM orders WHERE o_w_id = 1 AND o_d_id = 4 AND o_id = $1", out.oID).
			Scan(&olCnt, &allLocal, &carrier); err != nil {
			t.Fatal(err)
		}
		if olCnt != 5 || allLocal != 0 || carrier.Valid {
			t.Errorf("order: O_OL_CNT %d, O_ALL_LOCAL %d, O_CARRIER_ID %v; want 5, 0, NULL", olCnt, allLocal, carrier)
		}
		if n := queryInt(t, db, "SELECT COUNT(*) FROM new_order WHERE no_w_id = 1 AND no_d_id = 4 AND no_o_id = $1", out.oID); n != 1 {
			t.Errorf("%d NEW-ORDER rows for the order", n)
		}
		// Each line keeps its input position as OL_NUMBER; OL_AMOUNT = OL_QUANTITY × I_PRICE;
		// OL_DIST_INFO is S_DIST_04 of the supplying stock.
		for _, l := range in.lines {
			var amount, price money
			var distOK bool
			err := db.QueryRow(`SELECT ol.ol_amount, i.i_price, ol.ol_dist_info = s.s_dist_04 FROM order_line ol
				JOIN item i ON i.i_id = ol.ol_i_id JOIN stock s ON s.s_w_id = ol.ol_supply_w_id AND s.s_i_id = ol.ol_i_id
				WHERE ol.ol_w_id = 1 AND ol.ol_d_id = 4 AND ol.ol_o_id = $1 AND ol.ol_number = $2
				AND ol.ol_i_id = $3 AND ol.ol_supply_w_id = $4 AND ol.ol_quantity = $5 AND ol.ol_delivery_d IS NULL`,
				out.oID, l.number, l.iID, l.supplyWID, l.quantity).Scan(&amount, &price, &distOK)
			if err != nil {
				t.Fatalf("line %d: %v", l.number, err)
			}
			if amount != money(l.quantity)*price || !distOK || out.lineAmounts[l.number] != amount {
				t.Errorf("line %d: OL_AMOUNT %v for %d × %v, dist info ok %v", l.number, amount, l.quantity, price, distOK)
			}
		}
		// STOCK per §2.4.2.2: item 7 starts at 15, 15 < 10+10 so 15-10+91 = 96, then
		// 96 >= 2+10 so 96-2 = 94; S_YTD +12, S_ORDER_CNT +2. The remote line counts in
		// S_REMOTE_CNT of warehouse 2.
		wantStock := func(k [2]int, qty, ytd, orders, remote int) {
			b, a := before[k], readStock(k[0], k[1])
			if a.qty != qty || a.ytd-b.ytd != ytd || a.orders-b.orders != orders || a.remote-b.remote != remote {
				t.Errorf("stock %v: %+v -> %+v; want quantity %d, ytd +%d, orders +%d, remote +%d", k, b, a, qty, ytd, orders, remote)
			}
		}
		wantStock([2]int{1, 7}, 94, 12, 2, 0)
		wantStock([2]int{2, 9}, nextQty(before[[2]int{2, 9}].qty, 4), 4, 1, 1)
		wantStock([2]int{1, 500}, nextQty(before[[2]int{1, 500}].qty, 3), 3, 1, 0)
	})

	t.Run("new_order rollback", func(t *testing.T) {
		next := queryInt(t, db, "SELECT d_next_o_id FROM district WHERE d_w_id = 2 AND d_id = 9")
		stockBefore := queryInt(t, db, "SELECT s_order_cnt FROM stock WHERE s_w_id = 2 AND s_i_id = 3")
		in := newOrderInput{wID: 2, dID: 9, cID: 5, rbk: true, lines: []orderLineInput{
			{number: 1, iID: 3, supplyWID: 2, quantity: 1},
			{number: 2, iID: unusedItem, supplyWID: 2, quantity: 1},
			{number: 3, iID: 4, supplyWID: 2, quantity: 1}, // sorted before the unused item
		}}
		_, err := w.newOrder(ctx, conn(t, db), in)
		if !errors.Is(err, workload.ErrExpectedRollback) {
			t.Fatalf("rollback order: %v, want ErrExpectedRollback", err)
		}
		// Nothing of the order remains, and D_NEXT_O_ID did not advance (§3.4.2.4).
		if got := queryInt(t, db, "SELECT d_next_o_id FROM district WHERE d_w_id = 2 AND d_id = 9"); got != next {
			t.Errorf("D_NEXT_O_ID %d after rollback, want %d", got, next)
		}
		if n := queryInt(t, db, "SELECT COUNT(*) FROM orders WHERE o_w_id = 2 AND o_d_id = 9 AND o_id = $1", next); n != 0 {
			t.Error("the rolled-back order is stored")
		}
		if got := queryInt(t, db, "SELECT s_order_cnt FROM stock WHERE s_w_id = 2 AND s_i_id = 3"); got != stockBefore {
			t.Error("the rolled-back order changed STOCK")
		}
	})

	t.Run("rollback rate", func(t *testing.T) {
		// 1,500 New-Orders from one seeded terminal: each input with rbk = 1 rolls back,
		// every other one commits, and D_NEXT_O_ID counts exactly the commits.
		term := w.newTerminal(3)
		before := queryInt(t, db, "SELECT SUM(d_next_o_id) FROM district")
		c := conn(t, db)
		const n = 1500
		rbk, rolledBack := 0, 0
		for range n {
			in := term.newOrderInput()
			if in.rbk {
				rbk++
			}
			_, err := w.newOrder(ctx, c, in)
			switch {
			case errors.Is(err, workload.ErrExpectedRollback):
				rolledBack++
				if !in.rbk {
					t.Fatal("an order without rbk rolled back")
				}
			case err != nil:
				t.Fatal(err)
			case in.rbk:
				t.Fatal("an order with rbk committed")
			}
		}
		if got := queryInt(t, db, "SELECT SUM(d_next_o_id) FROM district") - before; got != int64(n-rolledBack) {
			t.Errorf("D_NEXT_O_ID advanced %d times for %d commits", got, n-rolledBack)
		}
		// Binomial(1500, 1 %): mean 15, standard deviation 3.9; [4, 30] is beyond ±2.8σ.
		if rolledBack < 4 || rolledBack > 30 {
			t.Errorf("%d of %d New-Orders rolled back, want about 1 %%", rolledBack, n)
		}
		t.Logf("%d of %d New-Orders rolled back (%.2f %%)", rolledBack, n, 100*float64(rolledBack)/n)
	})

	t.Run("payment", func(t *testing.T) {
		type cust struct {
			balance, ytd money
			cnt          int
			credit, data string
		}
		read := func(wID, dID, cID int) (c cust) {
			if err := db.QueryRow("SELECT c_balance, c_ytd_payment, c_payment_cnt, c_credit, c_data FROM customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3",
				wID, dID, cID).Scan(&c.balance, &c.ytd, &c.cnt, &c.credit, &c.data); err != nil {
				t.Fatal(err)
			}
			return c
		}
		var bcID int
		if err := db.QueryRow("SELECT MIN(c_id) FROM customer WHERE c_w_id = 2 AND c_d_id = 6 AND c_credit = 'BC'").Scan(&bcID); err != nil {
			t.Fatal(err)
		}
		wYTD := queryInt(t, db, "SELECT CAST(w_ytd * 100 AS bigint) FROM warehouse WHERE w_id = 1")
		dYTD := queryInt(t, db, "SELECT CAST(d_ytd * 100 AS bigint) FROM district WHERE d_w_id = 1 AND d_id = 2")
		before := read(2, 6, bcID)
		// A remote payment by a bad-credit customer (warehouse 2) at warehouse 1.
		in := paymentInput{wID: 1, dID: 2, cWID: 2, cDID: 6, cID: bcID, amount: 123456}
		out, err := w.payment(ctx, conn(t, db), in)
		if err != nil {
			t.Fatal(err)
		}
		after := read(2, 6, bcID)
		if after.balance != before.balance-in.amount || after.ytd != before.ytd+in.amount || after.cnt != before.cnt+1 {
			t.Errorf("customer %+v -> %+v after paying %v", before, after, in.amount)
		}
		prefix := fmt.Sprintf("| %4d %2d %4d %2d %4d $%7s ", bcID, 6, 2, 2, 1, "1234.56")
		if !strings.HasPrefix(after.data, prefix) || len(after.data) > 500 ||
			after.data != (prefix + before.data)[:min(500, len(prefix)+len(before.data))] {
			t.Errorf("bad-credit C_DATA = %.60q..., want %q + the old data, cut at 500", after.data, prefix)
		}
		if out.credit != "BC" || out.cData != after.data[:200] || out.balance != after.balance {
			t.Errorf("output %+v", out)
		}
		if got := queryInt(t, db, "SELECT CAST(w_ytd * 100 AS bigint) FROM warehouse WHERE w_id = 1"); got != wYTD+123456 {
			t.Errorf("W_YTD %d, want %d", got, wYTD+123456)
		}
		if got := queryInt(t, db, "SELECT CAST(d_ytd * 100 AS bigint) FROM district WHERE d_w_id = 1 AND d_id = 2"); got != dYTD+123456 {
			t.Errorf("D_YTD %d, want %d", got, dYTD+123456)
		}
		var hData string
		if err := db.QueryRow(`SELECT h.h_data = w.w_name || '    ' || d.d_name FROM history h, warehouse w, district d
			WHERE h.h_c_w_id = 2 AND h.h_c_d_id = 6 AND h.h_c_id = $1 AND h.h_w_id = 1 AND h.h_d_id = 2 AND h.h_amount = 1234.56
			AND w.w_id = 1 AND d.d_w_id = 1 AND d.d_id = 2`, bcID).Scan(&hData); err != nil || hData != "true" {
			t.Errorf("history row: %q, %v", hData, err)
		}

		// By last name: the customer at position ⌈n/2⌉ by C_FIRST (§2.5.2.2).
		last := lastName(123)
		rows, err := db.Query("SELECT c_id FROM customer WHERE c_w_id = 1 AND c_d_id = 3 AND c_last = $1 ORDER BY c_first", last)
		if err != nil {
			t.Fatal(err)
		}
		var ids []int
		for rows.Next() {
			var id int
			_ = rows.Scan(&id)
			ids = append(ids, id)
		}
		rows.Close()
		if len(ids) < 2 {
			t.Fatalf("only %d customers named %s", len(ids), last)
		}
		out, err = w.payment(ctx, conn(t, db), paymentInput{wID: 1, dID: 3, cWID: 1, cDID: 3, byName: true, cLast: last, amount: 100})
		if err != nil {
			t.Fatal(err)
		}
		if want := ids[(len(ids)-1)/2]; out.cID != want {
			t.Errorf("by name: customer %d of %v, want %d", out.cID, ids, want)
		}
		os, err := w.orderStatus(ctx, conn(t, db), orderStatusInput{wID: 1, dID: 3, byName: true, cLast: last})
		if err != nil {
			t.Fatal(err)
		}
		if os.cID != out.cID {
			t.Errorf("Order-Status by name chose %d, Payment %d", os.cID, out.cID)
		}
	})

	t.Run("order_status", func(t *testing.T) {
		// A new order for customer 42 is the one Order-Status finds.
		no, err := w.newOrder(ctx, conn(t, db), newOrderInput{wID: 2, dID: 1, cID: 42, lines: []orderLineInput{
			{number: 1, iID: 11, supplyWID: 2, quantity: 2}, {number: 2, iID: 12, supplyWID: 2, quantity: 2}}})
		if err != nil {
			t.Fatal(err)
		}
		out, err := w.orderStatus(ctx, conn(t, db), orderStatusInput{wID: 2, dID: 1, cID: 42})
		if err != nil {
			t.Fatal(err)
		}
		if out.oID != no.oID || out.lines != 2 || out.carrier.Valid {
			t.Errorf("Order-Status %+v, want order %d with 2 lines and no carrier", out, no.oID)
		}
	})

	t.Run("delivery", func(t *testing.T) {
		type oldest struct {
			oID, cID int
			sum      money
			balance  money
			dcnt     int
		}
		read := func(d int) (o oldest) {
			err := db.QueryRow(`SELECT n.no_o_id, o.o_c_id, (SELECT SUM(ol_amount) FROM order_line WHERE ol_w_id = 1 AND ol_d_id = $1 AND ol_o_id = n.no_o_id),
				c.c_balance, c.c_delivery_cnt
				FROM new_order n JOIN orders o ON o.o_w_id = 1 AND o.o_d_id = $1 AND o.o_id = n.no_o_id
				JOIN customer c ON c.c_w_id = 1 AND c.c_d_id = $1 AND c.c_id = o.o_c_id
				WHERE n.no_w_id = 1 AND n.no_d_id = $1 ORDER BY n.no_o_id LIMIT 1`, d).Scan(&o.oID, &o.cID, &o.sum, &o.balance, &o.dcnt)
			if err != nil {
				t.Fatal(err)
			}
			return o
		}
		var before [districtsPerW]oldest
		for d := 1; d <= districtsPerW; d++ {
			before[d-1] = read(d)
		}
		out, err := w.delivery(ctx, conn(t, db), deliveryInput{wID: 1, carrierID: 7})
		if err != nil {
			t.Fatal(err)
		}
		if out.skipped != 0 {
			t.Errorf("%d districts skipped", out.skipped)
		}
		for d := 1; d <= districtsPerW; d++ {
			b := before[d-1]
			if out.delivered[d-1] != b.oID {
				t.Errorf("district %d: delivered %d, want the oldest %d", d, out.delivered[d-1], b.oID)
			}
			var carrier, undelivered int
			var balance money
			var dcnt int
			if err := db.QueryRow(`SELECT o.o_carrier_id, (SELECT COUNT(*) FROM order_line WHERE ol_w_id = 1 AND ol_d_id = $1 AND ol_o_id = $2 AND ol_delivery_d IS NULL),
				c.c_balance, c.c_delivery_cnt FROM orders o JOIN customer c ON c.c_w_id = 1 AND c.c_d_id = $1 AND c.c_id = o.o_c_id
				WHERE o.o_w_id = 1 AND o.o_d_id = $1 AND o.o_id = $2`, d, b.oID).Scan(&carrier, &undelivered, &balance, &dcnt); err != nil {
				t.Fatal(err)
			}
			if carrier != 7 || undelivered != 0 || balance != b.balance+b.sum || dcnt != b.dcnt+1 {
				t.Errorf("district %d: carrier %d, %d undelivered lines, balance %v -> %v (+%v), deliveries %d -> %d",
					d, carrier, undelivered, b.balance, balance, b.sum, b.dcnt, dcnt)
			}
			if n := queryInt(t, db, "SELECT COUNT(*) FROM new_order WHERE no_w_id = 1 AND no_d_id = $1 AND no_o_id = $2", d, b.oID); n != 0 {
				t.Errorf("district %d: NEW-ORDER row of order %d still there", d, b.oID)
			}
		}
		// 3.3.2.11 no longer applies to warehouse 1's districts: it is evaluated on
		// warehouse 2's only, and says so; it is not skipped while some district is left.
		res, err := runChecks(ctx, tg, func(c string) bool { return c == "3.3.2.11" })
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != 1 || !res[0].OK || res[0].Skipped || !strings.Contains(res[0].Detail, "checked 10 of 20 districts") {
			t.Errorf("3.3.2.11 after a Delivery in warehouse 1 of 2: %+v", res)
		}
	})

	t.Run("stock_level", func(t *testing.T) {
		// Count low stock independently: the distinct items of the last 20 orders, looked
		// up one by one.
		for _, threshold := range []int{10, 15, 20, 60} {
			next := int(queryInt(t, db, "SELECT d_next_o_id FROM district WHERE d_w_id = 2 AND d_id = 1"))
			rows, err := db.Query("SELECT DISTINCT ol_i_id FROM order_line WHERE ol_w_id = 2 AND ol_d_id = 1 AND ol_o_id >= $1 AND ol_o_id < $2", next-20, next)
			if err != nil {
				t.Fatal(err)
			}
			var items []int
			for rows.Next() {
				var i int
				_ = rows.Scan(&i)
				items = append(items, i)
			}
			rows.Close()
			want := 0
			for _, i := range items {
				if queryInt(t, db, "SELECT s_quantity FROM stock WHERE s_w_id = 2 AND s_i_id = $1", i) < int64(threshold) {
					want++
				}
			}
			got, err := w.stockLevel(ctx, conn(t, db), stockLevelInput{wID: 2, dID: 1, threshold: threshold})
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("threshold %d: low stock %d, want %d (of %d items)", threshold, got, want, len(items))
			}
		}
	})

	t.Run("a retry runs the same input", func(t *testing.T) {
		// The runner retries a transaction by calling Run again without Next: the second
		// New-Order and Payment must be the first ones again, input for input.
		c := conn(t, db)
		type order struct {
			wID, dID, cID, olCnt int
			lines                string
		}
		lastOrder := func(wID, dID int) order {
			o := order{wID: wID, dID: dID}
			var oID int
			if err := db.QueryRow("SELECT o_id, o_c_id, o_ol_cnt FROM orders WHERE o_w_id = $1 AND o_d_id = $2 ORDER BY o_id DESC LIMIT 1",
				wID, dID).Scan(&oID, &o.cID, &o.olCnt); err != nil {
				t.Fatal(err)
			}
			if err := db.QueryRow("SELECT string_agg(ol_i_id || '@' || ol_supply_w_id || 'x' || ol_quantity, ',' ORDER BY ol_number) FROM order_line WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = $3",
				wID, dID, oID).Scan(&o.lines); err != nil {
				t.Fatal(err)
			}
			return o
		}
		no := prepared(t, tg, Config{Seed: 33, Mix: Mix{NewOrder: 1}}).newTerminal(1)
		for no.Next(); no.no.rbk; no.Next() {
		}
		if err := no.Run(ctx, c); err != nil {
			t.Fatal(err)
		}
		first := lastOrder(no.no.wID, no.no.dID)
		if err := no.Run(ctx, c); err != nil {
			t.Fatal(err)
		}
		if again := lastOrder(no.no.wID, no.no.dID); again != first || first.cID != no.no.cID || first.olCnt != len(no.no.lines) {
			t.Errorf("New-Order retried as %+v, first run %+v (input %+v)", again, first, no.no)
		}

		py := prepared(t, tg, Config{Seed: 34, Mix: Mix{Payment: 1}}).newTerminal(0)
		py.Next()
		history := func() (n int64, amounts string) {
			if err := db.QueryRow("SELECT count(*), coalesce(string_agg(h_amount::text || '/' || h_c_w_id || '/' || h_c_d_id, ','), '') FROM history WHERE h_w_id = $1 AND h_d_id = $2 AND h_amount = $3",
				py.py.wID, py.py.dID, py.py.amount.String()).Scan(&n, &amounts); err != nil {
				t.Fatal(err)
			}
			return n, amounts
		}
		before, _ := history()
		for range 2 {
			if err := py.Run(ctx, c); err != nil {
				t.Fatal(err)
			}
		}
		if n, rows := history(); n != before+2 {
			t.Errorf("Payment of %s retried: %d history rows of its warehouse, district and amount, want %d (%s)", py.py.amount, n, before+2, rows)
		}
	})

	allChecksHold(t, tg)

	// Many random transactions from concurrent terminals, with every type frequent, through
	// the PostgreSQL dialect and then the portable one; all conditions must still hold.
	for _, e := range []struct {
		name string
		tg   workload.Target
	}{{"postgres", tg}, {"portable", workload.Target{Engine: portable{}, DB: db}}} {
		t.Run("concurrent mix "+e.name, func(t *testing.T) {
			w := prepared(t, e.tg, Config{Seed: 21, Mix: Mix{1, 1, 1, 1, 1}})
			counts := runTerminals(t, w, db, 4, 60, false)
			t.Logf("%v", counts)
			for _, name := range txNames {
				if counts[name] < 20 {
					t.Errorf("only %d %s transactions", counts[name], name)
				}
			}
			allChecksHold(t, e.tg)
		})
	}
}

// nextQty is S_QUANTITY after ordering qty (§2.4.2.2).
func nextQty(s, qty int) int {
	if s >= qty+10 {
		return s - qty
	}
	return s - qty + 91
}

// runTerminals runs n transactions on each of terms terminals concurrently, each
// transaction on a connection taken from db for it alone, as the runner does. It returns
// the count per transaction type ("rollback" for designed rollbacks, "<type> conflict" for
// lost races). Any error but the designed rollback fails the test, except, where the
// engine's writes can lose a race for a row (conflicts, see modeEngine.conflicts), a
// retryable error of a transaction that updates a hot row (hotRow), counted apart.
func runTerminals(t *testing.T, w *Workload, db *sql.DB, terms, n int, conflicts bool) map[string]int {
	t.Helper()
	ctx := context.Background()
	var mu sync.Mutex
	counts := map[string]int{}
	var wg sync.WaitGroup
	for id := range terms {
		wg.Go(func() {
			term := w.NewTerminal(id)
			for range n {
				typ, _ := term.Next()
				c, err := db.Conn(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				err = term.Run(ctx, c)
				c.Close()
				name := txNames[typ]
				switch {
				case errors.Is(err, workload.ErrExpectedRollback):
					name = "rollback"
				case err != nil && conflicts && hotRow[typ] && w.engine.Classify(err) == engine.ClassRetryable:
					name += " conflict"
				case err != nil:
					t.Errorf("terminal %d, %s: %v", id, txNames[typ], err)
					return
				}
				mu.Lock()
				counts[name]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	// How many lose a race depends on how fast the server turns transactions over; what
	// holds on any machine is that a race lost needs a winner: a transaction loses to one
	// that committed a newer version of its row while it ran, and each committed
	// transaction overlaps at most terms-1 others.
	var lost, committed int
	for _, name := range txNames {
		lost += counts[name+" conflict"]
		committed += counts[name]
	}
	if lost > (terms-1)*committed {
		t.Errorf("%d transactions lost a race for a row against %d committed by %d terminals; each commit can beat at most %d", lost, committed, terms, terms-1)
	}
	return counts
}

// hotRow marks the transaction types that update a row every terminal of a warehouse
// updates: New-Order its district's D_NEXT_O_ID, Payment the warehouse's W_YTD and its
// district's D_YTD. Only they lose races for rows on an engine with conflicts.
var hotRow = [numTxTypes]bool{txNewOrder: true, txPayment: true}
