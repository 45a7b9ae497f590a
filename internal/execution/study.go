package execution

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/dblat/dblat/internal/disturb"
	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/managed"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/spec"
	"github.com/dblat/dblat/internal/stats"
	"github.com/dblat/dblat/internal/study"
	"github.com/dblat/dblat/internal/words"
	"github.com/dblat/dblat/internal/workload"
)

// DefaultOverhead is what a run costs besides its warm-up and window (restore, connect,
// calibrate, read settings and statistics, store), and a server restart, as measured on a
// 2-core machine with PostgreSQL and one warehouse. Study runs replace it by the mean
// overhead measured so far.
var DefaultOverhead = study.Overhead{Run: 3 * time.Second, Restart: 3 * time.Second}

// StudyPlan is a study checked against the registries and the results store: its cells,
// the finished runs each has, and the runs still needed in the order to run them.
type StudyPlan struct {
	Study *study.Study
	Cells []study.Cell
	// Done counts the finished runs per cell key.
	Done map[string]int
	// Progress holds each cell's finished runs' headline metric (Metric: NOPM for TPC-C,
	// else TPS), from which an adaptive study decides what more its cells need.
	Progress map[string]study.Progress
	Metric   string
	// Runs are the runs known to be needed now, in order: for an adaptive study only the
	// next round past what its cells have measured (study.Study.Schedule).
	Runs []study.Planned
	// Estimate is how long Runs take with DefaultOverhead; Restarts how many server starts
	// they need.
	Estimate time.Duration
	Restarts int
	// For an adaptive study: the runs each cell is expected to end with (by cell key), the
	// runs still to do if every cell ends so (Expected) and what they take
	// (ExpectedEstimate), and the bounds: every cell stopping at its minimum or running to
	// its maximum.
	Expect                      map[string]Expectation
	Expected, AtLeast, AtMost   int
	ExpectedEstimate            time.Duration
	LeastEstimate, MostEstimate time.Duration
	// Notes are what the user should know before running: versions that `study run` will
	// fetch first.
	Notes []string
}

// CellCounts is what Plan reads of the results store.
type CellCounts interface {
	CellCounts(ctx context.Context, study string) (map[string]map[results.Status]int, error)
}

// Plan checks everything about st that can be known before a server starts — the
// workload, every cell's options against the workload's and the engine's declarations, the
// engine's capabilities (managed servers, restore between runs, modes, transports), the
// managed server's settings — and returns the runs still needed. Problems are returned as
// a study.ErrorList, each positioned in the study file, wrapped in an *InputError.
func (c *Core) Plan(ctx context.Context, st *study.Study) (*StudyPlan, error) {
	cells := st.Cells()
	notes, err := c.checkStudy(st, cells)
	if err != nil {
		return nil, err
	}
	progress, metric, err := Progress(ctx, c.Store, st)
	if err != nil {
		return nil, err
	}
	done := map[string]int{}
	for k, p := range progress {
		done[k] = p.Done
	}
	runs := st.Schedule(progress)
	sp := &StudyPlan{Study: st, Cells: cells, Done: done, Progress: progress, Metric: metric, Runs: runs,
		Estimate: st.Estimate(runs, DefaultOverhead), Restarts: study.Restarts(runs), Notes: notes}
	if st.Adaptive() {
		if sp.Expect, err = c.expect(ctx, st, cells, progress, metric); err != nil {
			return nil, err
		}
		expected, least, most := map[string]int{}, map[string]int{}, map[string]int{}
		for _, cell := range cells {
			p := progress[cell.Key]
			expected[cell.Key] = sp.Expect[cell.Key].Runs
			least[cell.Key] = st.Wanted(p)
			most[cell.Key] = st.Repeat
			if st.Finished(p) {
				most[cell.Key] = p.Done
			}
		}
		for _, b := range []struct {
			want  map[string]int
			n     *int
			total *time.Duration
		}{{expected, &sp.Expected, &sp.ExpectedEstimate}, {least, &sp.AtLeast, &sp.LeastEstimate}, {most, &sp.AtMost, &sp.MostEstimate}} {
			plan := st.ScheduleTo(progress, b.want)
			*b.n, *b.total = len(plan), st.Estimate(plan, DefaultOverhead)
		}
	}
	return sp, nil
}

