package cli_test

import (
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/cli"
	"github.com/dblat/dblat/internal/engine/firebird/fbtest"
	"github.com/dblat/dblat/internal/engine/mariadb/mariadbtest"
	"github.com/dblat/dblat/internal/engine/postgres"
	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
	"github.com/dblat/dblat/internal/results"
)

// showScript returns `pgbench --show-script=name` of the pgbench installed beside the
// PostgreSQL server (or on PATH).
func showScript(t *testing.T, name string) string {
	t.Helper()
	bin := "pgbench"
	if dir, err := postgres.FindBinaries(""); err == nil {
		if p := filepath.Join(dir, "pgbench"); fileExists(p) {
			bin = p
		}
	}
	out, err := exec.Command(bin, "--show-script="+name).CombinedOutput()
	if err != nil {
		if pgtest.Required() {
			t.Fatalf("pgbench --show-script=%s: %v\n%s", name, err, out)
		}
		t.Skipf("skipping: pgbench: %v", err)
	}
	return string(out)
}

func writeFile(t *testing.T, name, text string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// txOf returns the run's figures of transaction type name.
func txOf(t *testing.T, r results.Run, name string) results.TxSummary {
	t.Helper()
	for _, x := range r.Tx {
		if x.Type == name {
			return x
		}
	}
	t.Fatalf("run %d has no transaction type %s: %+v", r.ID, name, r.Tx)
	return results.TxSummary{}
}

// extraRoundTrips is how many round trips the window's transactions of x cost beyond want
// each (their mean is stored; the total is a whole number).
func extraRoundTrips(x results.TxSummary, want float64) float64 {
	n := float64(x.Committed + x.Rollbacks)
	return math.Round(x.RoundTrips*n) - want*n
}

// TestScriptRunsPgbenchsOwnScripts runs pgbench's built-in scripts as `pgbench
// --show-script` writes them, with `dblat run script -f`, in each of pgbench's protocols:
// tpcb-like costs 7 round trips per transaction and select-only 1, as in pgbench (and the
// prepares, once per connection), and the run stores the texts it ran with their hashes.
func TestScriptRunsPgbenchsOwnScripts(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	e := newEnv(t)
	e.chdir() // the scripts are written and named by relative paths
	tpcb, sel := showScript(t, "tpcb-like"), showScript(t, "select-only")
	writeFile(t, "tpcb-like.sql", tpcb)
	writeFile(t, "select-only.sql", sel)
	e.must("load", "simple", "tpcb", "--target", dsn, "--scale", "1")
	for _, proto := range []string{"simple", "extended", "prepared"} {
		out := e.must("run", "script", "-f", "tpcb-like.sql", "-f", "select-only.sql@2", "--target", dsn, "--protocol", proto,
			"--terminals", "2", "--duration", "2s", "--warmup", "1s")
		r := e.lastRun()
		for name, want := range map[string]float64{"tpcb-like": 7, "select-only": 1} {
			// Prepared, each connection prepares each statement (one per round trip) once,
			// in the first transaction that runs it: if that one ends after the warm-up (a
			// slow start on a busy machine), the window holds its prepares too, at most
			// want × connections round trips more.
			x := txOf(t, r, name)
			excess, most := extraRoundTrips(x, want), 0.0
			if proto == "prepared" {
				most = want * float64(r.Params.Pool())
			}
			if x.Committed == 0 || x.RoundTripsP50 != int64(want) || excess < 0 || excess > most {
				t.Errorf("%s %s: %d committed at %.3f round trips per transaction (p50 %d), want %v:\n%s",
					proto, name, x.Committed, x.RoundTrips, x.RoundTripsP50, want, out)
			}
		}
		if len(r.Scripts) != 2 || r.Scripts[0].SHA256 != results.ScriptSum(tpcb) || r.Scripts[1].Weight != 2 ||
			r.Scripts[1].Text != sel || r.Params.Options["protocol"] != proto || r.Params.Scale != 1 {
			t.Errorf("%s: stored %+v %+v", proto, r.Scripts, r.Params)
		}
		if !strings.Contains(out, "scripts: tpcb-like.sql ["+results.ScriptSum(tpcb)[:12]+"], select-only.sql @2") {
			t.Errorf("%s: the summary does not name the scripts:\n%s", proto, out)
		}
	}
	show := e.must("results", "show", "1", "--scripts")
	if !strings.Contains(show, "--- script: tpcb-like.sql (transaction type tpcb-like, weight 1), sha256 "+results.ScriptSum(tpcb)+"\n"+tpcb) {
		t.Errorf("results show --scripts:\n%s", show)
	}
}

// TestScriptEnginesThroughLink runs the tpcb-like built-in, in its engine's variant, on
// MariaDB and Firebird through 5 ms of added RTT: each transaction costs the round trips
// its statements cost on that engine — MariaDB one per statement sent (START
// TRANSACTION, five statements, COMMIT: 7); Firebird one for BEGIN (the driver's
// op_transaction) and COMMIT each, one for each UPDATE and INSERT (run as a query: no row
// count asked for) and two for the SELECT (execute, then fetch): 8 — and takes at least that
// many RTTs.
func TestScriptEnginesThroughLink(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		dsn   func(testing.TB) string
		trips int64
	}{
		{"mariadb", mariadbtest.NewDatabase, 7},
		{"firebird", func(t testing.TB) string { return fbtest.NewDatabase(t, "Super") }, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dsn := tc.dsn(t)
			e := newEnv(t)
			e.must("load", "script", "-b", "tpcb-like", "--target", dsn, "--scale", "1")
			out := e.must("run", "script", "-b", "tpcb-like", "--target", dsn, "--protocol", "prepared", "--rtt", "5ms",
				"--terminals", "2", "--duration", "3s", "--warmup", "1s", "--max-tries", "5")
			r := e.lastRun()
			x := txOf(t, r, "tpcb-like")
			// Above the median, a window may hold what its first transactions prepared (at
			// most two round trips per statement and connection, once: 5 and 7–8 per connection
			// measured with no warm-up on MariaDB and Firebird) and the tries a
			// conflict retried (each one at most the transaction's round trips and a
			// rollback): bounds that hold whatever the machine's speed or conflict rate.
			excess := extraRoundTrips(x, float64(tc.trips))
			if x.Committed == 0 || x.RoundTripsP50 != tc.trips || excess < 0 ||
				excess > float64(2*tc.trips*int64(r.Params.Pool())+(tc.trips+1)*x.Retries) {
				t.Errorf("%d committed, %.3f round trips per transaction (p50 %d), %d retries, want %d:\n%s",
					x.Committed, x.RoundTrips, x.RoundTripsP50, x.Retries, tc.trips, out)
			}
			if min := tc.trips * 5000; x.P50Us < min {
				t.Errorf("p50 %d µs through 5 ms of RTT, below %d round trips' %d µs", x.P50Us, tc.trips, min)
			}
			if len(r.Scripts) != 1 || r.Scripts[0].Path != "tpcb-like."+tc.name+".sql" || r.Scripts[0].Kind != results.ScriptBuiltin {
				t.Errorf("stored scripts %+v", r.Scripts)
			}
		})
	}
}

