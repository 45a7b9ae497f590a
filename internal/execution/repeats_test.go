package execution

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/study"
)

// infoLog records what a Core reports.
type infoLog struct {
	NopObserver
	mu    sync.Mutex
	lines []string
}

func (l *infoLog) Info(msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, msg)
}

func (l *infoLog) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// TestAdaptiveStudy runs a study of sequential repeats on a real server three times: with a
// loose precision each cell stops where the rule says; tightened, each gets one more round,
// where the maximum stops it, and the end names the cells that missed; with more repeats
// allowed and a budget too small for a run, it stops at once and says what each cell needs.
// Then a study with an automatic warm-up runs on the same server.
func TestAdaptiveStudy(t *testing.T) {
	t.Parallel()
	pgtest.Server(t)
	c, store := newCore(t)
	log := &infoLog{}
	c.Observer = log
	src := func(repeat, precision, budget string) *study.Study {
		st, err := study.Parse("adaptive.yaml", []byte(`study: adaptive
repeat: `+repeat+`
precision: `+precision+`
`+budget+`
server: {engine: postgres, settings: {shared_buffers: 32MB}}
base: {workload: select-only, warehouses: 1, duration: 1s, warmup: 0s}
factors:
  terminals: [1, 2]
`))
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	ctx := context.Background()
	perCell := func() map[string]int {
		runs, err := store.List(ctx, results.Filter{Study: "adaptive", Status: results.StatusFinished})
		if err != nil {
			t.Fatal(err)
		}
		n := map[string]int{}
		for _, r := range runs {
			n[r.CellKey]++
		}
		return n
	}
	// ±99 % after two runs: t(1)·s/√2 = 9·s, so runs within about 11 % of each other stop
	// at two; a busy machine may need the third for some cell. Each cell must stop exactly
	// where the rule says, from what its runs measured.
	st := src("2..3", "99%", "")
	if err := c.RunStudy(ctx, nil, st); err != nil {
		t.Fatal(err)
	}
	progress, _, err := Progress(ctx, store, st)
	if err != nil {
		t.Fatal(err)
	}
	missing := 0
	for k, p := range progress {
		want := 3
		if st.Precise(study.IntervalOf(p.Values[:2])) {
			want = 2
		}
		if p.Done != want {
			t.Errorf("loose precision: cell %s has runs %v, want %d\n%s", k, p.Values, want, log.text())
		}
		missing += 3 - p.Done
	}
	// Plan now expects from each cell's own runs, and knows nothing remains.
	sp, err := c.Plan(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if len(sp.Runs) != 0 || sp.Expect[sp.Cells[0].Key].Basis != BasisCell || sp.Metric != results.MetricTPS {
		t.Errorf("plan after: %d runs, expectation %+v, metric %s", len(sp.Runs), sp.Expect[sp.Cells[0].Key], sp.Metric)
	}
	// A precision no run meets: one more round each, up to the maximum, and a shortfall.
	st = src("2..3", "0.001%", "")
	if sp, err := c.Plan(ctx, st); err != nil || len(sp.Runs) != missing || sp.AtMost != missing || sp.Expected != missing {
		t.Fatalf("plan of the tightened study: %+v %v", sp, err)
	}
	phase := len(log.lines)
	if err := c.RunStudy(ctx, nil, st); err != nil {
		t.Fatal(err)
	}
	for k, n := range perCell() {
		if n != 3 {
			t.Errorf("tight precision: cell %s has %d runs, want the maximum 3", k, n)
		}
	}
	if got := strings.Count(strings.Join(log.lines[phase:], "\n"), "missed its precision"); got != 2 {
		t.Errorf("%d cells reported as missing their precision, want 2:\n%s", got, log.text())
	}
	// A budget too small for one run: nothing runs, and the study says what is missing.
	st = src("2..5", "0.001%", "budget: 1s")
	before := len(log.lines)
	if err := c.RunStudy(ctx, nil, st); err != nil {
		t.Fatal(err)
	}
	out := strings.Join(log.lines[before:], "\n")
	if !strings.Contains(out, "budget of 1s is spent") || strings.Count(out, "missed its precision") != 2 {
		t.Errorf("budget's end:\n%s", out)
	}
	for k, n := range perCell() {
		if n != 3 {
			t.Errorf("after the budget: cell %s has %d runs, want still 3", k, n)
		}
	}
	// An automatic warm-up on the same server (its data already loaded): the run has the
	// warm-up the steady-state rule chose, at least its minimum and at most the ceiling,
	// stored with the run, which keeps the request (auto, its ceiling) as its parameters and
	// its cell key.
	st, err = study.Parse("auto.yaml", []byte(`study: auto
repeat: 1
server: {engine: postgres, name: adaptive, settings: {shared_buffers: 32MB}}
base: {workload: select-only, warehouses: 1, terminals: 2, duration: 1s, warmup: auto 15s}
`))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.RunStudy(ctx, nil, st); err != nil {
		t.Fatal(err)
	}
	runs, err := store.List(ctx, results.Filter{Study: "auto"})
	if err != nil || len(runs) != 1 {
		t.Fatalf("%d runs, %v", len(runs), err)
	}
	r := runs[0]
	if r.Status != results.StatusFinished || !r.Params.WarmupAuto || r.Params.Warmup != 15*time.Second ||
		r.Summary.Warmup < 5*time.Second || r.Summary.Warmup > 15*time.Second+500*time.Millisecond {
		t.Errorf("run %d: %s, warm-up auto %v ceiling %v, had %v", r.ID, r.Status, r.Params.WarmupAuto, r.Params.Warmup, r.Summary.Warmup)
	}
	if got := results.FactorValue(&r, results.FactorWarmup); got != "auto 15s" || r.CellKey != st.Cells()[0].Key {
		t.Errorf("warmup stored as %q, cell %s (want %s)", got, r.CellKey, st.Cells()[0].Key)
	}
}
