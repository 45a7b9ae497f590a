package firebird

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/dblat/dblat/internal/engine"
)

// BeginBatch implements engine.Batcher. Firebird 3.0 has no pipelining and no batch API
// (both came with 4.0), but one EXECUTE BLOCK can run many statements: every batch is one
// selectable EXECUTE BLOCK whose body holds the statements, their arguments written in
// as literals, and returns their results as rows (DBLAT_K = the statement's index,
// DBLAT_N = its row count, then its values converted to text). With this driver an
// EXECUTE BLOCK sent as text costs about three round trips (prepare, execute, fetch; see
// TestBatch), however many statements it holds.
//
// PSQL cannot begin, commit or roll back the transaction it runs in, so those stay with
// the client: BeginBatch begins the transaction at once (one round trip, op_transaction),
// and Commit and Rollback send their statements, if any, as a batch and then end the
// transaction (one more round trip each). A transaction of n batches therefore costs
// about 3n + 2 round trips.
//
// Values come back as text (VARCHAR, in the database's character set): numbers in plain
// decimal notation, timestamps as "YYYY-MM-DD HH:MM:SS.ffff". Each value may hold up to
// 16,000/c characters, c being the widest statement's column count (1,000 for 16 columns),
// which keeps the row within Firebird's 64 KB limit; longer values fail with a string
// truncation error. Statements that return rows must start with SELECT (run as FOR SELECT
// ... DO SUSPEND) or be an INSERT, UPDATE or DELETE with RETURNING (one row at most, as in
// DSQL). Arguments are written as literals: strings quoted, []byte as x'..', time.Time as
// TIMESTAMP literals (to 100 µs, Firebird's precision), float64 as DOUBLE PRECISION; a
// driver.Valuer as what its Value returns (so decimal types that render as text arrive as
// string literals: write CAST(? AS NUMERIC(p,s)) where arithmetic needs a number).
func (Engine) BeginBatch(ctx context.Context, conn *sql.Conn, opts *sql.TxOptions) (engine.BatchTx, error) {
	tx, err := conn.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &batchTx{tx: tx}, nil
}

var _ engine.Batcher = Engine{}

// batchTx is a transaction whose batches are EXECUTE BLOCKs.
type batchTx struct {
	tx   *sql.Tx
	done bool
}

func (t *batchTx) Send(ctx context.Context, stmts ...*engine.BatchStmt) error {
	if t.done {
		return sql.ErrTxDone
	}
	if err := t.run(ctx, stmts); err != nil {
		t.done = true
		_ = t.tx.Rollback()
		return err
	}
	return nil
}

func (t *batchTx) Commit(ctx context.Context, stmts ...*engine.BatchStmt) error {
	if err := t.Send(ctx, stmts...); err != nil {
		return err
	}
	t.done = true
	return t.tx.Commit()
}

func (t *batchTx) Rollback(ctx context.Context, stmts ...*engine.BatchStmt) error {
	if err := t.Send(ctx, stmts...); err != nil {
		return err
	}
	t.done = true
	return t.tx.Rollback()
}

// run sends stmts as one EXECUTE BLOCK and distributes its rows.
func (t *batchTx) run(ctx context.Context, stmts []*engine.BatchStmt) error {
	if len(stmts) == 0 {
		return nil
	}
	q, cols, err := blockOf(stmts)
	if err != nil {
		return err
	}
	rows, err := t.tx.QueryContext(ctx, q)
	if err != nil {
		return fmt.Errorf("batch of %d statements: %w", len(stmts), err)
	}
	defer rows.Close()
	for _, s := range stmts {
		s.Rows, s.RowsAffected = s.Rows[:0], 0
	}
	vals := make([]any, 2+cols)
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		k, ok1 := vals[0].(int64)
		n, ok2 := vals[1].(int64)
		if !ok1 || !ok2 || k < 0 || int(k) >= len(stmts) {
			return fmt.Errorf("batch: unexpected row header %v, %v", vals[0], vals[1])
		}
		s := stmts[k]
		if s.Columns == 0 {
			s.RowsAffected = n
			continue
		}
		row := make([]any, s.Columns)
		for i := range row {
			switch v := vals[2+i].(type) {
			case []byte:
				row[i] = string(v)
			default:
				row[i] = v
			}
		}
		s.Rows = append(s.Rows, row)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("batch of %d statements: %w", len(stmts), err)
	}
	return nil
}

// blockOf writes the EXECUTE BLOCK that runs stmts, and returns it with the number of
// value columns it returns.
func blockOf(stmts []*engine.BatchStmt) (string, int, error) {
	cols := 0
	for _, s := range stmts {
		cols = max(cols, s.Columns)
	}
	width := min(8191, 16000/max(1, cols))
	var b strings.Builder
	b.WriteString("EXECUTE BLOCK RETURNS (DBLAT_K INTEGER, DBLAT_N BIGINT")
	into := make([]string, cols)
	for i := range cols {
		fmt.Fprintf(&b, ", DBLAT_C%d VARCHAR(%d)", i+1, width)
		into[i] = fmt.Sprintf(":DBLAT_C%d", i+1)
	}
	b.WriteString(") AS BEGIN\n")
	for k, s := range stmts {
		var body strings.Builder
		// Strings in '', identifiers in "" (quotes doubled in both, no backslash escapes).
		if err := engine.Interpolate(&body, s.SQL, s.Args, `'"`, "", literals.Write); err != nil {
			return "", 0, fmt.Errorf("batch statement %d: %w", k+1, err)
		}
		sqlText := strings.TrimRight(body.String(), " \t\n;")
		switch {
		case s.Columns == 0:
			fmt.Fprintf(&b, "%s;\nDBLAT_N = ROW_COUNT; DBLAT_K = %d; SUSPEND;\n", sqlText, k)
		case isSelect(sqlText):
			fmt.Fprintf(&b, "DBLAT_K = %d; DBLAT_N = -1;\nFOR %s\nINTO %s DO SUSPEND;\n",
				k, sqlText, strings.Join(into[:s.Columns], ", "))
		default: // INSERT, UPDATE or DELETE ... RETURNING: at most one row
			fmt.Fprintf(&b, "%s\nINTO %s;\nDBLAT_N = ROW_COUNT; DBLAT_K = %d; IF (DBLAT_N > 0) THEN SUSPEND;\n",
				sqlText, strings.Join(into[:s.Columns], ", "), k)
		}
	}
	b.WriteString("END")
	return b.String(), cols, nil
}

// isSelect reports whether q is a query (SELECT, or WITH ... SELECT).
func isSelect(q string) bool {
	f := strings.Fields(q)
	if len(f) == 0 {
		return false
	}
	first := strings.ToUpper(f[0])
	return first == "SELECT" || first == "WITH"
}

// literals are Firebird 3's spellings of literals.
var literals = engine.Literals{Float: 'e', True: "TRUE", False: "FALSE", Hex: "x'",
	Time: func(t time.Time) string { return "TIMESTAMP " + t.Format("'2006-01-02 15:04:05.0000'") }}
