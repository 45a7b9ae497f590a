package script

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/engine/firebird"
	"github.com/dblat/dblat/internal/engine/firebird/fbtest"
	"github.com/dblat/dblat/internal/engine/mariadb"
	"github.com/dblat/dblat/internal/engine/mariadb/mariadbtest"
	"github.com/dblat/dblat/internal/engine/postgres"
	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
	"github.com/dblat/dblat/internal/option"
	"github.com/dblat/dblat/internal/spec"
	"github.com/dblat/dblat/internal/workload"
	"github.com/dblat/dblat/internal/workload/simple"
	"github.com/dblat/dblat/internal/workload/workloadtest"
)

// testEngines are the engines the workload runs on, each with a fresh database per test.
var testEngines = []struct {
	eng engine.Engine
	dsn func(testing.TB) string
}{
	{postgres.Engine{}, pgtest.NewDatabase},
	{mariadb.Engine{}, mariadbtest.NewDatabase},
	{firebird.Engine{}, func(t testing.TB) string { return fbtest.NewDatabase(t, "Super") }},
}

// openTarget opens dsn through e with the metering dialer; the pool closes when t ends.
func openTarget(t testing.TB, e engine.Engine, dsn string) workload.Target {
	t.Helper()
	db, err := e.Open(context.Background(), dsn, engine.OpenOptions{Dial: workloadtest.MeterDial})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return workload.Target{Engine: e, DB: db}
}

// dirFiles reads files from dir, as the execution core reads a run's files.
func dirFiles(dir string) workload.Files {
	return workload.Files{Dir: dir, Read: func(p string) ([]byte, error) { return os.ReadFile(filepath.Join(dir, p)) }}
}

