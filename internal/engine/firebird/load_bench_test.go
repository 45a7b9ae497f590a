package firebird_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/engine/firebird"
	"github.com/dblat/dblat/internal/engine/firebird/fbtest"
	"github.com/dblat/dblat/internal/workload"
	"github.com/dblat/dblat/internal/workload/tpcc"
)

// Tables for the loader: narrow is three short columns; wide is TPC-C's CUSTOMER (21
// columns, about 650 bytes a row).
var (
	narrowDDL  = "(a INTEGER, b INTEGER, c VARCHAR(24))"
	narrowCols = []string{"a", "b", "c"}
	wideDDL    = `(c_id INTEGER, c_d_id SMALLINT, c_w_id INTEGER, c_first VARCHAR(16), c_middle CHAR(2),
		c_last VARCHAR(16), c_street_1 VARCHAR(20), c_street_2 VARCHAR(20), c_city VARCHAR(20), c_state CHAR(2),
		c_zip CHAR(9), c_phone CHAR(16), c_since TIMESTAMP, c_credit CHAR(2), c_credit_lim NUMERIC(12,2),
		c_discount NUMERIC(4,4), c_balance NUMERIC(12,2), c_ytd_payment NUMERIC(12,2), c_payment_cnt INTEGER,
		c_delivery_cnt INTEGER, c_data VARCHAR(500))`
	wideCols = []string{"c_id", "c_d_id", "c_w_id", "c_first", "c_middle", "c_last", "c_street_1", "c_street_2",
		"c_city", "c_state", "c_zip", "c_phone", "c_since", "c_credit", "c_credit_lim", "c_discount", "c_balance",
		"c_ytd_payment", "c_payment_cnt", "c_delivery_cnt", "c_data"}
)

func narrowRow(i int, row []any) {
	row[0], row[1], row[2] = i, i*2, fmt.Sprintf("row %020d", i)
}

var since = time.Date(2026, 11, 22, 1, 2, 3, 0, time.UTC)

func wideRow(i int, row []any) {
	copy(row, []any{i, 1 + i%10, 1, "first" + strings.Repeat("x", 11), "OE", "BARBARBAR", "street one", "street two",
		"city", "CA", "123411111", "1234567890123456", since, "GC", 50000.0, 0.1234, -10.0, 10.0, 1, 0,
		strings.Repeat("d", 300+i%200)})
}

// BenchmarkCopyRows measures the loader's alternatives on Super: one prepared INSERT per
// row ("prepared") against parameterised EXECUTE BLOCKs of k rows. b.N is the number of
// rows; the metric is rows/s. Run with
//
//	go test ./internal/engine/firebird -run '^$' -bench CopyRows -benchtime 20000x -count 3
func BenchmarkCopyRows(b *testing.B) {
	dsn := fbtest.NewDatabase(b, "Super")
	ctx := context.Background()
	db, err := firebird.Engine{}.Open(ctx, dsn, engine.OpenOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	seq := 0
	for _, tc := range []struct {
		name string
		ddl  string
		cols []string
		fill func(int, []any)
	}{{"narrow", narrowDDL, narrowCols, narrowRow}, {"wide", wideDDL, wideCols, wideRow}} {
		for _, budget := range []int{0, 256, 512, 1024, 2048} {
			k := 0
			name := "prepared"
			if budget > 0 {
				k = max(1, min(255, budget/len(tc.cols)))
				name = fmt.Sprintf("block%d", k)
			}
			b.Run(tc.name+"/"+name, func(b *testing.B) {
				seq++
				table := fmt.Sprintf("bench%d", seq)
				mustExec(b, db, "CREATE TABLE "+table+" "+tc.ddl)
				i := 0
				b.ResetTimer()
				n, err := firebird.LoadBlocks(ctx, db, table, tc.cols, k, func(row []any) bool {
					if i == b.N {
						return false
					}
					tc.fill(i, row)
					i++
					return true
				})
				b.StopTimer()
				if err != nil || n != int64(b.N) {
					b.Fatalf("loaded %d of %d: %v", n, b.N, err)
				}
				b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "rows/s")
			})
		}
	}
}

// BenchmarkRoundTrip measures one prepared singleton SELECT (execute + fetch, 2 round trips
// with this driver) directly and through OpenOptions.Dial (the driver attaches through a
// loopback bridge, then talks on the Dial-ed connection: adopt.go), whose cost is the
// difference.
func BenchmarkRoundTrip(b *testing.B) {
	dsn := fbtest.NewDatabase(b, "Super")
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		dial func(context.Context, string, string) (net.Conn, error)
	}{{"direct", nil}, {"dial", (&net.Dialer{}).DialContext}} {
		b.Run(tc.name, func(b *testing.B) {
			db, err := firebird.Engine{}.Open(ctx, dsn, engine.OpenOptions{Dial: tc.dial})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer tx.Rollback()
			stmt, err := tx.PrepareContext(ctx, "SELECT 1 FROM RDB$DATABASE")
			if err != nil {
				b.Fatal(err)
			}
			defer stmt.Close()
			var one int
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := stmt.QueryRowContext(ctx).Scan(&one); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// cpuSeconds returns the user+system CPU seconds process pid has used (/proc/PID/stat,
// in clock ticks of 1/100 s).
func cpuSeconds(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	u, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (u + st) / 100
}

// selfCPU returns the CPU seconds this process has used.
func selfCPU() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}

// BenchmarkLoad10Warehouses loads 10 TPC-C warehouses with tpcc.Load (its default 2 ×
// GOMAXPROCS workers) into a fresh database of the managed Super server, once through
// external tables (the path of managed servers' DSNs) and once through EXECUTE BLOCKs (a
// DSN without a load directory), and reports warehouses per minute and the CPU seconds per
// warehouse of the server and of dblat. Run it alone (the blocks path takes minutes):
//
//	go test ./internal/engine/firebird -run '^$' -bench Load10Warehouses -benchtime 1x -timeout 30m
//	go test ./internal/engine/firebird -run '^$' -bench Load10Warehouses/external -benchtime 1x -count 3
func BenchmarkLoad10Warehouses(b *testing.B) {
	const warehouses = 10
	inst := fbtest.Server(b, "Super")
	for _, path := range []string{"external", "blocks"} {
		b.Run(path, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				dsn := fbtest.NewDatabase(b, "Super")
				if path == "blocks" {
					dsn = withoutLoadDir(b, dsn)
				}
				db, err := firebird.Engine{}.Open(context.Background(), dsn, engine.OpenOptions{})
				if err != nil {
					b.Fatal(err)
				}
				server, client := cpuSeconds(inst.PID), selfCPU()
				start := time.Now()
				b.StartTimer()
				err = tpcc.Load(context.Background(), workload.Target{Engine: firebird.Engine{}, DB: db}, tpcc.LoadConfig{Warehouses: warehouses, Seed: 1})
				b.StopTimer()
				took := time.Since(start)
				server, client = cpuSeconds(inst.PID)-server, selfCPU()-client
				db.Close()
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(warehouses/took.Minutes(), "warehouses/min")
				b.ReportMetric(server/warehouses, "server-cpu-s/warehouse")
				b.ReportMetric(client/warehouses, "dblat-cpu-s/warehouse")
				b.StartTimer()
			}
		})
	}
}
