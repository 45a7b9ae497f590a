package execution

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dblat/dblat/internal/engine/firebird/fbtest"
	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
	"github.com/dblat/dblat/internal/report"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/study"
)

// TestSeed002RunsReduced runs examples/seed002-vendor-test.yaml as shipped but cut to test
// size (one repeat, 2 s windows, 1 and 5 terminals, fewer products so that orders meet):
// the study loads its init script (relative to the study file) once, restores it before
// each run, runs both procedures with and without retries, stores the texts every run ran,
// and its report gives update conflicts and retries per transaction for both variants.
func TestSeed002RunsReduced(t *testing.T) {
	t.Parallel()
	fbtest.Require(t)
	c, store := newCore(t)
	file := filepath.Join("..", "..", "examples", "seed002-vendor-test.yaml")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	src := strings.NewReplacer("repeat: 3", "repeat: 1", "duration: 30s", "duration: 2s", "warmup: 5s", "warmup: 500ms",
		"terminals: [1, 5, 10]", "terminals: [1, 5]", "products: 4000", "products: 200").Replace(string(b))
	st, err := study.Parse(file, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.RunStudy(ctx, nil, st); err != nil {
		t.Fatal(err)
	}
	runs, err := store.List(ctx, results.Filter{Study: st.Name})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 8 {
		t.Fatalf("%d runs stored, want 8", len(runs))
	}
	for _, r := range runs {
		if r.Status != results.StatusFinished || len(r.Scripts) != 2 || r.Scripts[1].Kind != results.ScriptInit ||
			!strings.HasPrefix(r.Scripts[0].Path, "seed002/orders-") || r.Params.Defines["orders"] != "5" {
			t.Errorf("run %d: %s %q, scripts %+v, params %+v", r.ID, r.Status, r.Reason, r.Scripts, r.Params)
		}
	}
	rep, err := report.Build(report.Input{Study: st.Name, Factors: []string{"scripts", "terminals", "max_tries"}, Runs: runs})
	if err != nil {
		t.Fatal(err)
	}
	for _, cell := range rep.Cells {
		variant, terms, tries := cell.Levels[0], cell.Levels[1], cell.Levels[2]
		for _, tx := range cell.Tx {
			switch {
			case terms == "5" && tx.ConflictsPerTx() == 0:
				t.Errorf("%s at 5 terminals, max_tries %s: no update conflict", variant, tries)
			case terms == "1" && tx.Conflicts > 0:
				t.Errorf("%s alone met %d conflicts", variant, tx.Conflicts)
			case tries == "1" && tx.Retries > 0:
				t.Errorf("%s retried without retries", variant)
			}
		}
	}
	var text strings.Builder
	if err := report.Write(&text, rep, "text"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"conflicts/tx", "retries/tx", "orders-random", "orders-fixed", "seed002/schema.sql"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, text.String())
		}
	}
}

// TestScriptPlanErrors: study plan refuses, before any server starts, a cell whose engine
// has no variant of a script or cannot honour what it uses, at the script's own
// file:line:col where the script says it, else at the study key; and script parameters
// given to another workload.
func TestScriptPlanErrors(t *testing.T) {
	c, _ := newCore(t)
	dir := t.TempDir()
	for name, text := range map[string]string{
		"pipe.sql":        "SELECT 1;\n\\startpipeline\nSELECT 2;\n\\endpipeline\n",
		"pg.postgres.sql": "SELECT 1;\n",
		"bad.sql":         "\\set n random_zipfian(1, 10, 0.5)\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(dir, "s.yaml")
	for _, tc := range []struct{ src, want string }{
		{"study: s\nserver: {engine: postgres}\nbase:\n  workload: script\n  options: {protocol: prepared}\n" +
			"factors:\n  engine: [postgres, firebird]\n  scripts: [pipe.sql, pg.sql]\n",
			filepath.Join(dir, "pipe.sql") + ":2:1: \\startpipeline: firebird cannot pipeline statements (pipelines are PostgreSQL's, with the extended or prepared protocol) (first in cell engine=firebird scripts=pipe.sql)\n" +
				file + ":8:23: scripts level " + filepath.Join(dir, "pg.sql") + " has no variant for firebird: write " + filepath.Join(dir, "pg.firebird.sql")},
		{"study: s\nserver: {engine: mariadb}\nbase:\n  workload: script\n  scripts: bad.sql\n",
			filepath.Join(dir, "bad.sql") + ":1:"},
		{"study: s\nserver: {engine: postgres}\nbase:\n  workload: tpcc\n  scripts: [a.sql]\n",
			file + ":5:12: scripts is not a parameter of workload tpcc: it is for script"},
	} {
		if err := os.WriteFile(file, []byte(tc.src), 0o644); err != nil {
			t.Fatal(err)
		}
		st, err := study.Load(file)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Plan(context.Background(), st); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("plan error:\n%v\nwant:\n%s", err, tc.want)
		}
	}
}

// TestTpcbExampleRunsReduced runs examples/tpcb-postgres.yaml cut to test size: a study of
// built-in scripts loads pgbench's tables itself (no init), and each run costs pgbench's 7
// round trips per transaction.
func TestTpcbExampleRunsReduced(t *testing.T) {
	t.Parallel()
	pgtest.Server(t)
	c, store := newCore(t)
	st := reduced(t, "tpcb-postgres.yaml", "repeat: 3", "repeat: 1", "duration: 20s", "duration: 1s", "warmup: 5s", "warmup: 500ms",
		"warehouses: 4", "warehouses: 1", "terminals: [1, 4, 16]", "terminals: [2]")
	ctx := context.Background()
	if err := c.RunStudy(ctx, nil, st); err != nil {
		t.Fatal(err)
	}
	runs, err := store.List(ctx, results.Filter{Study: st.Name})
	if err != nil || len(runs) != 2 {
		t.Fatalf("%d runs, %v", len(runs), err)
	}
	for _, r := range runs {
		if r.Status != results.StatusFinished || len(r.Tx) != 1 || r.Tx[0].Type != "tpcb-like" || !sevenRoundTrips(r.Tx[0], r.Params.Pool()) ||
			len(r.Scripts) != 1 || r.Scripts[0].Kind != results.ScriptBuiltin || r.Params.Scale != 1 {
			t.Errorf("run %d: %s %q, tx %+v, scripts %+v", r.ID, r.Status, r.Reason, r.Tx, r.Scripts)
		}
	}
}

// sevenRoundTrips reports whether tpcb-like transactions under the prepared protocol cost
// pgbench's 7 round trips: every one at the median, and on average no more than 7 plus the
// prepares. Each connection prepares each of the 7 statements once, one round trip each,
// in its first transaction; when that transaction ends after the warm-up (a slow first
// transaction on a busy machine), its prepares count in the window. So the window holds at
// most 7 × connections such round trips, whatever the machine's speed.
func sevenRoundTrips(x results.TxSummary, conns int) bool {
	n := float64(x.Committed + x.Rollbacks)
	total := math.Round(x.RoundTrips * n)
	return x.Committed > 0 && x.RoundTripsP50 == 7 && total >= 7*n && total <= 7*n+7*float64(conns)
}
