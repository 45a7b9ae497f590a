package analysis

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	// The engines register their Comparison, which the checks read.
	_ "github.com/dblat/dblat/internal/engine/all"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/spec"
)

// cleanStudy is a clean 2 RTT × 2 terminals study with five repeats: ids 1–20, cell
// "rtt=1ms terminals=8" holds ids 2, 6, 10, 14, 18.
func cleanStudy() []results.Run {
	return study([]time.Duration{0, ms}, []int{8, 16}, func(n int, r time.Duration) float64 { return modelX(n, r, 0) })
}

var cleanOpt = CheckOptions{Factors: factorsRT}

// only returns the findings of rule.
func only(fs []Finding, rule string) []Finding {
	var out []Finding
	for _, f := range fs {
		if f.Rule == rule {
			out = append(out, f)
		}
	}
	return out
}

// expect checks that fs holds exactly one finding of rule, with severity sev, the runs
// want, and a message containing each of msg; it returns the finding.
func expect(t *testing.T, fs []Finding, rule string, sev Severity, want []int64, msg ...string) Finding {
	t.Helper()
	got := only(fs, rule)
	if len(got) != 1 {
		t.Fatalf("%s: %d findings, want 1: %+v", rule, len(got), fs)
	}
	f := got[0]
	if f.Severity != sev || !slices.Equal(f.Runs, want) {
		t.Errorf("%s: severity %s runs %v, want %s %v (%s; %s)", rule, f.Severity, f.Runs, sev, want, f.Message, f.Evidence)
	}
	for _, m := range msg {
		if !strings.Contains(f.Message+" "+f.Evidence, m) {
			t.Errorf("%s: %q not in %q / %q", rule, m, f.Message, f.Evidence)
		}
	}
	if f.Fix == "" {
		t.Errorf("%s: no fix", rule)
	}
	return f
}

func TestCheckCleanStudy(t *testing.T) {
	if fs := Check(cleanStudy(), cleanOpt); len(fs) != 0 {
		t.Errorf("clean study: %+v", fs)
	}
	if HasErrors(nil) {
		t.Error("HasErrors(nil)")
	}
}