// TestScriptBadInput: a script's problems are one line naming its file, line and column,
// exit with the usage status, and store nothing; so are the run's.
func TestScriptBadInput(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	e := newEnv(t)
	e.chdir() // the scripts are written and named by relative paths
	files := map[string]string{
		"meta.sql":        "\\set n random(1, 10)\n\\slep :n ms\n",
		"expr.sql":        "\\set n 1 +\n",
		"args.sql":        "SELECT 1;\n\\set n random(1)\n",
		"zipf.sql":        "\\set n random_zipfian(1, 10, 0.5)\n",
		"unset.sql":       "BEGIN;\nSELECT :aid;\nEND;\n",
		"open.sql":        "BEGIN;\nSELECT 1;\n",
		"pipe.sql":        "\\startpipeline\nSELECT 1;\n\\endpipeline\n",
		"shell.sql":       "\\shell ls\n",
		"pg.postgres.sql": "SELECT 1;\n",
	}
	for name, text := range files {
		writeFile(t, name, text)
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"-f", "meta.sql"}, []string{"meta.sql:2:1: unknown meta-command \\slep (did you mean \\sleep?)"}},
		{[]string{"-f", "expr.sql"}, []string{"expr.sql:1:"}},
		{[]string{"-f", "args.sql"}, []string{"args.sql:2:"}},
		{[]string{"-f", "zipf.sql"}, []string{"zipf.sql:1:"}},
		{[]string{"-f", "unset.sql"}, []string{`unset.sql:2:8: variable "aid" is read before any command sets it`}},
		{[]string{"-f", "unset.sql", "-D", "aid=5", "-f", "open.sql"}, []string{"open.sql:1:1: the transaction this begins is still open at the script's end"}},
		{[]string{"-f", "pipe.sql"}, []string{"pipe.sql:1:1: \\startpipeline needs the extended or prepared protocol, not simple"}},
		{[]string{"-f", "shell.sql"}, []string{"shell.sql:1:1: \\shell is not supported"}},
		{[]string{"-f", "missing.sql"}, []string{"--file missing.sql: no such file"}},
		{[]string{"-f", "meta.sql@x"}, []string{`weight "x"`}},
		{[]string{"-f", "meta.sql@0"}, []string{"--file all have weight 0"}},
		{[]string{"-b", "tpcb"}, []string{`--builtin "tpcb" is not a built-in script`}},
		{[]string{}, []string{"--file are missing"}},
		{[]string{"-b", "select-only", "--mix", "1"}, []string{"unknown flag: --mix"}},
	} {
		args := append([]string{"run", "script", "--target", dsn, "--duration", "1s"}, tc.args...)
		e.fails(cli.ExitUsage, tc.want, args...)
	}
	e.fails(cli.ExitUsage, []string{"pipe.sql:1:1: \\startpipeline: mariadb cannot pipeline statements"},
		"run", "script", "-f", "pipe.sql", "--protocol", "prepared", "--target", mariadbtest.NewDatabase(t))
	e.fails(cli.ExitUsage, []string{"--file pg.sql has no variant for mariadb: write pg.mariadb.sql (or pg.sql, for every engine); there are pg.postgres.sql"},
		"run", "script", "-f", "pg.sql", "--target", mariadbtest.NewDatabase(t))
	if out := e.must("results", "list"); strings.Contains(out, "script") {
		t.Errorf("bad input stored runs:\n%s", out)
	}
}

