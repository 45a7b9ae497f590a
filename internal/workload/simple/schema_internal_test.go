package simple

import (
	"context"
	"database/sql"
	"slices"
	"sync"
	"testing"

	"github.com/dblat/dblat/internal/engine/firebird"
	"github.com/dblat/dblat/internal/engine/mariadb"
	"github.com/dblat/dblat/internal/engine/postgres"
	"github.com/dblat/dblat/internal/workload"
)

// TestCreateSQL pins the DDL: pgbench's tables with pgbench's columns (PG 15 pgbench.c,
// initCreateTables), spelled by each dialect.
func TestCreateSQL(t *testing.T) {
	for _, tc := range []struct {
		tb         *table
		pg, my, fb string
	}{
		{tAccounts,
			"CREATE TABLE pgbench_accounts (aid integer NOT NULL, bid integer, abalance integer, filler char(84))",
			"CREATE TABLE pgbench_accounts (aid integer NOT NULL, bid integer, abalance integer, filler char(84))",
			"CREATE TABLE pgbench_accounts (aid integer NOT NULL, bid integer, abalance integer, filler char(84))"},
		{tBranches,
			"CREATE TABLE pgbench_branches (bid integer NOT NULL, bbalance integer, filler char(88))", "", ""},
		{tTellers,
			"CREATE TABLE pgbench_tellers (tid integer NOT NULL, bid integer, tbalance integer, filler char(84))", "", ""},
		{tHistory,
			"CREATE TABLE pgbench_history (tid integer, bid integer, aid integer, delta integer, mtime timestamp, filler char(22))",
			"CREATE TABLE pgbench_history (tid integer, bid integer, aid integer, delta integer, mtime datetime(6), filler char(22))",
			""},
		{tBlobs,
			"CREATE TABLE simple_blob (id integer NOT NULL, data bytea NOT NULL)",
			"CREATE TABLE simple_blob (id integer NOT NULL, data longblob NOT NULL)",
			"CREATE TABLE simple_blob (id integer NOT NULL, data blob sub_type binary NOT NULL)"},
	} {
		for _, c := range []struct{ got, want string }{
			{tc.tb.createSQL(postgres.Engine{}.Dialect()), tc.pg},
			{tc.tb.createSQL(mariadb.Engine{}.Dialect()), tc.my},
			{tc.tb.createSQL(firebird.Engine{}.Dialect()), tc.fb},
		} {
			if c.want != "" && c.got != c.want {
				t.Errorf("got  %s\nwant %s", c.got, c.want)
			}
		}
	}
	if got, want := tAccounts.keySQL(), "ALTER TABLE pgbench_accounts ADD CONSTRAINT pgbench_accounts_pkey PRIMARY KEY (aid)"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if tHistory.keySQL() != "" {
		t.Error("pgbench_history has a key")
	}
}

// capture is an engine whose BulkLoader keeps the rows it is given.
type capture struct {
	postgres.Engine
	mu   sync.Mutex
	rows map[string][][]any
}

func (c *capture) CopyRows(_ context.Context, _ *sql.DB, table string, cols []string, next func(row []any) bool) (int64, error) {
	var n int64
	row := make([]any, len(cols))
	for next(row) {
		c.mu.Lock()
		c.rows[table] = append(c.rows[table], slices.Clone(row))
		c.mu.Unlock()
		n++
	}
	return n, nil
}

// TestPgbenchJobs checks the generated rows against pgbench's client-side generation (PG 15
// initGenerateDataClientSide) at scale 3, and the progress reports.
func TestPgbenchJobs(t *testing.T) {
	e := &capture{rows: map[string][][]any{}}
	var last int64
	prog := workload.NewLoadProgress(func(done, total int64) { last = done })
	jobs := pgbenchJobs(workload.Target{Engine: e}, e.Dialect(), 3, prog)
	if len(jobs) != 8 || prog.Total() != 300033 { // accounts in 6 chunks, tellers, branches
		t.Fatalf("%d jobs for %d rows", len(jobs), prog.Total())
	}
	if err := runJobs(context.Background(), 3, jobs); err != nil {
		t.Fatal(err)
	}
	if last != 300033 {
		t.Errorf("progress ended at %d", last)
	}
	for _, c := range []struct {
		table string
		n     int
		i     int
		want  []any
	}{
		{"pgbench_branches", 3, 2, []any{int64(3), int64(0), nil}},
		{"pgbench_tellers", 30, 10, []any{int64(11), int64(2), int64(0), nil}},
		{"pgbench_accounts", 300000, -1, []any{int64(100001), int64(2), int64(0), ""}},
	} {
		rows := e.rows[c.table]
		if len(rows) != c.n {
			t.Errorf("%s: %d rows, want %d", c.table, len(rows), c.n)
			continue
		}
		if c.i < 0 { // chunks run in any order: find the row by key
			for i, r := range rows {
				if r[0] == c.want[0] {
					c.i = i
				}
			}
		}
		if got := rows[max(c.i, 0)]; !slices.Equal(got, c.want) {
			t.Errorf("%s: row %v, want %v", c.table, got, c.want)
		}
	}
}