// TestCheckPlanted plants one problem per case in the clean study and expects exactly the
// findings it causes.
func TestCheckPlanted(t *testing.T) {
	cases := []struct {
		name  string
		opt   CheckOptions
		plant func(runs []results.Run) []results.Run
		rule  string
		sev   Severity
		runs  []int64
		msg   []string
	}{
		{name: "page size differs (seed 002)", rule: RuleMixedSettings, sev: Error, runs: []int64{7},
			msg: []string{"block_size differs", `"16384" in 1 run (7)`},
			plant: func(runs []results.Run) []results.Run {
				byID(runs, 7).Server.Settings["block_size"] = "16384"
				return runs
			}},
		{name: "32 against 64 bit", rule: RuleMixedServer, sev: Error, runs: []int64{3, 4},
			msg: []string{"server version differs", "32- against 64-bit"},
			plant: func(runs []results.Run) []results.Run {
				for _, id := range []int64{3, 4} {
					byID(runs, id).Server.Version = "PostgreSQL 15.18 on i686-pc-linux-gnu, 32-bit"
				}
				return runs
			}},
		{name: "version confounded with rtt", rule: RuleMixedServer, sev: Error,
			runs: ids(cleanStudy(), func(*results.Run) bool { return true }), // a tie: no odd group
			msg:  []string{"server version differs"},
			plant: func(runs []results.Run) []results.Run {
				for i := range runs {
					if runs[i].Params.RTT == ms {
						runs[i].Server.Version = "PostgreSQL 16.4"
					}
				}
				return runs
			}},
		{name: "client CPU", rule: RuleMixedClient, sev: Error, runs: []int64{20},
			msg: []string{"client CPU differs"},
			plant: func(runs []results.Run) []results.Run {
				byID(runs, 20).Client.CPUModel = "Xeon"
				return runs
			}},
		{name: "CPU latency hold in some runs only", rule: RuleMixedClient, sev: Error, runs: []int64{3},
			msg: []string{"CPU latency hold", "differs"},
			plant: func(runs []results.Run) []results.Run {
				byID(runs, 3).Client.CPULatencyHold = true
				return runs
			}},
		// 20 releases each way, up to 5 ms late: the mean is known to ± √((5000 − 10)·(10 +
		// 250)/20) = 255 µs up and √((5000 − 15)·(15 + 250)/20) = 257 µs down.
		{name: "achieved RTT uncertain", rule: RuleRTTUncertain, sev: Error, runs: []int64{7},
			msg: []string{"run 7: rtt", "± 512µs (release lateness p50/mean/p90/max up 5µs/10µs/150µs/5ms of 20, down 5µs/15µs/240µs/5ms of 20"},
			plant: func(runs []results.Run) []results.Run {
				r := byID(runs, 7)
				r.Link.LatenessUp = &results.Lateness{N: 20, Mean: 10 * time.Microsecond, P50: 5 * time.Microsecond, P90: 150 * time.Microsecond, P99: 300 * time.Microsecond, Max: 5 * time.Millisecond}
				r.Link.LatenessDown = &results.Lateness{N: 20, Mean: 15 * time.Microsecond, P50: 5 * time.Microsecond, P90: 240 * time.Microsecond, P99: 500 * time.Microsecond, Max: 5 * time.Millisecond}
				for _, other := range runs {
					if other.ID != 7 && other.Link != nil {
						byID(runs, other.ID).Link.LatenessUp = &results.Lateness{N: 1000, P50: 5 * time.Microsecond, P90: 7 * time.Microsecond}
					}
				}
				return runs
			}},
		{name: "late but steady: placed at the RTT achieved", rule: RuleRTT, sev: Info, runs: []int64{7},
			msg: []string{"achieved", "place these runs at the RTT achieved"},
			plant: func(runs []results.Run) []results.Run {
				r := byID(runs, 7)
				r.Link.LatenessUp = &results.Lateness{N: 1000, P50: 90 * time.Microsecond, P90: 95 * time.Microsecond}
				r.Link.LatenessDown = &results.Lateness{N: 1000, P50: 90 * time.Microsecond, P90: 96 * time.Microsecond}
				return runs
			}},
		{name: "link timing takes a CPU", rule: RuleLinkCPU, sev: Warning, runs: []int64{8},
			msg: []string{"run 8:", "CPUs", "per transaction"},
			plant: func(runs []results.Run) []results.Run {
				r := byID(runs, 8)
				r.Link.CPUSeconds = 0.9 * r.Summary.Elapsed.Seconds()
				return runs
			}},
		{name: "GOMAXPROCS in some runs only", rule: RuleMixedClient, sev: Warning, runs: []int64{5},
			msg: []string{"Go runtime threads", "differs"},
			plant: func(runs []results.Run) []results.Run {
				for i := range runs {
					runs[i].Client.Procs = 16
				}
				r := byID(runs, 5)
				r.Client.Procs, r.Client.CPUSeconds = 1, 6 // 10 % of its one thread
				return runs
			}},
		{name: "dblat version", rule: RuleMixedClient, sev: Warning, runs: []int64{1},
			msg: []string{"dblat version differs"},
			plant: func(runs []results.Run) []results.Run {
				byID(runs, 1).Client.DblatVersion = "v0.2.9"
				return runs
			}},
		{name: "warehouses", rule: RuleMixedParams, sev: Error, runs: []int64{5},
			msg: []string{"warehouses differs", "dataset size"},
			plant: func(runs []results.Run) []results.Run {
				byID(runs, 5).Params.Scale = 100
				return runs
			}},
		{name: "seed", rule: RuleMixedParams, sev: Warning, runs: []int64{5},
			msg: []string{"seed differs"},
			plant: func(runs []results.Run) []results.Run {
				byID(runs, 5).Params.Seed = 2
				return runs
			}},
		{name: "no link at rtt 0", rule: RuleMixedParams, sev: Error,
			runs: ids(cleanStudy(), func(*results.Run) bool { return true }),
			msg:  []string{"link differs", `"none" in 10 runs`},
			plant: func(runs []results.Run) []results.Run {
				for i := range runs {
					if runs[i].Params.RTT == 0 {
						runs[i].Link = nil
					}
				}
				return runs
			}},
		{name: "requested setting changed between repeats", rule: RuleMixedParams, sev: Error, runs: []int64{9},
			msg: []string{"requested set.shared_buffers differs"},
			plant: func(runs []results.Run) []results.Run {
				byID(runs, 9).Params.Options["set.shared_buffers"] = "2GB"
				byID(runs, 9).Server.Settings["shared_buffers"] = "262144 8kB"
				return runs
			}},
		{name: "page size clamped", rule: RuleSettingNotApplied, sev: Error,
			runs: ids(cleanStudy(), func(*results.Run) bool { return true }),
			msg:  []string{"PageSize was asked as 32768 but read back as 16384", "silently clamps"},
			plant: func(runs []results.Run) []results.Run {
				for i := range runs {
					fbRun(&runs[i], "Super", "16384", "2048")
					runs[i].Params.Options["set.PageSize"] = "32768"
				}
				return runs
			}},
		{name: "buffers from the header", rule: RuleSettingNotApplied, sev: Error,
			runs: ids(cleanStudy(), func(*results.Run) bool { return true }),
			msg:  []string{"DefaultDbCachePages was asked as 4096 but read back as 8192", "gfix -buffers"},
			plant: func(runs []results.Run) []results.Run {
				for i := range runs {
					fbRun(&runs[i], "Super", "8192", "8192")
					runs[i].Params.Options["set.DefaultDbCachePages"] = "4096"
				}
				return runs
			}},
		{name: "classic with 5000 buffers (seed 002)", rule: RuleClassicBuffers, sev: Warning,
			runs: ids(cleanStudy(), func(*results.Run) bool { return true }),
			msg:  []string{"more than 2048 page buffers", "5000 page buffers × 16384 B = 78 MiB per connection"},
			plant: func(runs []results.Run) []results.Run {
				for i := range runs {
					fbRun(&runs[i], "Classic", "16384", "5000")
				}
				return runs
			}},
		{name: "default shared_buffers, larger database", rule: RuleDefaultCache, sev: Warning, runs: []int64{11},
			msg: []string{"left at the engine's default", "shared_buffers 128 MiB (the default) for a 900 MiB database"},
			plant: func(runs []results.Run) []results.Run {
				r := byID(runs, 11)
				delete(r.Params.Options, "set.shared_buffers")
				r.Server.Settings["shared_buffers"] = "16384 8kB"
				// Also differs from the others: mixed-settings and mixed-params fire too.
				return runs
			}},
		{name: "data in RAM", rule: RuleDataInRAM, sev: Info, runs: []int64{4},
			msg: []string{"fits in the memory", "900 MiB database, 64.0 GiB of RAM"},
			plant: func(runs []results.Run) []results.Run {
				byID(runs, 4).Server.Managed = true
				return runs
			}},
		{name: "conflicts 2 %", rule: RuleErrorRate, sev: Warning, runs: []int64{6},
			msg: []string{"retryable"},
			plant: func(runs []results.Run) []results.Run {
				r := byID(runs, 6)
				r.Summary.Errors = map[string]int64{"retryable": r.Summary.Committed * 2 / 100}
				return runs
			}},
		{name: "conflicts 10 %", rule: RuleErrorRate, sev: Error, runs: []int64{6},
			msg: []string{"retryable", "connection 3"},
			plant: func(runs []results.Run) []results.Run {
				r := byID(runs, 6)
				r.Summary.Errors = map[string]int64{"retryable": r.Summary.Committed / 10, "connection": 3}
				return runs
			}},
		{name: "cell with 3 repeats", rule: RuleFewRepeats, sev: Warning, runs: []int64{2, 6, 10},
			msg: []string{"1 cell has fewer than 5", "rtt=1ms terminals=8: 3 finished"},
			plant: func(runs []results.Run) []results.Run {
				return slices.DeleteFunc(runs, func(r results.Run) bool { return r.ID == 14 || r.ID == 18 })
			}},
		{name: "cell with 3 repeats and 1 failed", rule: RuleFewRepeats, sev: Warning, runs: []int64{2, 6, 10, 14},
			msg: []string{"3 finished (1 failed, aborted or running)"},
			plant: func(runs []results.Run) []results.Run {
				byID(runs, 14).Status = results.StatusFailed
				return slices.DeleteFunc(runs, func(r results.Run) bool { return r.ID == 18 })
			}},
		{name: "repeats disagree", rule: RuleVariation, sev: Warning, runs: []int64{2, 6, 10, 14, 18},
			msg: []string{"rtt=1ms terminals=8: NOPM CV"},
			plant: func(runs []results.Run) []results.Run {
				byID(runs, 10).Summary.NOPM *= 1.5
				return runs
			}},
		{name: "saturated client", rule: RuleClientBound, sev: Error, runs: []int64{12},
			msg: []string{"80 %", "run 12: 864.0 CPU-s in 60.0 s on 16 cores = 90 %"},
			plant: func(runs []results.Run) []results.Run {
				byID(runs, 12).Client.CPUSeconds = 0.9 * 60 * 16
				return runs
			}},
		// Held to one P, the client saturates its one thread long before the machine.
		{name: "saturated client at GOMAXPROCS 1", rule: RuleClientBound, sev: Error, runs: []int64{12},
			msg: []string{"run 12: 54.0 CPU-s in 60.0 s on 1 of 16 cores (GOMAXPROCS 1) = 90 %"},
			plant: func(runs []results.Run) []results.Run {
				r := byID(runs, 12)
				r.Client.Procs, r.Client.CPUSeconds = 1, 0.9*60
				return runs
			}},
		{name: "busy client, local server", rule: RuleClientBound, sev: Warning, runs: []int64{12},
			msg: []string{"50 %", "same machine"},
			opt: CheckOptions{Factors: factorsRT},
			plant: func(runs []results.Run) []results.Run {
				byID(runs, 12).Client.CPUSeconds = 0.6 * 60 * 16
				byID(runs, 12).Server.Managed = true
				byID(runs, 12).Server.DatabaseBytes = 100 << 30 // not data-in-ram
				return runs
			}},
		{name: "link 200µs off", rule: RuleRTT, sev: Info, runs: []int64{2, 6},
			msg: []string{"requested 1ms, achieved 1.2ms (tolerance ±50µs) in 2 runs (2, 6)"},
			plant: func(runs []results.Run) []results.Run {
				byID(runs, 2).Link.AchievedP50 = 1200 * us
				byID(runs, 6).Link.AchievedP50 = 1200 * us
				byID(runs, 10).Link.AchievedP50 = 1040 * us // within tolerance
				return runs
			}},
		{name: "link not calibrated", rule: RuleRTT, sev: Warning, runs: []int64{6},
			msg: []string{"nothing measured what the link added"},
			plant: func(runs []results.Run) []results.Run {
				byID(runs, 6).Link.Samples, byID(runs, 6).Link.AchievedP50 = 0, 0
				return runs
			}},
		{name: "no warm-up", rule: RuleWarmup, sev: Warning,
			runs: ids(cleanStudy(), func(*results.Run) bool { return true }),
			msg:  []string{"without warm-up"},
			plant: func(runs []results.Run) []results.Run {
				for i := range runs {
					runs[i].Params.Warmup = 0
				}
				return runs
			}},
		{name: "short warm-up for a long window", rule: RuleWarmup, sev: Warning,
			runs: ids(cleanStudy(), func(*results.Run) bool { return true }),
			msg:  []string{"warm-up 10s before a 10m0s window (at least 1m0s wanted)"},
			plant: func(runs []results.Run) []results.Run {
				for i := range runs {
					runs[i].Params.Duration = 10 * time.Minute
				}
				return runs
			}},
	}
	// Which other rules a plant is allowed to trigger as well.
	also := map[string][]string{
		"default shared_buffers, larger database":   {RuleMixedSettings, RuleMixedParams},
		"requested setting changed between repeats": {RuleMixedSettings},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			runs := tc.plant(cleanStudy())
			opt := tc.opt
			if opt.Factors == nil {
				opt = cleanOpt
			}
			fs := Check(runs, opt)
			expect(t, fs, tc.rule, tc.sev, tc.runs, tc.msg...)
			for _, f := range fs {
				if f.Rule != tc.rule && !slices.Contains(also[tc.name], f.Rule) {
					t.Errorf("unexpected %s finding: %s (%s)", f.Rule, f.Message, f.Evidence)
				}
			}
			if HasErrors(fs) != (tc.sev == Error) && len(also[tc.name]) == 0 {
				t.Errorf("HasErrors = %v", HasErrors(fs))
			}
		})
	}
}

