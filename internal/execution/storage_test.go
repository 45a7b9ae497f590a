package execution

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/dblat/dblat/internal/disturb"
	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
	"github.com/dblat/dblat/internal/managed"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/study"
)

const memoryStudy = `study: memory
server:
  engine: postgres
  storage: memory
repeat: 2
disturbed: rerun
reruns: 1
base:
  workload: tpcc
  warehouses: 1
  terminals: 2
  duration: 1s
  warmup: 300ms
  rtt: 0
factors:
  terminals: [1, 2]
`

// TestMemoryStudy: a study whose server keeps its data in memory runs on a data directory
// under MemoryRoot and says so in every run; its disturbed runs, if the machine disturbed
// any, are set aside with their evidence and their cells run again, at most reruns times,
// so that every cell ends with its repeats counted. Every run stores its signals.
func TestMemoryStudy(t *testing.T) {
	t.Parallel()
	pgtest.Server(t)
	c, store := newCore(t)
	st, err := study.Parse("memory.yaml", []byte(memoryStudy))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.RunStudy(ctx, nil, st); err != nil {
		t.Fatal(err)
	}
	inst, err := c.Servers.Load("memory")
	if err != nil {
		t.Fatal(err)
	}
	if inst.StorageOf() != managed.StorageMemory || !strings.HasPrefix(inst.DataDir, managed.MemoryRoot+"/") {
		t.Errorf("server kept its data %s in %q", inst.StorageOf(), inst.DataDir)
	}
	if target, err := os.Readlink(filepath.Join(inst.Dir, "data")); err != nil || target != inst.DataDir {
		t.Errorf("data links to %q (%v)", target, err)
	}
	runs, err := store.List(ctx, results.Filter{Study: "memory", Status: results.StatusFinished})
	if err != nil {
		t.Fatal(err)
	}
	counted, aside := map[string]int{}, map[string]int{}
	for i := range runs {
		r := &runs[i]
		if r.Params.Options[results.FactorStorage] != managed.StorageMemory {
			t.Errorf("run %d options %v: no server.storage memory", r.ID, r.Params.Options)
		}
		if r.SetAside != "" {
			aside[r.CellKey]++
			if !disturb.Disturbed(r) || !strings.Contains(r.SetAside, "rerun") {
				t.Errorf("run %d set aside (%q) with disturbances %+v", r.ID, r.SetAside, r.Disturbances)
			}
			continue
		}
		counted[r.CellKey]++
		full, err := store.Get(ctx, r.ID, true)
		if err != nil {
			t.Fatal(err)
		}
		if len(full.Signals) == 0 || full.Client.Pressure == nil {
			t.Errorf("run %d stored %d signals, pressure %v", r.ID, len(full.Signals), full.Client.Pressure)
		}
	}
	for _, cell := range st.Cells() {
		if counted[cell.Key] != 2 || aside[cell.Key] > 1 {
			t.Errorf("cell %s: %d counted, %d set aside; want 2 and at most 1", cell.Key, counted[cell.Key], aside[cell.Key])
		}
	}
}

// TestMemoryStudyTooLarge: a study whose data cannot live in memory is refused by its plan,
// at server.storage, before any server starts.
func TestMemoryStudyTooLarge(t *testing.T) {
	c, _ := newCore(t)
	st, err := study.Parse("memory.yaml", []byte(strings.Replace(memoryStudy, "warehouses: 1", "warehouses: 1000000", 1)))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Plan(context.Background(), st)
	if err == nil || !strings.Contains(err.Error(), "memory.yaml:4:") || !strings.Contains(err.Error(), "use storage: disk or a smaller scale") {
		t.Errorf("plan: %v", err)
	}
	if list, _ := c.Servers.List(); len(list) > 0 {
		t.Errorf("the plan started servers: %v", list)
	}
}

// TestClientProcs: a study's client_procs holds the Go runtime to that many threads for
// its runs, which record it, and gives the runtime back its own number at the end. (Not
// parallel: GOMAXPROCS is the whole test binary's.)
func TestClientProcs(t *testing.T) {
	pgtest.Server(t)
	c, store := newCore(t)
	src := strings.Replace(strings.Replace(memoryStudy, "repeat: 2", "repeat: 1\nclient_procs: 1", 1), "terminals: [1, 2]", "terminals: [1]", 1)
	st, err := study.Parse("procs.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	before := runtime.GOMAXPROCS(0)
	ctx := context.Background()
	if err := c.RunStudy(ctx, nil, st); err != nil {
		t.Fatal(err)
	}
	if after := runtime.GOMAXPROCS(0); after != before {
		t.Errorf("GOMAXPROCS %d after the study, %d before", after, before)
	}
	runs, err := store.List(ctx, results.Filter{Study: "memory"})
	if err != nil || len(runs) == 0 {
		t.Fatalf("%d runs, %v", len(runs), err)
	}
	for _, r := range runs {
		if r.Client.Procs != 1 {
			t.Errorf("run %d recorded %d procs, want 1", r.ID, r.Client.Procs)
		}
	}
}
