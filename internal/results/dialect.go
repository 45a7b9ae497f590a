package results

import (
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// dialect is what differs between the two backends' SQL: placeholders, how a time is
// stored, row locks, the insertion order of samples and the text PostgreSQL refuses. The
// queries themselves are shared and written with '?' placeholders.
type dialect struct {
	// name is the product, for messages: "SQLite" or "PostgreSQL".
	name string
	pg   bool
}

var (
	sqliteDialect   = &dialect{name: "SQLite"}
	postgresDialect = &dialect{name: "PostgreSQL", pg: true}
)

// q rewrites the '?' placeholders of query as $1, $2, … for PostgreSQL. The shared queries
// have no '?' inside string literals or identifiers.
func (d *dialect) q(query string) string {
	if !d.pg {
		return query
	}
	var b strings.Builder
	b.Grow(len(query) + 16)
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// lock is appended to the SELECT that checks a run's status before changing it: on
// PostgreSQL it locks the row until the transaction ends, so that two writers cannot both
// see the run running. SQLite needs none: a write transaction holds the whole file.
func (d *dialect) lock() string {
	if d.pg {
		return " FOR UPDATE"
	}
	return ""
}

// readTx is how List and Get read one consistent snapshot of several tables.
func (d *dialect) readTx() *sql.TxOptions {
	if d.pg {
		return &sql.TxOptions{ReadOnly: true, Isolation: sql.LevelRepeatableRead}
	}
	return &sql.TxOptions{ReadOnly: true} // a SQLite read transaction is a snapshot
}

// sampleOrder is the column giving run_samples' insertion order.
func (d *dialect) sampleOrder() string {
	if d.pg {
		return "seq"
	}
	return "rowid"
}

// newestFirst is the order of List: by start time, then id.
func (d *dialect) newestFirst() string {
	if d.pg {
		return " ORDER BY started DESC, started_nanos DESC, id DESC"
	}
	return " ORDER BY started DESC, id DESC"
}

// timeLayout stores SQLite times in UTC with a fixed width, so that text order is time order.
const timeLayout = "2006-01-02T15:04:05.000000000Z07:00"

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func parseTime(s string) (time.Time, error) { return time.Parse(time.RFC3339Nano, s) }

// runTime returns the columns that store a run's time t (the zero time as NULL).
// SQLite keeps fixed-width UTC text with nanoseconds. PostgreSQL keeps a timestamptz, which
// has microseconds, and the nanoseconds past the microsecond in <name>_nanos, so that a run
// reads back exactly as written on both backends.
func (d *dialect) runTime(name string, t time.Time) []column {
	if !d.pg {
		if t.IsZero() {
			return []column{{name: name, val: nil}}
		}
		return []column{{name: name, val: formatTime(t)}}
	}
	if t.IsZero() {
		return []column{{name: name, val: nil}, {name: name + "_nanos", val: 0}}
	}
	u := t.UTC()
	return []column{
		{name: name, val: u.Truncate(time.Microsecond)},
		{name: name + "_nanos", val: u.Nanosecond() % 1000},
	}
}

// runTimeSelect is the select list of a run time column, as runTimeDest scans it.
func (d *dialect) runTimeSelect(name string) string {
	if d.pg {
		return name + ", " + name + "_nanos"
	}
	return name
}

// timeDest scans a time column (and, on PostgreSQL, its nanoseconds column).
type timeDest struct {
	pg    bool
	nanos bool // the column has a <name>_nanos companion
	text  sql.NullString
	ts    sql.NullTime
	ns    sql.NullInt64
}

func (d *dialect) runTimeDest() *timeDest   { return &timeDest{pg: d.pg, nanos: true} }
func (d *dialect) plainTimeDest() *timeDest { return &timeDest{pg: d.pg} }

// dests are the Scan destinations, in select-list order.
func (t *timeDest) dests() []any {
	switch {
	case !t.pg:
		return []any{&t.text}
	case t.nanos:
		return []any{&t.ts, &t.ns}
	}
	return []any{&t.ts}
}

// value returns the time scanned, the zero time for NULL.
func (t *timeDest) value() (time.Time, error) {
	if !t.pg {
		if !t.text.Valid {
			return time.Time{}, nil
		}
		return parseTime(t.text.String)
	}
	if !t.ts.Valid {
		return time.Time{}, nil
	}
	v := t.ts.Time.UTC()
	if t.nanos {
		if t.ns.Int64 < 0 || t.ns.Int64 > 999 {
			return time.Time{}, fmt.Errorf("nanoseconds %d out of range 0-999", t.ns.Int64)
		}
		v = v.Add(time.Duration(t.ns.Int64))
	}
	return v, nil
}

// plainTime is the value of a time column without nanoseconds (studies' created and
// updated): microseconds on both backends.
func (d *dialect) plainTime(t time.Time) any {
	t = t.UTC().Truncate(time.Microsecond)
	if d.pg {
		return t
	}
	return formatTime(t)
}

// text returns s as the backend can store it. PostgreSQL refuses NUL characters and invalid
// UTF-8 in text, which SQLite keeps: they become U+FFFD there, since losing a run over a
// byte in an error message would be worse.
func (d *dialect) text(s string) string {
	if !d.pg {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.ReplaceAll(s, "\x00", "\uFFFD")
}

// json returns JSON text s as the backend can store it: PostgreSQL's jsonb refuses the
// escape \u0000, which becomes \ufffd. Valid UTF-8 is already guaranteed by encoding/json.
func (d *dialect) json(s string) string {
	if !d.pg || !strings.Contains(s, `\u0000`) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		if strings.HasPrefix(s[i:], `\u0000`) {
			b.WriteString(`\ufffd`)
			i += len(`\u0000`) - 1
			continue
		}
		b.WriteString(s[i : i+2]) // an escape pair: `\\u0000` is a backslash, then text
		i++
	}
	return b.String()
}

// arg prepares a column's value for the backend.
func (d *dialect) arg(c column) any {
	s, ok := c.val.(string)
	if !ok {
		return c.val
	}
	if c.json {
		return d.json(s)
	}
	return d.text(s)
}