// TestScriptLoadInit: `dblat load script --init FILE` makes the data a run then finds
// loaded (at the scale it loaded); a run naming another init finds none and says which
// command loads it.
func TestScriptLoadInit(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	e := newEnv(t)
	e.chdir() // the scripts are written and named by relative paths
	writeFile(t, "init.sql", "DROP TABLE IF EXISTS items;\nCREATE TABLE items (id int PRIMARY KEY, qty int NOT NULL);\n"+
		"INSERT INTO items SELECT g, 0 FROM generate_series(1, 100 * :scale) g;\n")
	writeFile(t, "other.sql", "SELECT 1;\n")
	writeFile(t, "buy.sql", "\\set id random(1, 100 * :scale)\nUPDATE items SET qty = qty + 1 WHERE id = :id;\n")
	e.must("load", "script", "--init", "init.sql", "--target", dsn, "--scale", "3")
	e.must("run", "script", "-f", "buy.sql", "--init", "init.sql", "--target", dsn, "--terminals", "1", "--duration", "1s", "--warmup", "0s")
	r := e.lastRun()
	if r.Params.Scale != 3 || len(r.Scripts) != 2 || r.Scripts[1].Kind != results.ScriptInit || r.Params.Init != "init.sql" {
		t.Errorf("stored %+v %+v", r.Params, r.Scripts)
	}
	e.fails(cli.ExitUsage, []string{"the data was loaded by another init script than other.sql", "dblat load script --target", "--init other.sql"},
		"run", "script", "-f", "buy.sql", "--init", "other.sql", "--target", dsn, "--duration", "1s")
	e.fails(cli.ExitUsage, []string{"--init is missing"}, "load", "script", "--target", dsn)
}

// TestAgentsRunScripts: a script run driven by two agents carries the text its coordinator
// read to the agents: the file is gone by the time they start, and they run it all the
// same; the merged run stores it like a run of one process.
func TestAgentsRunScripts(t *testing.T) {
	target := pgtest.NewDatabase(t)
	storeDSN := pgtest.NewDatabase(t)
	e := newEnv(t)
	e.chdir() // the scripts are written and named by relative paths
	writeFile(t, "init.sql", "DROP TABLE IF EXISTS hits;\nCREATE TABLE hits (n int, client int);\n")
	writeFile(t, "hit.sql", "\\set n random(1, 100)\nINSERT INTO hits VALUES (:n, :client_id);\n")
	e.must("load", "script", "--init", "init.sql", "--target", target)
	coord, out := e.child(t, "--results", storeDSN, "--no-cpu-latency-hold", "run", "script", "-f", "hit.sql", "--init", "init.sql",
		"--target", target, "--terminals", "4", "--duration", "2s", "--warmup", "0s", "--agents", "2", "--agents-wait", "60s")
	ctx := context.Background()
	store, err := results.Open(ctx, storeDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	waitFor(t, 60*time.Second, func() bool {
		rs, err := store.List(ctx, results.Filter{Limit: 1})
		return err == nil && len(rs) == 1
	}, out.String)
	if err := os.Remove("hit.sql"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"s1", "s2"} {
		e.child(t, "--results", storeDSN, "--no-cpu-latency-hold", "agent", "--name", name)
	}
	if err := coord.Wait(); err != nil {
		t.Fatalf("coordinator: %v\n%s", err, out.String())
	}
	runs, err := store.List(ctx, results.Filter{Limit: 1})
	if err != nil || len(runs) != 1 {
		t.Fatalf("List: %v, %v", runs, err)
	}
	r := runs[0]
	if r.Status != results.StatusFinished || r.Agents != 2 || r.Summary.Committed == 0 || len(r.Scripts) != 2 ||
		r.Scripts[0].Path != "hit.sql" || r.Scripts[0].Text == "" {
		t.Errorf("merged run %d: %s %q, %d agents, %d committed, scripts %+v", r.ID, r.Status, r.Reason, r.Agents, r.Summary.Committed, r.Scripts)
	}
}
