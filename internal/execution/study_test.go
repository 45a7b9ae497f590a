package execution

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/engine/firebird/fbtest"
	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
	"github.com/dblat/dblat/internal/managed"
	"github.com/dblat/dblat/internal/report"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/study"
)

// testDirs are the tests' state directories; the servers a dead test binary left in one are
// stopped by the next.
var testDirs = managed.TestDirs{Prefix: "dblat-exec-test-", Registry: "state"}

func TestMain(m *testing.M) {
	testDirs.Sweep(os.TempDir())
	os.Exit(pgtest.Main(m))
}

// newCore returns a Core with its own state directory and results store.
func newCore(t testing.TB) (*Core, results.Store) {
	t.Helper()
	// Managed servers run as an unprivileged user that must reach the state directory
	// (testDirs makes it so).
	dir, err := testDirs.Make("")
	if err != nil {
		t.Fatal(err)
	}
	store, err := results.Open(context.Background(), filepath.Join(dir, "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	c := &Core{Store: store, Servers: managed.Registry{Root: filepath.Join(dir, "state")}}
	t.Cleanup(func() {
		store.Close()
		list, _ := c.Servers.List()
		for _, inst := range list {
			_ = c.StopServer(context.Background(), inst.Name)
			_ = c.RemoveServer(inst.Name) // frees the memory of a server in memory
		}
		os.RemoveAll(dir)
	})
	return c, store
}

// reduced parses an example study with its windows, warm-ups, repeats and cool-downs cut
// to test size.
func reduced(t *testing.T, file string, replace ...string) *study.Study {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "examples", file))
	if err != nil {
		t.Fatal(err)
	}
	src := strings.NewReplacer(replace...).Replace(string(b))
	st, err := study.Parse(file+" (reduced)", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestSeed003RunsAsAStudy: seed 003's pgbench -S study, a simple workload, runs as a study
// and its report speaks TPS.
func TestSeed003RunsAsAStudy(t *testing.T) {
	t.Parallel()
	pgtest.Server(t) // skips or fails, as the suite asks, without PostgreSQL
	c, store := newCore(t)
	st := reduced(t, "seed003-pgbench.yaml", "repeat: 5", "repeat: 1", "duration: 20s", "duration: 1s",
		"warmup: 5s", "warmup: 200ms", "cooldown: 2s", "cooldown: 0s", "[0, 20ms, 100ms]", "[0, 20ms]")
	ctx := context.Background()
	if err := c.RunStudy(ctx, nil, st); err != nil {
		t.Fatal(err)
	}
	runs, err := store.List(ctx, results.Filter{Study: st.Name})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 {
		t.Fatalf("%d runs stored, want 2", len(runs))
	}
	for _, r := range runs {
		if r.Status != results.StatusFinished || r.Params.Workload != "select-only" || r.Summary.Metric != results.MetricTPS ||
			r.Summary.TPS <= 0 || r.Summary.NOPM != 0 || r.Link == nil {
			t.Errorf("run %d: %s %q, workload %s, metric %q, TPS %.0f, NOPM %.0f, link %v", r.ID, r.Status, r.Reason,
				r.Params.Workload, r.Summary.Metric, r.Summary.TPS, r.Summary.NOPM, r.Link)
		}
	}
	rep, err := report.Build(report.Input{Study: st.Name, Factors: []string{"rtt"}, Runs: runs})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Metric != results.MetricTPS {
		t.Errorf("report metric %q, want TPS", rep.Metric)
	}
	var text strings.Builder
	if err := report.Write(&text, rep, "text"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "TPS") || strings.Contains(text.String(), "NOPM") {
		t.Errorf("the text report does not speak TPS only:\n%s", text.String())
	}
	// The study stopped the server it started.
	inst, err := c.Servers.Load(st.Name)
	if err != nil || inst.PID != 0 {
		t.Errorf("server %s after the study: %+v, %v", st.Name, inst, err)
	}
}

// TestSeed000RunsWithRestore: seed 000's reduced example (Firebird's architectures × RTT)
// runs as a study that restarts the server for each architecture and restores the pristine
// database before every run. The evidence of the restores is the orders table at the end:
// it holds the pristine orders plus those of the last run only, fewer than the windows
// alone of all runs added.
func TestSeed000RunsWithRestore(t *testing.T) {
	t.Parallel()
	fbtest.Require(t)
	c, store := newCore(t)
	st := reduced(t, "seed000-reduced.yaml", "repeat: 2..6", "repeat: 1", "duration: 8s", "duration: 1s",
		"warmup: 5s", "warmup: 200ms", "cooldown: 1s", "cooldown: 0s", "warehouses: 4", "warehouses: 1",
		"terminals: [10, 20]", "terminals: [4]", "rtt: [0, 0.5ms, 1ms, 3ms]", "rtt: [0, 1ms]")
	ctx := context.Background()
	if err := c.RunStudy(ctx, nil, st); err != nil {
		t.Fatal(err)
	}
	runs, err := store.List(ctx, results.Filter{Study: st.Name})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 6 {
		t.Fatalf("%d runs stored, want 6 (3 architectures × 2 RTTs)", len(runs))
	}
	modes := map[string]bool{}
	var windowOrders int64
	for _, r := range runs {
		if r.Status != results.StatusFinished || r.Summary.NOPM <= 0 {
			t.Errorf("run %d: %s %q, NOPM %.0f", r.ID, r.Status, r.Reason, r.Summary.NOPM)
		}
		modes[r.Server.Settings["ServerMode"]] = true
		for _, tx := range r.Tx {
			if tx.Type == "new_order" {
				windowOrders += tx.Committed
			}
		}
	}
	if len(modes) != 3 {
		t.Errorf("the runs ran in server modes %v, want the three architectures", modes)
	}
	// Restart the study's server (it stopped it) and count the orders left by the last run.
	inst, err := c.Servers.Load(st.Name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.StartServer(ctx, "firebird", st.Name, 0, inst.Settings); err != nil {
		t.Fatal(err)
	}
	target, err := c.Resolve(st.Name)
	if err != nil {
		t.Fatal(err)
	}
	wt, err := target.Open(ctx, target.DSN, engine.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer closeDB(wt)
	var orders int64
	if err := wt.DB.QueryRowContext(ctx, "SELECT COUNT(*) FROM orders").Scan(&orders); err != nil {
		t.Fatal(err)
	}
	const pristine = 10 * 3000 // one warehouse: 10 districts of 3,000 orders (TPC-C 4.3.3.1)
	if orders <= pristine || orders-pristine >= windowOrders {
		t.Errorf("%d orders after the study: want the %d pristine ones plus the last run's, fewer than the %d new orders of all windows",
			orders, pristine, windowOrders)
	}
}
