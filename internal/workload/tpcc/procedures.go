package tpcc

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/workload"
)

// ModeProcedure runs each transaction as one call of a stored procedure. The procedures
// are TPC-C's, so their sources live here, one file per procedure language
// (procedures_plpgsql.go, procedures_sqlpsm.go, procedures_psql.go), keyed by the
// engine's Dialect.ProcedureLanguage: a capability, like the rest of the dialect, not a
// product name, and the engine packages stay free of TPC-C.
//
// Every language's procedures take the same arguments and return one row with the same
// columns, so the calling code below is shared:
//
//	tpcc_new_order(w, d, c, ol_cnt, all_local, lines, entry_d)
//	    -> o_id, c_last, c_credit, c_discount, w_tax, d_tax, Σ ol_amount, brands, rolled_back
//	tpcc_payment(w, d, c_w, c_d, by_name, c_id, c_last, h_amount, h_date)
//	    -> c_id, c_balance, c_credit, first 200 characters of the new C_DATA ('' unless BC)
//	tpcc_order_status(w, d, by_name, c_id, c_last) -> c_id, c_balance, o_id, o_carrier_id, lines
//	tpcc_delivery(w, o_carrier_id, ol_delivery_d) -> skipped districts, delivered O_IDs
//	tpcc_stock_level(w, d, threshold) -> low_stock
//
// The client draws every input, as in the other modes (HammerDB draws items and customers
// inside its procedures instead), so that the same seed gives the same data in every
// mode; timestamps are the client's clock, as in the other modes. New-Order's lines
// travel as one string of fixed-width fields in processing order (encodeLines), since
// neither SQL/PSM nor PSQL has array parameters. The procedures follow the profiles of
// the client mode statement by statement, lock rows in the same order, and use the same
// isolation: they set it themselves where they begin their transaction, the client does
// where it must begin it (PSQL).
//
// Round trips: PL/pgSQL and SQL/PSM procedures begin and commit their own transaction, so
// a call is the whole transaction: one round trip (a CALL of a statement prepared on the
// connection). PSQL cannot end the transaction it runs in, so on Firebird the client
// begins it (one round trip: op_transaction cannot be deferred), calls the procedure
// (one: a prepared EXECUTE PROCEDURE answers with its output row in op_execute2), and
// commits (one): three, the minimum with this driver. Autocommit would save the begin and
// the commit, but the driver's autocommit is COMMIT RETAINING on one long transaction,
// which does not even commit a prepared call run through QueryRow (engines.md §2.2).

// procMarker is in the source of every procedure of this version; Prepare reinstalls the
// procedures when the database holds another version (or none).
const procMarker = "dblat tpcc procedures v2"

// procNames are the procedures, in the order of the transaction types.
var procNames = [numTxTypes]string{"tpcc_new_order", "tpcc_payment", "tpcc_order_status", "tpcc_delivery", "tpcc_stock_level"}

// procArgs and procOuts are how many arguments each procedure takes and how many values
// it returns.
var (
	procArgs = [numTxTypes]int{7, 9, 5, 3, 3}
	procOuts = [numTxTypes]int{9, 4, 5, 2, 1}
)

// procLanguage is the procedures in one Dialect.ProcedureLanguage.
type procLanguage struct {
	// commits is true when the procedures begin and end their own transaction and are
	// called outside any; false when the client begins and ends it around the call.
	commits bool
	// install creates or replaces everything, in order, each statement in a transaction
	// of its own. It needs the TPC-C tables.
	install func(d engine.Dialect) []string
	// drop drops everything install creates, if it exists.
	drop []string
	// installed counts the procedures whose source holds procMarker.
	installed string
	// call is the statement that calls procedure name, with "?" placeholders for its args
	// arguments, and returns its outs results as one row.
	call func(name string, args, outs int) string
}

// procLanguages holds the procedure sources by Dialect.ProcedureLanguage, filled by the
// procedures_*.go files.
var procLanguages = map[string]*procLanguage{}

// procLanguageNames are procLanguages' keys, sorted.
var procLanguageNames []string

func registerProcLanguage(name string, l *procLanguage) {
	procLanguages[name] = l
	procLanguageNames = append(procLanguageNames, name)
	slices.Sort(procLanguageNames)
}