// fbRun makes r a Firebird run in mode with the given page size and page buffers.
func fbRun(r *results.Run, mode, pageSize, buffers string) {
	r.Server.Engine = "firebird"
	r.Server.Version = "Firebird 3.0.11"
	r.Server.Settings = map[string]string{"ServerMode": mode, "PageSize": pageSize, "DefaultDbCachePages": buffers,
		"ForcedWrites": "on", "wire_encrypted": "TRUE"}
	r.Server.DatabaseBytes = 1 * mib // within the default caches: no default-cache finding
	delete(r.Params.Options, "set.shared_buffers")
}

// TestCheckFactorsMayDiffer: what a factor varies may differ; an engine default that
// changes with a setting factor is a warning (seed 000's architectures with their own page
// buffers); a page size that differs between targets is an error (seed 002).
func TestCheckFactorsMayDiffer(t *testing.T) {
	// set.shared_buffers as a factor: requested and read-back values differ by design.
	runs := cleanStudy()
	for i := range runs {
		if runs[i].Params.Terminals == 16 {
			runs[i].Params.Options["set.shared_buffers"] = "2GB"
			runs[i].Server.Settings["shared_buffers"] = "262144 8kB"
		}
	}
	if fs := Check(runs, CheckOptions{Factors: []string{"rtt", "terminals", "set.shared_buffers"}}); len(fs) != 0 {
		t.Errorf("setting factor: %+v", fs)
	}

	// set.ServerMode as a factor, page buffers at each mode's default.
	runs = cleanStudy()
	for i := range runs {
		mode, bufs := "Super", "2048"
		if runs[i].Params.Terminals == 16 {
			mode, bufs = "Classic", "256"
		}
		fbRun(&runs[i], mode, "8192", bufs)
		runs[i].Params.Options["set.ServerMode"] = mode
	}
	fs := Check(runs, CheckOptions{Factors: []string{"rtt", "terminals", "set.ServerMode"}})
	f := expect(t, fs, RuleMixedSettings, Warning, ids(runs, func(*results.Run) bool { return true }),
		"DefaultDbCachePages changes with set.ServerMode")
	if len(fs) != 1 {
		t.Errorf("more findings: %+v (%+v)", fs, f)
	}

	// engine as a factor: versions and settings differ by design.
	runs = cleanStudy()
	for i := range runs {
		if runs[i].Params.Terminals == 16 {
			fbRun(&runs[i], "Super", "8192", "2048")
		}
	}
	if fs := Check(runs, CheckOptions{Factors: []string{"rtt", "terminals", "engine"}}); len(fs) != 0 {
		t.Errorf("engine factor: %+v", fs)
	}

	// target as a factor: the version may differ, the page size may not.
	runs = cleanStudy()
	for i := range runs {
		fbRun(&runs[i], "Super", "8192", "2048")
		if runs[i].Params.Terminals == 16 {
			runs[i].Server.Target, runs[i].Server.Version = "fb4", "Firebird 4.0.5"
			runs[i].Server.Settings["PageSize"] = "32768"
		}
	}
	fs = Check(runs, CheckOptions{Factors: []string{"rtt", "terminals", "target"}})
	expect(t, fs, RuleMixedSettings, Error, ids(runs, func(*results.Run) bool { return true }), "PageSize differs")
	if len(fs) != 1 {
		t.Errorf("target factor: %+v", fs)
	}
}

