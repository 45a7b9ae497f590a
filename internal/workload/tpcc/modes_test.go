package tpcc

import (
	"cmp"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/engine/firebird"
	"github.com/dblat/dblat/internal/engine/firebird/fbtest"
	"github.com/dblat/dblat/internal/engine/mariadb"
	"github.com/dblat/dblat/internal/engine/mariadb/mariadbtest"
	"github.com/dblat/dblat/internal/engine/postgres"
	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
	"github.com/dblat/dblat/internal/latency"
	"github.com/dblat/dblat/internal/runner"
	"github.com/dblat/dblat/internal/workload"
	"github.com/dblat/dblat/internal/workload/workloadtest"
)

// modeEngine is an engine under test: how to get an empty database on its shared test
// server and how to copy a database no connection is using, and whether its writes can
// lose races.
type modeEngine struct {
	name  string
	eng   engine.Engine
	empty func(t testing.TB) string
	clone func(t testing.TB, dsn string) string
	// conflicts is set when a READ COMMITTED write that waited for a concurrent writer of
	// its row can fail with an update conflict once that one commits, in every mode:
	// Firebird 3.0 has no statement restart (see package firebird), so of several
	// transactions queued on a hot row one may lose. PostgreSQL and InnoDB apply the
	// write to the committed row instead.
	conflicts bool
}

var cloneSeq atomic.Int64

var modeEngines = []modeEngine{
	{"postgres", postgres.Engine{}, pgtest.NewDatabase, clonePostgres, false},
	{"mariadb", mariadb.Engine{}, mariadbtest.NewDatabase, cloneMariaDB, false},
	{"firebird", firebird.Engine{}, func(t testing.TB) string { return fbtest.NewDatabase(t, "Super") }, cloneFirebird, true},
}

// open opens dsn with e; the pool is closed when t ends.
func open(t testing.TB, e engine.Engine, dsn string, opts engine.OpenOptions) workload.Target {
	t.Helper()
	db, err := e.Open(context.Background(), dsn, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return workload.Target{Engine: e, DB: db}
}

// clonePostgres copies the database with CREATE DATABASE ... TEMPLATE, a file copy.
func clonePostgres(t testing.TB, dsn string) string {
	t.Helper()
	ctx := context.Background()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	src := cfg.Database
	name := fmt.Sprintf("%s_c%d", src, cloneSeq.Add(1))
	cfg.Database = "postgres"
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, fmt.Sprintf("CREATE DATABASE %s TEMPLATE %s", name, src)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if c, err := pgx.ConnectConfig(ctx, cfg); err == nil {
			_, _ = c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			c.Close(ctx)
		}
	})
	u, _ := url.Parse(dsn)
	u.Path = "/" + name
	return u.String()
}

// cloneMariaDB copies every table into a new database (CREATE TABLE ... LIKE keeps the
// keys) with INSERT ... SELECT. The procedures are not copied; Prepare installs them.
func cloneMariaDB(t testing.TB, dsn string) string {
	t.Helper()
	ctx := context.Background()
	dst := mariadbtest.NewDatabase(t)
	cfg, err := mariadb.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	dcfg, err := mariadb.ParseDSN(dst)
	if err != nil {
		t.Fatal(err)
	}
	db := open(t, mariadb.Engine{}, dst, engine.OpenOptions{}).DB
	defer db.Close()
	for _, tb := range append([]*table{tMeta}, tables...) {
		for _, q := range []string{
			fmt.Sprintf("CREATE TABLE %s.%s LIKE %s.%s", dcfg.DBName, tb.name, cfg.DBName, tb.name),
			fmt.Sprintf("INSERT INTO %s.%s SELECT * FROM %s.%s", dcfg.DBName, tb.name, cfg.DBName, tb.name),
		} {
			if _, err := db.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	return dst
}

// cloneFirebird copies the database file, owner and mode included, next to the original
// (the server closes a database file when its last connection detaches).
func cloneFirebird(t testing.TB, dsn string) string {
	t.Helper()
	inst := fbtest.Server(t, "Super")
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	src := u.Path
	dst := filepath.Join(filepath.Dir(src), fmt.Sprintf("clone%d_%s", cloneSeq.Add(1), filepath.Base(src)))
	if err := copyFile(src, dst); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(dst) })
	return firebird.DSN(inst, dst)
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		if err := out.Chown(int(st.Uid), int(st.Gid)); err != nil {
			out.Close()
			return err
		}
	}
	return out.Close()
}

// modesMix makes every transaction type frequent.
var modesMix = Mix{NewOrder: 4, Payment: 4, OrderStatus: 1, Delivery: 1, StockLevel: 1}

