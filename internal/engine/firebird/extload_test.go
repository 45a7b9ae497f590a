package firebird_test

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"net/url"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nakagami/firebirdsql"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/engine/firebird"
	"github.com/dblat/dblat/internal/engine/firebird/fbtest"
	"github.com/dblat/dblat/internal/workload"
	"github.com/dblat/dblat/internal/workload/tpcc"
)

// withoutLoadDir is dsn without its load directory: CopyRows then uses EXECUTE BLOCKs.
func withoutLoadDir(t testing.TB, dsn string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Del(firebird.LoadDirParam)
	u.RawQuery = q.Encode()
	return u.String()
}

// allTypes is a table with every type the external path writes.
const allTypes = `(id INTEGER NOT NULL, s SMALLINT, b BIGINT, n4 NUMERIC(4,2), n9 NUMERIC(9,3), n18 NUMERIC(18,4),
	d4 DECIMAL(4,4), f FLOAT, dp DOUBLE PRECISION, dt DATE, tm TIME, ts TIMESTAMP, bo BOOLEAN,
	c CHAR(5), vc VARCHAR(12), oc CHAR(3) CHARACTER SET OCTETS)`

var allCols = []string{"id", "s", "b", "n4", "n9", "n18", "d4", "f", "dp", "dt", "tm", "ts", "bo", "c", "vc", "oc"}

func allTypesRows() [][]any {
	at := time.Date(2026, 11, 24, 13, 14, 15, 123400000, time.UTC)
	money := "-12.34"
	i := int64(7)
	return [][]any{
		{1, 1, int64(1) << 40, "12.34", "-123456.789", "12345678901234.5678", "0.1234", 1.5, 2.25, at, at, at, true, "abc", "héllo wörld", []byte{0, 1, 255}},
		{2, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil},
		{3, -32768, int64(-1), &money, 0.5, int64(3), "-0.5", -1e10, 3.0, &at, at, &at, false, "", "trail  ", []byte("xyz")},
		{&i, 32767, int64(9007199254740993), "99.99", "0", "-0.0001", "0", 0.0, math.Copysign(0, -1), at.AddDate(-200, 0, 0), time.Date(0, 1, 1, 23, 59, 59, 999900000, time.UTC), at.AddDate(100, 0, 0), true, "ünï", "", []byte{}},
	}
}

func copyAll(t *testing.T, db *sql.DB, table string, rows [][]any) (int64, error) {
	t.Helper()
	k := 0
	return firebird.Engine{}.CopyRows(context.Background(), db, table, allCols, func(row []any) bool {
		if k == len(rows) {
			return false
		}
		copy(row, rows[k])
		k++
		return true
	})
}

