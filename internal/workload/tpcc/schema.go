package tpcc

import (
	"strings"

	"github.com/dblat/dblat/internal/engine"
)

// colType is a column's logical type; the dialect spells it (§1.3.1 type vocabulary).
type colType int

const (
	tInt       colType = iota // "N unique IDs", counts: INTEGER
	tSmallint                 // IDs of at most 20 values, small counts: SMALLINT
	tBigint                   // the load seed
	tDecimal                  // numeric(p,s); exact, as §1.3.1 requires for money
	tVarchar                  // variable text, size n
	tChar                     // fixed text, size n
	tTimestamp                // date and time, the DBMS's native type (§1.4.14)
)

type column struct {
	name string
	typ  colType
	n, s int // size for text; precision and scale for decimals
}

// table is one relation of the §1.3 schema: its columns in load order, its primary key and
// secondary indexes, created after the data is loaded.
type table struct {
	name    string
	cols    []column
	pk      []string
	indexes []index
	// statsCols are the columns whose optimizer statistics matter: those the transactions
	// and checks filter, join or group on. Wide text columns are left out, which makes
	// ANALYZE after the load several times faster. Empty means all.
	statsCols []string
}

type index struct {
	name string
	cols []string
}

func (t *table) colNames() []string {
	n := make([]string, len(t.cols))
	for i, c := range t.cols {
		n[i] = c.name
	}
	return n
}

func col(name string, typ colType) column         { return column{name: name, typ: typ} }
func text(name string, typ colType, n int) column { return column{name: name, typ: typ, n: n} }
func dec(name string, p, s int) column            { return column{name: name, typ: tDecimal, n: p, s: s} }

// The nine tables of §1.3, with the spec's column names. ORDER is a reserved word, so the
// ORDER table is "orders" (as in go-tpc and HammerDB) and NEW-ORDER/ORDER-LINE are
// new_order/order_line. Sizes follow §1.3: "N unique IDs" become INTEGER (SMALLINT where
// N <= 20), numeric(m) counters INTEGER, numeric(m,n) DECIMAL(m,n) — signed everywhere,
// which §1.3.1 Comment 3 allows.
//
// Foreign keys (§1.3) are not declared: the transactions keep them and the consistency
// checks verify them, and declared keys would add parent-row locks to every insert (go-tpc
// does not declare them either).
var (
	tWarehouse = &table{name: "warehouse", pk: []string{"w_id"}, cols: []column{
		col("w_id", tInt), text("w_name", tVarchar, 10), text("w_street_1", tVarchar, 20), text("w_street_2", tVarchar, 20),
		text("w_city", tVarchar, 20), text("w_state", tChar, 2), text("w_zip", tChar, 9), dec("w_tax", 4, 4), dec("w_ytd", 12, 2),
	}}
	tDistrict = &table{name: "district", pk: []string{"d_w_id", "d_id"}, cols: []column{
		col("d_id", tSmallint), col("d_w_id", tInt), text("d_name", tVarchar, 10), text("d_street_1", tVarchar, 20),
		text("d_street_2", tVarchar, 20), text("d_city", tVarchar, 20), text("d_state", tChar, 2), text("d_zip", tChar, 9),
		dec("d_tax", 4, 4), dec("d_ytd", 12, 2), col("d_next_o_id", tInt),
	}}
	tCustomer = &table{name: "customer", pk: []string{"c_w_id", "c_d_id", "c_id"},
		statsCols: []string{"c_w_id", "c_d_id", "c_id", "c_last", "c_first"},
		// By-last-name lookups of Payment and Order-Status (§2.5.2.2, §2.6.2.2) read this
		// index in C_FIRST order.
		indexes: []index{{"customer_name", []string{"c_w_id", "c_d_id", "c_last", "c_first"}}},
		cols: []column{
			col("c_id", tInt), col("c_d_id", tSmallint), col("c_w_id", tInt), text("c_first", tVarchar, 16),
			text("c_middle", tChar, 2), text("c_last", tVarchar, 16), text("c_street_1", tVarchar, 20),
			text("c_street_2", tVarchar, 20), text("c_city", tVarchar, 20), text("c_state", tChar, 2), text("c_zip", tChar, 9),
			text("c_phone", tChar, 16), col("c_since", tTimestamp), text("c_credit", tChar, 2), dec("c_credit_lim", 12, 2),
			dec("c_discount", 4, 4), dec("c_balance", 12, 2), dec("c_ytd_payment", 12, 2), col("c_payment_cnt", tInt),
			col("c_delivery_cnt", tInt), text("c_data", tVarchar, 500),
		}}
	// HISTORY has no primary key (§1.3 Comment; §1.4.10).
	tHistory = &table{name: "history", statsCols: []string{"h_w_id", "h_d_id", "h_c_w_id", "h_c_d_id", "h_c_id"}, cols: []column{
		col("h_c_id", tInt), col("h_c_d_id", tSmallint), col("h_c_w_id", tInt), col("h_d_id", tSmallint), col("h_w_id", tInt),
		col("h_date", tTimestamp), dec("h_amount", 6, 2), text("h_data", tVarchar, 24),
	}}
	tNewOrder = &table{name: "new_order", pk: []string{"no_w_id", "no_d_id", "no_o_id"}, cols: []column{
		col("no_o_id", tInt), col("no_d_id", tSmallint), col("no_w_id", tInt),
	}}
	tOrders = &table{name: "orders", pk: []string{"o_w_id", "o_d_id", "o_id"},
		statsCols: []string{"o_w_id", "o_d_id", "o_id", "o_c_id", "o_carrier_id"},
		// Order-Status reads the customer's latest order (§2.6.2.2) through this index.
		indexes: []index{{"orders_customer", []string{"o_w_id", "o_d_id", "o_c_id", "o_id"}}},
		cols: []column{
			col("o_id", tInt), col("o_d_id", tSmallint), col("o_w_id", tInt), col("o_c_id", tInt), col("o_entry_d", tTimestamp),
			col("o_carrier_id", tSmallint), col("o_ol_cnt", tSmallint), col("o_all_local", tSmallint),
		}}
	tOrderLine = &table{name: "order_line", pk: []string{"ol_w_id", "ol_d_id", "ol_o_id", "ol_number"},
		statsCols: []string{"ol_w_id", "ol_d_id", "ol_o_id", "ol_i_id", "ol_supply_w_id", "ol_delivery_d"},
		cols: []column{
			col("ol_o_id", tInt), col("ol_d_id", tSmallint), col("ol_w_id", tInt), col("ol_number", tSmallint), col("ol_i_id", tInt),
			col("ol_supply_w_id", tInt), col("ol_delivery_d", tTimestamp), col("ol_quantity", tSmallint), dec("ol_amount", 6, 2),
			text("ol_dist_info", tChar, 24),
		}}
	tItem = &table{name: "item", pk: []string{"i_id"}, statsCols: []string{"i_id"}, cols: []column{
		col("i_id", tInt), col("i_im_id", tInt), text("i_name", tVarchar, 24), dec("i_price", 5, 2), text("i_data", tVarchar, 50),
	}}
	tStock = &table{name: "stock", pk: []string{"s_w_id", "s_i_id"}, statsCols: []string{"s_w_id", "s_i_id", "s_quantity"},
		cols: []column{
			col("s_i_id", tInt), col("s_w_id", tInt), col("s_quantity", tInt),
			text("s_dist_01", tChar, 24), text("s_dist_02", tChar, 24), text("s_dist_03", tChar, 24), text("s_dist_04", tChar, 24),
			text("s_dist_05", tChar, 24), text("s_dist_06", tChar, 24), text("s_dist_07", tChar, 24), text("s_dist_08", tChar, 24),
			text("s_dist_09", tChar, 24), text("s_dist_10", tChar, 24),
			col("s_ytd", tInt), col("s_order_cnt", tInt), col("s_remote_cnt", tInt), text("s_data", tVarchar, 50),
		}}
	// tMeta records what was loaded. Its single row is written last, so its presence means
	// the load finished. cLoad is the C of NURand(255, 0, 999) used for C_LAST at load,
	// which the run needs to pick a valid C-Run (§2.1.6.1); C_ID and OL_I_ID have no load
	// constant (NURand is not used for them at load, §4.3.3.1).
	tMeta = &table{name: "tpcc_meta", cols: []column{
		col("warehouses", tInt), col("seed", tBigint), col("c_last_load", tInt), col("loader_version", tInt),
		col("loaded_at", tTimestamp),
	}}
)

