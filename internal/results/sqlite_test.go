package results_test

// Tests of what only the SQLite backend has: a file, its pragmas, its shipped schema
// versions, and what Open makes of paths. Behaviour shared with PostgreSQL is in the
// conformance suite (storetest), run by conformance_test.go.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/results/storetest"
)

func rawQuery[T any](t *testing.T, path, query string) T {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v T
	if err := db.QueryRow(query).Scan(&v); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return v
}

func execRaw(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

func TestSQLiteCreateAndReopen(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name  string
		setup func(t *testing.T, path string)
	}{
		{"missing file", func(t *testing.T, path string) {}},
		{"empty file", func(t *testing.T, path string) {
			if err := os.WriteFile(path, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"missing parent directories", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "r.db")
			if tc.setup == nil {
				path = filepath.Join(t.TempDir(), "a", "b", "r.db")
			} else {
				tc.setup(t, path)
			}
			s, err := results.Open(ctx, path)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			if s.Location() != path {
				t.Errorf("Location %q, want %q", s.Location(), path)
			}
			r := storetest.FullRun(t, "keep", "cell", time.Now())
			storetest.Write(t, s, &r, results.StatusFinished, nil)
			var mode string
			if err := results.DBOf(s).QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
				t.Errorf("journal_mode %q, %v; want wal", mode, err)
			}
			var fk int
			if err := results.DBOf(s).QueryRow("PRAGMA foreign_keys").Scan(&fk); err != nil || fk != 1 {
				t.Errorf("foreign_keys %d, %v; want 1", fk, err)
			}
			s.Close()
			if v := rawQuery[int](t, path, "PRAGMA user_version"); v != results.SchemaVersion() {
				t.Errorf("user_version %d, want %d", v, results.SchemaVersion())
			}

			for i := range 2 { // re-open is idempotent and keeps the data
				s, err := results.Open(ctx, path)
				if err != nil {
					t.Fatalf("re-open %d: %v", i, err)
				}
				got, err := s.Get(ctx, r.ID, false)
				if err != nil {
					t.Fatalf("re-open %d: Get: %v", i, err)
				}
				r.Samples, r.Signals = nil, nil
				if !reflect.DeepEqual(storetest.Norm(*got), storetest.Norm(r)) {
					t.Errorf("re-open %d: run changed", i)
				}
				s.Close()
			}
		})
	}
}