// ErrNoProcedures is wrapped by InstallProcedures when the engine's procedure language is
// not one tpcc has procedures in.
var ErrNoProcedures = errors.New("no TPC-C stored procedures for this engine")

// InstallProcedures creates, or replaces, the stored procedures of ModeProcedure in t's
// database, which must hold the TPC-C tables. Load calls it (for engines with a procedure
// language tpcc knows); Prepare calls it in ModeProcedure when they are missing or from
// another version, so databases loaded before work too. It must not run while terminals
// call the procedures. It wraps ErrNoProcedures when the engine has no procedure language
// tpcc knows.
func InstallProcedures(ctx context.Context, t workload.Target) error {
	d := t.Engine.Dialect()
	l := procLanguages[d.ProcedureLanguage]
	if l == nil {
		return fmt.Errorf("tpcc: engine %s: %w", t.Engine.Name(), ErrNoProcedures)
	}
	for _, q := range l.install(d) {
		if err := execInTx(ctx, t.DB, q); err != nil {
			return fmt.Errorf("tpcc: install procedures: %w", err)
		}
	}
	return nil
}

// dropProcedures drops the procedures, if the engine has a language tpcc knows; Load
// calls it before it drops the tables (Firebird refuses to drop a table a procedure uses).
func dropProcedures(ctx context.Context, db *sql.DB, d engine.Dialect) error {
	l := procLanguages[d.ProcedureLanguage]
	if l == nil {
		return nil
	}
	for _, q := range l.drop {
		if err := execInTx(ctx, db, q); err != nil {
			return fmt.Errorf("tpcc: drop procedures: %w", err)
		}
	}
	return nil
}

// proceduresInstalled reports whether all procedures of this version are in db.
func proceduresInstalled(ctx context.Context, db *sql.DB, l *procLanguage) (bool, error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, l.installed).Scan(&n); err != nil {
		return false, err
	}
	return n == len(procNames), nil
}

// execInTx runs q in a transaction of its own (Firebird's driver must not run statements
// outside one; DDL on MariaDB commits implicitly anyway).
func execInTx(ctx context.Context, db *sql.DB, q string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, q); err != nil {
		_ = tx.Rollback()
		return fmt.Errorf("%.80s: %w", q, err)
	}
	return tx.Commit()
}

// prepareProcedures readies ModeProcedure: installs the procedures if needed and, for a
// language whose calls run in a client transaction, prepares the calls on db (reused per
// connection through Tx.StmtContext).
func (w *Workload) prepareProcedures(ctx context.Context, db *sql.DB) error {
	ok, err := proceduresInstalled(ctx, db, w.proc)
	if err != nil {
		return fmt.Errorf("tpcc: look for the stored procedures: %w", err)
	}
	if !ok {
		if err := InstallProcedures(ctx, workload.Target{Engine: w.engine, DB: db}); err != nil {
			return err
		}
	}
	w.calls = &driverStmts{m: map[any]map[string]driver.Stmt{}}
	if w.proc.commits {
		return nil
	}
	p := &preparer{ctx: ctx, db: db, d: w.d}
	for i, name := range procNames {
		w.st.procCall[i] = p.prep(w.proc.call(name, procArgs[i], procOuts[i]))
	}
	w.st.all = append(w.st.all, p.all...)
	return p.err
}

// call runs the procedure of transaction type typ with args and returns its output row.
// When the language's procedures commit, the call is the whole transaction and finish
// does nothing. Otherwise call begins a transaction with opts, and finish must end it:
// commit or roll back.
func (w *Workload) call(ctx context.Context, conn *sql.Conn, typ int, opts *sql.TxOptions, args ...any) (row []any, finish func(commit bool) error, err error) {
	if w.proc.commits {
		row, err := w.calls.queryRow(ctx, conn, w.d.Rebind(w.proc.call(procNames[typ], procArgs[typ], procOuts[typ])), args)
		return row, func(bool) error { return nil }, err
	}
	tx, err := conn.BeginTx(ctx, opts)
	if err != nil {
		return nil, nil, err
	}
	finish = func(commit bool) error {
		if commit {
			return tx.Commit()
		}
		return tx.Rollback()
	}
	rows, err := tx.StmtContext(ctx, w.st.procCall[typ]).QueryContext(ctx, args...)
	if err == nil {
		row, err = firstRow(rows)
	}
	if err != nil {
		_ = tx.Rollback()
		return nil, nil, err
	}
	return row, finish, nil
}