// TestCheckRepeatAsked: a study asking for 3 repeats gets one info finding, and its cells
// are held to 3; a range is worded as one.
func TestCheckRepeatAsked(t *testing.T) {
	runs := slices.DeleteFunc(cleanStudy(), func(r results.Run) bool { return r.ID > 12 })
	fs := Check(runs, CheckOptions{Factors: factorsRT, Repeat: 3})
	f := expect(t, fs, RuleFewRepeats, Info, nil, "asks for 3 repeats per cell, fewer than 5")
	if len(fs) != 1 || len(f.Cells) != 0 {
		t.Errorf("%+v", fs)
	}
	// A range says so: the quickstart's `repeat: 2..3` asks for 2 only where 2 suffice.
	fs = Check(runs, CheckOptions{Factors: factorsRT, Repeat: 2, RepeatMax: 3})
	f = expect(t, fs, RuleFewRepeats, Info, nil, "asks for 2 to 3 repeats per cell (2 where the interval is tight by then), fewer than 5")
	if f.Evidence != "repeat: 2..3" {
		t.Errorf("evidence %q", f.Evidence)
	}
	runs = slices.DeleteFunc(runs, func(r results.Run) bool { return r.ID == 9 })
	fs = Check(runs, CheckOptions{Factors: factorsRT, Repeat: 3})
	if len(fs) != 2 || fs[0].Severity != Warning || !slices.Equal(fs[0].Cells, []string{"rtt=0 terminals=8"}) {
		t.Errorf("%+v", fs)
	}
}