// tables lists the §1.3 tables; tMeta is handled apart.
var tables = []*table{tWarehouse, tDistrict, tCustomer, tHistory, tNewOrder, tOrders, tOrderLine, tItem, tStock}

// loaderVersion changes whenever the generated data changes for a given seed, so stored
// fingerprints are only compared between equal versions.
const loaderVersion = 1

func (c column) sqlType(d engine.Dialect) string {
	switch c.typ {
	case tSmallint:
		return "smallint"
	case tBigint:
		return "bigint"
	case tDecimal:
		return d.Decimal(c.n, c.s)
	case tVarchar:
		return d.Varchar(c.n)
	case tChar:
		return d.Char(c.n)
	case tTimestamp:
		return d.Timestamp
	default:
		return "integer"
	}
}

// createSQL is CREATE TABLE without keys: keys and indexes come after the load (keysSQL).
// Every column is NOT NULL except the three §1.3 allows to be null.
func (t *table) createSQL(d engine.Dialect) string {
	var b strings.Builder
	b.WriteString("CREATE TABLE ")
	b.WriteString(t.name)
	b.WriteString(" (")
	for i, c := range t.cols {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.name)
		b.WriteString(" ")
		b.WriteString(c.sqlType(d))
		switch c.name {
		case "o_carrier_id", "ol_delivery_d", "loaded_at": // "or null" in §1.3
		default:
			b.WriteString(" NOT NULL")
		}
	}
	b.WriteString(")")
	return b.String()
}

// keysSQL is the statements that add t's primary key and secondary indexes, in order.
func (t *table) keysSQL() []string {
	var s []string
	if len(t.pk) > 0 {
		s = append(s, "ALTER TABLE "+t.name+" ADD CONSTRAINT "+t.name+"_pk PRIMARY KEY ("+strings.Join(t.pk, ", ")+")")
	}
	for _, ix := range t.indexes {
		s = append(s, "CREATE INDEX "+ix.name+" ON "+t.name+" ("+strings.Join(ix.cols, ", ")+")")
	}
	return s
}