// TestSQLiteUpgrade opens files as each shipped schema version left them, with runs in
// them: the upgrade keeps every run and gives each a UID derived from what identified it
// before, the same in two copies of one file upgraded apart.
func TestSQLiteUpgrade(t *testing.T) {
	ctx := context.Background()
	for version := 1; version < results.SchemaVersion(); version++ {
		t.Run(fmt.Sprint("from version ", version), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "old.db")
			if err := results.CreateSQLiteAt(ctx, path, version); err != nil {
				t.Fatal(err)
			}
			var stmts []string
			for i := range 3 {
				// From version 4 on, runs carry their identity.
				uidCol, uidVal := "", ""
				if version >= 4 {
					uidCol, uidVal = "uid, ", fmt.Sprintf("'%s', ", uuid.NewString())
				}
				stmts = append(stmts, fmt.Sprintf(`INSERT INTO runs (%sstudy, cell_key, status, started, ended,
					workload, scale, terminals, connections, duration_ns, warmup_ns, seed, think, rtt_ns,
					engine, target, managed, server_version, database_bytes, hostname, pid, client, nopm)
					VALUES (%s'old', 'c%d', 'finished', '2024-01-01T00:00:0%d.000000001Z', '2024-01-01T00:05:00.000000000Z',
					'tpcc', 1, 4, 4, 60000000000, 7000000000, 1, 0, 0, 'postgres', 'pg1', 1, '16', 0, 'oldhost', 4242,
					'{"hostname":"oldhost","pid":4242}', %d)`, uidCol, uidVal, i%2, i, 100*(i+1)),
					fmt.Sprintf(`INSERT INTO run_tx (run_id, ord, type, committed, rollbacks, mean_us, p50_us, p90_us,
					p95_us, p99_us, p999_us, max_us, wait_mean_us, wait_p99_us) VALUES (%d, 0, 'new_order', 10, 0, 1, 1, 1, 1, %d, 1, 1, 0, 0)`,
						i+1, 1000*(i+1)),
					fmt.Sprintf(`INSERT INTO run_samples (run_id, offset_ns, type, committed, errors, p50_us, p99_us, max_us)
					VALUES (%d, 1000000000, '', 5, 0, 1, 2, 3)`, i+1))
			}
			execRaw(t, path, stmts...)
			copyPath := filepath.Join(dir, "copy.db")
			copyFile(t, path, copyPath)

			uids := func(p string) []string {
				s := storetest.Open(t, p)
				runs, err := s.List(ctx, results.Filter{})
				if err != nil {
					t.Fatal(err)
				}
				if len(runs) != 3 {
					t.Fatalf("%d runs after upgrade, want 3", len(runs))
				}
				var out []string
				for _, r := range runs {
					if _, err := uuid.Parse(r.UID); err != nil {
						t.Errorf("run %d: UID %q: %v", r.ID, r.UID, err)
					}
					full, err := s.Get(ctx, r.ID, true)
					if err != nil || len(full.Tx) != 1 || len(full.Samples) != 1 || full.Summary.NOPM == 0 {
						t.Errorf("run %d after upgrade: %v, %+v", r.ID, err, full)
					}
					// A run stored before warm-ups were recorded (schema 10) had the one it
					// asked for.
					if version < 10 && full != nil && (full.Summary.Warmup != 7*time.Second || full.Params.WarmupAuto) {
						t.Errorf("run %d after upgrade: warm-up %v (auto %v), want the requested 7s", r.ID, full.Summary.Warmup, full.Params.WarmupAuto)
					}
					out = append(out, r.UID)
				}
				return out
			}
			a, b := uids(path), uids(copyPath)
			if !slices.Equal(a, b) {
				t.Errorf("copies upgraded apart disagree on UIDs: %v vs %v", a, b)
			}
			if len(slices.Compact(slices.Sorted(slices.Values(a)))) != 3 {
				t.Errorf("UIDs not distinct: %v", a)
			}
			if v := rawQuery[int](t, path, "PRAGMA user_version"); v != results.SchemaVersion() {
				t.Errorf("user_version %d, want %d", v, results.SchemaVersion())
			}
			// The unique index exists: a second run with a stored UID is refused.
			s := storetest.Open(t, path)
			dup := results.Run{UID: a[0]}
			if _, err := s.Begin(ctx, &dup); err == nil {
				t.Error("Begin with an upgraded run's UID succeeded")
			}
		})
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestSQLiteOpenErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	regular := filepath.Join(dir, "regular-file")
	if err := os.WriteFile(regular, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	garbage := filepath.Join(dir, "garbage.db")
	garbageText := []byte(strings.Repeat("this is not a database\n", 200))
	if err := os.WriteFile(garbage, garbageText, 0o644); err != nil {
		t.Fatal(err)
	}
	foreign := filepath.Join(dir, "foreign.db")
	execRaw(t, foreign, "CREATE TABLE theirs (x)", "INSERT INTO theirs VALUES (1)")
	newer := filepath.Join(dir, "newer.db")
	s, err := results.Open(ctx, newer)
	if err != nil {
		t.Fatal(err)
	}
	r := storetest.FullRun(t, "", "", time.Now())
	if _, err := s.Begin(ctx, &r); err != nil {
		t.Fatal(err)
	}
	s.Close()
	execRaw(t, newer, fmt.Sprintf("PRAGMA user_version = %d", results.SchemaVersion()+1))

	cases := []struct {
		name     string
		path     string
		contains []string
		is       error
	}{
		{"under a regular file", filepath.Join(regular, "sub", "x.db"),
			[]string{filepath.Join(regular, "sub", "x.db"), "cannot create: not a directory", "--results"}, nil},
		{"a directory", dir, []string{dir, "is a directory", "--results"}, nil},
		{"not a database", garbage, []string{garbage, "not a SQLite database", "--results"}, nil},
		{"another program's database", foreign, []string{foreign, "not a dblat results database", "--results"}, nil},
		{"newer schema", newer, []string{newer, fmt.Sprintf("schema version %d", results.SchemaVersion()+1), "upgrade dblat"}, results.ErrSchemaTooNew},
		{"empty path", "", []string{"no path", "--results"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := results.Open(ctx, tc.path)
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded")
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("error is not one line: %q", msg)
			}
			for _, c := range tc.contains {
				if !strings.Contains(msg, c) {
					t.Errorf("error %q does not contain %q", msg, c)
				}
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %q is not %v", msg, tc.is)
			}
		})
	}
	// Refusing must not have touched anything.
	if b, _ := os.ReadFile(garbage); string(b) != string(garbageText) {
		t.Error("garbage file modified")
	}
	execRaw(t, foreign, "SELECT x FROM theirs")
	if m := rawQuery[string](t, foreign, "PRAGMA journal_mode"); m != "delete" {
		t.Errorf("foreign database journal_mode changed to %q", m)
	}
	if v := rawQuery[int](t, newer, "PRAGMA user_version"); v != results.SchemaVersion()+1 {
		t.Errorf("newer database user_version now %d", v)
	}
	execRaw(t, newer, fmt.Sprintf("PRAGMA user_version = %d", results.SchemaVersion()))
	s = storetest.Open(t, newer)
	if _, err := s.Get(ctx, r.ID, false); err != nil {
		t.Errorf("run lost after refused open: %v", err)
	}
}