// TestCheckDeterministic: the same runs in any order give the same findings, errors first.
func TestCheckDeterministic(t *testing.T) {
	runs := cleanStudy()
	byID(runs, 7).Server.Settings["block_size"] = "16384"
	byID(runs, 12).Client.CPUSeconds = 0.6 * 60 * 16
	byID(runs, 3).Params.Warmup = 0
	byID(runs, 4).Server.Managed = true
	byID(runs, 2).Link.AchievedP50 = 2 * ms
	want := Check(runs, cleanOpt)
	for i := range 5 {
		got := Check(shuffled(runs), cleanOpt)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("order %d differs:\n%+v\n%+v", i, got, want)
		}
	}
	var sevs []Severity
	var rules []string
	for _, f := range want {
		sevs = append(sevs, f.Severity)
		rules = append(rules, f.Rule)
	}
	if !slices.IsSortedFunc(sevs, func(a, b Severity) int { return int(b - a) }) || sevs[0] != Error || !HasErrors(want) {
		t.Errorf("severities %v", sevs)
	}
	if !slices.Equal(rules, []string{RuleMixedSettings, RuleClientBound, RuleMixedParams, RuleWarmup, RuleDataInRAM, RuleRTT}) {
		t.Errorf("rules %v", rules)
	}
	b, err := json.Marshal(want[0])
	if err != nil || !strings.Contains(string(b), `"severity":"error"`) {
		t.Errorf("json %s %v", b, err)
	}
	var back Finding
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, want[0]) {
		t.Errorf("round trip: %+v %v", back, err)
	}
}

// TestWarmupMeasured: with per-second samples at hand the warm-up is judged by what the
// window measured: a short warm-up whose window starts steady passes, one whose first
// seconds ran slower is flagged with the figure, and Poisson noise at a low rate is not a
// finding.
func TestWarmupMeasured(t *testing.T) {
	run := func(id int64, perSecond func(sec int) int64) results.Run {
		r := results.Run{ID: id, Status: results.StatusFinished,
			Params:  results.Params{Drive: spec.Drive{Terminals: 4, Duration: 20 * time.Second, Warmup: 2 * time.Second}, Workload: "tpcc"},
			Summary: results.Summary{Elapsed: 20 * time.Second}}
		// Samples are one second long, ending a few µs after each second of the window; the
		// last also holds what was in flight when the window ended.
		for s := 0; s <= 20; s++ {
			n := perSecond(max(s, 1))
			if s == 20 {
				n *= 3
			}
			r.Summary.Committed += n
			r.Samples = append(r.Samples, results.Sample{Offset: time.Duration(s)*time.Second + 30*time.Microsecond, Committed: n})
		}
		return r
	}
	steadyRun := run(1, func(int) int64 { return 1000 })
	coldRun := run(2, func(s int) int64 {
		if s <= 2 {
			return 600
		}
		return 1000
	})
	slowNoisy := run(3, func(s int) int64 { return []int64{1, 3, 2, 2, 4, 1, 2, 3, 2, 2}[s%10] })
	fs := Check([]results.Run{steadyRun, coldRun, slowNoisy}, CheckOptions{Factors: []string{"seed"}})
	var found []Finding
	for _, f := range fs {
		if f.Rule == RuleWarmup {
			found = append(found, f)
		}
	}
	if len(found) != 1 || !slices.Equal(found[0].Runs, []int64{2}) || !strings.Contains(found[0].Evidence, "first 2s ran at 60 % of the rest") {
		t.Errorf("warm-up findings %+v, want one for run 2 (first 2 s at 60 %%)", found)
	}
}

// TestWarmupDipAfterSteadyStart: a window whose first seconds dipped after the warm-up's
// last seconds had already run at the rest's pace (as in a quickstart run: 768 and 864 a
// second, then 619 and 693, then 876 and 903) is not flagged as too short a warm-up; the
// same window after a warm-up that was still slow is.
func TestWarmupDipAfterSteadyStart(t *testing.T) {
	run := func(id int64, counts []int64) results.Run {
		r := results.Run{ID: id, Status: results.StatusFinished,
			Params:  results.Params{Drive: spec.Drive{Terminals: 2, Duration: 5 * time.Second, Warmup: 6 * time.Second, WarmupAuto: true}, Workload: "tpcc"},
			Summary: results.Summary{Elapsed: 5 * time.Second, Warmup: 6 * time.Second}}
		// Six warm-up seconds ending at −5 s … 0.09 s, then the window's five.
		for i, n := range counts {
			off := time.Duration(i-5)*time.Second + 90*time.Millisecond
			if i > 5 {
				off = time.Duration(i-5)*time.Second + 90*time.Microsecond
			}
			r.Summary.Committed += n
			r.Samples = append(r.Samples, results.Sample{Offset: off, Committed: n})
		}
		return r
	}
	runs := []results.Run{
		run(1, []int64{708, 852, 834, 817, 768, 864, 619, 693, 876, 903, 833}),
		run(2, []int64{300, 350, 400, 450, 500, 560, 619, 693, 876, 903, 833}),
	}
	var found []Finding
	for _, f := range Check(runs, CheckOptions{Factors: []string{"seed"}}) {
		if f.Rule == RuleWarmup {
			found = append(found, f)
		}
	}
	if len(found) != 1 || !slices.Equal(found[0].Runs, []int64{2}) {
		t.Errorf("warm-up findings %+v, want one for run 2 only", found)
	}
}

