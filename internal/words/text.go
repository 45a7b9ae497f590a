package words

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Writer writes the plain text of a report, an analysis or an observation. It keeps the
// first write error and drops every later write, so that a writer can stay linear and
// check Err once at the end.
type Writer struct {
	w      io.Writer
	prefix string // of the error: "analysis: write text"
	err    error
}

// NewWriter returns a Writer on w whose error reads "prefix: …".
func NewWriter(w io.Writer, prefix string) *Writer {
	return &Writer{w: w, prefix: prefix}
}

// Write writes p unless an earlier write failed.
func (e *Writer) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	if err != nil {
		e.err = fmt.Errorf("%s: %w", e.prefix, err)
	}
	return n, err
}

// Printf writes like fmt.Fprintf.
func (e *Writer) Printf(format string, args ...any) { fmt.Fprintf(e, format, args...) }

// Err returns the first write error, or nil.
func (e *Writer) Err() error { return e.err }

// Table aligns the columns of its rows, two spaces apart, and writes them to its Writer
// on Flush.
type Table struct {
	tw     *tabwriter.Writer
	indent string
}

// Table starts a table whose rows are indented by indent.
func (e *Writer) Table(indent string) Table {
	return Table{tabwriter.NewWriter(e, 0, 0, 2, ' ', 0), indent}
}

// Row adds a row of cells.
func (t Table) Row(cells ...string) { fmt.Fprintln(t.tw, t.indent+strings.Join(cells, "\t")) }

// Flush writes the table; an error reaches the Writer's Err.
func (t Table) Flush() { _ = t.tw.Flush() }

// Columns returns a writer that aligns tab-separated columns, two spaces apart, as every
// table dblat prints on a terminal does; Flush writes them to w.
func Columns(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 4, 2, ' ', 0) }

// NumberColumns is Columns with its cells aligned right, for tables of figures.
func NumberColumns(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
}

// Bytes writes a byte count with an SI prefix: "12.3 MB", "512 B".
func Bytes(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}
