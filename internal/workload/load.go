package workload

import (
	"context"
	"database/sql"
	"strings"
	"sync"

	"github.com/dblat/dblat/internal/engine"
)

// InsertRows is the portable loader: it stores the rows from next in table with
// INSERT ... VALUES statements of perStmt rows (fewer when rows × columns would pass 32,767
// parameters; at least 1), prepared once, all in one transaction, and returns how many
// rows it stored. next fills its argument with the next row's values, one per column of
// cols, and returns false at the end; the values must stay valid until the statement
// holding them ran, since a statement holds the values of several rows.
func InsertRows(ctx context.Context, db *sql.DB, d engine.Dialect, table string, cols []string, next func([]any) bool, perStmt int) (n int64, err error) {
	per := max(1, min(perStmt, 32767/len(cols)))
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	full, err := tx.PrepareContext(ctx, d.Rebind(insertSQL(table, cols, per)))
	if err != nil {
		return 0, err
	}
	defer full.Close()
	row := make([]any, len(cols))
	args := make([]any, 0, per*len(cols))
	for next(row) {
		args = append(args, row...)
		if len(args) == cap(args) {
			if _, err = full.ExecContext(ctx, args...); err != nil {
				return n, err
			}
			n += int64(per)
			args = args[:0]
		}
	}
	if k := len(args) / len(cols); k > 0 {
		if _, err = tx.ExecContext(ctx, d.Rebind(insertSQL(table, cols, k)), args...); err != nil {
			return n, err
		}
		n += int64(k)
	}
	// Close before Commit: the Firebird driver follows a statement close after Commit with a
	// COMMIT RETAINING of the finished transaction.
	if err = full.Close(); err != nil {
		return n, err
	}
	return n, tx.Commit()
}

// insertSQL is INSERT INTO table (cols) VALUES with rows rows of ? placeholders.
func insertSQL(table string, cols []string, rows int) string {
	var b strings.Builder
	b.WriteString("INSERT INTO " + table + " (" + strings.Join(cols, ", ") + ") VALUES ")
	one := "(" + strings.Repeat("?, ", len(cols)-1) + "?)"
	for i := range rows {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(one)
	}
	return b.String()
}

// LoadProgress serializes a parallel load's calls to its progress callback, fn(done,
// total): the rows stored so far and the rows to store. Add the rows of every job with
// AddTotal before the jobs start; each job then counts its rows through Counting.
type LoadProgress struct {
	fn          func(done, total int64)
	mu          sync.Mutex
	done, total int64
}

// NewLoadProgress returns a LoadProgress that reports to fn; fn may be nil (no reports).
func NewLoadProgress(fn func(done, total int64)) *LoadProgress {
	return &LoadProgress{fn: fn}
}

// AddTotal adds n rows to the total to store. It is not safe for concurrent use: call it
// before the jobs start.
func (p *LoadProgress) AddTotal(n int64) { p.total += n }

// Total is the rows to store, as AddTotal added them.
func (p *LoadProgress) Total() int64 { return p.total }

// Report adds n stored rows and calls the callback.
func (p *LoadProgress) Report(n int64) {
	if p.fn == nil {
		return
	}
	p.mu.Lock()
	p.done += n
	p.fn(p.done, p.total)
	p.mu.Unlock()
}

// progressEvery is how many rows a job stores between two reports.
const progressEvery = 1 << 14

// Counting wraps a job's row source (as InsertRows and engine.BulkLoader take it) so that
// it reports every 16 Ki rows. The job calls Flush when done.
func (p *LoadProgress) Counting(next func([]any) bool) *RowCounter {
	return &RowCounter{p: p, src: next}
}

// RowCounter is a row source that counts its rows for a LoadProgress (see Counting). It is
// used by one goroutine at a time.
type RowCounter struct {
	p       *LoadProgress
	src     func([]any) bool
	pending int64
}

// Next fills row from the wrapped source and counts it; it returns false at the end.
func (c *RowCounter) Next(row []any) bool {
	if !c.src(row) {
		return false
	}
	if c.pending++; c.pending == progressEvery {
		c.p.Report(c.pending)
		c.pending = 0
	}
	return true
}

// Flush reports the rows counted but not yet reported.
func (c *RowCounter) Flush() {
	if c.pending > 0 {
		c.p.Report(c.pending)
		c.pending = 0
	}
}

// FirstLine is the first line of err's message: drivers' messages can run to several
// lines, too long to wrap in another error.
func FirstLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