// cellEngine returns the engine a cell runs on and whether its server is managed.
func (c *Core) cellEngine(p study.Params) (engine.Engine, bool, error) {
	if p.Target == "" {
		e, err := engine.Lookup(p.Engine)
		if err != nil {
			return nil, true, err
		}
		if engine.Caps(e).Manager == nil {
			return nil, true, fmt.Errorf("dblat cannot manage %s servers (managed engines: %s); use target: with a DSN",
				e.Name(), strings.Join(engine.Managed(), ", "))
		}
		return e, true, nil
	}
	if engine.IsDSN(p.Target) {
		e, err := engine.ForDSN(p.Target)
		return e, false, err
	}
	inst, err := c.Servers.Load(p.Target)
	if err != nil {
		return nil, true, err
	}
	e, err := engine.Lookup(inst.Engine)
	return e, true, err
}

// errorPath positions a problem with a server key in st: at the factor that varies it, else
// at base.
func errorPath(st *study.Study, key, base string) string {
	for _, f := range st.Factors {
		if f.Key == key {
			return "factors." + key
		}
	}
	return base
}

// levelPath positions a problem with a level of a server key in st: at the level of the
// factor that varies it, else at base (server.KEY).
func levelPath(st *study.Study, key, level, base string) string {
	for _, f := range st.Factors {
		if f.Key == key {
			if i := slices.Index(f.Levels, level); i >= 0 {
				return fmt.Sprintf("factors.%s[%d]", key, i)
			}
			return "factors." + key
		}
	}
	return base
}

// checkStudy checks every cell of st, and returns notes about what a run will do first;
// see Plan.
func (c *Core) checkStudy(st *study.Study, cells []study.Cell) ([]string, error) {
	var notes []string
	// One problem is reported once, at its place in the file, with the first cell it
	// affects, however many cells share it.
	var errs study.ErrorList
	seen := map[string]bool{}
	add := func(se *study.Error, cell *study.Cell) {
		if seen[se.Error()] || len(errs) >= 20 {
			return
		}
		seen[se.Error()] = true
		if cell != nil && len(cells) > 1 {
			se.Msg += " (first in cell " + st.Label(*cell) + ")"
		}
		errs = append(errs, se)
	}
	addErr := func(err error) {
		var se *study.Error
		if !errors.As(err, &se) {
			se = &study.Error{File: st.File, Msg: err.Error()}
		}
		add(se, nil)
	}
	checkedSettings := map[string]bool{}
	for _, cell := range cells {
		p := cell.Params
		e, managed, err := c.cellEngine(p)
		if err != nil {
			path := "server.engine"
			if p.Target != "" {
				path = errorPath(st, results.FactorTarget, "target")
			} else if st.Server.Engine == "" {
				path = errorPath(st, results.FactorEngine, "server")
			}
			addErr(st.Errorf(path, "%v", err))
			continue
		}
		rs := RunOf(st, cell, p.Target)
		if st.Agents > 0 && rs.WarmupAuto {
			add(st.FieldError("warmup", &cell, "auto needs each run in one process: agents start their windows at one announced time; give a fixed warm-up"), &cell)
		}
		pl, err := check(&rs, e, managed)
		if err != nil {
			var pe positioned
			if errors.As(err, &pe) { // a script's own FILE:LINE:COL, as it is
				file, line, col, msg := pe.Position()
				add(&study.Error{File: file, Line: line, Col: col, Msg: msg}, &cell)
				continue
			}
			list, ok := spec.AsList(err)
			if !ok {
				addErr(st.Errorf("base.workload", "%v", unwrapInput(err)))
				continue
			}
			for _, fe := range list {
				add(st.FieldError(fe.Field, &cell, fe.Detail), &cell)
			}
			continue
		}
		if rs.During != "" {
			cfg := c.launchConfig(e.Name())
			cfg.Version, cfg.Install = p.Version, p.Install
			if fe := checkDuring(&rs, e, pl.def, managed, cfg); fe != nil {
				add(st.FieldError(fe.Field, &cell, fe.Detail), &cell)
			} else if st.Agents > 0 {
				add(st.FieldError("during", &cell, "an operation during the window needs each run in one process: agents drive parts of a run, and none of them owns the server"), &cell)
			}
		}
		if st.BetweenRuns == study.BetweenRestore && !pl.def.ReadOnly {
			r := engine.Caps(e).Restorer
			switch {
			case r == nil:
				addErr(st.Errorf("between_runs", "%s cannot restore a pristine copy of its database; use between_runs: keep", e.Name()))
			case !r.CanRestore(managed):
				addErr(st.Errorf("between_runs", "%s restores a pristine copy only on servers dblat manages; use server: instead of target:, or between_runs: keep", e.Name()))
			}
		}
		if managed && p.Target == "" {
			key := p.Engine + "\x00" + p.Version + "\x00" + p.Install + "\x00" + fmt.Sprint(p.Settings) + "\x00" + p.Memory + "\x00" + p.Encryption
			if checkedSettings[key] {
				continue
			}
			checkedSettings[key] = true
			cfg := c.launchConfig(e.Name())
			cfg.Version, cfg.Install = p.Version, p.Install
			if p.Encryption == "on" {
				if err := canEncrypt(e, cfg); err != nil {
					addErr(st.Errorf(levelPath(st, results.FactorEncryption, p.Encryption, "server.encryption"), "encryption on: %v", err))
				}
			}
			if limit, err := parseMemory(p.Memory); err == nil && limit > 0 {
				if err := checkMemory(e, limit, p.Settings); err != nil {
					addErr(st.Errorf(levelPath(st, results.FactorMemory, p.Memory, "server.memory"), "%v", unwrapInput(err)))
				}
			}
			note, err := c.checkBinaries(e, cfg)
			if err != nil {
				path := errorPath(st, results.FactorInstall, "server.install")
				if p.Version != "" {
					path = errorPath(st, results.FactorVersion, "server.version")
				}
				addErr(st.Errorf(path, "%v", err))
				continue
			}
			if note != "" && !slices.Contains(notes, note) {
				notes = append(notes, note)
			}
			if sc := engine.Caps(e).SettingsChecker; sc != nil {
				if err := sc.CheckSettings(cfg, p.Settings); err != nil {
					addErr(st.Errorf(settingPath(st, err), "%v", err))
				}
			}
		}
	}
	if err := fitsStudy(st, cells); err != nil {
		addErr(st.Errorf("server.storage", "memory: %v", err))
	}
	if len(errs) > 0 {
		return nil, &InputError{Err: errs}
	}
	return notes, nil
}