// TestWarmupNoiseBeyondCounting: a busy server's throughput varies from second to second
// far more than counting explains. A first part 10.5 % below the rest is within that noise
// when every window of the cell shows it, and not a slow start; the same shortfall in a
// cell whose windows are steady is one.
func TestWarmupNoiseBeyondCounting(t *testing.T) {
	run := func(id int64, terminals int, first int64, rest []int64) results.Run {
		r := results.Run{ID: id, Status: results.StatusFinished,
			Params:  results.Params{Drive: spec.Drive{Terminals: terminals, Duration: 5 * time.Second, Warmup: 5 * time.Second}, Workload: "tpcc"},
			Summary: results.Summary{Elapsed: 5 * time.Second}}
		counts := append([]int64{first, first}, rest...)
		for s, n := range counts {
			r.Summary.Committed += n
			r.Samples = append(r.Samples, results.Sample{Offset: time.Duration(s+1)*time.Second + 30*time.Microsecond, Committed: n})
		}
		return r
	}
	runs := []results.Run{
		// Per-second counts that swing ±500 around 5,250: the first 2 s at 4,600 are noise.
		run(1, 16, 4600, []int64{4750, 5750, 5000}),
		run(2, 16, 5250, []int64{5750, 4750, 5500}),
		run(3, 16, 5000, []int64{4800, 5800, 5300}),
		// The same shortfall where every other second counts 5,250 ± 20: a slow start.
		run(4, 8, 4700, []int64{5250, 5270, 5230}),
		run(5, 8, 5250, []int64{5240, 5260, 5250}),
	}
	var found []Finding
	for _, f := range Check(runs, CheckOptions{Factors: []string{"terminals"}}) {
		if f.Rule == RuleWarmup {
			found = append(found, f)
		}
	}
	if len(found) != 1 || !slices.Equal(found[0].Runs, []int64{4}) {
		t.Errorf("warm-up findings %+v, want one for run 4 only", found)
	}
}

// TestVariationNamesTheMachine: repeats that disagree while the client VM's host took more
// CPU during the slower ones get those steal figures and a fix about the machine; so do
// repeats in which dblat's own CPU per transaction rose with the slowdown. Without either
// figure, the finding is the same but says nothing of the machine.
func TestVariationNamesTheMachine(t *testing.T) {
	steal := func(f float64) *float64 { return &f }
	type run struct{ tps, steal, cpuPerTx float64 }
	mk := func(withSteal bool, rs ...run) []results.Run {
		var runs []results.Run
		for i, c := range rs {
			r := results.Run{ID: int64(i + 1), Status: results.StatusFinished,
				Params:  results.Params{Drive: spec.Drive{Terminals: 4, Duration: 5 * time.Second, Warmup: 10 * time.Second}, Workload: "select-only"},
				Summary: results.Summary{Metric: results.MetricTPS, Elapsed: 5 * time.Second, TPS: c.tps, Committed: int64(c.tps * 5)}}
			r.Client.CPUSeconds = c.cpuPerTx * c.tps * 5 / 1e6
			if withSteal {
				r.Client.Steal = steal(c.steal)
			}
			runs = append(runs, r)
		}
		return runs
	}
	canary := mk(false, run{550, 0, 1200}, run{420, 0, 1250}, run{540, 0, 1210})
	for i, us := range []float64{350, 420, 352} {
		canary[i].Client.CanaryUs = us
	}
	stolen := []run{{550, 0.002, 1200}, {420, 0.061, 1250}, {540, 0.005, 1210}}
	slower := []run{{550, 0.002, 1240}, {420, 0.002, 1710}, {540, 0.003, 1450}}
	for _, c := range []struct {
		name string
		runs []results.Run
		want string // in the evidence; "" for no word of the machine
	}{
		{"canary", canary, "a fixed piece of work took 350, 420, 352 µs of CPU in these runs: 20 % more in the slowest"},
		{"steal", mk(true, stolen...), "0.2, 6.1, 0.5 % of its CPU time (steal)"},
		{"client CPU", mk(true, slower...), "1240, 1710, 1450 µs in these runs: the same client work cost 38 % more in the slowest"},
		{"no figures", mk(false, stolen...), ""},
	} {
		var f *Finding
		for _, x := range Check(c.runs, CheckOptions{Factors: []string{"terminals"}}) {
			if x.Rule == RuleVariation {
				f = &x
			}
		}
		if f == nil {
			t.Fatalf("%s: no variation finding", c.name)
		}
		machine := strings.Contains(f.Fix, "machine itself was slower")
		if c.want == "" && (machine || strings.Contains(f.Evidence, "machine")) || c.want != "" && (!machine || !strings.Contains(f.Evidence, c.want)) {
			t.Errorf("%s: evidence %q, fix %q", c.name, f.Evidence, f.Fix)
		}
	}
}

