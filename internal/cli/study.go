package cli

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/managed"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/study"
	"github.com/dblat/dblat/internal/workload/tpcc"
)

func (a *app) studyCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "study",
		Short: "Plan, run and resume experiment matrices (study files)",
		Long: `A study file (YAML) names a base run and the factors to vary, with their levels; dblat
runs every cell of the design (ofat: one factor at a time; full: every combination) the
number of times asked, in a seeded random order, stores each run as it ends, and resumes
where it stopped. See examples/ for study files that mirror the seeds.`,
	}
	cmd.AddCommand(a.studyPlanCommand(), a.studyRunCommand(), a.studyResumeCommand(), a.studyStatusCommand(), a.studyListCommand())
	return cmd
}

// loadStudy parses a study file and checks what the CLI supports.
func (a *app) loadStudy(path string) (*study.Study, error) {
	st, err := study.Load(path)
	if err != nil {
		return nil, usageError{err}
	}
	return st, a.checkStudy(st)
}

// checkStudy rejects what the runner cannot do yet, with the study file's position.
func (a *app) checkStudy(st *study.Study) error {
	for _, c := range st.Cells() {
		p := c.Params
		if p.Workload != "tpcc" {
			return usageError{st.Errorf("base.workload", "workload %q is not supported yet (supported: tpcc)", p.Workload)}
		}
		if p.Mode != "" && !slices.Contains(tpcc.Modes, p.Mode) {
			return usageError{st.Errorf("base.mode", "unknown mode %q (known: %s)", p.Mode, strings.Join(tpcc.Modes, ", "))}
		}
		for k, v := range p.Options {
			switch k {
			case "transport":
				if v != "tcp" && v != "unix" {
					return usageError{st.Errorf("base.options", "opt.transport %q: use tcp or unix", v)}
				}
			case "interpolate_params":
				if v != "true" && v != "false" {
					return usageError{st.Errorf("base.options", "opt.interpolate_params %q: use true or false", v)}
				}
			default:
				return usageError{st.Errorf("base.options", "unknown option %q (known: transport, interpolate_params)", k)}
			}
		}
		if st.Managed() {
			if _, err := (&launcherFlags{}).launcher(p.Engine); err != nil {
				return usageError{st.Errorf("server.engine", "%v", err)}
			}
			if _, err := engine.Lookup(p.Engine); err != nil {
				return usageError{st.Errorf("server.engine", "%v", err)}
			}
		}
	}
	return nil
}

func (a *app) studyPlanCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "plan FILE",
		Short: "Print a study's cells, the runs still needed and the estimated duration",
		Args:  exactArgs(1, "a study FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := a.loadStudy(args[0])
			if err != nil {
				return err
			}
			done, err := a.finishedCounts(cmd.Context(), st.Name)
			if err != nil {
				return err
			}
			a.printPlan(st, done)
			return nil
		},
	}
}

// finishedCounts returns the finished runs per cell key of a study in the results store.
func (a *app) finishedCounts(ctx context.Context, name string) (map[string]int, error) {
	store, err := results.Open(ctx, a.resultsDB)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	counts, err := store.CellCounts(ctx, name)
	if err != nil {
		return nil, err
	}
	done := map[string]int{}
	for k, c := range counts {
		done[k] = c[results.StatusFinished]
	}
	return done, nil
}

// defaultOverhead is what a run costs besides its warm-up and window (restore, connect,
// calibrate, read settings and statistics, store), and a server restart, as measured on a
// 2-core machine with PostgreSQL and one warehouse.
var defaultOverhead = study.Overhead{Run: 3 * time.Second, Restart: 3 * time.Second}

func (a *app) printPlan(st *study.Study, done map[string]int) {
	cells := st.Cells()
	plan := st.Plan(done)
	w := a.st.Stdout
	fmt.Fprintf(w, "study %s: %s design, %d factors, %d cells × repeat %d\n", st.Name, st.Design, len(st.Factors), len(cells), st.Repeat)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CELL\tKEY\tDONE\tTO RUN")
	need := map[string]int{}
	for _, p := range plan {
		need[p.Cell.Key]++
	}
	for _, c := range cells {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\n", st.Label(c), c.Key, min(done[c.Key], st.Repeat), need[c.Key])
	}
	tw.Flush()
	est := st.Estimate(plan, defaultOverhead)
	fmt.Fprintf(w, "%d runs to go (of %d), %d server starts, estimated %s\n", len(plan), len(cells)*st.Repeat,
		study.Restarts(plan), est.Round(time.Second))
}