// fitsStudy says why the data of st's cells cannot live in memory, where its managed
// server keeps its data there: at the largest scale a cell asks for.
func fitsStudy(st *study.Study, cells []study.Cell) error {
	if st.Server.Storage != managed.StorageMemory || len(cells) == 0 {
		return nil
	}
	def, err := workload.Lookup(cells[0].Params.Workload)
	if err != nil {
		return nil //nolint:nilerr // reported with the cells
	}
	scale := 0
	for _, c := range cells {
		scale = max(scale, c.Params.Scale)
	}
	return fitsInMemory(def, scale)
}

// settingPath is where in st the setting a SettingsChecker's error names is written: at the
// factor that varies it, else under server.settings.
func settingPath(st *study.Study, err error) string {
	var se *engine.SettingError
	if !errors.As(err, &se) {
		return "server.settings"
	}
	for _, f := range st.Factors {
		if name, ok := f.Setting(); ok && strings.EqualFold(name, se.Name) {
			return "factors." + f.Key
		}
	}
	return "server.settings." + se.Name
}

// checkBinaries checks that the version cfg asks for can be had (installed, or fetched by
// an Installer: then the note says so), or that the installation it names holds the
// engine's server (SettingsChecker without settings), before any server starts.
func (c *Core) checkBinaries(e engine.Engine, cfg engine.LaunchConfig) (note string, err error) {
	if cfg.Install != "" {
		if sc := engine.Caps(e).SettingsChecker; sc != nil {
			return "", sc.CheckSettings(cfg, nil)
		}
		return "", nil
	}
	if cfg.Version == "" {
		return "", nil
	}
	in := engine.Caps(e).Installer
	if in == nil {
		return "", fmt.Errorf("dblat cannot fetch %s versions: unpack the version yourself and give its directory with --install DIR (server.install in a study)", e.Name())
	}
	if _, ok := in.Installed(cfg, cfg.Version); ok {
		return "", nil
	}
	if !slices.Contains(in.InstallVersions(), cfg.Version) {
		return "", fmt.Errorf("%s %s is not installed, and dblat fetches versions %s: install it yourself and give its directory with --install DIR (server.install in a study)",
			e.Name(), cfg.Version, strings.Join(in.InstallVersions(), ", "))
	}
	return fmt.Sprintf("%s %s is not installed yet: `dblat study run` fetches it into %s before its first run (or fetch it now with `dblat server install %s %s`)",
		e.Name(), cfg.Version, cfg.StateDir, e.Name(), cfg.Version), nil
}

func unwrapInput(err error) error {
	var ie *InputError
	if errors.As(err, &ie) {
		return ie.Err
	}
	return err
}

