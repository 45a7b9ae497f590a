package tpcc

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/engine/postgres"
	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
	"github.com/dblat/dblat/internal/workload"
	"github.com/dblat/dblat/internal/workload/workloadtest"
)

// TestMain stops the shared test servers (each started on first use) when the tests end.
func TestMain(m *testing.M) { workloadtest.Main(m) }

// portable is PostgreSQL seen through a minimal dialect: no RETURNING, no "first row
// only", no FOR UPDATE, no DROP TABLE IF EXISTS, no ANALYZE. It runs the code paths other
// engines will take, on the real server.
type portable struct{ postgres.Engine }

func (portable) Dialect() engine.Dialect {
	d := postgres.Engine{}.Dialect()
	d.SupportsReturning, d.LimitOne, d.ForUpdate, d.DropTable, d.Analyze = false, nil, "", nil, nil
	return d
}

// newTarget opens a fresh database on the shared test server, spoken to through e.
func newTarget(t testing.TB, e engine.Engine) workload.Target {
	t.Helper()
	db, err := e.Open(context.Background(), pgtest.NewDatabase(t), engine.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return workload.Target{Engine: e, DB: db}
}

func mustExec(t testing.TB, db *sql.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func queryInt(t testing.TB, db *sql.DB, q string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := db.QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

func fingerprint(t testing.TB, db *sql.DB) string {
	t.Helper()
	fp, err := Fingerprint(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	return fp
}

// TestLoadOneWarehouse loads one warehouse and checks, on that database: determinism
// (same seed, other worker count, other load path -> same fingerprint; other seed ->
// another), progress reporting, the §4.2.2 cardinalities and §4.3.3.1 population rules,
// that every §3.3.2 condition holds, and that each can fail.
func TestLoadOneWarehouse(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := newTarget(t, postgres.Engine{})
	var calls int
	var lastDone, lastTotal int64
	progress := func(done, total int64) {
		calls++
		if done < lastDone || done > total || (lastTotal != 0 && total != lastTotal) {
			t.Errorf("progress went from %d/%d to %d/%d", lastDone, lastTotal, done, total)
		}
		lastDone, lastTotal = done, total
	}
	if err := Load(ctx, a, LoadConfig{Warehouses: 1, Seed: 1, Progress: progress}); err != nil {
		t.Fatal(err)
	}
	if n, err := LoadedWarehouses(ctx, a.DB); err != nil || n != 1 {
		t.Fatalf("LoadedWarehouses = %d, %v", n, err)
	}
	fpA := fingerprint(t, a.DB)

	t.Run("progress", func(t *testing.T) {
		var rows int64
		for _, tb := range tables {
			rows += queryInt(t, a.DB, "SELECT COUNT(*) FROM "+tb.name)
		}
		if calls < 10 || lastDone != lastTotal || lastTotal != rows {
			t.Errorf("%d progress calls, last %d/%d; the tables hold %d rows", calls, lastDone, lastTotal, rows)
		}
	})

	t.Run("cardinalities", func(t *testing.T) {
		// §4.2.2 for one warehouse.
		for table, want := range map[string]int64{"warehouse": 1, "district": 10, "customer": 30000, "history": 30000,
			"orders": 30000, "new_order": 9000, "item": 100000, "stock": 100000} {
			if got := queryInt(t, a.DB, "SELECT COUNT(*) FROM "+table); got != want {
				t.Errorf("%s has %d rows, want %d", table, got, want)
			}
		}
		// ORDER-LINE = Σ O_OL_CNT ≈ 300,000 (§4.2.2; ±1 % allowed at load, footnote 4).
		lines := queryInt(t, a.DB, "SELECT COUNT(*) FROM order_line")
		if sum := queryInt(t, a.DB, "SELECT SUM(o_ol_cnt) FROM orders"); lines != sum || lines < 297000 || lines > 303000 {
			t.Errorf("order_line has %d rows, Σ O_OL_CNT = %d, want ≈300,000", lines, sum)
		}
	})

	t.Run("population rules", func(t *testing.T) {
		// C_CREDIT = "BC" in 10 % ± 5 % of the target count (§4.3.3.1).
		if bc := queryInt(t, a.DB, "SELECT COUNT(*) FROM customer WHERE c_credit = 'BC'"); bc < 2850 || bc > 3150 {
			t.Errorf("%d BC customers, want 2,850..3,150", bc)
		}
		for _, table := range []string{"item WHERE i_data", "stock WHERE s_data"} {
			if n := queryInt(t, a.DB, "SELECT COUNT(*) FROM "+table+" LIKE '%ORIGINAL%'"); n < 9500 || n > 10500 {
				t.Errorf("%s LIKE ORIGINAL: %d rows, want 9,500..10,500", table, n)
			}
		}
		// C_LAST of customers 1..1000 iterates the syllable numbers 0..999 (§4.3.3.1).
		rows, err := a.DB.Query("SELECT c_id, c_last FROM customer WHERE c_w_id = 1 AND c_d_id = 7 AND c_id <= 1000")
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id int
			var last string
			if err := rows.Scan(&id, &last); err != nil {
				t.Fatal(err)
			}
			if last != lastName(id-1) {
				t.Errorf("customer %d: C_LAST %q, want %q", id, last, lastName(id-1))
			}
		}
		rows.Close()
		// O_C_ID is a permutation: every customer has exactly one order.
		if n := queryInt(t, a.DB, "SELECT COUNT(DISTINCT o_c_id) FROM orders WHERE o_w_id = 1 AND o_d_id = 3"); n != 3000 {
			t.Errorf("%d distinct O_C_ID in district 3, want 3,000", n)
		}
		for q, want := range map[string]int64{
			"SELECT COUNT(*) FROM orders WHERE o_carrier_id IS NULL":                         9000,
			"SELECT COUNT(*) FROM order_line WHERE ol_delivery_d IS NULL AND ol_o_id < 2101": 0,
			"SELECT COUNT(*) FROM order_line WHERE ol_amount <> 0 AND ol_o_id < 2101":        0,
			"SELECT COUNT(*) FROM customer WHERE c_middle <> 'OE' OR c_balance <> -10":       0,
			"SELECT COUNT(*) FROM warehouse WHERE w_ytd <> 300000 OR w_tax > 0.2":            0,
			"SELECT COUNT(*) FROM district WHERE d_next_o_id <> 3001 OR d_ytd <> 30000":      0,
			"SELECT COUNT(*) FROM stock WHERE s_quantity NOT BETWEEN 10 AND 100":             0,
			"SELECT COUNT(*) FROM customer WHERE c_zip NOT LIKE '____11111'":                 0,
		} {
			if got := queryInt(t, a.DB, q); got != want {
				t.Errorf("%s = %d, want %d", q, got, want)
			}
		}
	})

	t.Run("checks hold after load", func(t *testing.T) {
		res, err := Check(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != 12 {
			t.Fatalf("%d checks, want 12", len(res))
		}
		for _, r := range res {
			if !r.OK || r.Skipped {
				t.Errorf("%s %s: %+v", r.Clause, r.Name, r)
			}
		}
	})

	t.Run("each check can fail", func(t *testing.T) {
		for _, c := range []struct {
			clause           string
			corrupt, restore []string
		}{
			{"3.3.2.1", []string{"UPDATE warehouse SET w_ytd = w_ytd + 1"}, []string{"UPDATE warehouse SET w_ytd = w_ytd - 1"}},
			{"3.3.2.2", []string{"UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_id = 3"},
				[]string{"UPDATE district SET d_next_o_id = d_next_o_id - 1 WHERE d_id = 3"}},
			{"3.3.2.3", []string{"DELETE FROM new_order WHERE no_d_id = 4 AND no_o_id = 2500"},
				[]string{"INSERT INTO new_order VALUES (2500, 4, 1)"}},
			{"3.3.2.4", []string{"UPDATE orders SET o_ol_cnt = o_ol_cnt + 1 WHERE o_d_id = 5 AND o_id = 10"},
				[]string{"UPDATE orders SET o_ol_cnt = o_ol_cnt - 1 WHERE o_d_id = 5 AND o_id = 10"}},
			{"3.3.2.5", []string{"UPDATE orders SET o_carrier_id = 1 WHERE o_d_id = 6 AND o_id = 2500"},
				[]string{"UPDATE orders SET o_carrier_id = NULL WHERE o_d_id = 6 AND o_id = 2500"}},
			// A line moved to the next order of the same district: 3.3.2.4 still holds.
			{"3.3.2.6", []string{"UPDATE order_line SET ol_o_id = 11, ol_number = 99 WHERE ol_d_id = 5 AND ol_o_id = 10 AND ol_number = 1"},
				[]string{"UPDATE order_line SET ol_o_id = 10, ol_number = 1 WHERE ol_d_id = 5 AND ol_o_id = 11 AND ol_number = 99"}},
			{"3.3.2.7", []string{"UPDATE order_line SET ol_delivery_d = NULL WHERE ol_d_id = 7 AND ol_o_id = 5 AND ol_number = 1"},
				[]string{"UPDATE order_line SET ol_delivery_d = CURRENT_TIMESTAMP WHERE ol_d_id = 7 AND ol_o_id = 5 AND ol_number = 1"}},
			{"3.3.2.8", []string{"UPDATE history SET h_amount = h_amount + 1 WHERE h_c_id = 1 AND h_c_d_id = 1"},
				[]string{"UPDATE history SET h_amount = h_amount - 1 WHERE h_c_id = 1 AND h_c_d_id = 1"}},
			// Money moved between districts: W_YTD = Σ D_YTD (3.3.2.1) still holds.
			{"3.3.2.9", []string{"UPDATE district SET d_ytd = d_ytd + 1 WHERE d_id = 1", "UPDATE district SET d_ytd = d_ytd - 1 WHERE d_id = 2"},
				[]string{"UPDATE district SET d_ytd = d_ytd - 1 WHERE d_id = 1", "UPDATE district SET d_ytd = d_ytd + 1 WHERE d_id = 2"}},
			// Balance and payments shifted together: 3.3.2.12 still holds.
			{"3.3.2.10", []string{"UPDATE customer SET c_balance = c_balance + 1, c_ytd_payment = c_ytd_payment - 1 WHERE c_d_id = 1 AND c_id = 1"},
				[]string{"UPDATE customer SET c_balance = c_balance - 1, c_ytd_payment = c_ytd_payment + 1 WHERE c_d_id = 1 AND c_id = 1"}},
			{"3.3.2.11", []string{"DELETE FROM new_order WHERE no_d_id = 8 AND no_o_id = 3000"},
				[]string{"INSERT INTO new_order VALUES (3000, 8, 1)"}},
			{"3.3.2.12", []string{"UPDATE customer SET c_ytd_payment = c_ytd_payment + 1 WHERE c_d_id = 2 AND c_id = 2"},
				[]string{"UPDATE customer SET c_ytd_payment = c_ytd_payment - 1 WHERE c_d_id = 2 AND c_id = 2"}},
		} {
			for _, q := range c.corrupt {
				mustExec(t, a.DB, q)
			}
			res, err := runChecks(ctx, a, func(cl string) bool { return cl == c.clause })
			if err != nil {
				t.Fatal(err)
			}
			if len(res) != 1 || res[0].OK || !strings.Contains(res[0].Detail, "violating") {
				t.Errorf("%s after %q: %+v, want a failure", c.clause, c.corrupt, res)
			} else {
				t.Logf("%s fails as it should: %s", c.clause, res[0].Detail)
			}
			for _, q := range c.restore {
				mustExec(t, a.DB, q)
			}
		}
		res, err := Check(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if !r.OK {
				t.Errorf("after restoring: %+v", r)
			}
		}
		if fp := fingerprint(t, a.DB); fp != fpA {
			t.Error("restoring did not give the loaded data back")
		}
	})

	t.Run("same seed, INSERT path, other workers", func(t *testing.T) {
		// The portable dialect also exercises DROP TABLE without IF EXISTS on a fresh database.
		b := newTarget(t, portable{})
		if err := Load(ctx, b, LoadConfig{Warehouses: 1, Seed: 1, Workers: 3, NoBulk: true}); err != nil {
			t.Fatal(err)
		}
		if fp := fingerprint(t, b.DB); fp != fpA {
			t.Errorf("seed 1 loaded with INSERTs has fingerprint %s, with COPY %s", fp, fpA)
		}
	})

	t.Run("reload with another seed", func(t *testing.T) {
		// Loading again replaces the tables (seed 1 gave the same data through another path
		// and worker count above); seed 2 gives other data.
		if err := Load(ctx, a, LoadConfig{Warehouses: 1, Seed: 2, Workers: 2}); err != nil {
			t.Fatal(err)
		}
		if fp := fingerprint(t, a.DB); fp == fpA {
			t.Error("seeds 1 and 2 give the same fingerprint")
		}
		allChecksHold(t, a)
	})
}

// TestNotLoaded checks that every entry point says "not loaded" on an empty database, and
// on one whose load did not finish (tpcc_meta without its row).
func TestNotLoaded(t *testing.T) {
	ctx := context.Background()
	tg := newTarget(t, postgres.Engine{})
	for round := range 2 {
		if _, err := LoadedWarehouses(ctx, tg.DB); !errors.Is(err, workload.ErrNotLoaded) {
			t.Errorf("round %d: LoadedWarehouses: %v, want ErrNotLoaded", round, err)
		}
		w, err := New(tg, Config{})
		if err != nil {
			t.Fatal(err)
		}
		err = w.Prepare(ctx, tg.DB)
		if !errors.Is(err, workload.ErrNotLoaded) || !strings.Contains(err.Error(), "dblat load tpcc") {
			t.Errorf("round %d: Prepare: %v, want ErrNotLoaded with a hint", round, err)
		}
		if _, err := Check(ctx, tg); !errors.Is(err, workload.ErrNotLoaded) {
			t.Errorf("round %d: Check: %v", round, err)
		}
		if _, err := Fingerprint(ctx, tg.DB); !errors.Is(err, workload.ErrNotLoaded) {
			t.Errorf("round %d: Fingerprint: %v", round, err)
		}
		if round == 0 {
			mustExec(t, tg.DB, tMeta.createSQL(tg.Engine.Dialect()))
		}
	}
	if err := Load(ctx, tg, LoadConfig{Warehouses: 0}); err == nil {
		t.Error("Load of 0 warehouses accepted")
	}
}