func (a *app) studyRunCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "run FILE",
		Short: "Run a study: every cell × repeat not yet finished, with live progress",
		Long: `Runs the cells of a study file that still lack finished runs, in the study's seeded
order. Each run is stored as soon as it ends. A failed run is recorded with its reason and
the study goes on, until max_failures runs have failed. Ctrl-C finishes and saves the
current run, stops, and says how to resume; a second Ctrl-C stops at once.`,
		Args: exactArgs(1, "a study FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := a.loadStudy(args[0])
			if err != nil {
				return err
			}
			return a.runStudy(cmd.Context(), st)
		},
	}
}

func (a *app) studyResumeCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "resume NAME",
		Short: "Resume a study from its stored definition: run only what is missing",
		Args:  exactArgs(1, "a study NAME (see `dblat study list`)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := a.storedStudy(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return a.runStudy(cmd.Context(), st)
		},
	}
}

// storedStudy parses the definition a study was last run with.
func (a *app) storedStudy(ctx context.Context, name string) (*study.Study, error) {
	store, err := results.Open(ctx, a.resultsDB)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	rec, err := store.Study(ctx, name)
	if err != nil {
		return nil, err
	}
	st, err := study.Parse(rec.File, []byte(rec.Source))
	if err != nil {
		return nil, fmt.Errorf("stored definition of study %s no longer parses: %w", name, err)
	}
	return st, a.checkStudy(st)
}

func (a *app) studyStatusCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "status NAME",
		Short: "Show a study's progress: finished, failed and remaining runs per cell",
		Args:  exactArgs(1, "a study NAME (see `dblat study list`)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := a.storedStudy(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			store, err := results.Open(cmd.Context(), a.resultsDB)
			if err != nil {
				return err
			}
			defer store.Close()
			counts, err := store.CellCounts(cmd.Context(), st.Name)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(a.st.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "CELL\tFINISHED\tFAILED\tABORTED\tREMAINING")
			var fin, failed, aborted, remaining int
			for _, c := range st.Cells() {
				n := counts[c.Key]
				rem := max(0, st.Repeat-n[results.StatusFinished])
				fmt.Fprintf(tw, "%s\t%d/%d\t%d\t%d\t%d\n", st.Label(c), n[results.StatusFinished], st.Repeat,
					n[results.StatusFailed], n[results.StatusAborted], rem)
				fin += min(n[results.StatusFinished], st.Repeat)
				failed += n[results.StatusFailed]
				aborted += n[results.StatusAborted]
				remaining += rem
			}
			tw.Flush()
			state := "complete"
			if remaining > 0 {
				state = fmt.Sprintf("%d runs remaining: `dblat study resume %s`", remaining, st.Name)
			}
			a.printf("study %s: %d finished, %d failed, %d aborted; %s\n", st.Name, fin, failed, aborted, state)
			return nil
		},
	}
}

func (a *app) studyListCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the studies in the results database",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			store, err := results.Open(cmd.Context(), a.resultsDB)
			if err != nil {
				return err
			}
			defer store.Close()
			list, err := store.Studies(cmd.Context())
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(a.st.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "STUDY\tFILE\tFACTORS\tRUNS\tUPDATED")
			for _, s := range list {
				counts, err := store.CellCounts(cmd.Context(), s.Name)
				if err != nil {
					return err
				}
				n := 0
				for _, c := range counts {
					n += c[results.StatusFinished]
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", s.Name, s.File, strings.Join(s.Factors, ","), n, s.Updated.Local().Format("2006-01-02 15:04"))
			}
			return tw.Flush()
		},
	}
}

// studyRun is the state of one `study run`.
type studyRun struct {
	a        *app
	st       *study.Study
	failures int
	// loaded remembers, per managed server or target, the warehouses known to be loaded
	// (with a pristine copy when the study restores between runs).
	loaded map[string]int
}