// firstRow reads the first row of rows as driver values and closes rows.
func firstRow(rows *sql.Rows) ([]any, error) {
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, err
		}
		return nil, sql.ErrNoRows
	}
	row := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range row {
		ptrs[i] = &row[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return nil, err
	}
	return row, rows.Close()
}

// driverStmts keeps prepared statements per driver connection, for the calls of
// procedures that commit: those must run outside a transaction, and database/sql reuses a
// statement per connection only inside one (Tx.StmtContext), while preparing on a
// *sql.Conn would prepare again for every *sql.Conn handed out by the pool. Prepared, a
// call is one round trip (a CALL sent with arguments and no prepare would be two on
// MariaDB, which prepares every statement with arguments). Statements of connections that
// the pool has closed stay in the map until the workload is closed; the server dropped
// them with their connection.
type driverStmts struct {
	mu sync.Mutex
	m  map[any]map[string]driver.Stmt // driver connection -> query -> statement
}

// queryRow runs query with args on conn's driver connection, preparing it there on first
// use, and returns the first row, []byte values copied into strings.
func (c *driverStmts) queryRow(ctx context.Context, conn *sql.Conn, query string, args []any) (row []any, err error) {
	err = conn.Raw(func(dc any) error {
		c.mu.Lock()
		stmts := c.m[dc]
		if stmts == nil {
			stmts = map[string]driver.Stmt{}
			c.m[dc] = stmts
		}
		s := stmts[query]
		c.mu.Unlock()
		if s == nil {
			var err error
			if p, ok := dc.(driver.ConnPrepareContext); ok {
				s, err = p.PrepareContext(ctx, query)
			} else {
				s, err = dc.(driver.Conn).Prepare(query)
			}
			if err != nil {
				return err
			}
			c.mu.Lock()
			stmts[query] = s
			c.mu.Unlock()
		}
		nv := make([]driver.NamedValue, len(args))
		for i, a := range args {
			v, err := driver.DefaultParameterConverter.ConvertValue(a)
			if err != nil {
				return fmt.Errorf("argument %d: %w", i+1, err)
			}
			nv[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
		}
		sq, ok := s.(driver.StmtQueryContext)
		if !ok {
			return fmt.Errorf("tpcc: the driver's statements (%T) take no context", s)
		}
		rows, err := sq.QueryContext(ctx, nv)
		if err != nil {
			if errors.Is(err, driver.ErrBadConn) {
				c.mu.Lock()
				delete(c.m, dc)
				c.mu.Unlock()
			}
			return err
		}
		defer rows.Close()
		dest := make([]driver.Value, len(rows.Columns()))
		if err := rows.Next(dest); err != nil {
			if err == io.EOF {
				return sql.ErrNoRows
			}
			return err
		}
		row = make([]any, len(dest))
		for i, v := range dest {
			if b, ok := v.([]byte); ok {
				v = string(b)
			}
			row[i] = v
		}
		return rows.Close()
	})
	return row, err
}

// encodeLines writes New-Order's lines, in processing order, as the procedures read
// them: 16 characters per line, I_ID (6 digits), OL_SUPPLY_W_ID (6), OL_QUANTITY (2) and
// OL_NUMBER (2). Item numbers go to 200,000 (§1.3) and warehouses are far fewer than a
// million, so the fields never overflow; 15 lines take 240 characters.
func encodeLines(order []orderLineInput) string {
	var b strings.Builder
	b.Grow(16 * len(order))
	for _, l := range order {
		fmt.Fprintf(&b, "%06d%06d%02d%02d", l.iID, l.supplyWID, l.quantity, l.number)
	}
	return b.String()
}

// newOrderProc runs New-Order as one call of tpcc_new_order. When an item is not found the
// procedure has done the valid items' work and rolled back (or, in PSQL, the client rolls
// back), and ErrExpectedRollback is returned.
func (w *Workload) newOrderProc(ctx context.Context, conn *sql.Conn, in newOrderInput) (out newOrderOutput, err error) {
	order := in.processingOrder()
	row, finish, err := w.call(ctx, conn, txNewOrder, w.rw, in.wID, in.dID, in.cID, len(in.lines), in.allLocal(), encodeLines(order), time.Now())
	if err != nil {
		return out, err
	}
	var cDiscount, wTax, dTax rate
	var sum money
	var brands string
	var rolledBack int
	if err := scanValues(row, &out.oID, &out.cLast, &out.cCredit, &cDiscount, &wTax, &dTax, &sum, &brands, &rolledBack); err != nil {
		return out, errors.Join(err, finish(false))
	}
	if rolledBack != 0 {
		if err := finish(false); err != nil {
			return out, err
		}
		if !in.rbk {
			return out, fmt.Errorf("tpcc: new order %d/%d/%d: an item was not found", in.wID, in.dID, in.cID)
		}
		return out, workload.ErrExpectedRollback
	}
	if err := finish(true); err != nil {
		return out, err
	}
	out.total = totalAmount(sum, cDiscount, wTax, dTax)
	out.brands = append([]byte{0}, brands...) // indexed by OL_NUMBER
	return out, nil
}

// paymentProc runs Payment as one call of tpcc_payment.
func (w *Workload) paymentProc(ctx context.Context, conn *sql.Conn, in paymentInput) (out paymentOutput, err error) {
	byName := 0
	if in.byName {
		byName = 1
	}
	row, finish, err := w.call(ctx, conn, txPayment, w.rw, in.wID, in.dID, in.cWID, in.cDID, byName, in.cID, in.cLast, in.amount.arg(), time.Now())
	if err != nil {
		return out, err
	}
	if err := scanValues(row, &out.cID, &out.balance, &out.credit, &out.cData); err != nil {
		return out, errors.Join(err, finish(false))
	}
	return out, finish(true)
}

// orderStatusProc runs Order-Status as one call of tpcc_order_status.
func (w *Workload) orderStatusProc(ctx context.Context, conn *sql.Conn, in orderStatusInput) (out orderStatusOutput, err error) {
	byName := 0
	if in.byName {
		byName = 1
	}
	row, finish, err := w.call(ctx, conn, txOrderStatus, w.ro, in.wID, in.dID, byName, in.cID, in.cLast)
	if err != nil {
		return out, err
	}
	if err := scanValues(row, &out.cID, &out.balance, &out.oID, &out.carrier, &out.lines); err != nil {
		return out, errors.Join(err, finish(false))
	}
	return out, finish(true)
}

// deliveryProc runs Delivery as one call of tpcc_delivery.
func (w *Workload) deliveryProc(ctx context.Context, conn *sql.Conn, in deliveryInput) (out deliveryOutput, err error) {
	row, finish, err := w.call(ctx, conn, txDelivery, w.rw, in.wID, in.carrierID, time.Now())
	if err != nil {
		return out, err
	}
	var delivered string
	if err := scanValues(row, &out.skipped, &delivered); err != nil {
		return out, errors.Join(err, finish(false))
	}
	f := strings.Fields(delivered)
	if len(f) != districtsPerW {
		return out, errors.Join(fmt.Errorf("tpcc: delivery returned %q", delivered), finish(false))
	}
	for i, s := range f {
		if out.delivered[i], err = strconv.Atoi(s); err != nil {
			return out, errors.Join(err, finish(false))
		}
	}
	return out, finish(true)
}

// stockLevelProc runs Stock-Level as one call of tpcc_stock_level.
func (w *Workload) stockLevelProc(ctx context.Context, conn *sql.Conn, in stockLevelInput) (lowStock int, err error) {
	row, finish, err := w.call(ctx, conn, txStockLevel, w.ro, in.wID, in.dID, in.threshold)
	if err != nil {
		return 0, err
	}
	if err := scanValues(row, &lowStock); err != nil {
		return 0, errors.Join(err, finish(false))
	}
	return lowStock, finish(true)
}
