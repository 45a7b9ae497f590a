package engine

import (
	"context"
	"database/sql"
	"database/sql/driver"
	hexpkg "encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// FoldedBatchTx returns a BatchTx for an engine that folds the BEGIN into the first batch
// and the COMMIT or ROLLBACK into the last, so that BeginBatch sends nothing. Every batch
// goes out through send: begin says the BEGIN must go first (the transaction's first
// batch), end is "", "COMMIT" or "ROLLBACK" to go last. A transaction that never sent
// anything ends without a request. A failed send ends the transaction: send must leave the
// connection outside it (rolled back).
func FoldedBatchTx(send func(ctx context.Context, begin bool, stmts []*BatchStmt, end string) error) BatchTx {
	return &foldedTx{send: send}
}

// foldedTx is the BatchTx of FoldedBatchTx.
type foldedTx struct {
	send  func(ctx context.Context, begin bool, stmts []*BatchStmt, end string) error
	begun bool // the BEGIN has been sent
	done  bool
}

func (t *foldedTx) Send(ctx context.Context, stmts ...*BatchStmt) error {
	return t.batch(ctx, stmts, "")
}

func (t *foldedTx) Commit(ctx context.Context, stmts ...*BatchStmt) error {
	return t.batch(ctx, stmts, "COMMIT")
}

func (t *foldedTx) Rollback(ctx context.Context, stmts ...*BatchStmt) error {
	return t.batch(ctx, stmts, "ROLLBACK")
}

func (t *foldedTx) batch(ctx context.Context, stmts []*BatchStmt, end string) error {
	if t.done {
		return sql.ErrTxDone
	}
	if end != "" {
		t.done = true
		if !t.begun && len(stmts) == 0 {
			return nil // nothing was ever sent: there is no transaction to end
		}
	}
	begin := !t.begun
	t.begun = true
	if err := t.send(ctx, begin, stmts, end); err != nil {
		t.done = true
		return err
	}
	return nil
}

// Interpolate writes query to b with each "?" outside quoted text replaced by the next of
// args, as literal writes it, for engines that send a batch's arguments inside its text.
// Quoted text (a string or a quoted identifier) begins at any byte of quotes and ends at
// the next of the same byte; a quote doubled inside quoted text reads as two quoted texts
// back to back, and so stays whole. Inside the quotes that are also in escapes, a
// backslash escapes the byte after it. It fails unless placeholders and args match one
// for one.
func Interpolate(b *strings.Builder, query string, args []any, quotes, escapes string, literal func(*strings.Builder, any) error) error {
	n := 0
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch {
		case strings.IndexByte(quotes, c) >= 0:
			backslash := strings.IndexByte(escapes, c) >= 0
			j := i + 1
			for j < len(query) && query[j] != c {
				if backslash && query[j] == '\\' {
					j++
				}
				j++
			}
			b.WriteString(query[i:min(j+1, len(query))])
			i = j
		case c == '?':
			if n >= len(args) {
				return fmt.Errorf("more placeholders than the %d arguments", len(args))
			}
			if err := literal(b, args[n]); err != nil {
				return fmt.Errorf("argument %d: %w", n+1, err)
			}
			n++
		default:
			b.WriteByte(c)
		}
	}
	if n != len(args) {
		return fmt.Errorf("%d placeholders for %d arguments", n, len(args))
	}
	return nil
}

// Literals says how an engine spells the SQL literals whose spelling differs between
// engines, for Interpolate: Write spells the rest alike (NULL, integers, '...' strings
// with doubled quotes).
type Literals struct {
	// Float is strconv's format of a float64 ('e', 'g').
	Float byte
	// True and False are the booleans.
	True, False string
	// Time spells a timestamp.
	Time func(time.Time) string
	// Hex opens a literal of bytes in hexadecimal ("x'", "X'").
	Hex string
	// HexString, when set, says whether a string must be written as the hexadecimal
	// literal of its bytes (MariaDB's default sql_mode reads a backslash in '...' as an
	// escape).
	HexString func(string) bool
}

// Write writes v, converted as database/sql converts arguments, as a literal; a value of
// any other type is an error.
func (l Literals) Write(b *strings.Builder, v any) error {
	v, err := driver.DefaultParameterConverter.ConvertValue(v)
	if err != nil {
		return err
	}
	hex := func(x []byte) {
		b.WriteString(l.Hex)
		b.WriteString(hexpkg.EncodeToString(x))
		b.WriteByte('\'')
	}
	switch x := v.(type) {
	case nil:
		b.WriteString("NULL")
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case uint64:
		b.WriteString(strconv.FormatUint(x, 10))
	case float64:
		b.WriteString(strconv.FormatFloat(x, l.Float, -1, 64))
	case bool:
		if x {
			b.WriteString(l.True)
		} else {
			b.WriteString(l.False)
		}
	case time.Time:
		b.WriteString(l.Time(x))
	case []byte:
		hex(x)
	case string:
		if l.HexString != nil && l.HexString(x) {
			hex([]byte(x))
			return nil
		}
		b.WriteByte('\'')
		b.WriteString(strings.ReplaceAll(x, "'", "''"))
		b.WriteByte('\'')
	default:
		return fmt.Errorf("cannot write %T as a literal", v)
	}
	return nil
}