func dump(t *testing.T, db *sql.DB, table string) []string {
	t.Helper()
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, "SELECT * FROM "+table+" ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		v := make([]any, len(allCols))
		p := make([]any, len(v))
		for i := range v {
			p[i] = &v[i]
		}
		if err := rows.Scan(p...); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%#v", v))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCopyRowsExternal loads the same rows of every supported type, NULLs, non-ASCII text,
// trailing spaces and range limits included, through the external table and through
// EXECUTE BLOCKs, and compares what the server stored. A NULL in a NOT NULL column fails
// the load with nothing stored and nothing left behind.
func TestCopyRowsExternal(t *testing.T) {
	dsn := fbtest.NewDatabase(t, "Super")
	ext := open(t, dsn, engine.OpenOptions{})
	blocks := open(t, withoutLoadDir(t, dsn), engine.OpenOptions{})
	mustExec(t, ext, "CREATE TABLE via_ext "+allTypes, "CREATE TABLE via_blocks "+allTypes)
	rows := allTypesRows()
	if n, err := copyAll(t, ext, "via_ext", rows); err != nil || n != int64(len(rows)) {
		t.Fatalf("external: %d rows, %v", n, err)
	}
	if n, err := copyAll(t, blocks, "via_blocks", rows); err != nil || n != int64(len(rows)) {
		t.Fatalf("blocks: %d rows, %v", n, err)
	}
	if got := firebird.ExternalLoads(ext); got != 1 {
		t.Errorf("%d external loads through the DSN with a load directory, want 1", got)
	}
	if got := firebird.ExternalLoads(blocks); got != 0 {
		t.Errorf("%d external loads through the DSN without one", got)
	}
	a, b := dump(t, ext, "via_ext"), dump(t, ext, "via_blocks")
	if !reflect.DeepEqual(a, b) {
		t.Errorf("external and block loads differ:\n%s\n%s", strings.Join(a, "\n"), strings.Join(b, "\n"))
	}

	bad := append(allTypesRows(), []any{nil, 1, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil})
	if n, err := copyAll(t, ext, "via_ext", bad); err == nil || n != 0 || !strings.Contains(err.Error(), "NOT NULL") {
		t.Errorf("NULL id: %d rows, %v", n, err)
	}
	if got := dump(t, ext, "via_ext"); len(got) != len(rows) {
		t.Errorf("%d rows after the failed load, want the %d before", len(got), len(rows))
	}
	u, _ := url.Parse(dsn)
	if left, _ := os.ReadDir(u.Query().Get(firebird.LoadDirParam)); len(left) > 0 {
		t.Errorf("files left in the load directory: %v", left)
	}
	var tables int
	tx, _ := ext.BeginTx(context.Background(), &sql.TxOptions{ReadOnly: true})
	_ = tx.QueryRow("SELECT COUNT(*) FROM RDB$RELATIONS WHERE RDB$RELATION_NAME STARTING WITH 'DBLAT_'").Scan(&tables)
	tx.Rollback()
	if tables != 0 {
		t.Errorf("%d external tables left", tables)
	}
}

// TestCopyRowsFallsBack loads through EXECUTE BLOCKs when the server refuses the load
// directory, and for a table with a BLOB column.
func TestCopyRowsFallsBack(t *testing.T) {
	dsn := fbtest.NewDatabase(t, "Super")
	u, _ := url.Parse(dsn)
	q := u.Query()
	q.Set(firebird.LoadDirParam, fbtest.Dir(t)) // not the server's ExternalFileAccess directory
	u.RawQuery = q.Encode()
	refused := open(t, u.String(), engine.OpenOptions{})
	mustExec(t, refused, "CREATE TABLE t1 "+allTypes)
	if n, err := copyAll(t, refused, "t1", allTypesRows()); err != nil || n != 4 {
		t.Fatalf("refused load directory: %d rows, %v", n, err)
	}
	if got := firebird.ExternalLoads(refused); got != 0 {
		t.Errorf("%d external loads through a refused directory", got)
	}

	db := open(t, dsn, engine.OpenOptions{})
	mustExec(t, db, "CREATE TABLE t2 (id INTEGER, doc BLOB SUB_TYPE TEXT)")
	k := 0
	n, err := firebird.Engine{}.CopyRows(context.Background(), db, "t2", []string{"id", "doc"}, func(row []any) bool {
		k++
		row[0], row[1] = k, strings.Repeat("x", k)
		return k <= 3
	})
	if err != nil || n != 3 || firebird.ExternalLoads(db) != 0 {
		t.Errorf("BLOB table: %d rows, %v, %d external loads", n, err, firebird.ExternalLoads(db))
	}
}

// TestLoadDeterministic loads one TPC-C warehouse through external tables, into a database
// with forced writes on, and through EXECUTE BLOCKs: the data are the same, and forced
// writes are on again after the load (BeginLoad turns them off for it).
func TestLoadDeterministic(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	inst := fbtest.Server(t, "Super")
	dsn := fbtest.NewDatabase(t, "Super")
	pw, err := os.ReadFile(firebird.PasswordFile(inst))
	if err != nil {
		t.Fatal(err)
	}
	mm, err := firebirdsql.NewMaintenanceManager(fmt.Sprintf("127.0.0.1:%d", inst.Port), "SYSDBA", strings.TrimSpace(string(pw)), firebirdsql.GetDefaultServiceManagerOptions())
	if err != nil {
		t.Fatal(err)
	}
	if err := mm.SetWriteModeSync(dbPath(t, dsn)); err != nil {
		t.Fatal(err)
	}
	e := firebird.Engine{}
	// The two loads run side by side, each on a database of its own.
	fingerprints := map[string]string{}
	var mu sync.Mutex
	t.Run("loads", func(t *testing.T) {
		for _, tc := range []struct{ name, dsn string }{{"external", dsn}, {"blocks", withoutLoadDir(t, fbtest.NewDatabase(t, "Super"))}} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				db := open(t, tc.dsn, engine.OpenOptions{})
				tg := workload.Target{Engine: e, DB: db}
				start := time.Now()
				if err := tpcc.Load(ctx, tg, tpcc.LoadConfig{Warehouses: 1, Seed: 5}); err != nil {
					t.Fatal(err)
				}
				t.Logf("%s: 1 warehouse in %v", tc.name, time.Since(start))
				fp, err := tpcc.Fingerprint(ctx, db)
				if err != nil {
					t.Fatal(err)
				}
				mu.Lock()
				fingerprints[tc.name] = fp
				mu.Unlock()
				if tc.name == "external" {
					if firebird.ExternalLoads(db) == 0 {
						t.Error("no chunk loaded through an external table")
					}
					info, err := e.Inspect(ctx, db)
					if err != nil {
						t.Fatal(err)
					}
					if fw := info.Settings[firebird.KeyForcedWrites]; fw != "on" {
						t.Errorf("forced writes %q after the load, want on again", fw)
					}
				}
			})
		}
	})
	if fingerprints["external"] != fingerprints["blocks"] {
		t.Errorf("fingerprints differ: external %s, blocks %s", fingerprints["external"], fingerprints["blocks"])
	}
}
