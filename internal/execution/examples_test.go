package execution

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dblat/dblat/examples"

	_ "github.com/dblat/dblat/internal/engine/all"
	"github.com/dblat/dblat/internal/managed"
	"github.com/dblat/dblat/internal/study"
	_ "github.com/dblat/dblat/internal/workload/all"
)

// TestVersionExamplePlans plans examples/pg-versions.yaml as `dblat study plan` does, on a
// fresh state directory where none of its versions is fetched yet: the plan succeeds and
// says that `study run` will fetch them, so that the example plans on any machine.
func TestVersionExamplePlans(t *testing.T) {
	st, err := study.Load(filepath.Join("..", "..", "examples", "pg-versions.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	c, _ := newCore(t)
	sp, err := c.Plan(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	if len(sp.Runs) != 30 || sp.Restarts != 15 {
		t.Errorf("%d runs, %d server starts; want 30 and 15 (3 versions × 5 rounds)", len(sp.Runs), sp.Restarts)
	}
	all := strings.Join(sp.Notes, "\n")
	for _, v := range []string{"13", "15", "17"} {
		if !strings.Contains(all, "dblat server install postgres "+v) {
			t.Errorf("no note that version %s will be fetched: %q", v, sp.Notes)
		}
	}
}

// TestVersionPlanErrors: versions that cannot be had are refused at plan time, at their
// place in the study file.
func TestVersionPlanErrors(t *testing.T) {
	c, _ := newCore(t)
	for _, tc := range []struct{ src, want string }{
		{"study: v\nserver: {engine: postgres}\nfactors:\n  server.version: [13, 9]\n",
			"v.yaml:4:3: postgres 9 is not installed, and dblat fetches versions 13, 14, 15, 16, 17, 18"},
		{"study: v\nbetween_runs: keep\nserver: {engine: firebird, version: 4}\n",
			"v.yaml:3:28: dblat cannot fetch firebird versions: unpack the version yourself and give its directory with --install DIR"},
		{"study: v\nserver: {engine: postgres, install: /nonexistent}\n",
			"v.yaml:2:28: installation /nonexistent: no initdb and postgres there"},
	} {
		st, err := study.Parse("v.yaml", []byte(tc.src))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Plan(context.Background(), st); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("plan error %v, want %q", err, tc.want)
		}
	}
}

// TestServerNames: each level of a version or installation factor runs on a server of its
// own, named after the study's server; installations with the same base name differ.
func TestServerNames(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"study: v\nserver: {engine: postgres}\nfactors:\n  server.version: [13]\n", "v-13"},
		{"study: v\nserver: {engine: postgres, version: 13}\n", "v"},
		{"study: v\nserver: {engine: firebird, name: fb}\nfactors:\n  server.install: [/opt/a/firebird]\n", "fb-firebird-"},
	} {
		st, err := study.Parse("v.yaml", []byte(tc.src))
		if err != nil {
			t.Fatal(err)
		}
		sr := &studyRun{st: st}
		name := sr.serverName(st.Cells()[0].Params)
		if !strings.HasPrefix(name, tc.want) || (!strings.HasSuffix(tc.want, "-") && name != tc.want) {
			t.Errorf("server name %q, want %q", name, tc.want)
		}
	}
	if installSuffix("/opt/a/firebird") == installSuffix("/opt/b/firebird") {
		t.Error("two installations with one base name get one server")
	}
}

// TestExamplesPlan plans every study file shipped in examples/, and the embedded
// quickstart, as `dblat study plan` does: what ships must plan as shipped, with every
// problem that can be known before a server starts reported here rather than by a run.
func TestExamplesPlan(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "examples", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no example study files: %v", err)
	}
	c, _ := newCore(t)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			st, err := study.Load(f)
			if err != nil {
				t.Fatal(err)
			}
			sp, err := c.Plan(context.Background(), st)
			if why := managed.CanLimitMemory(); why != nil && usesMemoryLimit(st) {
				// A host that cannot limit a server's memory refuses the study with why.
				if err == nil || !strings.Contains(err.Error(), why.Error()) {
					t.Errorf("plan on a host that cannot limit memory: %v, want %q", err, why)
				}
				return
			}
			if err != nil {
				t.Fatal(strings.ReplaceAll(err.Error(), "\n", "\n\t"))
			}
			// An adaptive study knows its minimum runs; a fixed one all of them.
			if len(sp.Runs) != len(sp.Cells)*st.RepeatMin || sp.Estimate <= 0 {
				t.Errorf("plan of %s: %d runs for %d cells × %d, estimate %v", f, len(sp.Runs), len(sp.Cells), st.RepeatMin, sp.Estimate)
			}
			if st.Adaptive() && (sp.AtLeast != len(sp.Runs) || sp.AtMost != len(sp.Cells)*st.Repeat ||
				sp.Expected < sp.AtLeast || sp.Expected > sp.AtMost || sp.ExpectedEstimate < sp.Estimate) {
				t.Errorf("plan of %s: expected %d runs in %v, between %d and %d", f, sp.Expected, sp.ExpectedEstimate, sp.AtLeast, sp.AtMost)
			}
		})
	}
	embedded, err := os.ReadFile(filepath.Join("..", "..", "examples", "quickstart.yaml"))
	if err != nil || string(embedded) != string(examples.Quickstart) {
		t.Errorf("the embedded quickstart differs from examples/quickstart.yaml (%v)", err)
	}
}

// usesMemoryLimit reports whether a cell of st runs its managed server under a memory
// limit.
func usesMemoryLimit(st *study.Study) bool {
	for _, c := range st.Cells() {
		if c.Params.Memory != "" && c.Params.Memory != managed.MemoryNone {
			return true
		}
	}
	return false
}