// display renders a transaction's output for comparison between modes. Line amounts are
// left out (the procedures return only their sum, in the total).
func display(typ int, out any, err error) (string, error) {
	if o, ok := out.(newOrderOutput); ok {
		if errors.Is(err, workload.ErrExpectedRollback) {
			return fmt.Sprintf("new_order rolled back o_id %d", o.oID), nil
		}
		out = fmt.Sprintf("o_id %d %s %s total %d brands %q", o.oID, o.cLast, o.cCredit, o.total, strings.Trim(string(o.brands), "\x00"))
	}
	return fmt.Sprintf("%s %+v", txNames[typ], out), err
}

// runSeeded runs n transactions of one seeded terminal, one after another on conn, and
// returns what each displayed. Any error but the designed rollback fails the test. When
// observe is set, it is called after each transaction with its index, type and the wire
// counts of conn's meter m during it.
func runSeeded(t *testing.T, w *Workload, conn *sql.Conn, n int, m runner.Meter, observe func(i, typ int, c latency.Counts)) []string {
	t.Helper()
	ctx := context.Background()
	term := w.newTerminal(0)
	out := make([]string, 0, n)
	for i := range n {
		typ, _ := term.Next()
		var got any
		var err error
		var before latency.Counts
		if m != nil {
			before = m.Counts()
		}
		switch typ {
		case txNewOrder:
			got, err = w.runNewOrder(ctx, conn, term.no)
		case txPayment:
			got, err = w.runPayment(ctx, conn, term.py)
		case txOrderStatus:
			got, err = w.runOrderStatus(ctx, conn, term.os)
		case txDelivery:
			got, err = w.runDelivery(ctx, conn, term.dl)
		case txStockLevel:
			got, err = w.runStockLevel(ctx, conn, term.sl)
		}
		if m != nil && observe != nil {
			observe(i, typ, m.Counts().Sub(before))
		}
		s, err := display(typ, got, err)
		if err != nil {
			t.Fatalf("%s mode, transaction %d (%s): %v", w.Mode(), i, txNames[typ], err)
		}
		out = append(out, s)
	}
	return out
}

// wireStats are the round trips and bytes of the transactions of one type.
type wireStats struct {
	n, rt, up, down int64
	rts             []int64
}

func (s *wireStats) add(c latency.Counts) {
	s.n++
	s.rt += c.RoundTrips
	s.up += c.BytesUp
	s.down += c.BytesDown
	s.rts = append(s.rts, c.RoundTrips)
}

func (s *wireStats) mean() float64 { return float64(s.rt) / float64(max(1, s.n)) }

func (s *wireStats) median() int64 {
	r := slices.Clone(s.rts)
	slices.Sort(r)
	if len(r) == 0 {
		return 0
	}
	return r[len(r)/2]
}

// edgeSetup prepares a loaded database for runEdges: stock of warehouse 2 for items 1 to
// 20 (copied from warehouse 1, so that an order line can be remote with one warehouse
// loaded) and two stock quantities chosen to trigger the +91 rule. It returns a customer
// with bad credit.
func edgeSetup(t *testing.T, tg workload.Target) (bcID int) {
	t.Helper()
	ctx := context.Background()
	tx, err := tg.DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, c := range tStock.cols {
		if c.name == "s_w_id" {
			cols = append(cols, "2")
		} else {
			cols = append(cols, c.name)
		}
	}
	for _, q := range []string{
		"INSERT INTO stock (" + strings.Join(tStock.colNames(), ", ") + ") SELECT " + strings.Join(cols, ", ") + " FROM stock WHERE s_w_id = 1 AND s_i_id <= 20",
		"UPDATE stock SET s_quantity = 15 WHERE s_w_id = 1 AND s_i_id = 7",
		"UPDATE stock SET s_quantity = 10 WHERE s_w_id = 1 AND s_i_id = 42",
	} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := tx.QueryRowContext(ctx, "SELECT MIN(c_id) FROM customer WHERE c_w_id = 1 AND c_d_id = 6 AND c_credit = 'BC'").Scan(&bcID); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return bcID
}