// writeFiles writes name → text into a new directory and returns it.
func writeFiles(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// prepared returns the workload of cfg on tg, prepared.
func prepared(t testing.TB, tg workload.Target, cfg workload.Config) *Workload {
	t.Helper()
	w, err := New(tg, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Prepare(context.Background(), tg.DB); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func protocol(p string) option.Values { return option.Values{OptionProtocol: p} }

// tripsPerTx runs n transactions of terminal 0 on a fresh metered connection and returns
// the least and most round trips of the transactions after the first two (which prepare).
func tripsPerTx(t *testing.T, tg workload.Target, w *Workload, n int) (lo, hi int64) {
	t.Helper()
	conn, meter := workloadtest.MeteredConn(t, tg.DB)
	term := w.NewTerminal(0)
	for i := range n {
		before := meter.Counts()
		term.Next()
		if err := term.Run(context.Background(), conn); err != nil {
			t.Fatalf("transaction %d: %v", i, err)
		}
		d := meter.Counts().Sub(before).RoundTrips
		switch {
		case i == 2:
			lo, hi = d, d
		case i > 2:
			lo, hi = min(lo, d), max(hi, d)
		}
	}
	return lo, hi
}

// TestBuiltinRoundTrips runs pgbench's built-in scripts on pgbench's tables, loaded by
// `dblat load simple tpcb`, on every engine and protocol, and pins their round trips per
// transaction once the connection has prepared its statements:
//
//   - PostgreSQL: one per statement sent, BEGIN and END included, in every protocol
//     (tpcb-like 7, simple-update 5, select-only 1), as pgbench.
//   - MariaDB: the same with simple and prepared; extended prepares, executes and closes
//     each statement with parameters every time, two round trips, while START TRANSACTION
//     and COMMIT go as text (tpcb-like 2 + 5 × 2).
//   - Firebird (prepared): BEGIN and COMMIT are the driver's op_transaction and op_commit,
//     one each; each UPDATE and INSERT one (run as a query, so the driver does not ask for
//     its row count: engine.Dialect.ExecCountsRows), each SELECT two (execute, fetch);
//     select-only's lone SELECT runs in a transaction of its own (the driver's autocommit is
//     unsafe: engine.TxOnly), 1 + 2 + 1.
func TestBuiltinRoundTrips(t *testing.T) {
	want := map[string]map[string][3]int64{ // engine → protocol → tpcb-like, simple-update, select-only
		"postgres": {"simple": {7, 5, 1}, "extended": {7, 5, 1}, "prepared": {7, 5, 1}},
		"mariadb":  {"simple": {7, 5, 1}, "extended": {12, 8, 2}, "prepared": {7, 5, 1}},
		"firebird": {"prepared": {8, 6, 4}},
	}
	for _, te := range testEngines {
		t.Run(te.eng.Name(), func(t *testing.T) {
			tg := openTarget(t, te.eng, te.dsn(t))
			if err := simple.Load(context.Background(), tg, simple.LoadConfig{Workload: "tpcb", Scale: 1}); err != nil {
				t.Fatal(err)
			}
			for proto, trips := range want[te.eng.Name()] {
				for i, b := range BuiltinNames {
					w := prepared(t, tg, workload.Config{ScriptParams: spec.ScriptParams{Builtins: []string{b}}, Seed: 1, Options: protocol(proto)})
					if w.scale != 1 {
						t.Fatalf("%s: :scale %d, want the loaded 1", b, w.scale)
					}
					slack := int64(0)
					if te.eng.Name() == "firebird" {
						slack = 2 // deferred op_free_statement replies: see simple's roundtrip_test.go
					}
					lo, hi := tripsPerTx(t, tg, w, 12)
					t.Logf("%s %-13s %-8s %d..%d round trips", te.eng.Name(), b, proto, lo, hi)
					if lo != trips[i] || hi-lo > slack {
						t.Errorf("%s %s %s: %d..%d round trips per transaction, want %d", te.eng.Name(), b, proto, lo, hi, trips[i])
					}
				}
			}
		})
	}
}

// retryScript draws a value and hands it to a function that fails every other call with a
// serialization failure naming the value; the try that succeeds stores it.
const retryScript = `\set v random(1, 1000000000)
BEGIN;
INSERT INTO draws (v) VALUES (:v);
SELECT fail_odd(:v);
END;
`

// TestRetrySameDraws: a transaction run again after a retryable failure (the runner's
// --max-tries) re-runs the whole script with the same random draws, as pgbench does; the
// next transaction draws anew. The failed try's rows are rolled back.
func TestRetrySameDraws(t *testing.T) {
	ctx := context.Background()
	tg := openTarget(t, postgres.Engine{}, pgtest.NewDatabase(t))
	for _, q := range []string{"CREATE TABLE draws (v bigint)", "CREATE SEQUENCE tries",
		`CREATE FUNCTION fail_odd(v bigint) RETURNS int AS $$ BEGIN
		   IF nextval('tries') % 2 = 1 THEN RAISE EXCEPTION 'try drew %', v USING ERRCODE = '40001'; END IF;
		   RETURN 0; END $$ LANGUAGE plpgsql`} {
		if _, err := tg.DB.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	dir := writeFiles(t, map[string]string{"retry.sql": retryScript})
	for _, proto := range Protocols {
		if _, err := tg.DB.ExecContext(ctx, "DELETE FROM draws"); err != nil {
			t.Fatal(err)
		}
		w := prepared(t, tg, workload.Config{ScriptParams: spec.ScriptParams{Scripts: []string{"retry.sql"}}, Files: dirFiles(dir), Seed: 7, Options: protocol(proto)})
		conn, err := tg.DB.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		term := w.NewTerminal(0)
		failedDraw := regexp.MustCompile(`try drew (\d+)`)
		var drawn []string
		for range 3 {
			term.Next()
			err := term.Run(ctx, conn)
			m := failedDraw.FindStringSubmatch(errString(err))
			if m == nil || tg.Engine.Classify(err) != engine.ClassRetryable {
				t.Fatalf("%s: first try: %v, want a retryable failure naming its draw", proto, err)
			}
			if !strings.HasPrefix(err.Error(), filepath.Join(dir, "retry.sql")+":4: ") {
				t.Errorf("%s: the error does not name the script's line: %v", proto, err)
			}
			if err := term.Run(ctx, conn); err != nil {
				t.Fatalf("%s: retry: %v", proto, err)
			}
			drawn = append(drawn, m[1])
		}
		conn.Close()
		rows, err := tg.DB.QueryContext(ctx, "SELECT v FROM draws")
		if err != nil {
			t.Fatal(err)
		}
		var stored []string
		for rows.Next() {
			var v int64
			_ = rows.Scan(&v)
			stored = append(stored, strconv.FormatInt(v, 10))
		}
		rows.Close()
		if strings.Join(stored, " ") != strings.Join(drawn, " ") {
			t.Errorf("%s: the retries stored %v, the failed tries drew %v", proto, stored, drawn)
		}
		if drawn[0] == drawn[1] || drawn[1] == drawn[2] {
			t.Errorf("%s: successive transactions drew the same values: %v", proto, drawn)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestRunErrors: what goes wrong at run time fails the transaction with the script's file
// and line, and leaves the connection outside any transaction, on every engine: a \gset
// query that returns no row or several, an evaluation error, a transaction that a
// script's \if leaves open (ErrLeftOpen). The engine's variant of a script runs in its
// place (the Firebird SQL of gset.firebird.sql).
func TestRunErrors(t *testing.T) {
	files := map[string]string{
		"gset0.sql":          "SELECT 1 AS x WHERE 1 = 0 \\gset\n",
		"gset0.firebird.sql": "SELECT 1 AS x FROM RDB$DATABASE WHERE 1 = 0 \\gset\n",
		"gset2.sql":          "-- two rows\nSELECT 1 AS x UNION ALL SELECT 2 \\gset\n",
		"gset2.firebird.sql": "-- two rows\nSELECT 1 AS x FROM RDB$DATABASE UNION ALL SELECT 2 FROM RDB$DATABASE \\gset\n",
		"div.sql":            "\\set a 1\n\\set b :a / 0\n",
		"open.sql":           "\\set a random(1, 2)\n\\if :a > 0\nBEGIN;\n\\endif\nSELECT :a AS a;\n",
		"open.firebird.sql":  "\\set a random(1, 2)\n\\if :a > 0\nBEGIN;\n\\endif\nSELECT CAST(:a AS integer) AS a FROM RDB$DATABASE;\n",
		"ok.sql":             "BEGIN;\nSELECT 1 AS one \\gset\nCOMMIT;\n",
		"ok.firebird.sql":    "BEGIN;\nSELECT 1 AS one FROM RDB$DATABASE \\gset\nCOMMIT;\n",
	}
	dir := writeFiles(t, files)
	where := func(f string) string { return filepath.Join(dir, f) }
	cases := []struct{ file, want string }{
		{"gset0.sql", ":1: \\gset expects one row, got 0"},
		{"gset2.sql", ":2: \\gset expects one row, got 2"},
		{"div.sql", ":2: \\set b: division by zero"},
		{"open.sql", ": " + ErrLeftOpen.Error()},
	}
	for _, te := range testEngines {
		t.Run(te.eng.Name(), func(t *testing.T) {
			ctx := context.Background()
			tg := openTarget(t, te.eng, te.dsn(t))
			for _, proto := range []string{"simple", "prepared"} {
				conn, err := tg.DB.Conn(ctx)
				if err != nil {
					t.Fatal(err)
				}
				for _, tc := range cases {
					w := prepared(t, tg, workload.Config{ScriptParams: spec.ScriptParams{Scripts: []string{tc.file}}, Files: dirFiles(dir), Seed: 1, Options: protocol(proto)})
					term := w.NewTerminal(0)
					term.Next()
					err := term.Run(ctx, conn)
					file := tc.file
					if te.eng.Name() == "firebird" && files[strings.Replace(file, ".sql", ".firebird.sql", 1)] != "" {
						file = strings.Replace(file, ".sql", ".firebird.sql", 1)
					}
					if err == nil || err.Error() != where(file)+tc.want {
						t.Errorf("%s %s: %v\nwant %s%s", proto, tc.file, err, where(file), tc.want)
					}
					// The connection is outside any transaction: a script that begins one runs.
					ok := prepared(t, tg, workload.Config{ScriptParams: spec.ScriptParams{Scripts: []string{"ok.sql"}}, Files: dirFiles(dir), Seed: 1, Options: protocol(proto)})
					term = ok.NewTerminal(0)
					term.Next()
					if err := term.Run(ctx, conn); err != nil {
						t.Errorf("%s: after %s: %v", proto, tc.file, err)
					}
				}
				conn.Close()
			}
		})
	}
}

// TestCheckErrors: what can be known before a server starts is refused by New, naming the
// file, line and column of a script's problem, else the parameter: a pipeline on an engine
// that cannot pipeline or with the simple protocol, a transaction statement the engine's
// driver cannot honour, a transaction left open, a variable read before it is set, a file
// without a variant for the engine, an unknown built-in, two scripts of one name.
func TestCheckErrors(t *testing.T) {
	files := map[string]string{
		"pipe.sql":            "\\startpipeline\nSELECT 1;\n\\endpipeline\n",
		"nowait.firebird.sql": "SET TRANSACTION NO WAIT;\nCOMMIT;\n",
		"open.sql":            "SELECT 1;\n  BEGIN;\nSELECT 2;\n",
		"unset.sql":           "SELECT :nope;\n",
		"pg.postgres.sql":     "SELECT 1;\n",
		"a/x.sql":             "SELECT 1;\n",
		"x.sql":               "SELECT 2;\n",
	}
	dir := t.TempDir()
	for name, text := range files {
		_ = os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		eng      engine.Engine
		proto    string
		scripts  []string
		builtins []string
		want     string
	}{
		{mariadb.Engine{}, "prepared", []string{"pipe.sql"}, nil, "pipe.sql:1:1: \\startpipeline: mariadb cannot pipeline statements"},
		{firebird.Engine{}, "prepared", []string{"pipe.sql"}, nil, "pipe.sql:1:1: \\startpipeline: firebird cannot pipeline statements"},
		{postgres.Engine{}, "simple", []string{"pipe.sql"}, nil, "pipe.sql:1:1: \\startpipeline needs the extended or prepared protocol, not simple"},
		{firebird.Engine{}, "simple", []string{"nowait.firebird.sql"}, nil, `nowait.firebird.sql:1:1: "SET TRANSACTION NO WAIT;": the lock resolution is a run option on Firebird (--lock-resolution)`},
		{postgres.Engine{}, "simple", []string{"open.sql"}, nil, "open.sql:2:3: the transaction this begins is still open at the script's end"},
		{postgres.Engine{}, "simple", []string{"unset.sql"}, nil, `unset.sql:1:8: variable "nope" is read before any command sets it`},
		{firebird.Engine{}, "simple", []string{"pg.sql"}, nil, "pg.sql has no variant for firebird: write " + filepath.Join(dir, "pg.firebird.sql")},
		{firebird.Engine{}, "simple", []string{"pg.postgres.sql"}, nil, "pg.postgres.sql is written for postgres, and this run is on firebird"},
		{postgres.Engine{}, "simple", nil, []string{"tpcb"}, `"tpcb" is not a built-in script (tpcb-like, simple-update, select-only)`},
		{postgres.Engine{}, "simple", []string{"x.sql", "a/x.sql"}, nil, "are both transaction type x: a script's type is its file's name; rename one"},
		{postgres.Engine{}, "simple", nil, nil, "are missing: give a script file with -f FILE[@WEIGHT]"},
	} {
		_, err := New(workload.Target{Engine: tc.eng}, workload.Config{ScriptParams: spec.ScriptParams{Scripts: tc.scripts, Builtins: tc.builtins},
			Files: dirFiles(dir), Options: protocol(tc.proto)})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %v%v: %v\nwant %s", tc.eng.Name(), tc.scripts, tc.builtins, err, tc.want)
		}
	}
}

// TestInitLoad loads an init script (DDL and data with :scale; a variant per engine) and
// runs a script on what it made; a run naming another init finds nothing loaded.
func TestInitLoad(t *testing.T) {
	files := map[string]string{
		"init.sql": `DROP TABLE IF EXISTS items;
CREATE TABLE items (id integer PRIMARY KEY, qty integer NOT NULL);
INSERT INTO items SELECT g, 0 FROM generate_series(1, 10 * :scale) g;
`,
		"init.mariadb.sql": `DROP TABLE IF EXISTS items;
CREATE TABLE items (id integer PRIMARY KEY, qty integer NOT NULL);
INSERT INTO items WITH RECURSIVE g (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 10 * :scale) SELECT n, 0 FROM g;
`,
		"init.firebird.sql": `RECREATE TABLE items (id integer NOT NULL PRIMARY KEY, qty integer NOT NULL);
EXECUTE BLOCK AS DECLARE i integer = 1; BEGIN
  WHILE (i <= 10 * :scale) DO BEGIN INSERT INTO items VALUES (\:i, 0); i = i + 1; END
END;
`,
		"buy.sql": `\set id random(1, 10 * :scale)
BEGIN;
UPDATE items SET qty = qty + 1 WHERE id = :id;
COMMIT;
SELECT count(*) AS n, sum(qty) AS total FROM items \gset
`,
		"buy.firebird.sql": `\set id random(1, 10 * :scale)
BEGIN;
UPDATE items SET qty = qty + 1 WHERE id = :id;
COMMIT;
SELECT count(*) AS n, sum(qty) AS total FROM items \gset
`,
		"other.sql": "SELECT 1;\n",
	}
	dir := writeFiles(t, files)
	for _, te := range testEngines {
		t.Run(te.eng.Name(), func(t *testing.T) {
			ctx := context.Background()
			tg := openTarget(t, te.eng, te.dsn(t))
			cfg := workload.Config{ScriptParams: spec.ScriptParams{Scripts: []string{"buy.sql"}, Init: "init.sql"}, Files: dirFiles(dir), Seed: 3}
			if _, err := loaded(ctx, tg, cfg); !errors.Is(err, workload.ErrNotLoaded) {
				t.Fatalf("before the load: %v, want not loaded", err)
			}
			if err := load(ctx, tg, workload.LoadConfig{Scale: 3, ScriptParams: spec.ScriptParams{Init: "init.sql"}, Files: dirFiles(dir)}); err != nil {
				t.Fatal(err)
			}
			if n, err := loaded(ctx, tg, cfg); err != nil || n != 3 {
				t.Fatalf("loaded: %d, %v; want 3", n, err)
			}
			w := prepared(t, tg, cfg)
			if w.scale != 3 {
				t.Errorf(":scale %d, want the loaded 3", w.scale)
			}
			if src := w.Sources(); len(src) != 2 || src[1].Kind != workload.SourceInit || !strings.HasPrefix(src[1].Path, "init") {
				t.Errorf("sources %+v", src)
			}
			conn, err := tg.DB.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			term := w.NewTerminal(0).(*terminal)
			for range 5 {
				term.Next()
				if err := term.Run(ctx, conn); err != nil {
					t.Fatal(err)
				}
			}
			if n, total := term.c.Var("n").String(), term.c.Var("total").String(); n != "30" || total != "5" {
				t.Errorf("after 5 purchases: %s items, %s bought", n, total)
			}
			other := cfg
			other.Init = "other.sql"
			if _, err := loaded(ctx, tg, other); !errors.Is(err, workload.ErrNotLoaded) {
				t.Errorf("another init: %v, want not loaded", err)
			}
		})
	}
}

// TestTxOf pins which statements begin and end a transaction on engines whose SQL says so.
func TestTxOf(t *testing.T) {
	for q, want := range map[string]engine.TxOp{
		"BEGIN;": engine.TxBegin, "begin work": engine.TxBegin, "START TRANSACTION READ ONLY;": engine.TxBegin,
		"BEGIN ISOLATION LEVEL SERIALIZABLE;": engine.TxBegin, "BEGIN NOT ATOMIC SELECT 1; END": engine.TxNone,
		"COMMIT;": engine.TxCommit, "END;": engine.TxCommit, "commit work": engine.TxCommit,
		"ROLLBACK;": engine.TxRollback, "ABORT;": engine.TxRollback, "ROLLBACK TO SAVEPOINT a;": engine.TxNone,
		"ROLLBACK WORK TO a": engine.TxNone, "COMMIT PREPARED 'x'": engine.TxNone, "/* c */ BEGIN;": engine.TxBegin,
		"SELECT 1;": engine.TxNone, "UPDATE t SET begin = 1;": engine.TxNone,
	} {
		if got := txOf(q); got != want {
			t.Errorf("txOf(%q) = %d, want %d", q, got, want)
		}
	}
	if returnsRows("UPDATE t SET a = 1") || !returnsRows("update t set a = 1 returning a") || !returnsRows("EXECUTE PROCEDURE p(1)") ||
		returnsRows("UPDATE t SET returning_x = 1") {
		t.Error("returnsRows misreads a statement")
	}
}

// TestVariantPaths pins how an engine's variant is named and read.
func TestVariantPaths(t *testing.T) {
	for _, tc := range []struct{ path, eng, variant, written, stem string }{
		{"orders.sql", "firebird", "orders.firebird.sql", "", "orders"},
		{"a/orders.firebird.sql", "postgres", "a/orders.firebird.postgres.sql", "firebird", "orders"},
		{"tpcb", "mariadb", "tpcb.mariadb", "", "tpcb"},
		{"tpcb.mariadb", "mariadb", "tpcb.mariadb.mariadb", "mariadb", "tpcb"},
		{"v1.2.sql", "postgres", "v1.2.postgres.sql", "", "v1.2"},
	} {
		if v := variantPath(tc.path, tc.eng); v != tc.variant {
			t.Errorf("variantPath(%q, %s) = %q, want %q", tc.path, tc.eng, v, tc.variant)
		}
		if e, stem := writtenFor(tc.path); e != tc.written || stem != tc.stem {
			t.Errorf("writtenFor(%q) = %q, %q; want %q, %q", tc.path, e, stem, tc.written, tc.stem)
		}
	}
	// Every built-in script parses for every engine, as that engine's variant.
	for _, b := range BuiltinNames {
		for _, e := range []engine.Engine{postgres.Engine{}, mariadb.Engine{}, firebird.Engine{}} {
			src, err := resolveBuiltin(b, e.Name())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Parse(src.path, src.text); err != nil {
				t.Error(err)
			}
		}
	}
}

// TestFirebirdArchitectures runs the tpcb-like built-in and a script with a driver
// transaction, a \gset and a statement outside any transaction on each of Firebird's three
// architectures: the same statements cost the same round trips on each.
func TestFirebirdArchitectures(t *testing.T) {
	dir := writeFiles(t, map[string]string{"mixed.sql": `SELECT count(*) AS n FROM pgbench_branches \gset
BEGIN;
UPDATE pgbench_tellers SET tbalance = tbalance + 1 WHERE tid = :n;
COMMIT;
`})
	for _, arch := range fbtest.Architectures {
		t.Run(arch, func(t *testing.T) {
			tg := openTarget(t, firebird.Engine{}, fbtest.NewDatabase(t, arch))
			if err := simple.Load(context.Background(), tg, simple.LoadConfig{Workload: "tpcb", Scale: 1}); err != nil {
				t.Fatal(err)
			}
			// The lone SELECT commits on its own (BEGIN, execute, fetch, COMMIT), then the
			// driver's transaction: BEGIN, the UPDATE's execute, COMMIT.
			for _, tc := range []struct {
				cfg   workload.Config
				trips int64
			}{
				{workload.Config{ScriptParams: spec.ScriptParams{Builtins: []string{"tpcb-like"}}, Seed: 1, Options: protocol("prepared")}, 8},
				{workload.Config{ScriptParams: spec.ScriptParams{Scripts: []string{"mixed.sql"}}, Files: dirFiles(dir), Seed: 1, Options: protocol("prepared")}, 7},
			} {
				lo, hi := tripsPerTx(t, tg, prepared(t, tg, tc.cfg), 10)
				if lo != tc.trips || hi-lo > 2 {
					t.Errorf("%s %v%v: %d..%d round trips per transaction, want %d", arch, tc.cfg.Builtins, tc.cfg.Scripts, lo, hi, tc.trips)
				}
			}
		})
	}
}

// TestPipelines runs PostgreSQL pipelines (\startpipeline ... \endpipeline) with the
// extended and prepared protocols: a pipeline of a transaction costs one round trip (the
// prepared protocol's first one also prepares its statements in it), \syncpipeline keeps
// it one flight, and a statement that fails in it fails the transaction at its end, rolled
// back, with the connection ready for the next.
func TestPipelines(t *testing.T) {
	ctx := context.Background()
	tg := openTarget(t, postgres.Engine{}, pgtest.NewDatabase(t))
	if _, err := tg.DB.ExecContext(ctx, "CREATE TABLE p (k int PRIMARY KEY, v int)"); err != nil {
		t.Fatal(err)
	}
	dir := writeFiles(t, map[string]string{
		"pipe.sql": `\set k random(1, 1000000)
\startpipeline
BEGIN;
INSERT INTO p VALUES (:k, 1) ON CONFLICT (k) DO UPDATE SET v = p.v + 1;
SELECT v FROM p WHERE k = :k;
\syncpipeline
UPDATE p SET v = v + 1 WHERE k = :k;
END;
\endpipeline
`,
		"fail.sql": `\startpipeline
BEGIN;
INSERT INTO p VALUES (-1, 1);
INSERT INTO p VALUES (-1, 2);
END;
\endpipeline
`,
	})
	for _, proto := range []string{"extended", "prepared"} {
		w := prepared(t, tg, workload.Config{ScriptParams: spec.ScriptParams{Scripts: []string{"pipe.sql"}}, Files: dirFiles(dir), Seed: 5, Options: protocol(proto)})
		// The segment before \syncpipeline goes out first: when its answer beats the rest
		// of the pipeline out of this process (on loopback, a busy machine), the meter sees
		// two turns; through any added RTT it is one.
		if lo, hi := tripsPerTx(t, tg, w, 8); lo != 1 || hi > 2 {
			t.Errorf("%s: %d..%d round trips per pipelined transaction, want 1", proto, lo, hi)
		}
		conn, err := tg.DB.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		fail := prepared(t, tg, workload.Config{ScriptParams: spec.ScriptParams{Scripts: []string{"fail.sql"}}, Files: dirFiles(dir), Seed: 5, Options: protocol(proto)})
		term := fail.NewTerminal(0)
		for range 2 {
			term.Next()
			err := term.Run(ctx, conn)
			if err == nil || !strings.Contains(err.Error(), "fail.sql:6: ") || !strings.Contains(err.Error(), "23505") {
				t.Errorf("%s: failing pipeline: %v, want the duplicate key at \\endpipeline's line", proto, err)
			}
		}
		ok := prepared(t, tg, workload.Config{ScriptParams: spec.ScriptParams{Scripts: []string{"pipe.sql"}}, Files: dirFiles(dir), Seed: 6, Options: protocol(proto)}).NewTerminal(0)
		ok.Next()
		if err := ok.Run(ctx, conn); err != nil {
			t.Errorf("%s: after a failed pipeline: %v", proto, err)
		}
		conn.Close()
	}
	var n int
	if err := tg.DB.QueryRowContext(ctx, "SELECT count(*) FROM p WHERE k = -1").Scan(&n); err != nil || n != 0 {
		t.Errorf("the failed pipeline's transaction left %d rows (%v)", n, err)
	}
}