// TestVariationBeyondCounting: repeats that differ only as much as counting a few dozen
// transactions makes them differ are not a finding; the same spread over thousands is.
func TestVariationBeyondCounting(t *testing.T) {
	cell := func(base int64, tps ...float64) []results.Run {
		var runs []results.Run
		for i, x := range tps {
			runs = append(runs, results.Run{ID: base + int64(i), Status: results.StatusFinished,
				Params:  results.Params{Drive: spec.Drive{Terminals: 1, Duration: 5 * time.Second, Warmup: 10 * time.Second}, Workload: "select-only"},
				Summary: results.Summary{Metric: results.MetricTPS, Elapsed: 5 * time.Second, TPS: x, Committed: int64(x * 5)}})
		}
		return runs
	}
	for _, c := range []struct {
		name string
		runs []results.Run
		want bool
	}{
		{"10 transactions a run, CV 17 %", cell(1, 1.6, 2, 2.4), false},
		{"10,000 transactions a run, CV 17 %", cell(1, 1600, 2000, 2400), true},
	} {
		got := false
		for _, f := range Check(c.runs, CheckOptions{Factors: []string{"seed"}}) {
			got = got || f.Rule == RuleVariation
		}
		if got != c.want {
			t.Errorf("%s: repeat-variation %v, want %v", c.name, got, c.want)
		}
	}
}

// openLoop makes every run of runs open-loop at rate per second, sustained.
func openLoop(runs []results.Run, rate float64) []results.Run {
	for i := range runs {
		r := &runs[i]
		r.Params.Rate, r.Params.Arrival = rate, spec.ArrivalConstant
		r.Summary.Offered = int64(rate * tEl.Seconds())
		r.Summary.AchievedRate = rate
	}
	return runs
}

func TestCheckOverload(t *testing.T) {
	runs := openLoop(cleanStudy(), 500)
	if fs := Check(runs, cleanOpt); len(fs) != 0 {
		t.Fatalf("a sustained open-loop study: %+v", fs)
	}
	// Every repeat of cell rtt=1ms terminals=8 fell behind: a warning on its runs.
	cellRuns := []int64{2, 6, 10, 14, 18}
	for _, id := range cellRuns {
		r := byID(runs, id)
		r.Summary.Backlog, r.Summary.AchievedRate = 9000, 350
		r.Summary.Overload = results.IsOverload(r.Summary.Offered, r.Summary.Skipped, r.Summary.Backlog)
	}
	fs := Check(runs, cleanOpt)
	expect(t, fs, RuleOverload, Warning, cellRuns, "5 open-loop runs are each an overload point", "run 2 (rtt=1ms terminals=8): offered 500/s, achieved 350.0/s")
	// One repeat kept up: the cell averages two regimes, an error naming the cell.
	r := byID(runs, 18)
	r.Summary.Backlog, r.Summary.AchievedRate, r.Summary.Overload = 0, 500, false
	var errs []Finding
	for _, f := range only(Check(runs, cleanOpt), RuleOverload) {
		if f.Severity == Error {
			errs = append(errs, f)
		}
	}
	if len(errs) != 1 || !slices.Equal(errs[0].Cells, []string{"rtt=1ms terminals=8"}) || !strings.Contains(errs[0].Evidence, "4 of 5") {
		t.Errorf("mixed cell: %+v", errs)
	}
}

func TestCheckRetryRate(t *testing.T) {
	runs := cleanStudy()
	// Run 3 retried 2 % of its transactions, run 7 10 %: an info and a warning, not errors.
	for id, share := range map[int64]float64{3: 0.02, 7: 0.10} {
		r := byID(runs, id)
		r.Params.MaxTries = 3
		r.Summary.Retried = int64(share * float64(r.Summary.Committed))
		r.Summary.Retries = r.Summary.Retried + 5
		r.Tx[0].Retried = r.Summary.Retried
	}
	for i := range runs {
		if runs[i].Params.MaxTries == 0 {
			runs[i].Params.MaxTries = 3 // like for like: every run may retry
		}
	}
	fs := Check(runs, cleanOpt)
	var info, warn []Finding
	for _, f := range only(fs, RuleRetryRate) {
		switch f.Severity {
		case Info:
			info = append(info, f)
		case Warning:
			warn = append(warn, f)
		}
	}
	if len(info) != 1 || !slices.Equal(info[0].Runs, []int64{3}) || len(warn) != 1 || !slices.Equal(warn[0].Runs, []int64{7}) {
		t.Errorf("retry findings: info %+v, warning %+v", info, warn)
	}
	if !strings.Contains(warn[0].Evidence, "run 7: 10 % of") || !strings.Contains(warn[0].Evidence, "new_order") {
		t.Errorf("retry evidence %q", warn[0].Evidence)
	}
	if len(only(fs, RuleErrorRate)) != 0 {
		t.Error("retries counted as errors")
	}
}

func TestCheckMixedOpenLoopParameters(t *testing.T) {
	runs := openLoop(cleanStudy(), 500)
	byID(runs, 5).Params.Rate = 400
	byID(runs, 9).Params.MaxTries = 2
	fs := Check(runs, cleanOpt)
	var names []string
	for _, f := range only(fs, RuleMixedParams) {
		names = append(names, f.Message)
	}
	if len(names) != 2 || !strings.Contains(strings.Join(names, "|"), "rate") || !strings.Contains(strings.Join(names, "|"), "max tries") {
		t.Errorf("mixed-params findings: %v", names)
	}
	// A rate factor varies it by design.
	if fs := Check(runs, CheckOptions{Factors: []string{results.FactorRTT, results.FactorTerminals, "rate"}}); len(only(fs, RuleMixedParams)) != 1 {
		t.Errorf("with a rate factor: %+v", only(fs, RuleMixedParams))
	}
}

