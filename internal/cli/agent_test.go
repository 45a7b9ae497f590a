package cli_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
	"github.com/dblat/dblat/internal/results"
)

// syncBuffer is a bytes.Buffer a child process and the test may use at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// child starts dblat as a separate process (this test binary, see TestMain).
func (e *env) child(t *testing.T, args ...string) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "DBLAT_CLI_CHILD=1", "DBLAT_STATE="+filepath.Join(e.dir, "state"))
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			done := make(chan struct{})
			go func() { _ = cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				<-done
			}
		}
	})
	return cmd, out
}

// TestAgentsDriveOneRun: three agent processes and a coordinator against one PostgreSQL
// target and one PostgreSQL results store. The merged run's counts are the sums of its
// parts', its histograms the merge of theirs, and the TPC-C database is consistent after
// it. Killing one agent mid-run fails that run with the agent's name; the next run, asking
// for two agents, succeeds with the two left, each on its own home warehouse.
func TestAgentsDriveOneRun(t *testing.T) {
	t.Parallel()
	target := pgtest.NewDatabase(t)
	storeDSN := pgtest.NewDatabase(t)
	e := newEnv(t)
	e.must("load", "tpcc", "--target", target, "--warehouses", "2")
	agents := map[string]*exec.Cmd{}
	outs := map[string]*syncBuffer{}
	for _, name := range []string{"a1", "a2", "a3"} {
		agents[name], outs[name] = e.child(t, "--results", storeDSN, "--no-cpu-latency-hold", "agent", "--name", name)
	}
	ctx := context.Background()
	store, err := results.Open(ctx, storeDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	logs := func() string {
		var b strings.Builder
		for name, o := range outs {
			b.WriteString("--- agent " + name + ":\n" + o.String())
		}
		return b.String()
	}

	// 1. Three agents, two terminals each.
	code, stdout, stderr := e.run("--results", storeDSN, "--no-cpu-latency-hold", "run", "tpcc", "--target", target,
		"--terminals", "6", "--duration", "3s", "--warmup", "1s", "--agents", "3", "--agents-wait", "30s")
	if code != 0 {
		t.Fatalf("coordinator: exit %d\n%s\n%s\n%s", code, stdout, stderr, logs())
	}
	runs, err := store.List(ctx, results.Filter{Limit: 1})
	if err != nil || len(runs) != 1 {
		t.Fatalf("List: %v, %v", runs, err)
	}
	run, err := store.Get(ctx, runs[0].ID, true)
	if err != nil {
		t.Fatal(err)
	}
	parts, err := store.Parts(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != results.StatusFinished || run.Agents != 3 || len(parts) != 3 {
		t.Fatalf("run %d: %s (%s), %d agents, %d parts", run.ID, run.Status, run.Reason, run.Agents, len(parts))
	}
	checkMerged(t, run, parts)
	t.Logf("3 agents: %d committed, start skew %v, offsets %v %v %v", run.Summary.Committed, run.StartSkew,
		parts[0].ClockOffset, parts[1].ClockOffset, parts[2].ClockOffset)
	// The merged run is a run like any other, and shows what each agent measured.
	out := e.must("--results", storeDSN, "results", "show", itoa(run.ID))
	if !strings.Contains(out, "new_order") {
		t.Errorf("results show of the merged run lacks its transactions:\n%s", out)
	}
	for _, p := range parts {
		line := fmt.Sprintf("%s  done  %d  %d", p.Agent, p.Result.Params.Terminals, p.Result.Summary.Committed)
		if !strings.Contains(strings.Join(strings.Fields(out), "  "), line) {
			t.Errorf("results show lacks agent %s's line (%q):\n%s", p.Agent, line, out)
		}
	}
	e.must("check", "tpcc", "--target", target)

	// 2. Kill an agent mid-run: the run fails naming it.
	coord, coordOut := e.child(t, "--results", storeDSN, "--no-cpu-latency-hold", "run", "tpcc", "--target", target,
		"--terminals", "6", "--duration", "20s", "--warmup", "0s", "--agents", "3", "--agents-wait", "30s")
	waitFor(t, 30*time.Second, func() bool {
		rs, err := store.List(ctx, results.Filter{Limit: 1})
		if err != nil || len(rs) == 0 || rs[0].ID == run.ID {
			return false
		}
		ps, err := store.Parts(ctx, rs[0].ID)
		return err == nil && len(ps) == 3 && ps[2].State == results.PartRunning
	}, func() string { return coordOut.String() + logs() })
	victim := parts[2].Agent
	if err := agents[victim].Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = agents[victim].Wait()
	err = coord.Wait()
	if err == nil || !strings.Contains(coordOut.String(), "agent "+victim) {
		t.Fatalf("coordinator after killing agent %s: %v\n%s", victim, err, coordOut.String())
	}
	failed, err := store.List(ctx, results.Filter{Limit: 1})
	if err != nil || failed[0].Status != results.StatusFailed || !strings.Contains(failed[0].Reason, "agent "+victim) {
		t.Fatalf("the run with a killed agent: %+v, %v", failed, err)
	}
	t.Logf("killed agent: run %d %s: %s", failed[0].ID, failed[0].Status, failed[0].Reason)

	// 3. Two agents left, two warehouses: each agent gets one as its terminals' home.
	code, stdout, stderr = e.run("--results", storeDSN, "--no-cpu-latency-hold", "run", "tpcc", "--target", target,
		"--terminals", "4", "--duration", "2s", "--warmup", "0s", "--agents", "2", "--agents-wait", "30s")
	if code != 0 {
		t.Fatalf("coordinator with the agents left: exit %d\n%s\n%s\n%s", code, stdout, stderr, logs())
	}
	runs, _ = store.List(ctx, results.Filter{Limit: 1})
	run, err = store.Get(ctx, runs[0].ID, true)
	if err != nil {
		t.Fatal(err)
	}
	parts, _ = store.Parts(ctx, run.ID)
	if run.Status != results.StatusFinished || len(parts) != 2 {
		t.Fatalf("run %d after the kill: %s (%s), %d parts", run.ID, run.Status, run.Reason, len(parts))
	}
	for i, p := range parts {
		if p.Agent == victim {
			t.Errorf("the killed agent %s got a part", victim)
		}
		if got, want := p.Result.Params.Options["home-warehouses"], itoa(int64(i+1))+"-"+itoa(int64(i+1)); got != want {
			t.Errorf("part %d: home warehouses %q, want %q", i, got, want)
		}
	}
	checkMerged(t, run, parts)
	e.must("check", "tpcc", "--target", target)

	// 4. A study whose runs are driven by agents: its report is built like any other.
	file := filepath.Join(e.dir, "agents.yaml")
	src := "study: agents-study\ntarget: " + target + "\nagents: 2\nrepeat: 1\nbetween_runs: keep\n" +
		"base: {workload: tpcc, warehouses: 2, terminals: 4, duration: 2s, warmup: 0s}\n"
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := e.run("--results", storeDSN, "--no-cpu-latency-hold", "study", "run", file, "-o", filepath.Join(e.dir, "agents-study.html")); code != 0 {
		t.Fatalf("study with agents: exit %d\n%s\n%s\n%s", code, stdout, stderr, logs())
	}
	studyRuns, err := store.List(ctx, results.Filter{Study: "agents-study"})
	if err != nil || len(studyRuns) != 1 || studyRuns[0].Agents != 2 || studyRuns[0].Status != results.StatusFinished {
		t.Fatalf("the study's runs: %+v, %v", studyRuns, err)
	}
	if out := e.must("--results", storeDSN, "report", "agents-study", "--format", "text"); !strings.Contains(out, "NOPM") {
		t.Errorf("the report of a study run by agents lacks its headline:\n%s", out)
	}
	// Its HTML has a row for each agent's part.
	html := e.must("--results", storeDSN, "report", "agents-study", "--format", "html")
	studyParts, _ := store.Parts(ctx, studyRuns[0].ID)
	for _, p := range studyParts {
		if !strings.Contains(html, `<td class="name">`+p.Agent+"</td><td>done</td>") {
			t.Errorf("the study's HTML report has no row for agent %s", p.Agent)
		}
	}
}

// checkMerged checks a merged run against its parts: counts summed, histograms merged.
func checkMerged(t *testing.T, run *results.Run, parts []results.Part) {
	t.Helper()
	var committed, rollbacks int64
	byType := map[string]int64{}
	hists := map[string][]string{}
	for _, p := range parts {
		if p.State != results.PartDone || p.Result == nil {
			t.Fatalf("part %d (%s) is %s", p.Index, p.Agent, p.State)
		}
		committed += p.Result.Summary.Committed
		rollbacks += p.Result.Summary.Rollbacks
		for _, tx := range p.Result.Tx {
			byType[tx.Type] += tx.Committed
			if tx.Hist != "" {
				hists[tx.Type] = append(hists[tx.Type], tx.Hist)
			}
		}
		if p.Started.IsZero() || p.StartAt.IsZero() {
			t.Errorf("part %d: start %v, announced %v", p.Index, p.Started, p.StartAt)
		}
	}
	if committed == 0 || run.Summary.Committed != committed || run.Summary.Rollbacks != rollbacks {
		t.Errorf("merged run: %d committed, %d rolled back; parts: %d, %d", run.Summary.Committed, run.Summary.Rollbacks, committed, rollbacks)
	}
	for _, tx := range run.Tx {
		if tx.Committed != byType[tx.Type] {
			t.Errorf("%s: %d committed, parts %d", tx.Type, tx.Committed, byType[tx.Type])
		}
		if tx.Hist == "" {
			continue
		}
		merged, err := results.DecodeHist(tx.Hist)
		if err != nil {
			t.Fatal(err)
		}
		sum, err := results.DecodeHist(hists[tx.Type][0])
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hists[tx.Type][1:] {
			d, err := results.DecodeHist(h)
			if err != nil {
				t.Fatal(err)
			}
			sum.Merge(d)
		}
		if !merged.Equals(sum) || merged.TotalCount() == 0 {
			t.Errorf("%s: the stored histogram (%d values) is not the merge of the parts' (%d)", tx.Type, merged.TotalCount(), sum.TotalCount())
		}
	}
	var sampled int64
	for _, s := range run.Samples {
		if s.Type == "" && s.Offset > 0 {
			sampled += s.Committed
		}
	}
	if sampled == 0 {
		t.Errorf("the merged run has no samples in its window: %+v", run.Samples)
	}
}

func waitFor(t *testing.T, limit time.Duration, cond func() bool, diag func() string) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not reached within %v\n%s", limit, diag())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
