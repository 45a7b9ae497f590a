package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/dblat/dblat/internal/engine"
)

// CopyRows loads rows with COPY table (cols) FROM STDIN in text format; it implements
// engine.BulkLoader. It blocks until the server has accepted or rejected every row, and
// returns the number of rows the server stored. The rows go in one COPY statement, so they
// are committed together or not at all.
//
// The values are encoded here rather than by pgx's type map: pgx.Conn.CopyFrom first asks
// the server for the column types (one extra round trip), then plans a binary encoder per
// value; writing the text format straight into the stream costs a type switch per value
// and no allocation. next runs on one goroutine at a time (pgconn's writer goroutine),
// never after CopyRows has returned.
//
// Accepted values, and pointers to them (a nil pointer, like nil, is SQL NULL): bool, the
// integer types, float32, float64, string, []byte (sent as text, not bytea), time.Time
// (with its UTC offset, which PostgreSQL ignores for timestamp without time zone),
// encoding.TextAppender (its text is sent as is, so it must be valid input for the
// column's type), and driver.Valuer (its result encoded by these rules). Anything else
// aborts the COPY with an error.
func (Engine) CopyRows(ctx context.Context, db *sql.DB, table string, cols []string, next func(row []any) bool) (int64, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	var n int64
	err = conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return errors.New("postgres: not a pgx connection")
		}
		src := &copyReader{row: make([]any, len(cols)), next: next}
		tag, err := sc.Conn().PgConn().CopyFrom(ctx, src, copySQL(table, cols))
		if src.err != nil {
			// The encoder's own error is clearer than the server's "COPY from stdin failed".
			return fmt.Errorf("copy into %s: %w", table, src.err)
		}
		if err != nil {
			return err
		}
		n = tag.RowsAffected()
		return nil
	})
	return n, err
}

func copySQL(table string, cols []string) string {
	var b strings.Builder
	b.WriteString("COPY ")
	b.WriteString(pgx.Identifier{table}.Sanitize())
	b.WriteString(" (")
	for i, c := range cols {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(pgx.Identifier{c}.Sanitize())
	}
	b.WriteString(") FROM STDIN")
	return b.String()
}

// copyReader turns rows from next into COPY text format on demand: each Read encodes rows
// until it can fill p, and keeps the tail of the last row for the following Read.
type copyReader struct {
	enc  copyEncoder
	row  []any
	next func([]any) bool
	buf  []byte // encoded, not yet returned bytes are buf[off:]
	off  int
	done bool
	err  error
}

func (r *copyReader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if r.off > 0 { // keep the buffer's capacity steady: move the unread tail to the front
		r.buf = r.buf[:copy(r.buf, r.buf[r.off:])]
		r.off = 0
	}
	for len(r.buf) < len(p) && !r.done {
		if !r.next(r.row) {
			r.done = true
			break
		}
		if r.buf, r.err = r.enc.appendRow(r.buf, r.row); r.err != nil {
			return 0, r.err
		}
	}
	n := copy(p, r.buf)
	r.off = n
	if r.done && r.off == len(r.buf) {
		return n, io.EOF
	}
	return n, nil
}

// copyEncoder writes rows in COPY text format. It remembers the last timestamp it
// formatted, because bulk loads repeat one timestamp in many rows and formatting it is
// the most expensive part of encoding a row.
type copyEncoder struct {
	lastTime time.Time
	timeText []byte
}

// appendRow appends one row in COPY text format: tab-separated fields, \N for NULL,
// newline-terminated.
func (e *copyEncoder) appendRow(b []byte, row []any) ([]byte, error) {
	var err error
	for i, v := range row {
		if i > 0 {
			b = append(b, '\t')
		}
		if b, err = e.appendValue(b, v, 0); err != nil {
			return b, fmt.Errorf("column %d: %w", i+1, err)
		}
	}
	return append(b, '\n'), nil
}

