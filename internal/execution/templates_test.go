package execution

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/engine/firebird/fbtest"
	"github.com/dblat/dblat/internal/engine/mariadb/mariadbtest"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/study"
)

// firstRun records when the first run of a study was stored as running.
type firstRun struct {
	infoLog
	once  sync.Once
	first time.Time
}

func (f *firstRun) RunStarted(*results.Run) { f.once.Do(func() { f.first = time.Now() }) }

func TestTemplateKey(t *testing.T) {
	base := map[string]string{"engine": "firebird", "dataset": "tpcc", "scale": "4", "seed": "1", "engine.page_size": "8192"}
	k := TemplateKey(base)
	if len(k) != 16 || TemplateKey(map[string]string{"seed": "1", "scale": "4", "engine": "firebird", "dataset": "tpcc", "engine.page_size": "8192"}) != k {
		t.Fatalf("key %q is not a stable hash of the fields", k)
	}
	for name, v := range map[string]string{"scale": "5", "engine.page_size": "16384", "seed": "2", "dataset": "pgbench", "engine": "postgres"} {
		f := map[string]string{}
		for k, v := range base {
			f[k] = v
		}
		f[name] = v
		if TemplateKey(f) == k {
			t.Errorf("another %s keeps the key", name)
		}
	}
}

// TestFirebirdTemplates: a Firebird study's first load is kept as a template; a second
// study on a server of its own with the same data restores it and starts its first run
// sooner than the first study, instead of loading; the template is listed and removed.
func TestFirebirdTemplates(t *testing.T) {
	t.Parallel()
	fbtest.Require(t)
	c, store := newCore(t)
	ctx := context.Background()
	run := func(name, warehouses, options string) (*firstRun, time.Time) {
		t.Helper()
		obs := &firstRun{}
		c.Observer = obs
		st, err := study.Parse(name+".yaml", []byte(`study: `+name+`
repeat: 1
server: {engine: firebird, settings: {ServerMode: Super}}
base: {workload: tpcc, warehouses: `+warehouses+`, terminals: 2, duration: 1s, warmup: 0s`+options+`}
`))
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if err := c.RunStudy(ctx, nil, st); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, obs.text())
		}
		runs, err := store.List(ctx, results.Filter{Study: name, Status: results.StatusFinished})
		if err != nil || len(runs) != 1 || runs[0].Summary.NOPM <= 0 {
			t.Fatalf("%s: runs %+v, %v\n%s", name, runs, err, obs.text())
		}
		return obs, start
	}
	first, firstStart := run("tpl-a", "1", "")
	if !strings.Contains(first.text(), "loaded 1 warehouses") || !strings.Contains(first.text(), "kept the loaded data as template") {
		t.Fatalf("first study did not load and keep a template:\n%s", first.text())
	}
	tpls, err := c.Templates()
	if err != nil || len(tpls) != 1 || tpls[0].Fields["scale"] != "1" || tpls[0].Fields["engine.PageSize"] != "8192" || tpls[0].Bytes == 0 {
		t.Fatalf("templates: %+v, %v", tpls, err)
	}
	second, start := run("tpl-b", "1", "")
	if strings.Contains(second.text(), "loaded 1") || !strings.Contains(second.text(), "from template "+tpls[0].Key) {
		t.Errorf("second study did not restore the template:\n%s", second.text())
	}
	// Both start a server of their own; the first then loads, the second copies a file.
	if d, loaded := second.first.Sub(start), first.first.Sub(firstStart); d >= loaded {
		t.Errorf("second study's first run started %v after study run, the first's %v after its load: want sooner:\n%s", d, loaded, second.text())
	}
	// Another scale is another key (TestTemplateKey; the page size is the engine's part of
	// it: firebird's TestTemplate), so it loads: the template of scale 1 is never taken.
	fields := tpls[0].Fields
	fields["scale"] = "2"
	if TemplateKey(fields) == tpls[0].Key {
		t.Fatal("scale 2 has scale 1's key")
	}
	if err := c.RemoveTemplate(tpls[0].Key); err != nil {
		t.Fatal(err)
	}
	if err := c.RemoveTemplate(tpls[0].Key); err == nil {
		t.Error("removing a removed template succeeded")
	}
	if left, _ := c.Templates(); len(left) != 0 {
		t.Errorf("%d templates after removing the only one, want 0", len(left))
	}
}

