package mariadb

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/dblat/dblat/internal/engine"
)

// BeginBatch implements engine.Batcher. Every batch is one anonymous compound statement,
// BEGIN NOT ATOMIC stmt; stmt; ... END (MariaDB 10.1.1+), sent as one COM_QUERY with its
// arguments written into the text as literals, and answered in one flight: one round trip
// per batch. The statements run in order on the server; the client reads one result set
// per statement (MariaDB's client protocol always asks for multiple results), a DML
// statement's being a SELECT ROW_COUNT() added after it. The first batch begins with SET
// TRANSACTION ISOLATION LEVEL ... and START TRANSACTION, the last ends with COMMIT or
// ROLLBACK, so BeginBatch sends nothing and a transaction of n batches costs n round trips.
//
// A compound statement, rather than a multi-statement COM_QUERY, because it needs no
// connection option: go-sql-driver/mysql negotiates multi-statements only with
// multiStatements=true in the DSN, and its interpolateParams option would be needed as
// well. It is not stored code: the server parses it as it parses any query.
//
// Arguments are written as go-sql-driver/mysql's interpolateParams would send them, except
// that strings holding a backslash are sent as hexadecimal literals (correct whatever
// NO_BACKSLASH_ESCAPES says), and time.Time values in UTC (the driver's default loc).
func (Engine) BeginBatch(ctx context.Context, conn *sql.Conn, opts *sql.TxOptions) (engine.BatchTx, error) {
	begin := "START TRANSACTION"
	if opts != nil {
		if opts.ReadOnly {
			begin += " READ ONLY"
		}
		level := ""
		switch opts.Isolation {
		case sql.LevelDefault:
		case sql.LevelReadUncommitted:
			level = "READ UNCOMMITTED"
		case sql.LevelReadCommitted:
			level = "READ COMMITTED"
		case sql.LevelRepeatableRead:
			level = "REPEATABLE READ"
		case sql.LevelSerializable:
			level = "SERIALIZABLE"
		default:
			return nil, fmt.Errorf("mariadb: isolation level %v not supported", opts.Isolation)
		}
		if level != "" {
			begin = "SET TRANSACTION ISOLATION LEVEL " + level + ";\n" + begin
		}
	}
	return engine.FoldedBatchTx((&batchTx{conn: conn, begin: begin}).send), nil
}

var _ engine.Batcher = Engine{}

// rowCountColumn names the column of the SELECT ROW_COUNT() that follows a DML statement.
const rowCountColumn = "dblat_row_count"

// batchTx sends the batches of one transaction (engine.FoldedBatchTx) as compound
// statements.
type batchTx struct {
	conn  *sql.Conn
	begin string // sent with the first batch
}

// send sends stmts as one compound statement, preceded by t.begin when begin and followed
// by end ("", COMMIT or ROLLBACK).
func (t *batchTx) send(ctx context.Context, begin bool, stmts []*engine.BatchStmt, end string) error {
	var b strings.Builder
	b.WriteString("BEGIN NOT ATOMIC\n")
	if begin {
		b.WriteString(t.begin)
		b.WriteString(";\n")
	}
	for i, s := range stmts {
		// Strings in '' or "" (backslash escapes in both), identifiers in ``.
		if err := engine.Interpolate(&b, s.SQL, s.Args, "'\"`", `'"`, literals.Write); err != nil {
			t.rollback(ctx)
			return fmt.Errorf("batch statement %d: %w", i+1, err)
		}
		b.WriteString(";\n")
		if s.Columns == 0 {
			b.WriteString("SELECT ROW_COUNT() AS " + rowCountColumn + ";\n")
		}
	}
	if end != "" {
		b.WriteString(end)
		b.WriteString(";\n")
	}
	b.WriteString("END")
	if err := t.run(ctx, b.String(), stmts); err != nil {
		t.rollback(ctx)
		return err
	}
	return nil
}

// rollback ends the transaction after a failure. The server stops a compound statement at
// its first error and leaves the transaction open (InnoDB has rolled it back already after
// a deadlock); one more round trip on this rare path makes the connection clean.
func (t *batchTx) rollback(ctx context.Context) {
	_, _ = t.conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
}

// run sends the compound statement q and reads one result set per statement.
func (t *batchTx) run(ctx context.Context, q string, stmts []*engine.BatchStmt) error {
	rows, err := t.conn.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	for i, s := range stmts {
		if i > 0 && !rows.NextResultSet() {
			if err := rows.Err(); err != nil {
				return fmt.Errorf("batch statement %d (%.60s): %w", i+1, s.SQL, err)
			}
			return fmt.Errorf("batch statement %d (%.60s): no result", i+1, s.SQL)
		}
		if err := readResult(rows, s); err != nil {
			return fmt.Errorf("batch statement %d (%.60s): %w", i+1, s.SQL, err)
		}
	}
	// The transaction statements return no result sets; this drains the final OK and
	// reports an error raised after the last statement's result (a failed COMMIT).
	for rows.NextResultSet() {
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return rows.Close()
}

// readResult reads the current result set into s: its rows, or for a DML statement the
// ROW_COUNT() that follows it.
func readResult(rows *sql.Rows, s *engine.BatchStmt) error {
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	isCount := len(cols) == 1 && cols[0] == rowCountColumn
	switch {
	case s.Columns == 0 && !isCount:
		return fmt.Errorf("returned %d columns, the statement declares none", len(cols))
	case s.Columns > 0 && len(cols) != s.Columns:
		return fmt.Errorf("returned %d columns, the statement declares %d", len(cols), s.Columns)
	}
	s.Rows = s.Rows[:0]
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		if isCount {
			n, ok := vals[0].(int64)
			if !ok {
				return fmt.Errorf("ROW_COUNT() gave %T", vals[0])
			}
			s.RowsAffected = n
			continue
		}
		s.Rows = append(s.Rows, vals)
	}
	return rows.Err()
}

// literals are MariaDB's spellings of literals, in its default sql_mode.
var literals = engine.Literals{Float: 'g', True: "1", False: "0", Hex: "X'",
	Time:      func(t time.Time) string { return t.UTC().Format("'2006-01-02 15:04:05.999999'") },
	HexString: func(s string) bool { return strings.ContainsRune(s, '\\') }}
