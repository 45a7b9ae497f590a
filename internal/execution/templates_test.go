package execution

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/engine/firebird/fbtest"
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
// within 10 s of being started, instead of loading; another scale or page size never
// reuses it; `server templates` lists and removes them.
func TestFirebirdTemplates(t *testing.T) {
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
	first, _ := run("tpl-a", "1", "")
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
	if d := second.first.Sub(start); d > 10*time.Second {
		t.Errorf("second study's first run started %v after study run, want within 10 s:\n%s", d, second.text())
	}
	// Another scale, another page size: loaded, never restored from the first template.
	for _, tc := range []struct{ name, warehouses, options string }{
		{"tpl-scale", "2", ""},
		{"tpl-page", "1", ", options: {page_size: 16384}"},
	} {
		obs, _ := run(tc.name, tc.warehouses, tc.options)
		if strings.Contains(obs.text(), "from template") || !strings.Contains(obs.text(), "loaded "+tc.warehouses+" warehouses") {
			t.Errorf("%s reused a template:\n%s", tc.name, obs.text())
		}
	}
	if tpls, err = c.Templates(); err != nil || len(tpls) != 3 {
		t.Fatalf("templates after 3 loads: %+v, %v", tpls, err)
	}
	if err := c.RemoveTemplate(tpls[0].Key); err != nil {
		t.Fatal(err)
	}
	if err := c.RemoveTemplate(tpls[0].Key); err == nil {
		t.Error("removing a removed template succeeded")
	}
	if left, _ := c.Templates(); len(left) != 2 {
		t.Errorf("%d templates after removing one, want 2", len(left))
	}
}