// runEdges runs chosen inputs that random ones rarely produce: an item ordered twice with
// the +91 rule, a remote line, the same item on all 15 lines (the +91 rule twice), the
// unused item, a bad-credit payment, customers by name, a delivery and a stock level.
func runEdges(t *testing.T, w *Workload, conn *sql.Conn, bcID int) []string {
	t.Helper()
	ctx := context.Background()
	var out []string
	add := func(typ int, got any, err error) {
		t.Helper()
		s, err := display(typ, got, err)
		if err != nil {
			t.Fatalf("%s mode, %s: %v", w.Mode(), txNames[typ], err)
		}
		out = append(out, s)
	}
	got, err := w.runNewOrder(ctx, conn, newOrderInput{wID: 1, dID: 4, cID: 17, remoteLines: 1, lines: []orderLineInput{
		{number: 1, iID: 500, supplyWID: 1, quantity: 3},
		{number: 2, iID: 7, supplyWID: 1, quantity: 10},
		{number: 3, iID: 7, supplyWID: 1, quantity: 2},
		{number: 4, iID: 9, supplyWID: 2, quantity: 4},
		{number: 5, iID: 1, supplyWID: 1, quantity: 1},
	}})
	add(txNewOrder, got, err)
	same := newOrderInput{wID: 1, dID: 5, cID: 18}
	for i := range 15 {
		same.lines = append(same.lines, orderLineInput{number: i + 1, iID: 42, supplyWID: 1, quantity: 10})
	}
	got, err = w.runNewOrder(ctx, conn, same)
	add(txNewOrder, got, err)
	got, err = w.runNewOrder(ctx, conn, newOrderInput{wID: 1, dID: 9, cID: 5, rbk: true, lines: []orderLineInput{
		{number: 1, iID: 3, supplyWID: 1, quantity: 1},
		{number: 2, iID: unusedItem, supplyWID: 1, quantity: 1},
		{number: 3, iID: 4, supplyWID: 1, quantity: 1},
	}})
	add(txNewOrder, got, err)
	py, err := w.runPayment(ctx, conn, paymentInput{wID: 1, dID: 2, cWID: 1, cDID: 6, cID: bcID, amount: 123456})
	add(txPayment, py, err)
	py, err = w.runPayment(ctx, conn, paymentInput{wID: 1, dID: 3, cWID: 1, cDID: 3, byName: true, cLast: lastName(123), amount: 100})
	add(txPayment, py, err)
	ost, err := w.runOrderStatus(ctx, conn, orderStatusInput{wID: 1, dID: 3, byName: true, cLast: lastName(123)})
	add(txOrderStatus, ost, err)
	ost, err = w.runOrderStatus(ctx, conn, orderStatusInput{wID: 1, dID: 4, cID: 17})
	add(txOrderStatus, ost, err)
	dl, err := w.runDelivery(ctx, conn, deliveryInput{wID: 1, carrierID: 7})
	add(txDelivery, dl, err)
	sl, err := w.runStockLevel(ctx, conn, stockLevelInput{wID: 1, dID: 4, threshold: 60})
	add(txStockLevel, sl, err)
	return out
}