// TestMariaDBStudyRestores: a MariaDB study restores its pristine data before every run
// (between_runs: restore, which MariaDB lacked), so the orders table ends with the pristine
// orders plus the last run's only; a second study on a server of its own restores the kept
// template instead of loading. It logs what loading, keeping and restoring took.
func TestMariaDBStudyRestores(t *testing.T) {
	t.Parallel()
	mariadbtest.SkipIfMissing(t)
	c, store := newCore(t)
	ctx := context.Background()
	run := func(name string, repeat int) *firstRun {
		obs := &firstRun{}
		c.Observer = obs
		st, err := study.Parse(name+".yaml", []byte(fmt.Sprintf(`study: %s
repeat: %d
between_runs: restore
server: {engine: mariadb, settings: {innodb_buffer_pool_size: 128M}}
base: {workload: tpcc, warehouses: 1, terminals: 4, duration: 2s, warmup: 0s}
`, name, repeat)))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.RunStudy(ctx, nil, st); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, obs.text())
		}
		t.Logf("%s:\n%s", name, obs.text())
		return obs
	}
	first := run("maria-a", 3)
	if !strings.Contains(first.text(), "kept the loaded data as template") || !strings.Contains(first.text(), "saving a pristine copy") {
		t.Errorf("first study:\n%s", first.text())
	}
	runs, err := store.List(ctx, results.Filter{Study: "maria-a", Status: results.StatusFinished})
	if err != nil || len(runs) != 3 {
		t.Fatalf("%d finished runs, %v", len(runs), err)
	}
	var windowOrders int64
	for _, r := range runs {
		windowOrders += int64(r.Summary.NOPM * r.Summary.Elapsed.Minutes())
	}
	// Count the orders the last run left, and time a restore of the pristine copy.
	inst, err := c.Servers.Load("maria-a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.StartServer(ctx, "mariadb", "maria-a", 0, inst.Settings); err != nil {
		t.Fatal(err)
	}
	target, err := c.Resolve("maria-a")
	if err != nil {
		t.Fatal(err)
	}
	count := func() int64 {
		wt, err := target.Open(ctx, target.DSN, engine.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer closeDB(wt)
		var orders int64
		if err := wt.DB.QueryRowContext(ctx, "SELECT COUNT(*) FROM orders").Scan(&orders); err != nil {
			t.Fatal(err)
		}
		return orders
	}
	const pristine = 10 * 3000 // one warehouse: 10 districts of 3,000 orders (TPC-C 4.3.3.1)
	if orders := count(); orders <= pristine || orders-pristine >= windowOrders {
		t.Errorf("%d orders after the study: want the %d pristine ones plus the last run's, fewer than the %d new orders of all windows",
			orders, pristine, windowOrders)
	}
	start := time.Now()
	if err := engine.Caps(target.Engine).Restorer.RestorePristine(ctx, target.DSN); err != nil {
		t.Fatal(err)
	}
	t.Logf("restoring the pristine copy of 1 warehouse took %.1f s", time.Since(start).Seconds())
	if orders := count(); orders != pristine {
		t.Errorf("%d orders after a restore, want %d", orders, pristine)
	}
	if err := c.StopServer(ctx, "maria-a"); err != nil {
		t.Fatal(err)
	}
	second := run("maria-b", 1)
	if strings.Contains(second.text(), "loaded 1") || !strings.Contains(second.text(), "from template") {
		t.Errorf("second study did not restore the template:\n%s", second.text())
	}
}