// TestCheckScriptsFactorVariesTheMix is examples/seed002-vendor-test.yaml's case: a
// study whose scripts factor runs one script or the other varies the mix (each run's mix
// is its script at weight 1), which is no mixed-params finding; the same difference with
// the scripts not a factor is one.
func TestCheckScriptsFactorVariesTheMix(t *testing.T) {
	runs := cleanStudy()
	for i := range runs {
		r := &runs[i]
		r.Params.Workload = "script"
		script := []string{"orders-random.sql", "orders-fixed.sql"}[i%2]
		r.Params.Scripts = []string{script}
		r.Params.Mix = map[string]float64{strings.TrimSuffix(script, ".sql"): 1}
	}
	opt := CheckOptions{Factors: append(slices.Clone(factorsRT), "scripts")}
	if fs := only(Check(runs, opt), RuleMixedParams); len(fs) != 0 {
		t.Errorf("the scripts factor's own mix flagged: %+v", fs)
	}
	fs := only(Check(runs, cleanOpt), RuleMixedParams)
	var msgs []string
	for _, f := range fs {
		msgs = append(msgs, f.Message)
	}
	if len(fs) != 2 || !strings.Contains(strings.Join(msgs, "|"), "mix differs") || !strings.Contains(strings.Join(msgs, "|"), "scripts differs") {
		t.Errorf("scripts not a factor: %v, want the mix and the scripts flagged", msgs)
	}
}

// TestCheckMaxTriesFactorMeasuresConflicts is examples/seed002-vendor-test.yaml's other
// case: runs without retries in a study whose max_tries factor varies them fail on
// conflicts by design, a note; the same conflicts without the factor, or errors of another
// class with it, withhold the figures.
func TestCheckMaxTriesFactorMeasuresConflicts(t *testing.T) {
	runs := cleanStudy()
	for i := range runs {
		r := &runs[i]
		r.Params.MaxTries = []int{1, 10}[i%2]
		if r.Params.MaxTries == 1 {
			r.Summary.Errors = map[string]int64{"retryable": r.Summary.Committed / 3}
		}
	}
	withFactor := CheckOptions{Factors: append(slices.Clone(factorsRT), "max_tries")}
	expect(t, Check(runs, withFactor), RuleErrorRate, Info, oddIDs(runs), "max_tries factor varies retries on purpose")
	if fs := only(Check(runs, cleanOpt), RuleErrorRate); len(fs) != 1 || fs[0].Severity != Error {
		t.Errorf("conflicts without a max_tries factor: %+v, want one error", fs)
	}
	byID(runs, 1).Summary.Errors = map[string]int64{"connection": byID(runs, 1).Summary.Committed / 3}
	fs := only(Check(runs, withFactor), RuleErrorRate)
	if len(fs) != 2 || fs[0].Severity != Error || !slices.Equal(fs[0].Runs, []int64{1}) {
		t.Errorf("lost connections with a max_tries factor: %+v, want run 1 an error", fs)
	}
}

// oddIDs returns the ids of runs[0], runs[2], ...
func oddIDs(runs []results.Run) []int64 {
	var ids []int64
	for i := 0; i < len(runs); i += 2 {
		ids = append(ids, runs[i].ID)
	}
	return ids
}

// TestAgentPartNamesTheAgent: a run that three agents drove, one of whose parts was
// client-bound with a late link, is flagged naming that agent; clean parts are not.
func TestAgentPartNamesTheAgent(t *testing.T) {
	runs := cleanStudy()
	merged := byID(runs, 6)
	merged.Agents = 3
	var parts []results.Part
	for i, name := range []string{"a1", "a2", "a3"} {
		r := cleanRun(100+int64(i), merged.Params.RTT, merged.Params.Terminals/3, merged.Summary.TPS/3)
		if name == "a2" {
			r.Client.Cores = 2
			r.Client.CPUSeconds = 0.9 * 2 * r.Summary.Elapsed.Seconds()
			r.Link.LatenessUp = &results.Lateness{N: 1000, P50: 20 * time.Microsecond, P90: 90 * time.Microsecond}
		}
		parts = append(parts, results.Part{RunID: 6, Agent: name, Index: i, State: results.PartDone, Result: &r})
	}
	opt := cleanOpt
	opt.Parts = map[int64][]results.Part{6: parts}
	fs := Check(runs, opt)
	expect(t, fs, RuleAgentPart, Error, []int64{6}, "run 6, agent a2: client used 90 %", "agent a2: its link achieved", "± 70µs")
	if f := only(fs, RuleAgentPart)[0]; strings.Contains(f.Evidence, "a1") || strings.Contains(f.Evidence, "a3") {
		t.Errorf("clean agents flagged: %s", f.Evidence)
	}
	// Without the parts, the merged run alone is clean.
	if fs := Check(runs, cleanOpt); len(only(fs, RuleAgentPart)) != 0 {
		t.Errorf("agent-part without parts: %+v", fs)
	}
}
