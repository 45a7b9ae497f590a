package mariadb_test

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/engine/mariadb"
	"github.com/dblat/dblat/internal/engine/mariadb/mariadbtest"
)

type loader func(ctx context.Context, db *sql.DB, table string, cols []string, next func([]any) bool) (int64, error)

// loaders are the two ways of loading: CopyRows (LOAD DATA LOCAL INFILE) and the multi-row
// INSERTs it falls back to.
func loaders() map[string]loader {
	return map[string]loader{
		"CopyRows": mariadb.Engine{}.CopyRows,
		"InsertRows": func(ctx context.Context, db *sql.DB, table string, cols []string, next func([]any) bool) (int64, error) {
			return mariadb.InsertRows(ctx, db, table, cols, next, 3) // small batches: full ones and a remainder
		},
	}
}

// rowsOf returns a next function that hands out rows one by one, through a reused buffer.
func rowsOf(rows [][]any) func([]any) bool {
	i := 0
	return func(row []any) bool {
		if i == len(rows) {
			return false
		}
		copy(row, rows[i])
		i++
		return true
	}
}

func TestCopyRowsRoundTripsValues(t *testing.T) {
	db := open(t, mariadbtest.WithParam(mariadbtest.NewDatabase(t), "parseTime=true"), engine.OpenOptions{})
	ctx := context.Background()
	ts := time.Date(2026, 11, 21, 13, 14, 15, 123456000, time.UTC)
	day := time.Date(2026, 1, 2, 0, 0, 0, 0, time.FixedZone("CET", 3600)) // 2026-01-01 23:00 UTC
	nilInt := (*int)(nil)
	seven := 7
	cols := []string{"id", "s", "n", "f", "b", "ts", "d", "bin", "nul"}
	in := [][]any{
		{1, "plain", "12.34", 1.5, true, ts, ts, []byte{0, 9, 'a'}, nil},
		{2, "tab\there\nnew line\\back", "-0.01", 1e-300, false, day, day, []byte{}, nilInt},
		{int64(3), `\N`, "0", float32(0.25), true, &ts, ts, nil, &seven},
		{uint64(4), "ünïcødé 😀", "99999999.99", -2.0, false, ts, ts, []byte("x"), 8},
		{5, "", "1", 0.0, true, ts, ts, []byte("\\"), int8(-1)},
	}
	want := [][]any{
		{"1", "plain", "12.34", "1.5", "1", "2026-11-21 13:14:15.123456", "2026-11-21", "\x00\ta", nil},
		{"2", "tab\there\nnew line\\back", "-0.01", "1e-300", "0", "2026-01-01 23:00:00.000000", "2026-01-01", "", nil},
		{"3", `\N`, "0.00", "0.25", "1", "2026-11-21 13:14:15.123456", "2026-11-21", nil, "7"},
		{"4", "ünïcødé 😀", "99999999.99", "-2", "0", "2026-11-21 13:14:15.123456", "2026-11-21", "x", "8"},
		{"5", "", "1.00", "0", "1", "2026-11-21 13:14:15.123456", "2026-11-21", "\\", "-1"},
	}
	for name, load := range loaders() {
		t.Run(name, func(t *testing.T) {
			table := "v_" + strings.ToLower(name)
			mustExec(t, db, "CREATE TABLE "+table+` (id int PRIMARY KEY, s varchar(50), n decimal(10,2), f double,
				b bool, ts datetime(6), d date, bin varbinary(10), nul int) CHARACTER SET utf8mb4`)
			n, err := load(ctx, db, table, cols, rowsOf(in))
			if err != nil || n != int64(len(in)) {
				t.Fatalf("loaded %d rows, %v", n, err)
			}
			rows, err := db.QueryContext(ctx, `SELECT CAST(id AS CHAR), s, CAST(n AS CHAR), CAST(f AS CHAR), CAST(b AS CHAR),
				CAST(ts AS CHAR), CAST(d AS CHAR), bin, CAST(nul AS CHAR) FROM `+table+" ORDER BY id")
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var got [][]any
			for rows.Next() {
				vals := make([]sql.NullString, len(cols))
				ptrs := make([]any, len(cols))
				for i := range vals {
					ptrs[i] = &vals[i]
				}
				if err := rows.Scan(ptrs...); err != nil {
					t.Fatal(err)
				}
				row := make([]any, len(cols))
				for i, v := range vals {
					if v.Valid {
						row[i] = v.String
					}
				}
				got = append(got, row)
			}
			if !reflect.DeepEqual(got, want) {
				for i := range max(len(got), len(want)) {
					if i >= len(got) || i >= len(want) || !reflect.DeepEqual(got[i], want[i]) {
						t.Errorf("row %d:\n got %q\nwant %q", i+1, at(got, i), at(want, i))
					}
				}
			}
		})
	}
}