// RunOf is the run a study cell asks for, on target (a managed server's name or a DSN): the
// cell's run (its path already chosen by the study: study.Study.Linked) with its place in the
// study and, recorded with it, the server settings and binaries the cell asked for.
func RunOf(st *study.Study, cell study.Cell, target string) spec.Run {
	rs := cell.Params.Run.Clone()
	rs.Target, rs.Study, rs.Cell = target, st.Name, cell.Key
	rs.Dir = filepath.Dir(st.File) // a study's files are named relative to it
	rs.Record = map[string]string{}
	for k, v := range cell.Params.Settings {
		rs.Record[results.SettingPrefix+k] = v
	}
	recordServer(rs.Record, cell.Params)
	return rs
}

// StudyOptions adjust a study run.
type StudyOptions struct {
	// Drain, when closed, finishes the current run, saves it and stops the study.
	Drain <-chan struct{}
}

// studyRun is the state of one RunStudy.
type studyRun struct {
	c  *Core
	st *study.Study
	// loaded remembers, per database (DSN) and data set, the scale known to be loaded there
	// (with a pristine copy when the study restores between runs).
	loaded map[string]int
	// servers are the managed servers the study started or used, stopped at its end.
	servers []string
}

// RunStudy runs what st still needs, in the study's order; each run is stored as it ends.
// A run that fails is stored as failed and the study goes on, until st.MaxFailures runs
// have failed. When drain closes, the current run is finished and saved and RunStudy
// returns ErrInterrupted. Managed servers the study used are stopped at the end.
func (c *Core) RunStudy(ctx context.Context, drain <-chan struct{}, st *study.Study) error {
	sp, err := c.Plan(ctx, st)
	if err != nil {
		return err
	}
	factors := make([]string, len(st.Factors))
	for i, f := range st.Factors {
		factors[i] = f.Key
	}
	if err := c.Store.SaveStudy(ctx, results.Study{Name: st.Name, File: st.File, Source: string(st.Source), Factors: factors}); err != nil {
		return err
	}
	if len(sp.Runs) == 0 {
		c.info("study %s is complete: %s", st.Name, completeText(st))
		c.reportIntervals(st, sp.Progress, sp.Metric, func(cell study.Cell) time.Duration {
			return st.Estimate([]study.Planned{{Cell: cell}}, study.Overhead{Run: DefaultOverhead.Run}) + st.Cooldown
		})
		return nil
	}
	if st.Adaptive() {
		c.info("study %s: %s known to go, about %d expected (%d to %d), estimated %s", st.Name, words.Count(len(sp.Runs), "run"),
			sp.Expected, sp.AtLeast, sp.AtMost, sp.ExpectedEstimate.Round(time.Second))
	} else {
		c.info("study %s: %s to go, estimated %s", st.Name, words.Count(len(sp.Runs), "run"), sp.Estimate.Round(time.Second))
	}
	defer c.holdCPU()()
	if st.ClientProcs > 0 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(st.ClientProcs))
	}
	sr := &studyRun{c: c, st: st, loaded: map[string]int{}}
	defer func() {
		for _, name := range sr.servers {
			if err := c.StopServer(context.WithoutCancel(ctx), name); err != nil && !errors.Is(err, managed.ErrNoInstance) {
				c.info("warning: %v", err)
			}
		}
	}()
	l := &studyLoop{sr: sr, eta: &eta{st: st}, begin: time.Now(), progress: sp.Progress, failedHere: map[string]int{}}
	budgetSpent, err := l.rounds(ctx, drain)
	if err != nil {
		return err
	}
	if budgetSpent {
		c.info("study %s: its budget of %s is spent after %s and %s; `dblat study resume %s` (with --budget) continues",
			st.Name, st.Budget, time.Since(l.begin).Round(time.Second), words.Count(l.ran, "run"), st.Name)
	} else {
		c.info("study %s complete in %s", st.Name, time.Since(l.begin).Round(time.Second))
	}
	c.reportIntervals(st, l.progress, sp.Metric, l.eta.perRun)
	return nil
}

// eta estimates what runs still cost: the study's warm-ups, windows and cooldowns, and an
// overhead per run that is the mean measured so far over runs that did not start a server
// (a start, and the first load, would make the estimate minutes off after the first run).
type eta struct {
	st           *study.Study
	overheadSum  time.Duration
	overheadRuns int
}