// stateDigest hashes what the transactions can change, in key order: every column of the
// tables they write, but of STOCK only the counters, of ORDER-LINE only the orders from
// 2,101 on (older ones are delivered at load and never touched), and no timestamp values
// (the clock's), only whether they are NULL. It is Fingerprint restricted to what
// differs between runs, several times faster on Firebird.
func stateDigest(t *testing.T, db *sql.DB) string {
	t.Helper()
	ctx := context.Background()
	h := sha256.New()
	for _, q := range []string{
		"SELECT w_id, w_ytd FROM warehouse ORDER BY w_id",
		"SELECT d_w_id, d_id, d_ytd, d_next_o_id FROM district ORDER BY d_w_id, d_id",
		"SELECT c_w_id, c_d_id, c_id, c_balance, c_ytd_payment, c_payment_cnt, c_delivery_cnt, c_data FROM customer ORDER BY c_w_id, c_d_id, c_id",
		"SELECT h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_amount, h_data FROM history ORDER BY h_c_w_id, h_c_d_id, h_c_id, h_w_id, h_d_id, h_amount, h_data",
		"SELECT no_w_id, no_d_id, no_o_id FROM new_order ORDER BY no_w_id, no_d_id, no_o_id",
		"SELECT o_w_id, o_d_id, o_id, o_c_id, o_carrier_id, o_ol_cnt, o_all_local FROM orders ORDER BY o_w_id, o_d_id, o_id",
		"SELECT ol_w_id, ol_d_id, ol_o_id, ol_number, ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_dist_info, " +
			"CASE WHEN ol_delivery_d IS NULL THEN 0 ELSE 1 END FROM order_line WHERE ol_o_id > 2100 ORDER BY ol_w_id, ol_d_id, ol_o_id, ol_number",
		"SELECT s_w_id, s_i_id, s_quantity, s_ytd, s_order_cnt, s_remote_cnt FROM stock ORDER BY s_w_id, s_i_id",
	} {
		tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		rows, err := tx.QueryContext(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		cols, _ := rows.Columns()
		vals := make([]sql.RawBytes, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for _, v := range vals {
				if v == nil {
					h.Write([]byte{0})
				}
				h.Write(v)
				h.Write([]byte{0x1f})
			}
			h.Write([]byte{0x1e})
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		_ = tx.Rollback()
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestModesAgree runs the same transactions, one at a time, in each mode against
// identical freshly loaded databases (copies of one load) on each engine: chosen inputs
// that exercise the rare rules, then 300 seeded random ones. What every transaction
// displayed and the data left behind (stateDigest) must be the same in every mode. Then
// concurrent terminals run in each mode, and the consistency conditions of §3.3.2 must
// hold.
func TestModesAgree(t *testing.T) {
	const n = 300
	for _, e := range modeEngines {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			// One load, then a copy per mode. The source's pool is closed before copying.
			src := e.empty(t)
			tg := open(t, e.eng, src, engine.OpenOptions{})
			if err := Load(ctx, tg, LoadConfig{Warehouses: 1, Seed: 3}); err != nil {
				t.Fatal(err)
			}
			bcID := edgeSetup(t, tg)
			tg.DB.Close()
			dsns := map[string]string{ModeClient: src}
			for _, m := range Modes[1:] {
				dsns[m] = e.clone(t, src)
			}

			var wantOut []string
			var wantState string
			wire := map[string]*[numTxTypes]wireStats{}
			for _, m := range Modes {
				tg := open(t, e.eng, dsns[m], engine.OpenOptions{Dial: workloadtest.MeterDial})
				w := prepared(t, tg, Config{Seed: 4, Mix: modesMix, Mode: m})
				c, meter := workloadtest.MeteredConn(t, tg.DB)
				ws := &[numTxTypes]wireStats{}
				wire[m] = ws
				out := append(runEdges(t, w, c, bcID), runSeeded(t, w, c, n, meter, func(i, typ int, cnt latency.Counts) {
					if i >= wireWarmup {
						ws[typ].add(cnt)
					}
				})...)
				c.Close()
				state := stateDigest(t, tg.DB)
				if m == ModeClient {
					wantOut, wantState = out, state
				} else {
					for i := range out {
						if out[i] != wantOut[i] {
							t.Errorf("%s mode: transaction %d displayed\n\t%s\nin client mode\n\t%s", m, i, out[i], wantOut[i])
							break
						}
					}
					if state != wantState {
						t.Errorf("%s mode left another state (%s) than client mode (%s)", m, state[:12], wantState[:12])
					}
				}
				// Concurrent terminals, every type frequent: the conditions hold.
				counts := runTerminals(t, w, tg.DB, 4, 25, e.conflicts)
				t.Logf("%s mode, concurrent: %v", m, counts)
				allChecksHold(t, tg)
				// Closed now: on Firebird, DROP TABLE below waits for every attachment
				// that has used the table.
				w.Close()
				tg.DB.Close()
			}
			checkRoundTrips(t, e.name, wire)

			// The procedures can be dropped and installed again, and the tables dropped
			// after them (Firebird refuses to drop a table a procedure uses).
			tg = open(t, e.eng, dsns[ModeProcedure], engine.OpenOptions{})
			d := e.eng.Dialect()
			l := procLanguages[d.ProcedureLanguage]
			for _, step := range []struct {
				do   func() error
				want bool
			}{
				{func() error { return dropProcedures(ctx, tg.DB, d) }, false},
				{func() error { return InstallProcedures(ctx, tg) }, true},
				{func() error { return InstallProcedures(ctx, tg) }, true},
				{func() error { return dropProcedures(ctx, tg.DB, d) }, false},
			} {
				if err := step.do(); err != nil {
					t.Fatal(err)
				}
				if ok, err := proceduresInstalled(ctx, tg.DB, l); err != nil || ok != step.want {
					t.Fatalf("procedures installed: %v, %v; want %v", ok, err, step.want)
				}
			}
			if err := InstallProcedures(ctx, tg); err != nil {
				t.Fatal(err)
			}
			if err := dropProcedures(ctx, tg.DB, d); err != nil {
				t.Fatal(err)
			}
			if err := dropTables(ctx, tg.DB, d); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// wireWarmup is how many of the seeded transactions run before round trips are counted:
// enough for each connection to have prepared (and pgx to have cached) the statements of
// every type and most IN-list lengths, so that what is counted is the steady state.
const wireWarmup = 100

// maxRoundTrips bounds the median round trips of a New-Order per engine and mode, in the
// steady state; the client mode's is 5 + 3 per line, + 1 per statement without RETURNING
// on MariaDB and about 2 per statement on Firebird. Batched: two batches (Firebird: a
// begin, two EXECUTE BLOCKs of a prepare, an execute and a fetch each, and a commit).
// Procedure: one CALL (Firebird: begin, EXECUTE PROCEDURE, commit; PSQL cannot commit).
var maxRoundTrips = map[string]map[string]int64{
	"postgres": {ModeBatched: 2, ModeProcedure: 1},
	"mariadb":  {ModeBatched: 2, ModeProcedure: 1},
	"firebird": {ModeBatched: 8, ModeProcedure: 3},
}

// checkRoundTrips logs the round trips and bytes per transaction type and mode measured
// on the wire, and checks New-Order's against maxRoundTrips, and that each mode needs
// fewer round trips than the one before for every transaction type.
func checkRoundTrips(t *testing.T, eng string, wire map[string]*[numTxTypes]wireStats) {
	var b strings.Builder
	fmt.Fprintf(&b, "round trips (mean, median) and bytes up/down per transaction on %s, steady state:\n", eng)
	for _, m := range Modes {
		fmt.Fprintf(&b, "  %-9s", m)
		for typ := range numTxTypes {
			s := &wire[m][typ]
			fmt.Fprintf(&b, "  %s %.1f (%d) %d/%d B", txNames[typ], s.mean(), s.median(), s.up/max(1, s.n), s.down/max(1, s.n))
		}
		b.WriteString("\n")
	}
	t.Log(b.String())
	for m, bound := range maxRoundTrips[eng] {
		if got := wire[m][txNewOrder].median(); got > bound {
			t.Errorf("%s, %s mode: New-Order takes %d round trips (median), want at most %d", eng, m, got, bound)
		}
	}
	for i := 1; i < len(Modes); i++ {
		for typ := range numTxTypes {
			prev, cur := &wire[Modes[i-1]][typ], &wire[Modes[i]][typ]
			if cur.n > 0 && prev.n > 0 && cur.mean() > prev.mean() {
				t.Errorf("%s: %s takes %.1f round trips in %s mode, more than %.1f in %s mode", eng, txNames[typ], cur.mean(), Modes[i], prev.mean(), Modes[i-1])
			}
		}
	}
}

// TestModeUnsupported checks that New names the engine, the mode and the missing
// capability, and accepts every mode on every engine of this repository.
func TestModeUnsupported(t *testing.T) {
	for _, c := range []struct {
		e    engine.Engine
		mode string
		want string
	}{
		{noCapabilities{}, ModeBatched, "option mode batched cannot run on nocaps: it cannot send statements in batches (no engine.Batcher)"},
		{noCapabilities{}, ModeProcedure, "option mode procedure cannot run on nocaps: tpcc has stored procedures in plpgsql, psql, sql/psm, the engine's procedure language is none"},
		{postgres.Engine{}, "pipelined", `option mode "pipelined" is not a mode of tpcc (want client, batched, procedure)`},
	} {
		_, err := New(workload.Target{Engine: c.e}, Config{Mode: c.mode})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("mode %s on %s: %v, want %q", c.mode, c.e.Name(), err, c.want)
		}
	}
	for _, e := range modeEngines {
		for _, m := range append([]string{""}, Modes...) {
			w, err := New(workload.Target{Engine: e.eng}, Config{Mode: m})
			if err != nil {
				t.Errorf("mode %q on %s: %v", m, e.name, err)
				continue
			}
			if want := cmp.Or(m, ModeClient); w.Mode() != want {
				t.Errorf("mode %q on %s: Mode() = %s", m, e.name, w.Mode())
			}
		}
	}
}

// noCapabilities is PostgreSQL seen as an engine without a Batcher (it does not embed
// postgres.Engine) and without a procedure language.
type noCapabilities struct{}

func (noCapabilities) Name() string { return "nocaps" }
func (noCapabilities) Open(ctx context.Context, dsn string, opts engine.OpenOptions) (*sql.DB, error) {
	return postgres.Engine{}.Open(ctx, dsn, opts)
}
func (noCapabilities) Dialect() engine.Dialect {
	d := postgres.Engine{}.Dialect()
	d.ProcedureLanguage = ""
	return d
}
func (noCapabilities) Classify(err error) engine.ErrorClass { return postgres.Engine{}.Classify(err) }
func (noCapabilities) Inspect(ctx context.Context, db *sql.DB) (engine.Info, error) {
	return postgres.Engine{}.Inspect(ctx, db)
}
func (noCapabilities) Stats(ctx context.Context, db *sql.DB) (engine.Stats, error) {
	return postgres.Engine{}.Stats(ctx, db)
}
func (noCapabilities) Redact(dsn string) string { return dsn }
