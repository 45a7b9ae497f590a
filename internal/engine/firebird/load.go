package firebird

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Size of one EXECUTE BLOCK that inserts many rows. Firebird 3.0 has no batch API (it came
// with 4.0, protocol 16), so the loader sends many rows in one parameterised EXECUTE BLOCK,
// prepared once and executed again for every block.
const (
	// maxBlockRows is the most INSERTs one block can hold: each INSERT takes one
	// record-source context, and a request has at most 256 ("Too many Contexts of
	// Relation/Procedure/Views. Maximum allowed is 256"); 255 leaves one to spare. The
	// 64 KB statement-text limit of earlier versions is gone in 3.0 (10 MB): 255 rows of a
	// 21-column table are 290 KB of text and 180 KB of parameters, and load.
	maxBlockRows = 255
	// blockParams is how many parameters a block carries at most, the measured optimum
	// (BenchmarkCopyRows, FB 3.0.11 Super on loopback, 2 cores): loading speed is flat from
	// about 85 to 255 rows of a 3-column table (250k-280k rows/s) and from 12 to 48 rows of
	// TPC-C's 21-column CUSTOMER (35k-38k rows/s), but falls beyond about 1000 parameters
	// (26k rows/s at 97 CUSTOMER rows, 2k-3k at 255), and preparing a block costs time
	// that grows faster than its size. 512 gives 170 and 24 rows. (The driver's hard limit
	// is 32767 parameters: it counts the message's entries, two per parameter, in 16 bits.)
	blockParams = 512
)

// blockRows is how many rows one block carries for a table of ncols columns.
func blockRows(ncols int) int {
	return max(1, min(maxBlockRows, blockParams/max(1, ncols)))
}

// CopyRows implements engine.BulkLoader. It blocks until every row is stored or one fails,
// and returns the number of rows stored; the rows are inserted in one READ COMMITTED
// transaction, committed together or not at all (on error the count is 0). next is called
// on the caller's goroutine, never after CopyRows has returned.
//
// When the DSN names a load directory (LoadDirParam, which managed servers' DSNs do) and the
// server reads external files there, the rows go through an external table (extload.go):
// written to a file in the server's record format, then moved with one INSERT ... SELECT.
// Otherwise, and for tables with columns the external path does not write (BLOB, ARRAY),
// they go as parameterised EXECUTE BLOCKs of 512/len(cols) INSERTs each (1 to 255; see
// blockParams), all on one connection. Loading speed on loopback: about 270k rows/s for 3
// short columns and 37k rows/s for TPC-C's CUSTOMER through EXECUTE BLOCKs
// (BenchmarkCopyRows), against 12k rows/s for either with one prepared INSERT per row; the
// external path is several times faster (BenchmarkLoad10Warehouses).
//
// The block's parameters are declared TYPE OF COLUMN table.col, so the server converts each
// value to its column's type exactly as an INSERT would. Each full block is one execute of
// the prepared statement (2 round trips with this driver: execute and the row-count
// request); the rest goes in a smaller block prepared once at the end. Table and column
// names follow Firebird's rule for unquoted identifiers (upper-cased) unless given in
// double quotes.
//
// Accepted values are those database/sql accepts (driver.DefaultParameterConverter: the
// integer and float types, bool, string, []byte, time.Time, driver.Valuer, and pointers to
// them, nil pointers meaning NULL). They are converted and []byte values copied when next
// returns, because rows are buffered until they are sent and next may reuse them.
func (Engine) CopyRows(ctx context.Context, db *sql.DB, table string, cols []string, next func(row []any) bool) (int64, error) {
	if len(cols) == 0 {
		return 0, errors.New("copy rows: no columns")
	}
	if d, ok := db.Driver().(connDriver); ok && d.c.loadDir != "" {
		n, err := copyExternal(ctx, db, d.c, table, cols, next)
		if !errors.Is(err, errNoExternal) {
			return n, err
		}
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		return 0, err
	}
	n, err := loadBlocks(ctx, tx, table, cols, blockRows(len(cols)), next)
	if err != nil {
		_ = tx.Rollback()
		return 0, fmt.Errorf("copy into %s: %w", table, err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("copy into %s: commit: %w", table, err)
	}
	return n, nil
}

// loadBlocks sends the rows from next in blocks of k rows within tx.
func loadBlocks(ctx context.Context, tx *sql.Tx, table string, cols []string, k int, next func([]any) bool) (int64, error) {
	var stmts []*sql.Stmt
	// Statements are closed while the transaction is still open: the driver follows a
	// statement close after Commit with a COMMIT RETAINING of the finished transaction.
	defer func() {
		for _, s := range stmts {
			s.Close()
		}
	}()
	prepare := func(rows int) (*sql.Stmt, error) {
		s, err := tx.PrepareContext(ctx, blockSQL(table, cols, rows))
		if err != nil {
			return nil, err
		}
		stmts = append(stmts, s)
		return s, nil
	}
	var full *sql.Stmt
	row := make([]any, len(cols))
	args := make([]any, 0, k*len(cols))
	var n int64
	for next(row) {
		for i, v := range row {
			dv, err := driver.DefaultParameterConverter.ConvertValue(v)
			if err != nil {
				return 0, fmt.Errorf("row %d, column %s: %w", n+1, cols[i], err)
			}
			if b, ok := dv.([]byte); ok {
				dv = append([]byte(nil), b...)
			}
			args = append(args, dv)
		}
		n++
		if len(args) < k*len(cols) {
			continue
		}
		if full == nil {
			var err error
			if full, err = prepare(k); err != nil {
				return 0, err
			}
		}
		if _, err := full.ExecContext(ctx, args...); err != nil {
			return 0, err
		}
		args = args[:0]
	}
	if len(args) > 0 {
		rest, err := prepare(len(args) / len(cols))
		if err != nil {
			return 0, err
		}
		if _, err := rest.ExecContext(ctx, args...); err != nil {
			return 0, err
		}
	}
	for _, s := range stmts {
		if err := s.Close(); err != nil {
			return 0, err
		}
	}
	stmts = nil
	return n, nil
}

// blockSQL is an EXECUTE BLOCK with rows×len(cols) input parameters, typed like the
// columns, and one INSERT per row:
//
//	EXECUTE BLOCK (P0 TYPE OF COLUMN "T"."A" = ?, P1 ...) AS BEGIN
//	INSERT INTO "T" ("A", ...) VALUES (:P0, ...);
//	...
//	END
func blockSQL(table string, cols []string, rows int) string {
	qt := quoteIdent(table)
	qc := make([]string, len(cols))
	for i, c := range cols {
		qc[i] = quoteIdent(c)
	}
	var b strings.Builder
	b.Grow(rows * len(cols) * (24 + len(qt) + 16))
	b.WriteString("EXECUTE BLOCK (")
	p := 0
	for r := 0; r < rows; r++ {
		for _, c := range qc {
			if p > 0 {
				b.WriteString(", ")
			}
			b.WriteString("P")
			b.WriteString(strconv.Itoa(p))
			b.WriteString(" TYPE OF COLUMN ")
			b.WriteString(qt)
			b.WriteString(".")
			b.WriteString(c)
			b.WriteString(" = ?")
			p++
		}
	}
	b.WriteString(") AS BEGIN\n")
	insert := "INSERT INTO " + qt + " (" + strings.Join(qc, ", ") + ") VALUES ("
	p = 0
	for r := 0; r < rows; r++ {
		b.WriteString(insert)
		for i := range qc {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(":P")
			b.WriteString(strconv.Itoa(p))
			p++
		}
		b.WriteString(");\n")
	}
	b.WriteString("END")
	return b.String()
}
