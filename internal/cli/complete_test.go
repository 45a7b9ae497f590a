package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dblat/dblat/internal/managed"
	"github.com/dblat/dblat/internal/results"
)

// TestShellCompletion: Tab completes what only dblat knows — the managed servers for
// --target and `server stop`, the stored studies for report, analyze, check study, study
// status|resume and --study — through cobra's __complete, as a shell asks. Without a
// results file, completing a study offers nothing and creates no file.
func TestShellCompletion(t *testing.T) {
	e := newEnv(t)
	complete := func(args ...string) []string {
		t.Helper()
		code, out, errs := e.run(append([]string{"__complete"}, args...)...)
		if code != 0 {
			t.Fatalf("__complete %s: exit %d\n%s", strings.Join(args, " "), code, errs)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		return lines[:len(lines)-1] // the last line is cobra's directive
	}
	has := func(args []string, want string) {
		t.Helper()
		got := complete(args...)
		for _, c := range got {
			if strings.HasPrefix(c, want) {
				return
			}
		}
		t.Errorf("dblat %s<Tab>: %q, want %s among them", strings.Join(args, " "), got, want)
	}

	if got := complete("report", ""); len(got) != 0 {
		t.Errorf("report <Tab> without a results store: %q", got)
	}
	if _, err := os.Stat(e.resultsPath()); !os.IsNotExist(err) {
		t.Errorf("completion created the results store (%v)", err)
	}

	reg := managed.Registry{Root: filepath.Join(e.dir, "state")}
	inst := &managed.Instance{Name: "pg1", Engine: "postgres", Dir: reg.Dir("pg1")}
	if err := os.MkdirAll(inst.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := reg.Save(inst); err != nil {
		t.Fatal(err)
	}
	store, err := results.Open(context.Background(), e.resultsPath())
	if err != nil {
		t.Fatal(err)
	}
	if err := store.SaveStudy(context.Background(), results.Study{Name: "latency-study", File: "latency.yaml", Source: "study: latency-study\n"}); err != nil {
		t.Fatal(err)
	}
	store.Close()

	for _, args := range [][]string{{"run", "tpcc", "--target", ""}, {"run", "simple", "ping", "--target", ""}, {"load", "tpcc", "--target", ""},
		{"check", "tpcc", "--target", ""}, {"server", "stop", ""}, {"server", "stop", "--name", ""}} {
		has(args, "pg1\tpostgres, stopped")
	}
	for _, args := range [][]string{{"report", ""}, {"analyze", ""}, {"check", "study", ""}, {"study", "status", ""}, {"study", "resume", ""},
		{"results", "export", "--study", ""}, {"results", "list", "--study", ""}, {"results", "diff", ""}} {
		has(args, "latency-study")
	}
	has([]string{"server", "start", ""}, "postgres")
	if got := complete("report", "latency-study", ""); len(got) != 0 {
		t.Errorf("report takes one study: %q after it", got)
	}
	if got := complete("server", "stop", "pg1", ""); len(got) != 0 {
		t.Errorf("server stop pg1 <Tab> offers pg1 again: %q", got)
	}
}