func (e *copyEncoder) appendTime(b []byte, t time.Time) []byte {
	if e.timeText == nil || !t.Equal(e.lastTime) || t.Location() != e.lastTime.Location() {
		e.lastTime = t
		e.timeText = t.AppendFormat(e.timeText[:0], "2006-01-02 15:04:05.999999Z07:00")
	}
	return append(b, e.timeText...)
}

func (e *copyEncoder) appendValue(b []byte, v any, depth int) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, `\N`...), nil
	case string:
		return engine.AppendLoadText(b, x), nil
	case *string:
		if x == nil {
			return append(b, `\N`...), nil
		}
		return engine.AppendLoadText(b, *x), nil
	case int:
		return strconv.AppendInt(b, int64(x), 10), nil
	case *int:
		if x == nil {
			return append(b, `\N`...), nil
		}
		return strconv.AppendInt(b, int64(*x), 10), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case *int64:
		if x == nil {
			return append(b, `\N`...), nil
		}
		return strconv.AppendInt(b, *x, 10), nil
	case int32:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int16:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int8:
		return strconv.AppendInt(b, int64(x), 10), nil
	case uint:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case uint64:
		return strconv.AppendUint(b, x, 10), nil
	case uint32:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case uint16:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case uint8:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case bool:
		if x {
			return append(b, 't'), nil
		}
		return append(b, 'f'), nil
	case float64:
		return appendCopyFloat(b, x, 64), nil
	case float32:
		return appendCopyFloat(b, float64(x), 32), nil
	case []byte:
		if x == nil {
			return append(b, `\N`...), nil
		}
		return engine.AppendLoadText(b, string(x)), nil
	case time.Time:
		return e.appendTime(b, x), nil
	case *time.Time:
		if x == nil {
			return append(b, `\N`...), nil
		}
		return e.appendTime(b, *x), nil
	case encoding.TextAppender:
		if isNilPointer(v) {
			return append(b, `\N`...), nil
		}
		start := len(b)
		out, err := x.AppendText(b)
		if err != nil {
			return b, err
		}
		// Escape in place only when needed (the text of numbers and the like never needs it).
		if engine.LoadTextNeedsEscape(string(out[start:])) {
			text := string(out[start:])
			out = engine.AppendLoadText(out[:start], text)
		}
		return out, nil
	case driver.Valuer:
		if isNilPointer(v) {
			return append(b, `\N`...), nil
		}
		if depth > 0 {
			return b, fmt.Errorf("driver.Valuer %T returned another Valuer", v)
		}
		dv, err := x.Value()
		if err != nil {
			return b, err
		}
		return e.appendValue(b, dv, depth+1)
	}
	// Remaining pointer types (*int32, *bool, *float64, ...): dereference through the cases above.
	switch x := v.(type) {
	case *int32:
		return derefCopy(e, b, x, depth)
	case *int16:
		return derefCopy(e, b, x, depth)
	case *bool:
		return derefCopy(e, b, x, depth)
	case *float64:
		return derefCopy(e, b, x, depth)
	case *float32:
		return derefCopy(e, b, x, depth)
	case *[]byte:
		return derefCopy(e, b, x, depth)
	}
	return b, fmt.Errorf("cannot encode %T for COPY", v)
}

// isNilPointer reports whether v is a nil pointer (to a type whose methods have value
// receivers, so calling them would panic); database/sql treats those as NULL too.
func isNilPointer(v any) bool {
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

func derefCopy[T any](e *copyEncoder, b []byte, p *T, depth int) ([]byte, error) {
	if p == nil {
		return append(b, `\N`...), nil
	}
	return e.appendValue(b, *p, depth)
}

func appendCopyFloat(b []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, "NaN"...)
	case math.IsInf(f, 1):
		return append(b, "Infinity"...)
	case math.IsInf(f, -1):
		return append(b, "-Infinity"...)
	}
	return strconv.AppendFloat(b, f, 'g', -1, bits)
}