func TestSQLiteOddPath(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "a b#c?d%20e", "r?.db")
	s, err := results.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := os.Stat(path); err != nil {
		t.Errorf("database not at the literal path: %v", err)
	}
}

// TestLocations checks which locations Open takes for PostgreSQL, which for a SQLite file,
// and that a URL of neither kind is refused without creating anything.
func TestLocations(t *testing.T) {
	cases := []struct {
		loc     string
		pg      bool
		refused string // part of the error, "" when accepted
	}{
		{"dblat.db", false, ""},
		{"/var/lib/dblat/results.db", false, ""},
		{"./postgres:x.db", false, ""},
		{"dir/host=x.db", false, ""},
		{"a b.db", false, ""},
		{"postgres://bench@db:5432/results", true, ""},
		{"postgresql://db/results?sslmode=disable", true, ""},
		{"POSTGRES://db/results", true, ""},
		{"host=db dbname=results user=bench", true, ""},
		{"dbname=results", true, ""},
		{" host = /tmp port=5432", true, ""},
		{"user=bench password=x", false, ""}, // names neither host nor database: a file name
		{"postgres:", false, "postgres://user@host:port/dbname"},
		{"postgres:results", false, "postgres://user@host:port/dbname"},
		{"postgresql:/db/x", false, "postgres://user@host:port/dbname"},
		{"mysql://db/results", false, `unknown scheme "mysql"`},
		{"sqlite://x.db", false, `unknown scheme "sqlite"`},
	}
	for _, tc := range cases {
		t.Run(tc.loc, func(t *testing.T) {
			pg, err := results.IsPostgres(tc.loc)
			if tc.refused != "" {
				if err == nil || !strings.Contains(err.Error(), tc.refused) || !strings.Contains(err.Error(), "--results") &&
					!strings.Contains(err.Error(), "./") {
					t.Errorf("IsPostgres: %v, want an error containing %q", err, tc.refused)
				}
				return
			}
			if err != nil || pg != tc.pg {
				t.Errorf("IsPostgres = %v, %v; want %v", pg, err, tc.pg)
			}
		})
	}

	// Open refuses a refused location before touching the file system.
	dir := t.TempDir()
	t.Chdir(dir)
	for _, loc := range []string{"postgres:results", "postgres:/x/y.db", "mysql://db/r"} {
		if s, err := results.Open(context.Background(), loc); err == nil {
			s.Close()
			t.Errorf("Open(%q) succeeded", loc)
		} else if strings.Contains(err.Error(), "\n") {
			t.Errorf("Open(%q): error not one line: %q", loc, err)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("refused locations created %v", entries)
	}
}
