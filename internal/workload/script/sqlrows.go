package script

import (
	"database/sql"
	"strings"
)

// CaptureRows reports every result set of rows to st.Result and closes rows: what an
// executor built on database/sql does for a statement whose st.Capture is set. It reuses
// the client's buffers, so it allocates only when a result is wider than any before.
func CaptureRows(rows *sql.Rows, st *Stmt) error { return captureRows(rows, st, false) }

// captureRows is CaptureRows; with lower, a column name without lower-case letters (an
// engine's upper-case folding of an unquoted name) is reported in lower case.
func captureRows(rows *sql.Rows, st *Stmt, lower bool) error {
	defer rows.Close()
	sc := &st.c.scan
	for {
		cols, err := rows.Columns()
		if err != nil {
			return err
		}
		if lower {
			for i, c := range cols {
				if strings.ToUpper(c) == c {
					cols[i] = strings.ToLower(c)
				}
			}
		}
		if cap(sc.raw) < len(cols) {
			sc.raw = make([]sql.RawBytes, len(cols))
			sc.dest = make([]any, len(cols))
			for i := range sc.raw {
				sc.dest[i] = &sc.raw[i]
			}
			sc.last = make([][]byte, len(cols))
		}
		n := 0
		for rows.Next() {
			if err := rows.Scan(sc.dest[:len(cols)]...); err != nil {
				return err
			}
			n++
			sc.buf = sc.buf[:0]
			// RawBytes live until the next row: copy the row (slices into an array that
			// append outgrows keep their bytes).
			for i := range cols {
				if sc.raw[i] == nil {
					sc.last[i] = nil
					continue
				}
				start := len(sc.buf)
				sc.buf = append(sc.buf, sc.raw[i]...)
				sc.last[i] = sc.buf[start:len(sc.buf):len(sc.buf)]
			}
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if err := st.Result(cols, n, sc.last[:len(cols)]); err != nil {
			return err
		}
		if !rows.NextResultSet() {
			return rows.Err()
		}
	}
}
