package simple

import (
	"strings"

	"github.com/dblat/dblat/internal/engine"
)

// pgbench's scale units (pgbench.c: naccounts, ntellers, nbranches): one branch, ten tellers
// and 100,000 accounts per unit of scale.
const (
	accountsPerScale = 100000
	tellersPerScale  = 10
	branchesPerScale = 1
	// maxScale keeps aid = 100,000 × scale within a 32-bit integer column; pgbench itself
	// switches aid to bigint above scale 20,000, which this package does not do.
	maxScale = 20000
)

// Data sets: what Load stores and Loaded looks for. tpcb and select-only share the pgbench
// tables; blob has its own; ping has none.
const (
	dsPgbench = "pgbench"
	dsBlob    = "blob"
)

// colType is a column's logical type; the dialect spells it.
type colType int

const (
	tInt colType = iota
	tBigint
	tChar      // fixed text of n characters
	tVarchar   // variable text of at most n characters
	tTimestamp // date and time
	tBlob      // binary large object (Dialect.Blob)
)

type column struct {
	name string
	typ  colType
	n    int
	null bool // nullable; the default is NOT NULL
}

// table is one table of a data set: its columns in load order and its primary key, added
// after the load.
type table struct {
	name string
	cols []column
	pk   string // primary key column, "" for none
	// statsCols are the columns whose optimizer statistics matter (the keys); wide filler
	// and blob columns are left out.
	statsCols []string
}

// The pgbench tables, with pgbench's names and columns (PG 15 pgbench.c, initCreateTables,
// for scale ≤ 20,000), so that pgbench runs on data loaded here and dblat on data loaded by
// `pgbench -i`. pgbench declares only the key columns NOT NULL; so does this schema.
var (
	tBranches = &table{name: "pgbench_branches", pk: "bid", statsCols: []string{"bid"}, cols: []column{
		{name: "bid", typ: tInt}, {name: "bbalance", typ: tInt, null: true}, {name: "filler", typ: tChar, n: 88, null: true},
	}}
	tTellers = &table{name: "pgbench_tellers", pk: "tid", statsCols: []string{"tid"}, cols: []column{
		{name: "tid", typ: tInt}, {name: "bid", typ: tInt, null: true}, {name: "tbalance", typ: tInt, null: true},
		{name: "filler", typ: tChar, n: 84, null: true},
	}}
	tAccounts = &table{name: "pgbench_accounts", pk: "aid", statsCols: []string{"aid"}, cols: []column{
		{name: "aid", typ: tInt}, {name: "bid", typ: tInt, null: true}, {name: "abalance", typ: tInt, null: true},
		{name: "filler", typ: tChar, n: 84, null: true},
	}}
	// pgbench_history has no key, as in pgbench.
	tHistory = &table{name: "pgbench_history", cols: []column{
		{name: "tid", typ: tInt, null: true}, {name: "bid", typ: tInt, null: true}, {name: "aid", typ: tInt, null: true},
		{name: "delta", typ: tInt, null: true}, {name: "mtime", typ: tTimestamp, null: true},
		{name: "filler", typ: tChar, n: 22, null: true},
	}}
	// tBlobs holds the blob workload's rows: ids 1..BlobRows, each with BlobSize random bytes.
	tBlobs = &table{name: "simple_blob", pk: "id", statsCols: []string{"id"}, cols: []column{
		{name: "id", typ: tInt}, {name: "data", typ: tBlob},
	}}
	// tMeta has one row per completed load of a data set, written last: its presence means
	// the load finished.
	tMeta = &table{name: "simple_meta", cols: []column{
		{name: "dataset", typ: tVarchar, n: 16}, {name: "scale", typ: tInt}, {name: "blob_size", typ: tInt},
		{name: "blob_rows", typ: tInt}, {name: "seed", typ: tBigint}, {name: "loader_version", typ: tInt},
		{name: "loaded_at", typ: tTimestamp},
	}}
)

// datasetTables lists the tables of each data set, in creation order.
var datasetTables = map[string][]*table{
	dsPgbench: {tHistory, tTellers, tAccounts, tBranches},
	dsBlob:    {tBlobs},
}

// loaderVersion changes whenever the generated data changes for a given configuration and
// seed.
const loaderVersion = 1

func (c column) sqlType(d engine.Dialect) string {
	switch c.typ {
	case tBigint:
		return "bigint"
	case tChar:
		return d.Char(c.n)
	case tVarchar:
		return d.Varchar(c.n)
	case tTimestamp:
		return d.Timestamp
	case tBlob:
		return d.Blob
	}
	return "integer"
}

func (t *table) colNames() []string {
	n := make([]string, len(t.cols))
	for i, c := range t.cols {
		n[i] = c.name
	}
	return n
}

// createSQL is CREATE TABLE without keys; the key comes after the load (keySQL).
func (t *table) createSQL(d engine.Dialect) string {
	var b strings.Builder
	b.WriteString("CREATE TABLE " + t.name + " (")
	for i, c := range t.cols {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.name + " " + c.sqlType(d))
		if !c.null {
			b.WriteString(" NOT NULL")
		}
	}
	b.WriteString(")")
	return b.String()
}

// keySQL adds the primary key, named as PostgreSQL names pgbench's (table_pkey); "" when
// the table has none.
func (t *table) keySQL() string {
	if t.pk == "" {
		return ""
	}
	return "ALTER TABLE " + t.name + " ADD CONSTRAINT " + t.name + "_pkey PRIMARY KEY (" + t.pk + ")"
}