func at(rows [][]any, i int) []any {
	if i < len(rows) {
		return rows[i]
	}
	return nil
}

// TestCopyRowsAllOrNothing checks that bad data fails the whole load, although LOAD DATA
// LOCAL itself would only warn and skip or adjust the row.
func TestCopyRowsAllOrNothing(t *testing.T) {
	db := open(t, mariadbtest.NewDatabase(t), engine.OpenOptions{})
	ctx := context.Background()
	for name, load := range loaders() {
		for k, tc := range []struct {
			what string
			rows [][]any
			want string
		}{
			{"duplicate key", [][]any{{1, "a"}, {2, "b"}, {1, "c"}}, "Duplicate entry"},
			{"not a number", [][]any{{1, "a"}, {"two", "b"}}, "Incorrect integer value"},
			{"too long", [][]any{{1, "a"}, {2, strings.Repeat("x", 20)}}, "for column 's'"},
			{"cannot encode", [][]any{{1, "a"}, {2, struct{}{}}}, "struct {}"},
		} {
			t.Run(name+"/"+tc.what, func(t *testing.T) {
				table := fmt.Sprintf("bad_%s_%d", strings.ToLower(name), k)
				mustExec(t, db, "CREATE TABLE "+table+" (id int PRIMARY KEY, s varchar(10))")
				mustExec(t, db, "INSERT INTO "+table+" VALUES (100, 'before')")
				n, err := load(ctx, db, table, []string{"id", "s"}, rowsOf(tc.rows))
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("loaded %d rows, error %v; want an error with %q", n, err, tc.want)
				}
				var count int
				if err := db.QueryRow("SELECT COUNT(*) FROM " + table).Scan(&count); err != nil || count != 1 {
					t.Errorf("after a failed load the table has %d rows (%v), want the 1 from before", count, err)
				}
			})
		}
	}
}

// TestCopyRowsPanicRollsBack checks that a panic in next reaches the caller after the load
// was rolled back, and leaves the pool usable.
func TestCopyRowsPanicRollsBack(t *testing.T) {
	db := open(t, mariadbtest.NewDatabase(t), engine.OpenOptions{})
	db.SetMaxOpenConns(1) // a connection kept busy by the failed load would block the next query
	for name, load := range loaders() {
		t.Run(name, func(t *testing.T) {
			table := "panic_" + strings.ToLower(name)
			mustExec(t, db, "CREATE TABLE "+table+" (id int PRIMARY KEY)")
			n := 0
			func() {
				defer func() {
					if p := recover(); p != "boom" {
						t.Errorf("recovered %v, want boom", p)
					}
				}()
				_, _ = load(context.Background(), db, table, []string{"id"}, func(row []any) bool {
					if n++; n == 5 {
						panic("boom")
					}
					row[0] = n
					return true
				})
			}()
			var count int
			if err := db.QueryRow("SELECT COUNT(*) FROM " + table).Scan(&count); err != nil || count != 0 {
				t.Errorf("after the panic: %d rows, %v", count, err)
			}
		})
	}
}