// ran records a run that took took from its start to its end, of which its warm-up and
// window were measured; started says whether it started a server.
func (e *eta) ran(run *results.Run, cell study.Cell, took time.Duration, started bool) {
	if !started && run != nil {
		window := cell.Params.Duration
		if run.Summary.Elapsed > window { // a window that ran on until its count
			window = run.Summary.Elapsed
		}
		e.overheadSum += took - run.WarmupHad() - window
		e.overheadRuns++
	}
}

// overhead is the overhead per run measured so far (DefaultOverhead before any).
func (e *eta) overhead() study.Overhead {
	over := DefaultOverhead
	if e.overheadRuns > 0 {
		over.Run = e.overheadSum / time.Duration(e.overheadRuns)
	}
	return over
}

// perRun is what one more run of a cell costs: its warm-up, window, the overhead measured
// so far and the cooldown.
func (e *eta) perRun(cell study.Cell) time.Duration {
	return e.st.Estimate([]study.Planned{{Cell: cell}}, study.Overhead{Run: e.overhead().Run}) + e.st.Cooldown
}

// studyLoop is RunStudy's loop over rounds of runs: the plan is made again after each
// round from what the cells measured, and each run's outcome updates the progress, the
// failures and the ETA.
type studyLoop struct {
	sr    *studyRun
	eta   *eta
	begin time.Time
	// progress is each cell's finished runs; failedHere counts the runs that failed in
	// this invocation, which count as done for the order, so that a failed cell is not
	// tried again before the study resumes.
	progress   map[string]study.Progress
	failedHere map[string]int
	failures   int
	ran        int
	prev       *study.Cell
	// canaries are the machine's speed in the runs of this invocation (their canaries,
	// results.Client.CanaryUs), against which a run's is judged.
	canaries []float64
}

// schedule returns the progress the order counts and the runs still to do.
func (l *studyLoop) schedule() (map[string]study.Progress, []study.Planned) {
	prog := make(map[string]study.Progress, len(l.progress))
	maps.Copy(prog, l.progress)
	for k, n := range l.failedHere {
		p := prog[k]
		p.Done += n
		prog[k] = p
	}
	return prog, l.sr.st.Schedule(prog)
}

// rounds runs round after round until nothing is left or the budget is spent (true). Its
// error is ErrInterrupted, or that of a study stopped by its failures.
func (l *studyLoop) rounds(ctx context.Context, drain <-chan struct{}) (budgetSpent bool, err error) {
	st := l.sr.st
	for {
		prog, plan := l.schedule()
		if len(plan) == 0 {
			return false, nil
		}
		round := study.FirstRound(plan)
		if st.Budget > 0 {
			if round = st.Allot(round, prog, l.eta.perRun, st.Budget-time.Since(l.begin)); len(round) == 0 {
				return true, nil
			}
		}
		for i := range round {
			rest := append(append([]study.Planned{}, round[i:]...), plan[len(study.FirstRound(plan)):]...)
			if err := l.runOne(ctx, drain, &round[i], rest); err != nil {
				return false, err
			}
		}
	}
}

// runOne runs pr, with rest the runs left counting it, and records its outcome.
func (l *studyLoop) runOne(ctx context.Context, drain <-chan struct{}, pr *study.Planned, rest []study.Planned) error {
	c, st, cell := l.sr.c, l.sr.st, pr.Cell
	// The cooldown comes between consecutive runs, never after the last.
	if l.ran > 0 && st.Cooldown > 0 && !sleepOrDrain(ctx, drain, st.Cooldown) {
		c.info("study %s interrupted after %d runs. Resume with `dblat study resume %s`", st.Name, l.ran, st.Name)
		return ErrInterrupted
	}
	started := cell.NeedsServerRestart(l.prev)
	l.prev = &pr.Cell
	c.obs().StudyStep(StudyStep{Study: st.Name, Index: l.ran + 1, Total: l.ran + len(rest), Cell: st.Label(cell), Repeat: pr.Repeat,
		Repeats: st.Repeat, Elapsed: time.Since(l.begin), Remaining: st.Estimate(rest, l.eta.overhead())})
	runStart := time.Now()
	run, err := l.sr.runCell(ctx, drain, cell, l.setAside)
	l.ran++
	l.eta.ran(run, cell, time.Since(runStart), started)
	switch {
	case errors.Is(err, ErrInterrupted) || ctx.Err() != nil || closed(drain):
		c.info("study %s interrupted after %d runs; the runs finished so far are saved. Resume with `dblat study resume %s`",
			st.Name, l.ran-1, st.Name)
		return ErrInterrupted
	case err != nil:
		l.failures++
		l.failedHere[cell.Key]++
		if run == nil {
			l.sr.recordFailure(ctx, cell, err)
		}
		c.info("  run failed (%d of %d failures allowed): %s", l.failures, st.MaxFailures, oneLine(err))
		if l.failures >= st.MaxFailures {
			return fmt.Errorf("study %s stopped: %d runs failed (max_failures %d); fix the cause and `dblat study resume %s`",
				st.Name, l.failures, st.MaxFailures, st.Name)
		}
	case run.SetAside != "":
		p := l.progress[cell.Key]
		p.SetAside++
		l.progress[cell.Key] = p
		c.info("  run %d set aside: %s", run.ID, run.SetAside)
	default:
		p := l.progress[cell.Key]
		metric := results.MetricOf([]results.Run{*run})
		p.Values = append(slices.Clone(p.Values), results.MetricValue(run, metric))
		p.Resolutions = append(slices.Clone(p.Resolutions), results.Resolution(run, metric))
		p.Done++
		l.progress[cell.Key] = p
		if st.Disturbed == study.DisturbedStop && disturb.Disturbed(run) {
			return fmt.Errorf("study %s stopped (disturbed: stop): %s; rerun when the machine is quiet with `dblat study resume %s`",
				st.Name, disturbedText(run), st.Name)
		}
	}
	return nil
}

