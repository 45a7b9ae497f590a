package tpcc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/dblat/dblat/internal/engine"
)

// This file holds what the batched transactions share. In ModeBatched a transaction is a
// few batches (engine.BatchTx.Send), each sent in one request: a batch holds every
// statement whose arguments are known by then, so the number of batches is the length of
// the profile's chain of data dependencies that the client must see (an item found or
// not, the customer chosen by name, the oldest undelivered order), not its number of
// statements. The statements and the order in which they lock rows are those of
// ModeClient; reads of many keys become one statement with an IN list. Values that only
// the server needs to combine stay on the server (H_DATA is W_NAME || D_NAME), and money
// travels as CAST(? AS NUMERIC(p,s)), because some engines' batches carry arguments as
// literals.

// bstmt returns a batch statement for q, written with "?" placeholders, that returns rows
// of cols columns (0: none, its row count is wanted).
func (w *Workload) bstmt(cols int, q string, args ...any) *engine.BatchStmt {
	return &engine.BatchStmt{SQL: w.d.Rebind(q), Args: args, Columns: cols}
}

// decimal is a placeholder for an exact decimal of precision p and scale s.
func (w *Workload) decimal(p, s int) string { return "CAST(? AS " + w.d.Decimal(p, s) + ")" }

// placeholders is "?, ?, ..., ?" with n markers.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// beginBatch begins a batched transaction with opts on conn.
func (w *Workload) beginBatch(ctx context.Context, conn *sql.Conn, opts *sql.TxOptions) (engine.BatchTx, error) {
	return w.batcher.BeginBatch(ctx, conn, opts)
}

// abort ends btx after err, which is returned; a transaction already ended by a failed
// batch is left alone.
func abort(ctx context.Context, btx engine.BatchTx, err error) error {
	if rbErr := btx.Rollback(ctx); rbErr != nil && !errors.Is(rbErr, sql.ErrTxDone) {
		return errors.Join(err, rbErr)
	}
	return err
}

// single scans the only row of s into dest; sql.ErrNoRows when s returned no row.
func single(s *engine.BatchStmt, dest ...any) error {
	switch len(s.Rows) {
	case 0:
		return sql.ErrNoRows
	case 1:
		return scanValues(s.Rows[0], dest...)
	}
	return fmt.Errorf("tpcc: %d rows where one was expected: %.60s", len(s.Rows), s.SQL)
}

// affected checks that s, a statement without rows, changed want rows (or at least one
// when want < 0).
func affected(s *engine.BatchStmt, want int64, what string) error {
	if s.RowsAffected == want || (want < 0 && s.RowsAffected > 0) {
		return nil
	}
	return fmt.Errorf("tpcc: %s: %d rows changed, want %d", what, s.RowsAffected, want)
}

// batchUpdateRead returns the statements that update one row and read it back: one UPDATE ...
// RETURNING where the dialect has it (the read is then the same statement), else the
// UPDATE followed by read, a SELECT that sees the row as changed and locked.
func (w *Workload) batchUpdateRead(cols int, upd, returning string, updArgs []any, read string, readArgs []any) (u, r *engine.BatchStmt) {
	if w.returning() {
		s := w.bstmt(cols, upd+" RETURNING "+returning, updArgs...)
		return s, s
	}
	return w.bstmt(0, upd, updArgs...), w.bstmt(cols, read, readArgs...)
}

// stmts lists the statements of a batch, leaving out nils and repeats (the two halves of
// a batchUpdateRead with RETURNING are one statement).
func stmts(list ...*engine.BatchStmt) []*engine.BatchStmt {
	out := make([]*engine.BatchStmt, 0, len(list))
	for _, s := range list {
		if s != nil && (len(out) == 0 || out[len(out)-1] != s) {
			out = append(out, s)
		}
	}
	return out
}

// checkUpdated checks that the UPDATE of a batchUpdateRead pair changed one row.
func (w *Workload) checkUpdated(u *engine.BatchStmt, what string) error {
	if w.returning() {
		if len(u.Rows) != 1 {
			return fmt.Errorf("tpcc: %s not found", what)
		}
		return nil
	}
	if u.RowsAffected == 0 {
		return fmt.Errorf("tpcc: %s not found", what)
	}
	return affected(u, 1, what)
}
