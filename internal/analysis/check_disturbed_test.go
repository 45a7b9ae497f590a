package analysis

import (
	"strings"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/disturb"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/spec"
)

// TestDisturbed: a run a study set aside is an info finding and leaves its cell's figures;
// a counted run that the host's disk disturbed is a warning that names it, and repeat
// variation says which run it was; the server's own checkpoint is an info finding; a
// machine without pressure information gets a note; quiet runs raise nothing.
func TestDisturbed(t *testing.T) {
	no := false
	mk := func(id int64, tps float64, ds []results.Disturbance, aside string) results.Run {
		r := results.Run{ID: id, Status: results.StatusFinished, SetAside: aside, Disturbances: ds,
			Params:  results.Params{Drive: spec.Drive{Terminals: 4, Duration: 5 * time.Second, Warmup: 10 * time.Second}, Workload: "select-only"},
			Summary: results.Summary{Metric: results.MetricTPS, Elapsed: 5 * time.Second, TPS: tps, Committed: int64(tps * 5)}}
		return r
	}
	disk := []results.Disturbance{{Cause: disturb.CauseDisk, From: 0, To: 1100 * time.Millisecond, Lost: time.Second,
		Evidence: "from 0.0 s to 1.1 s: IO pressure full 96 %"}}
	ckpt := []results.Disturbance{{Cause: disturb.CauseCheckpoint, From: time.Second, To: 2 * time.Second, Lost: 400 * time.Millisecond,
		Evidence: "from 1.0 s to 2.0 s: the server was writing a checkpoint"}}
	find := func(runs []results.Run) map[string][]Finding {
		m := map[string][]Finding{}
		for _, f := range Check(runs, CheckOptions{Factors: []string{"terminals"}}) {
			m[f.Rule] = append(m[f.Rule], f)
		}
		return m
	}

	quiet := []results.Run{mk(1, 550, nil, ""), mk(2, 548, nil, ""), mk(3, 552, nil, "")}
	if fs := find(quiet)[RuleDisturbed]; len(fs) > 0 {
		t.Errorf("quiet runs: %+v", fs)
	}

	aside := append(quiet[:2:2], mk(3, 300, disk, "the host's disk took 1 s of its 5 s window; set aside"), mk(4, 551, nil, ""))
	fs := find(aside)
	if d := fs[RuleDisturbed]; len(d) != 1 || d[0].Severity != Info || !strings.Contains(d[0].Evidence, "run 3") || len(d[0].Runs) != 1 || d[0].Runs[0] != 3 {
		t.Errorf("set aside: %+v", d)
	}
	if v := fs[RuleVariation]; len(v) > 0 {
		t.Errorf("the run set aside entered the cell's variation: %+v", v)
	}

	counted := append(quiet[:2:2], mk(3, 300, disk, ""))
	fs = find(counted)
	if d := fs[RuleDisturbed]; len(d) != 1 || d[0].Severity != Warning || !strings.Contains(d[0].Evidence, "the host's disk took 1s") {
		t.Errorf("counted: %+v", d)
	}
	if v := fs[RuleVariation]; len(v) != 1 || !strings.Contains(v[0].Evidence, "run 3: the host's disk took 1s") || !strings.Contains(v[0].Fix, "disturbed: rerun") {
		t.Errorf("variation: %+v", v)
	}

	own := append(quiet[:2:2], mk(3, 520, ckpt, ""))
	if d := find(own)[RuleDisturbed]; len(d) != 1 || d[0].Severity != Info || !strings.Contains(d[0].Message, "server's own work") {
		t.Errorf("checkpoint: %+v", d)
	}

	blind := []results.Run{mk(1, 550, nil, ""), mk(2, 549, nil, "")}
	blind[0].Client.Pressure = &no
	if d := find(blind)[RuleDisturbed]; len(d) != 1 || !strings.Contains(d[0].Message, "no pressure stall information") {
		t.Errorf("no pressure information: %+v", d)
	}
}