// setAside is the study's policy for a run that external causes disturbed (study
// Disturbed): under DisturbedRerun it is set aside while its cell has set aside fewer than
// Reruns runs; otherwise, and under the other policies, it counts. First it names a run
// whose machine ran slower than in the study's runs so far (disturb.SlowHost, against
// their median canary once three have one).
func (l *studyLoop) setAside(run *results.Run) string {
	if c := run.Client.CanaryUs; c > 0 {
		if len(l.canaries) >= 3 {
			if d, ok := disturb.SlowHost(run, stats.Median(l.canaries)); ok {
				run.Disturbances = append(run.Disturbances, d)
			}
		}
		l.canaries = append(l.canaries, c)
	}
	st := l.sr.st
	if st.Disturbed != study.DisturbedRerun || !disturb.Disturbed(run) || l.progress[run.CellKey].SetAside >= st.Reruns {
		return ""
	}
	return disturbedText(run) + "; set aside and run again (disturbed: rerun)"
}

// disturbedText says what disturbed run, from its external disturbances: "the host's disk
// took 1.1 s of its 5 s window".
func disturbedText(run *results.Run) string {
	var causes []string
	for _, d := range run.Disturbances {
		if disturb.External(d.Cause) && !slices.Contains(causes, disturb.Describe(d.Cause)) {
			causes = append(causes, disturb.Describe(d.Cause))
		}
	}
	return fmt.Sprintf("%s took %s of its %s window", words.List(causes), spec.FormatDuration(disturb.LostExternal(run.Disturbances).Round(10*time.Millisecond)),
		spec.FormatDuration(run.Summary.Elapsed.Round(100*time.Millisecond)))
}

// reportIntervals prints, for a study with a precision, each cell's 95 % interval against
// it, and for those that missed it what they would need.
func (c *Core) reportIntervals(st *study.Study, progress map[string]study.Progress, metric string, perRun func(study.Cell) time.Duration) {
	if st.Precision <= 0 {
		return
	}
	short := map[string]Shortfall{}
	for _, s := range Shortfalls(st, progress, perRun) {
		short[s.Cell.Key] = s
	}
	c.info("95 %% intervals of %s against ±%s: %d of %s within", metric, study.FormatPrecision(st.Precision),
		len(st.Cells())-len(short), words.Count(len(st.Cells()), "cell"))
	for _, cell := range st.Cells() {
		if s, missed := short[cell.Key]; missed {
			c.info("  %s: missed its precision: %s", st.Label(cell), FormatShortfall(st, s))
			continue
		}
		iv := progress[cell.Key].Interval()
		c.info("  %s: %.0f ±%s after %s", st.Label(cell), iv.Mean, pctText(iv.Relative()), words.Count(iv.N, "run"))
	}
}

// completeText says what a complete study has: "every cell has 5 finished runs", or for
// an adaptive one "every cell met its precision or has 6 finished runs".
func completeText(st *study.Study) string {
	if st.Adaptive() {
		return fmt.Sprintf("every cell met its precision (±%s) or has %d finished runs", study.FormatPrecision(st.Precision), st.Repeat)
	}
	return fmt.Sprintf("every cell has %d finished runs", st.Repeat)
}