// BenchmarkBulkLoad compares LOAD DATA LOCAL INFILE (CopyRows) with prepared multi-row
// INSERTs of 500, 1000 and 2000 rows per statement, on a narrow table (3 columns, ~30 bytes
// a row) and a wide one (21 columns like TPC-C's customer, ~600 bytes a row), each load
// one transaction into an empty table. Run it with
//
//	go test -run '^$' -bench BulkLoad -benchtime 3x ./internal/engine/mariadb/
func BenchmarkBulkLoad(b *testing.B) {
	db := open(b, mariadbtest.NewDatabase(b), engine.OpenOptions{})
	ctx := context.Background()
	words := make([]string, 64)
	for i := range words {
		words[i] = fmt.Sprintf("w%02d-%s", i, strings.Repeat(string(rune('a'+i%26)), 16+i%8))
	}
	data := make([]string, 64)
	for i := range data {
		data[i] = strings.Repeat(words[i], 500/len(words[i])+1)[:300+3*i]
	}
	since := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	tables := []struct {
		name, ddl string
		cols      []string
		rows      int
		fill      func(i int, row []any)
	}{
		{"narrow", "(id int PRIMARY KEY, a int, s varchar(32))", []string{"id", "a", "s"}, 100_000,
			func(i int, row []any) { row[0], row[1], row[2] = i, i*7%1000, words[i%64] }},
		{"wide", `(c_id int, c_d_id int, c_w_id int, c_first varchar(16), c_middle char(2), c_last varchar(16),
			c_street_1 varchar(20), c_street_2 varchar(20), c_city varchar(20), c_state char(2), c_zip char(9),
			c_phone char(16), c_since datetime, c_credit char(2), c_credit_lim decimal(12,2), c_discount decimal(4,4),
			c_balance decimal(12,2), c_ytd_payment decimal(12,2), c_payment_cnt int, c_delivery_cnt int,
			c_data varchar(500), PRIMARY KEY (c_w_id, c_d_id, c_id))`,
			[]string{"c_id", "c_d_id", "c_w_id", "c_first", "c_middle", "c_last", "c_street_1", "c_street_2",
				"c_city", "c_state", "c_zip", "c_phone", "c_since", "c_credit", "c_credit_lim", "c_discount",
				"c_balance", "c_ytd_payment", "c_payment_cnt", "c_delivery_cnt", "c_data"}, 20_000,
			func(i int, row []any) {
				w := words[i%64]
				row[0], row[1], row[2] = i%3000+1, i/3000%10+1, i/30000+1
				row[3], row[4], row[5] = w[:14], "OE", words[(i+7)%64][:15]
				row[6], row[7], row[8], row[9] = w[:18], w[:12], w[:15], "CA"
				row[10], row[11], row[12], row[13] = "123411111", "0123456789012345", since, "GC"
				row[14], row[15], row[16], row[17] = "50000.00", "0.1234", "-10.00", "10.00"
				row[18], row[19], row[20] = 1, 0, data[i%64]
			}},
	}
	methods := []struct {
		name string
		load loader
	}{
		{"LoadData", mariadb.Engine{}.CopyRows},
	}
	for _, per := range []int{500, 1000, 2000} {
		methods = append(methods, struct {
			name string
			load loader
		}{fmt.Sprintf("Insert%d", per), func(ctx context.Context, db *sql.DB, table string, cols []string, next func([]any) bool) (int64, error) {
			return mariadb.InsertRows(ctx, db, table, cols, next, per)
		}})
	}
	for _, tb := range tables {
		mustExec(b, db, "CREATE TABLE bench_"+tb.name+" "+tb.ddl)
		for _, m := range methods {
			b.Run(tb.name+"/"+m.name, func(b *testing.B) {
				for range b.N {
					b.StopTimer()
					mustExec(b, db, "TRUNCATE TABLE bench_"+tb.name)
					i := 0
					next := func(row []any) bool {
						if i == tb.rows {
							return false
						}
						tb.fill(i, row)
						i++
						return true
					}
					b.StartTimer()
					n, err := m.load(ctx, db, "bench_"+tb.name, tb.cols, next)
					if err != nil || n != int64(tb.rows) {
						b.Fatalf("loaded %d rows, %v", n, err)
					}
				}
				b.ReportMetric(float64(tb.rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
			})
		}
	}
}