// runStudy runs what a study still needs.
func (a *app) runStudy(parent context.Context, st *study.Study) error {
	store, err := results.Open(parent, a.resultsDB)
	if err != nil {
		return err
	}
	factors := make([]string, len(st.Factors))
	for i, f := range st.Factors {
		factors[i] = f.Key
	}
	err = store.SaveStudy(parent, results.Study{Name: st.Name, File: st.File, Source: string(st.Source), Factors: factors})
	store.Close()
	if err != nil {
		return err
	}
	done, err := a.finishedCounts(parent, st.Name)
	if err != nil {
		return err
	}
	plan := st.Plan(done)
	if len(plan) == 0 {
		a.info("study %s is complete: every cell has %d finished runs (`dblat report %s`)", st.Name, st.Repeat, st.Name)
		return nil
	}
	a.info("study %s: %d runs to go, estimated %s", st.Name, len(plan), st.Estimate(plan, defaultOverhead).Round(time.Second))

	ctx, drain, stopSignals := a.interrupts(parent, "finishing the current run, saving it and stopping the study")
	defer stopSignals()
	sr := &studyRun{a: a, st: st, loaded: map[string]int{}}
	// The study owns its managed servers: every one it used is stopped at the end, also one
	// that an earlier, killed invocation left running.
	var used []string
	defer func() {
		for _, name := range used {
			if err := a.stopServer(context.WithoutCancel(ctx), name); err != nil && !errors.Is(err, managed.ErrNoInstance) {
				a.info("warning: %v", err)
			}
		}
	}()
	begin := time.Now()
	var overheadSum time.Duration
	for i, p := range plan {
		cell := p.Cell
		rest := plan[i:]
		over := defaultOverhead
		if i > 0 {
			over.Run = overheadSum / time.Duration(i)
		}
		a.info("[%d/%d] %s (repeat %d/%d)  elapsed %s, ETA %s", i+1, len(plan), st.Label(cell), p.Repeat, st.Repeat,
			time.Since(begin).Round(time.Second), st.Estimate(rest, over).Round(time.Second))
		runStart := time.Now()
		target, server, err := sr.prepare(ctx, &cell)
		if server != "" && !contains(used, server) {
			used = append(used, server)
		}
		var run *results.Run
		if err == nil {
			run, err = a.runTPCC(ctx, drain, sr.runOptions(cell, target), sr.meta(cell))
		} else if ctx.Err() == nil && !isInterrupt(drain) {
			sr.recordFailure(ctx, cell, err)
		}
		overheadSum += time.Since(runStart) - cell.Params.Warmup - cell.Params.Duration
		switch {
		case errors.Is(err, errInterrupted) || ctx.Err() != nil || isInterrupt(drain):
			a.info("study %s interrupted after %d of %d runs; the runs finished so far are saved. Resume with `dblat study resume %s`",
				st.Name, i, len(plan), st.Name)
			return errInterrupted
		case err != nil:
			sr.failures++
			a.info("  run failed (%d of %d failures allowed): %s", sr.failures, st.MaxFailures, oneLine(err))
			if sr.failures >= st.MaxFailures {
				return fmt.Errorf("study %s stopped: %d runs failed (max_failures %d); fix the cause and `dblat study resume %s`",
					st.Name, sr.failures, st.MaxFailures, st.Name)
			}
		default:
			a.info("  run %d: %s", run.ID, oneRunLine(run))
		}
		if i < len(plan)-1 && st.Cooldown > 0 && !sleepOrDrain(ctx, drain, st.Cooldown) {
			a.info("study %s interrupted after %d of %d runs. Resume with `dblat study resume %s`", st.Name, i+1, len(plan), st.Name)
			return errInterrupted
		}
	}
	a.info("study %s complete in %s: write the report with `dblat report %s -o %s.html`", st.Name,
		time.Since(begin).Round(time.Second), st.Name, st.Name)
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func isInterrupt(drain <-chan struct{}) bool {
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

func oneRunLine(r *results.Run) string {
	s := fmt.Sprintf("NOPM %.0f  TPM %.0f", r.Summary.NOPM, r.Summary.TPM)
	for _, t := range r.Tx {
		if t.Type == "new_order" {
			s += fmt.Sprintf("  new_order p90 %.2f ms, %.1f round trips", ms(t.P90Us), t.RoundTrips)
		}
	}
	if n := sum(r.Summary.Errors); n > 0 {
		s += fmt.Sprintf("  errors %s", fmtErrors(r.Summary.Errors))
	}
	return s
}

// serverName is the managed server a cell runs on: the study's, suffixed by the engine when
// the study compares engines.
func (sr *studyRun) serverName(engineName string) string {
	name := sr.st.Server.Name
	if name == "" {
		name = sr.st.Name
	}
	if len(sr.st.Engines()) > 1 {
		name += "-" + engineName
	}
	return name
}

// prepare makes the cell's server run with the cell's settings and its data be loaded (and,
// between runs, restored); it returns the --target to use and the name of the managed
// server it uses ("" for an external target).
func (sr *studyRun) prepare(ctx context.Context, cell *study.Cell) (string, string, error) {
	a := sr.a
	p := cell.Params
	spec, server := p.Target, ""
	if spec == "" {
		name := sr.serverName(p.Engine)
		server = name
		reg := a.registry()
		inst, err := reg.Load(name)
		running := err == nil && inst.PID != 0
		if running && !sameSettings(inst.Settings, p.Settings) {
			if err := a.stopServer(ctx, name); err != nil {
				return "", "", err
			}
			running = false
		}
		if !running {
			settings := p.Settings
			if settings == nil {
				settings = map[string]string{}
			}
			if _, err := a.startServer(ctx, p.Engine, name, 0, settings, &launcherFlags{}); err != nil {
				return "", server, err
			}
		}
		spec = name
	}
	t, err := a.resolveTarget(spec)
	if err != nil {
		return "", server, err
	}
	restorer, canRestore := t.engine.(engine.Restorer)
	restore := sr.st.BetweenRuns == study.BetweenRestore
	if restore && !canRestore {
		return "", server, usageError{sr.st.Errorf("between_runs", "%s cannot restore a pristine copy; use between_runs: keep", t.engine.Name())}
	}
	if sr.loaded[spec] != p.Warehouses {
		if err := sr.ensureLoaded(ctx, t, p.Warehouses, restore, restorer); err != nil {
			return "", server, err
		}
		sr.loaded[spec] = p.Warehouses
	} else if restore {
		if err := restorer.RestorePristine(ctx, t.dsn); err != nil {
			return "", server, err
		}
	}
	return spec, server, nil
}

// ensureLoaded loads the warehouses unless they are there, and saves or checks the pristine copy.
func (sr *studyRun) ensureLoaded(ctx context.Context, t *target, warehouses int, restore bool, r engine.Restorer) error {
	a := sr.a
	if restore {
		// A pristine copy of the right size is the fastest start: restore it.
		if ok, err := r.HasPristine(ctx, t.dsn); err == nil && ok {
			if err := r.RestorePristine(ctx, t.dsn); err != nil {
				return err
			}
			if n, err := sr.loadedWarehouses(ctx, t); err == nil && n == warehouses {
				return nil
			}
		}
	} else if n, err := sr.loadedWarehouses(ctx, t); err == nil && n == warehouses {
		return nil
	}
	if err := a.loadTPCC(ctx, t, warehouses, 1, 0); err != nil {
		return err
	}
	if restore {
		a.info("saving a pristine copy of %s for the runs to start from", t.label)
		return r.SavePristine(ctx, t.dsn)
	}
	return nil
}

func (sr *studyRun) loadedWarehouses(ctx context.Context, t *target) (int, error) {
	wt, err := t.open(ctx, engine.OpenOptions{})
	if err != nil {
		return 0, err
	}
	defer closeDB(wt)
	return tpcc.LoadedWarehouses(ctx, wt.DB)
}

func sameSettings(a, b map[string]string) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return maps.Equal(a, b)
}

// runOptions turns a cell into the options of one run.
func (sr *studyRun) runOptions(c study.Cell, target string) runOptions {
	p := c.Params
	o := runOptions{target: target, terminals: p.Terminals, connections: p.Connections, duration: p.Duration,
		warmup: p.Warmup, warehouses: p.Warehouses, seed: p.Seed, mix: p.Mix, think: p.Think, mode: p.Mode, transport: "tcp"}
	if o.mix == "" {
		o.mix = "45,43,4,4,4"
	}
	o.interpolate = p.Options["interpolate_params"] == "true"
	if t := p.Options["transport"]; t != "" {
		o.transport = t
	}
	// Every TCP cell goes through the link, even at RTT 0, so that cells compare like for
	// like; a Unix-socket cell cannot (the link is TCP), which its transport level says.
	if o.transport != "unix" {
		o.link = linkOptions{rtt: p.RTT, rttSet: true, delayConnect: true, distribution: "uniform"}
	}
	return o
}

// meta ties a cell's run to the study and stores what the cell's factors read back.
func (sr *studyRun) meta(c study.Cell) runMeta {
	opts := map[string]string{}
	for k, v := range c.Params.Settings {
		opts[results.SettingPrefix+k] = v
	}
	for k, v := range c.Params.Options {
		opts[k] = v
	}
	if c.Params.Mode != "" {
		opts["mode"] = c.Params.Mode
	}
	if c.Params.Mix != "" {
		opts["mix"] = c.Params.Mix
	}
	return runMeta{study: sr.st.Name, cell: c.Key, options: opts, quiet: true}
}

// recordFailure stores a failed run for a cell whose run could not even start.
func (sr *studyRun) recordFailure(ctx context.Context, c study.Cell, cause error) {
	store, err := results.Open(ctx, sr.a.resultsDB)
	if err != nil {
		return
	}
	defer store.Close()
	p := c.Params
	r := &results.Run{Study: sr.st.Name, CellKey: c.Key, Params: results.Params{Workload: p.Workload, Scale: p.Warehouses,
		Terminals: p.Terminals, Connections: p.Connections, Duration: p.Duration, Warmup: p.Warmup, Seed: p.Seed, RTT: p.RTT,
		Think: p.Think, Options: sr.meta(c).options},
		Server: results.Server{Engine: p.Engine, Target: p.Target}}
	if _, err := store.Begin(ctx, r); err != nil {
		return
	}
	r.Status, r.Reason, r.Ended = results.StatusFailed, oneLine(cause), time.Now()
	_ = store.Finish(ctx, r)
}