// runCell prepares the cell's server and data and runs it; aside says whether the run is
// set aside as it ends.
func (sr *studyRun) runCell(ctx context.Context, drain <-chan struct{}, cell study.Cell, aside SetAside) (*results.Run, error) {
	t, err := sr.prepareServer(ctx, cell)
	if err != nil {
		return nil, err
	}
	rs := RunOf(sr.st, cell, t.Label)
	if err := sr.prepareData(ctx, t, &rs); err != nil {
		return nil, err
	}
	if n := sr.st.Agents; n > 0 {
		if sr.c.Agents == nil {
			return nil, Inputf("study %s asks for %d agents, but this dblat cannot coordinate agents", sr.st.Name, n)
		}
		return sr.c.Agents(ctx, drain, rs, n)
	}
	return sr.c.runOn(ctx, drain, &rs, t, aside)
}

// recordServer adds the version, installation, memory limit and encryption a cell asks
// of its managed server to the options stored with its run, under their factor keys.
func recordServer(opts map[string]string, p study.Params) {
	for key, v := range map[string]string{results.FactorVersion: p.Version, results.FactorInstall: p.Install,
		results.FactorMemory: p.Memory, results.FactorEncryption: p.Encryption} {
		if v != "" {
			opts[key] = v
		}
	}
}

// serverName is the managed server a cell runs on: the study's, suffixed by the engine when
// the study compares engines, by the version or installation when it compares those, and
// by "encrypted" for the encrypted level of an encryption factor (each has its own data
// directory).
func (sr *studyRun) serverName(p study.Params) string {
	name := sr.st.Server.Name
	if name == "" {
		name = sr.st.Name
	}
	if len(sr.st.Engines()) > 1 {
		name += "-" + p.Engine
	}
	if f, ok := sr.st.BinariesFactor(); ok {
		suffix := p.Version
		if f.Key == results.FactorInstall {
			suffix = installSuffix(p.Install)
		}
		name = name[:min(len(name), 62-len(suffix))] + "-" + suffix
	}
	if sr.st.HasFactor(results.FactorEncryption) && p.Encryption == "on" {
		// An encrypted server's data is its own: a server of its own.
		const suffix = "encrypted"
		name = name[:min(len(name), 62-len(suffix))] + "-" + suffix
	}
	return name
}

// installSuffix names an installation directory in a server name: its base name in the
// characters names allow, and a short hash of the whole path, so that /opt/a/fb and
// /opt/b/fb differ.
func installSuffix(dir string) string {
	base := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-' {
			return r
		}
		return '_'
	}, filepath.Base(filepath.Clean(dir)))
	sum := sha256.Sum256([]byte(dir))
	return base[:min(len(base), 24)] + "-" + hex.EncodeToString(sum[:3])
}

// prepareServer makes the cell's server run with the cell's settings and resolves it.
func (sr *studyRun) prepareServer(ctx context.Context, cell study.Cell) (*Target, error) {
	c := sr.c
	p := cell.Params
	spec := p.Target
	if spec == "" {
		name := sr.serverName(p)
		if !slices.Contains(sr.servers, name) {
			sr.servers = append(sr.servers, name)
		}
		inst, err := c.Servers.Load(name)
		running := err == nil && inst.PID != 0
		if running && (!sameSettings(inst.Settings, p.Settings) || !sameMemory(inst, p.Memory)) {
			if err := c.StopServer(ctx, name); err != nil {
				return nil, err
			}
			running = false
		}
		if !running {
			settings := p.Settings
			if settings == nil {
				settings = map[string]string{}
			}
			memory := p.Memory
			if memory == "" {
				memory = managed.MemoryNone // a study's server has the limit its cells ask for
			}
			if _, err := c.Start(ctx, ServerStart{Engine: p.Engine, Name: name, Settings: settings,
				Install: p.Install, Version: p.Version, Storage: sr.st.Server.Storage,
				Memory: memory, Encryption: p.Encryption}); err != nil {
				return nil, err
			}
		}
		spec = name
	}
	return c.Resolve(spec)
}

