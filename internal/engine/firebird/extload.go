package firebird

import (
	"bufio"
	"context"
	"crypto/rand"
	"database/sql"
	"database/sql/driver"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// LoadDirParam is the DSN parameter that names the load directory: a directory on the
// server's machine that dblat can write and the server may read external files from
// (firebird.conf ExternalFileAccess = Restrict <dir>). With it, CopyRows loads through an
// external table (copyExternal); without it, or when the server refuses the external file,
// through EXECUTE BLOCKs. Managed servers' DSNs carry it. The parameter is dblat's; Open
// removes it before the driver sees the DSN.
const LoadDirParam = "load_dir"

// errNoExternal says that a table cannot be loaded through an external table; nothing of
// the rows has been consumed, and CopyRows takes the EXECUTE BLOCK path instead.
var errNoExternal = errors.New("external table load not possible")

// External-table loading. Firebird reads an external table's file as records in the
// engine's own binary format: each column in its storage type (little-endian integers,
// scaled for NUMERIC, TIMESTAMP as day number and 1/10000 s, CHAR padded with spaces,
// VARCHAR as a 2-byte length and its bytes), aligned as in a record, with no null flags.
// copyExternal writes the rows in that format to a file in the load directory, defines an
// external table over it, and moves the rows into the target with one INSERT ... SELECT,
// which costs the server a fraction of what receiving them as EXECUTE BLOCK parameters
// does (BenchmarkLoad10Warehouses; the figures are in the package documentation).
//
// The external table is laid out for the file, not copied from the target: its numeric
// columns have the target's storage type and scale, its text columns are CHARACTER SET
// NONE and as wide as the longest value of this chunk (a UTF8 CHAR(24) column would
// otherwise take 96 bytes), and its columns are ordered by alignment, widest first, so that
// no padding depends on the null-flag bytes that precede a record in memory. NULLs, which an
// external file cannot hold, are written as zeros and marked in one more text column of
// '0'/'1' flags, present only for the columns that had NULLs in the chunk; the INSERT turns
// a flagged value into NULL.

// extKind is how a column's values are stored in the external file.
type extKind int

const (
	extInt16 extKind = iota
	extInt32
	extInt64
	extFloat32
	extFloat64
	extDate
	extTime
	extTimestamp
	extBool
	extChar
	extVarchar
)

// extColumn is one target column as the external table holds it.
type extColumn struct {
	name     string // as stored in the system tables
	kind     extKind
	scale    int  // digits after the point of a scaled integer
	maxChars int  // CHAR/VARCHAR length in characters
	octets   bool // CHARACTER SET OCTETS: binary, padded with zero bytes rather than spaces
	notNull  bool

	width    int // longest value in bytes (text kinds), known after buffering
	hasNulls bool
}

// size returns the column's storage length in the external record and its alignment.
func (c *extColumn) size() (length, align int) {
	switch c.kind {
	case extInt16:
		return 2, 2
	case extInt32, extFloat32, extDate, extTime:
		return 4, 4
	case extInt64, extFloat64, extTimestamp:
		return 8, 8
	case extBool:
		return 1, 1
	case extChar:
		return max(1, c.width), 1
	default: // extVarchar
		return 2 + max(1, c.width), 2
	}
}

// sqlType is the column's type in the external table's definition.
func (c *extColumn) sqlType() string {
	num := func(plain string, prec int) string {
		if c.scale == 0 {
			return plain
		}
		return fmt.Sprintf("NUMERIC(%d, %d)", prec, c.scale)
	}
	switch c.kind {
	case extInt16:
		return num("SMALLINT", 4)
	case extInt32:
		return num("INTEGER", 9)
	case extInt64:
		return num("BIGINT", 18)
	case extFloat32:
		return "FLOAT"
	case extFloat64:
		return "DOUBLE PRECISION"
	case extDate:
		return "DATE"
	case extTime:
		return "TIME"
	case extTimestamp:
		return "TIMESTAMP"
	case extBool:
		return "BOOLEAN"
	case extChar:
		return fmt.Sprintf("CHAR(%d) CHARACTER SET %s", max(1, c.width), c.charset())
	default:
		return fmt.Sprintf("VARCHAR(%d) CHARACTER SET %s", max(1, c.width), c.charset())
	}
}

// charset is the external text column's character set: NONE, whose bytes any character set
// takes as they are, or OCTETS for OCTETS columns, whose padding differs.
func (c *extColumn) charset() string {
	if c.octets {
		return "OCTETS"
	}
	return "NONE"
}

// extColumns reads the types of table's columns cols from the system tables. A column of a
// type the external path does not write (BLOB, ARRAY, INT128 ...) or one that does not
// exist gives errNoExternal.
func extColumns(ctx context.Context, conn *sql.Conn, table string, cols []string) ([]extColumn, error) {
	tx, err := conn.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT TRIM(rf.RDB$FIELD_NAME), f.RDB$FIELD_TYPE, COALESCE(f.RDB$FIELD_SCALE, 0),
		COALESCE(f.RDB$CHARACTER_LENGTH, f.RDB$FIELD_LENGTH), COALESCE(rf.RDB$NULL_FLAG, f.RDB$NULL_FLAG, 0),
		COALESCE(f.RDB$CHARACTER_SET_ID, 0)
		FROM RDB$RELATION_FIELDS rf JOIN RDB$FIELDS f ON f.RDB$FIELD_NAME = rf.RDB$FIELD_SOURCE
		WHERE rf.RDB$RELATION_NAME = ?`, systemName(table))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	byName := map[string]extColumn{}
	for rows.Next() {
		var c extColumn
		var typ, scale, notNull, charset int
		if err := rows.Scan(&c.name, &typ, &scale, &c.maxChars, &notNull, &charset); err != nil {
			return nil, err
		}
		const octets = 1 // RDB$CHARACTER_SET_ID of OCTETS
		c.scale, c.notNull, c.octets = -scale, notNull != 0, charset == octets
		switch typ {
		case 7:
			c.kind = extInt16
		case 8:
			c.kind = extInt32
		case 16:
			c.kind = extInt64
		case 10:
			c.kind = extFloat32
		case 27:
			c.kind = extFloat64
		case 12:
			c.kind = extDate
		case 13:
			c.kind = extTime
		case 35:
			c.kind = extTimestamp
		case 23:
			c.kind = extBool
		case 14:
			c.kind = extChar
		case 37:
			c.kind = extVarchar
		default:
			c.kind = -1
		}
		byName[c.name] = c
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]extColumn, len(cols))
	for i, name := range cols {
		c, ok := byName[systemName(name)]
		if !ok || c.kind < 0 || c.scale < 0 || c.scale > 18 {
			return nil, errNoExternal
		}
		out[i] = c
	}
	return out, nil
}

// extRows holds a chunk's rows in a compact encoding, in blocks that are never copied
// as they grow: each row is its columns in order, each a null byte (1 for NULL, then
// nothing) followed by the value's storage bytes, text as a uvarint length and its bytes
// without padding. A row never spans two blocks.
type extRows struct {
	blocks [][]byte
	row    []byte // the row being encoded
	n      int
}

// extBlock is the size of a block (a row longer than that gets a block of its own).
const extBlock = 4 << 20

// endRow files the row encoded since the last endRow.
func (r *extRows) endRow() {
	last := len(r.blocks) - 1
	if last < 0 || len(r.blocks[last])+len(r.row) > cap(r.blocks[last]) {
		r.blocks = append(r.blocks, make([]byte, 0, max(extBlock, len(r.row))))
		last++
	}
	r.blocks[last] = append(r.blocks[last], r.row...)
	r.row = r.row[:0]
	r.n++
}

// encode appends v, a value database/sql's converter produced, for column c to the row.
func (r *extRows) encode(c *extColumn, v any) error {
	if v == nil {
		if c.notNull {
			return fmt.Errorf("column %s is NOT NULL, got NULL", c.name)
		}
		c.hasNulls = true
		r.row = append(r.row, 1)
		return nil
	}
	r.row = append(r.row, 0)
	le := binary.LittleEndian
	switch c.kind {
	case extInt16, extInt32, extInt64:
		n, err := scaledInt(v, c.scale)
		if err != nil {
			return fmt.Errorf("column %s: %w", c.name, err)
		}
		switch {
		case c.kind == extInt16 && (n < math.MinInt16 || n > math.MaxInt16),
			c.kind == extInt32 && (n < math.MinInt32 || n > math.MaxInt32):
			return fmt.Errorf("column %s: %v out of range", c.name, v)
		case c.kind == extInt16:
			r.row = le.AppendUint16(r.row, uint16(n))
		case c.kind == extInt32:
			r.row = le.AppendUint32(r.row, uint32(n))
		default:
			r.row = le.AppendUint64(r.row, uint64(n))
		}
	case extFloat32, extFloat64:
		f, err := float(v)
		if err != nil {
			return fmt.Errorf("column %s: %w", c.name, err)
		}
		if c.kind == extFloat32 {
			r.row = le.AppendUint32(r.row, math.Float32bits(float32(f)))
		} else {
			r.row = le.AppendUint64(r.row, math.Float64bits(f))
		}
	case extDate, extTime, extTimestamp:
		t, ok := v.(time.Time)
		if !ok {
			return fmt.Errorf("column %s: want a time.Time, got %T", c.name, v)
		}
		if c.kind != extTime {
			r.row = le.AppendUint32(r.row, uint32(mjd(t)))
		}
		if c.kind != extDate {
			r.row = le.AppendUint32(r.row, uint32((t.Hour()*3600+t.Minute()*60+t.Second())*10000+t.Nanosecond()/100000))
		}
	case extBool:
		b, ok := v.(bool)
		if !ok {
			return fmt.Errorf("column %s: want a bool, got %T", c.name, v)
		}
		if b {
			r.row = append(r.row, 1)
		} else {
			r.row = append(r.row, 0)
		}
	default: // text
		var n int
		switch x := v.(type) {
		case string:
			n = len(x)
			r.row = binary.AppendUvarint(r.row, uint64(n))
			r.row = append(r.row, x...)
		case []byte:
			n = len(x)
			r.row = binary.AppendUvarint(r.row, uint64(n))
			r.row = append(r.row, x...)
		default:
			return fmt.Errorf("column %s: want text, got %T", c.name, v)
		}
		// The server checks lengths in characters when it assigns the value; bytes longer
		// than the type could ever hold are refused here, before a wide file is written.
		if s := r.row[len(r.row)-n:]; n > 4*c.maxChars && utf8.RuneCount(s) > c.maxChars {
			return fmt.Errorf("column %s: %d characters do not fit in %d", c.name, utf8.RuneCount(s), c.maxChars)
		}
		c.width = max(c.width, n)
	}
	return nil
}

// fixedSize is the storage length of a value of kind k in the compact encoding, 0 for text.
func fixedSize(k extKind) int {
	switch k {
	case extInt16:
		return 2
	case extInt32, extFloat32, extDate, extTime:
		return 4
	case extInt64, extFloat64, extTimestamp:
		return 8
	case extBool:
		return 1
	}
	return 0
}

// plainValue converts v as database/sql's default converter does, without its reflection
// for the values loaders pass most (pointers to the basic types, as tpcc's generators do).
func plainValue(v any) (any, error) {
	switch x := v.(type) {
	case nil, int64, float64, bool, string, []byte, time.Time:
		return x, nil
	case int:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case *int64:
		if x != nil {
			return *x, nil
		}
		return nil, nil
	case *string:
		if x != nil {
			return *x, nil
		}
		return nil, nil
	case *time.Time:
		if x != nil {
			return *x, nil
		}
		return nil, nil
	}
	return driver.DefaultParameterConverter.ConvertValue(v)
}

// scaledInt returns v × 10^scale as an integer: v is an int64, a float64 (rounded) or a
// decimal string (rounded half away from zero beyond scale digits).
func scaledInt(v any, scale int) (int64, error) {
	pow := int64(1)
	for range scale {
		pow *= 10
	}
	switch x := v.(type) {
	case int64:
		if x > math.MaxInt64/pow || x < math.MinInt64/pow {
			return 0, fmt.Errorf("%d out of range", x)
		}
		return x * pow, nil
	case float64:
		f := math.Round(x * float64(pow))
		if math.IsNaN(f) || f >= math.MaxInt64 || f < math.MinInt64 {
			return 0, fmt.Errorf("%v out of range", x)
		}
		return int64(f), nil
	case bool:
		if x {
			return pow, nil
		}
		return 0, nil
	case string:
		return parseDecimal(x, scale)
	case []byte:
		return parseDecimal(string(x), scale)
	}
	return 0, fmt.Errorf("want a number, got %T", v)
}

// parseDecimal reads s ("-12.345", "7", ".5") as an integer scaled by 10^scale.
func parseDecimal(s string, scale int) (int64, error) {
	t := strings.TrimSpace(s)
	neg := strings.HasPrefix(t, "-")
	t = strings.TrimLeft(t, "+-")
	whole, frac, _ := strings.Cut(t, ".")
	if whole == "" && frac == "" || strings.Trim(whole+frac, "0123456789") != "" {
		return 0, fmt.Errorf("%q is not a decimal number", s)
	}
	round := false
	if len(frac) > scale {
		round = frac[scale] >= '5'
		frac = frac[:scale]
	}
	frac += strings.Repeat("0", scale-len(frac))
	digits := strings.TrimLeft(whole+frac, "0")
	if digits == "" {
		digits = "0"
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q out of range", s)
	}
	if round {
		n++
	}
	if neg {
		n = -n
	}
	return n, nil
}

func float(v any) (float64, error) {
	switch x := v.(type) {
	case float64:
		return x, nil
	case int64:
		return float64(x), nil
	case string:
		return strconv.ParseFloat(strings.TrimSpace(x), 64)
	}
	return 0, fmt.Errorf("want a number, got %T", v)
}

// mjd is the day number of t's date (in t's location) since 1858-11-17, as Firebird
// stores dates.
func mjd(t time.Time) int64 {
	d := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	return int64(d.Sub(time.Date(1858, 11, 17, 0, 0, 0, 0, time.UTC)) / (24 * time.Hour))
}

// extField is one field of the external record: a column, or the null flags (col nil).
type extField struct {
	col           *extColumn
	idx           int // the column's index in cols
	length, align int
	offset        int
	sqlName       string
}

// extLayout orders the fields by alignment, widest first, and places them as Firebird
// does: each at the next multiple of its alignment. It returns the fields, the record
// length and the flag position of each column with NULLs (1-based, 0 for none).
func extLayout(cols []extColumn) ([]extField, int, []int) {
	var fields []extField
	flags := make([]int, len(cols))
	k := 0
	for i := range cols {
		l, a := cols[i].size()
		fields = append(fields, extField{col: &cols[i], idx: i, length: l, align: a, sqlName: fmt.Sprintf("C%d", i)})
		if cols[i].hasNulls {
			k++
			flags[i] = k
		}
	}
	if k > 0 {
		fields = append(fields, extField{idx: -1, length: k, align: 1, sqlName: "NULLS"})
	}
	slices.SortStableFunc(fields, func(a, b extField) int { return b.align - a.align })
	off := 0
	for i := range fields {
		off = (off + fields[i].align - 1) / fields[i].align * fields[i].align
		fields[i].offset = off
		off += fields[i].length
	}
	return fields, off, flags
}

// writeExtFile writes the rows as external records to path.
func writeExtFile(path string, rows *extRows, cols []extColumn, fields []extField, recLen int, flags []int) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	rec := make([]byte, recLen)
	// Where each column's value goes in the record, and where its null flag goes.
	colField := make([]*extField, len(cols))
	var nullsAt int
	for i := range fields {
		if fields[i].col == nil {
			nullsAt = fields[i].offset
		} else {
			colField[fields[i].idx] = &fields[i]
		}
	}
	for _, b := range rows.blocks {
		for len(b) > 0 {
			clear(rec)
			for i := range cols {
				fd := colField[i]
				null := b[0] == 1
				b = b[1:]
				if flags[i] > 0 {
					rec[nullsAt+flags[i]-1] = '0'
					if null {
						rec[nullsAt+flags[i]-1] = '1'
					}
				}
				if null {
					continue // zeros; the flag says NULL
				}
				dst := rec[fd.offset : fd.offset+fd.length]
				switch cols[i].kind {
				case extChar, extVarchar:
					n, k := binary.Uvarint(b)
					v := b[k : k+int(n)]
					b = b[k+int(n):]
					if cols[i].kind == extChar {
						c := copy(dst, v)
						if !cols[i].octets { // OCTETS pads with the zeros clear left
							for j := c; j < len(dst); j++ {
								dst[j] = ' '
							}
						}
					} else {
						binary.LittleEndian.PutUint16(dst, uint16(len(v)))
						copy(dst[2:], v)
					}
				default:
					n := fixedSize(cols[i].kind)
					copy(dst, b[:n])
					b = b[n:]
				}
			}
			if _, err := w.Write(rec); err != nil {
				f.Close()
				return err
			}
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	// The umask may have taken the server's read permission away.
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// copyExternal loads the rows from next into table through an external table in c's load
// directory, all in one transaction (see the comment at the top of this file). It returns
// errNoExternal, having consumed no row, when the table has a column of a type it does not
// write or the server refuses external files there.
func copyExternal(ctx context.Context, db *sql.DB, c *connector, table string, cols []string, next func([]any) bool) (int64, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	if err := c.probeExternal(ctx, conn); err != nil {
		return 0, err
	}
	ec, err := extColumns(ctx, conn, table, cols)
	if err != nil {
		return 0, err
	}

	var rows extRows
	row := make([]any, len(cols))
	for next(row) {
		for i, v := range row {
			dv, err := plainValue(v)
			if err != nil {
				return 0, fmt.Errorf("copy into %s: row %d, column %s: %w", table, rows.n+1, cols[i], err)
			}
			if err := rows.encode(&ec[i], dv); err != nil {
				return 0, fmt.Errorf("copy into %s: row %d: %w", table, rows.n+1, err)
			}
		}
		rows.endRow()
	}
	if rows.n == 0 {
		return 0, nil
	}

	fields, recLen, flags := extLayout(ec)
	id := make([]byte, 8)
	if _, err := rand.Read(id); err != nil {
		return 0, err
	}
	name := "DBLAT_LOAD_" + strings.ToUpper(hex.EncodeToString(id))
	path := filepath.Join(c.loadDir, strings.ToLower(name)+".dat")
	if err := writeExtFile(path, &rows, ec, fields, recLen, flags); err != nil {
		os.Remove(path)
		return 0, fmt.Errorf("copy into %s: write %s: %w", table, path, err)
	}
	defer os.Remove(path)

	var def []string
	for _, fd := range fields {
		if fd.col == nil {
			def = append(def, fmt.Sprintf("%s CHAR(%d) CHARACTER SET NONE", fd.sqlName, fd.length))
		} else {
			def = append(def, fd.sqlName+" "+fd.col.sqlType())
		}
	}
	if err := c.ddl(ctx, conn, "CREATE TABLE "+name+" EXTERNAL FILE "+sqlString(path)+" ("+strings.Join(def, ", ")+")"); err != nil {
		return 0, fmt.Errorf("copy into %s: %w", table, err)
	}
	defer func() {
		// Dropped with a context of its own: the load may have been canceled.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), disconnectTimeout)
		defer cancel()
		_ = c.ddl(dctx, conn, "DROP TABLE "+name)
	}()

	targets := make([]string, len(cols))
	sel := make([]string, len(cols))
	for i := range ec {
		targets[i] = quoteIdent(cols[i])
		sel[i] = fmt.Sprintf("C%d", i)
		if flags[i] > 0 {
			sel[i] = fmt.Sprintf("CASE WHEN SUBSTRING(NULLS FROM %d FOR 1) = '1' THEN NULL ELSE C%d END", flags[i], i)
		}
	}
	if err := c.acquireInsert(ctx); err != nil {
		return 0, err
	}
	defer c.releaseInsert()
	tx, err := conn.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		return 0, err
	}
	res, err := tx.ExecContext(ctx, "INSERT INTO "+quoteIdent(table)+" ("+strings.Join(targets, ", ")+") SELECT "+
		strings.Join(sel, ", ")+" FROM "+name)
	if err != nil {
		_ = tx.Rollback()
		return 0, fmt.Errorf("copy into %s: %w", table, oneLine(err))
	}
	n, err := res.RowsAffected()
	if err == nil && n != int64(rows.n) {
		err = fmt.Errorf("the server read %d of the %d rows written to %s", n, rows.n, path)
	}
	if err != nil {
		_ = tx.Rollback()
		return 0, fmt.Errorf("copy into %s: %w", table, err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("copy into %s: commit: %w", table, err)
	}
	c.externalLoads.Add(1)
	return n, nil
}

// ddl runs one DDL statement in a transaction of its own and commits it. The connector's
// loads run their DDL one at a time: Firebird's concurrent metadata changes can conflict.
func (c *connector) ddl(ctx context.Context, conn *sql.Conn, stmt string) error {
	c.ddlMu.Lock()
	defer c.ddlMu.Unlock()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, stmt); err != nil {
		_ = tx.Rollback()
		return oneLine(err)
	}
	return tx.Commit()
}

// probeExternal finds out, once per connector, whether the server reads external files in
// the load directory: it defines an external table over an empty file there and reads it.
// It returns errNoExternal when not.
func (c *connector) probeExternal(ctx context.Context, conn *sql.Conn) error {
	c.probeMu.Lock()
	defer c.probeMu.Unlock()
	if c.probed {
		return c.probeErr
	}
	err := func() error {
		st, err := os.Stat(c.loadDir)
		if err != nil || !st.IsDir() {
			return errNoExternal
		}
		id := make([]byte, 8)
		if _, err := rand.Read(id); err != nil {
			return err
		}
		name := "DBLAT_PROBE_" + strings.ToUpper(hex.EncodeToString(id))
		path := filepath.Join(c.loadDir, strings.ToLower(name)+".dat")
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			return errNoExternal
		}
		defer os.Remove(path)
		if err := os.Chmod(path, 0o644); err != nil {
			return errNoExternal
		}
		if err := c.ddl(ctx, conn, "CREATE TABLE "+name+" EXTERNAL FILE "+sqlString(path)+" (X INTEGER)"); err != nil {
			return errNoExternal
		}
		defer func() { _ = c.ddl(context.WithoutCancel(ctx), conn, "DROP TABLE "+name) }()
		tx, err := conn.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
		if err != nil {
			return err
		}
		defer tx.Rollback()
		var n int
		if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+name).Scan(&n); err != nil {
			return errNoExternal
		}
		return nil
	}()
	if ctx.Err() != nil {
		return ctx.Err() // not a verdict on the server: try again next time
	}
	c.probed, c.probeErr = true, err
	return err
}

// acquireInsert waits until none of the connector's other loads is moving rows from an
// external table into its target. One at a time is the fastest: the server's work per row
// is the same, but concurrent inserts make Super spin on its page latches (2 warehouses,
// 4 workers: 7.5 s of server CPU with one insert at a time, 10.5-12.8 s with 2 or 4), while
// the other loads encode their files meanwhile.
func (c *connector) acquireInsert(ctx context.Context) error {
	c.insertOnce.Do(func() { c.inserts = make(chan struct{}, 1) })
	select {
	case c.inserts <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// releaseInsert ends what acquireInsert began.
func (c *connector) releaseInsert() { <-c.inserts }