// prepareData makes sure the cell's data is loaded in the database the cell runs on, and
// restores its pristine copy when the study restores between runs.
func (sr *studyRun) prepareData(ctx context.Context, t *Target, rs *spec.Run) error {
	c := sr.c
	pl, err := check(rs, t.Engine, t.Server != nil)
	if err != nil {
		return err
	}
	dsn := t.DSN
	if len(pl.db) > 0 {
		if dsn, err = engine.Caps(t.Engine).Databases.Database(ctx, t.Server, pl.db); err != nil {
			return fmt.Errorf("database with %s: %w", fmtValues(pl.db), err)
		}
	}
	restorer := engine.Caps(t.Engine).Restorer
	restore := sr.st.BetweenRuns == study.BetweenRestore && !pl.def.ReadOnly && restorer != nil
	want := rs.Scale
	if want == 0 {
		want = pl.def.Scale.Default
	}
	key := dsn + "\x00" + pl.def.DataSet()
	if sr.loaded[key] == want {
		if restore {
			return restorer.RestorePristine(ctx, dsn)
		}
		return nil
	}
	loadedScale := func() (int, error) {
		wt, err := t.Open(ctx, dsn, engine.OpenOptions{ConnectTimeout: rs.ConnectTimeout})
		if err != nil {
			return 0, err
		}
		defer closeDB(wt)
		return pl.def.Loaded(ctx, wt, pl.workloadConfig(rs))
	}
	if restore {
		// A pristine copy of the right size is the fastest start: restore it.
		if ok, err := restorer.HasPristine(ctx, dsn); err == nil && ok {
			if err := restorer.RestorePristine(ctx, dsn); err != nil {
				return err
			}
			if n, err := loadedScale(); err == nil && n == want {
				sr.loaded[key] = want
				return nil
			}
		}
	} else if n, err := loadedScale(); err == nil && n == want {
		sr.loaded[key] = want
		return nil
	}
	// A template of the same data on a server of the same kind is the next fastest; it
	// brings its pristine copy with it.
	fields, templated := c.templateFields(ctx, t, dsn, pl.def, want, dataSeed, nil)
	if templated {
		ok, err := c.restoreTemplate(ctx, t, dsn, fields)
		if err != nil {
			c.info("warning: %v; loading instead", err)
		}
		if n, lerr := loadedScale(); ok && lerr == nil && n == want {
			sr.loaded[key] = want
			return nil
		} else if ok {
			c.info("warning: the template restored %d, not %d: loading instead", n, want)
		}
	}
	if err := c.load(ctx, t, dsn, pl.def, LoadSpec{Workload: pl.def.Name, Scale: want, Seed: dataSeed,
		ScriptParams: rs.ScriptParams, Dir: rs.Dir, Files: rs.Files}, nil); err != nil {
		return err
	}
	if templated {
		if err := c.saveTemplate(ctx, t, dsn, fields); err != nil {
			c.info("warning: cannot keep the loaded data as a template: %v", err)
		}
	}
	if restore {
		c.info("saving a pristine copy of %s for the runs to start from", t.Label)
		if err := restorer.SavePristine(ctx, dsn); err != nil {
			return err
		}
	}
	sr.loaded[key] = want
	return nil
}

// dataSeed seeds the data a study loads: every study loads the same data, so that its
// runs compare with other studies' and templates serve them all.
const dataSeed = 1

// parseMemory is managed.ParseMemory, for where a variable shadows the package.
var parseMemory = managed.ParseMemory

// sameMemory reports whether inst runs under the memory limit memory asks for ("" is
// none).
func sameMemory(inst *managed.Instance, memory string) bool {
	want, err := managed.ParseMemory(memory)
	return err == nil && want == inst.Memory || memory == "" && inst.Memory == 0
}

func sameSettings(a, b map[string]string) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return maps.Equal(a, b)
}

// recordFailure stores a failed run for a cell whose run could not even start.
func (sr *studyRun) recordFailure(ctx context.Context, cell study.Cell, cause error) {
	rs := RunOf(sr.st, cell, cell.Params.Target)
	r := &results.Run{Study: sr.st.Name, CellKey: cell.Key, Params: rs.Stored(rs.Scale, nil, rs.Options),
		Server: results.Server{Engine: cell.Params.Engine, Target: cell.Params.Target}}
	ctx = context.WithoutCancel(ctx)
	if _, err := sr.c.Store.Begin(ctx, r); err != nil {
		return
	}
	r.Status, r.Reason, r.Ended = results.StatusFailed, oneLine(cause), time.Now()
	_ = sr.c.Store.Finish(ctx, r)
	sr.c.obs().RunEnded(r)
}

func closed(drain <-chan struct{}) bool {
	select {
	case <-drain:
		return true
	default:
		return false
	}
}

func sleepOrDrain(ctx context.Context, drain <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-drain:
		return false
	case <-ctx.Done():
		return false
	}
}
