package cli

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dblat/dblat/internal/execution"
	"github.com/dblat/dblat/internal/report"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/study"
	"github.com/dblat/dblat/internal/words"
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

// loadStudy parses a study file.
func (a *app) loadStudy(path string) (*study.Study, error) {
	st, err := study.Load(path)
	if err != nil {
		return nil, usageError{err}
	}
	return st, nil
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
			core, _, closeStore, err := a.core(cmd.Context())
			if err != nil {
				return err
			}
			defer closeStore()
			sp, err := core.Plan(cmd.Context(), st)
			if err != nil {
				return err
			}
			a.printPlan(sp)
			return nil
		},
	}
}

func (a *app) printPlan(sp *execution.StudyPlan) {
	st, cells, plan, done := sp.Study, sp.Cells, sp.Runs, sp.Done
	w := a.st.Stdout
	fmt.Fprintf(w, "study %s: %s design, %s, %s × %s\n", st.Name, st.Design, words.Count(len(st.Factors), "factor"), words.Count(len(cells), "cell"), repeatText(st))
	tw := words.Columns(w)
	need := map[string]int{}
	for _, p := range plan {
		need[p.Cell.Key]++
	}
	if st.Adaptive() {
		fmt.Fprintf(tw, "CELL\tKEY\tPATH\tDONE\t%s\tEXPECTED\tFROM\n", intervalHead(sp.Metric))
		for _, c := range cells {
			e := sp.Expect[c.Key]
			from := e.Basis
			if from == "" {
				from = "no variation known"
			} else {
				from += fmt.Sprintf(" (cv %s)", pctShort(e.CV))
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%d\t%s\n", st.Label(c), c.Key, report.PathText(c.Params.Run.Path(), c.Params.Run.RTT), done[c.Key],
				intervalText(st, sp.Progress[c.Key]), e.Runs, from)
		}
		tw.Flush()
		fmt.Fprintf(w, "about %s to go, expected from the variation known (%d if every cell meets its precision as soon as it can, %d if every cell needs %d), %s, estimated %s (%s to %s)\n",
			words.Count(sp.Expected, "run"), sp.AtLeast, sp.AtMost, st.Repeat, words.Count(sp.Restarts, "server start"),
			sp.ExpectedEstimate.Round(time.Second), sp.LeastEstimate.Round(time.Second), sp.MostEstimate.Round(time.Second))
	} else {
		fmt.Fprintln(tw, "CELL\tKEY\tPATH\tDONE\tTO RUN")
		for _, c := range cells {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\n", st.Label(c), c.Key, report.PathText(c.Params.Run.Path(), c.Params.Run.RTT), min(done[c.Key], st.Repeat), need[c.Key])
		}
		tw.Flush()
		fmt.Fprintf(w, "%s to go (of %d), %s, estimated %s\n", words.Count(len(plan), "run"), len(cells)*st.Repeat,
			words.Count(sp.Restarts, "server start"), sp.Estimate.Round(time.Second))
	}
	if st.Budget > 0 {
		fmt.Fprintf(w, "budget %s: runs that do not fit are left for `dblat study resume`, the widest intervals served first\n", st.Budget)
	}
	for _, n := range sp.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}

// repeatText is a study's repeats as its file writes them: "repeat 3", "repeat 2..6 to
// ±10 %".
func repeatText(st *study.Study) string {
	if st.Adaptive() {
		return fmt.Sprintf("repeat %d..%d to ±%s", st.RepeatMin, st.Repeat, study.FormatPrecision(st.Precision))
	}
	return fmt.Sprintf("repeat %d", st.Repeat)
}

// intervalHead is the heading of a cell's interval column: "NOPM 95% CI".
func intervalHead(metric string) string {
	if metric == "" {
		metric = "METRIC"
	}
	return metric + " 95% CI"
}

// intervalText is a cell's mean and 95 % interval against the study's precision:
// "12,345 ±4.1 % ok", "12,345 ±23 % > 10 %", "-" without runs.
func intervalText(st *study.Study, p study.Progress) string {
	iv := p.Interval()
	switch {
	case iv.N == 0:
		return "-"
	case iv.N == 1:
		return fmt.Sprintf("%.0f (one run)", iv.Mean)
	}
	text := fmt.Sprintf("%.0f ±%s", iv.Mean, pctShort(iv.Relative()))
	switch {
	case st.Precision <= 0:
	case st.Precise(iv):
		text += " ok"
	default:
		text += " > " + study.FormatPrecision(st.Precision)
	}
	return text
}

// pctShort writes a share as a percentage: "4.1 %", "23 %".
func pctShort(f float64) string {
	if math.IsInf(f, 1) {
		return "∞ %"
	}
	if f >= 0.1 || f == 0 {
		return fmt.Sprintf("%.0f %%", f*100)
	}
	return fmt.Sprintf("%.1f %%", f*100)
}

func (a *app) studyRunCommand() *cobra.Command {
	var out string
	var lf liveFlags
	var budget time.Duration
	cmd := &cobra.Command{
		Use:   "run FILE",
		Short: "Run a study: every cell × repeat not yet finished, with live progress",
		Long: `Runs the cells of a study file that still lack finished runs, in the study's seeded
order. Each run is stored as soon as it ends. A failed run is recorded with its reason and
the study goes on, until max_failures runs have failed. Ctrl-C finishes and saves the
current run, stops, and says how to resume; a second Ctrl-C stops at once. At the end it
writes the study's HTML report (-o, default NAME.html) and prints its summary.`,
		Args: exactArgs(1, "a study FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := lf.check(); err != nil {
				return err
			}
			st, err := a.loadStudy(args[0])
			if err != nil {
				return err
			}
			if budget > 0 {
				st.Budget = budget
			}
			return a.runStudyAndReport(cmd.Context(), st, &lf, out)
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "where to write the HTML report at the end (default: STUDY.html)")
	cmd.Flags().DurationVar(&budget, "budget", 0, "stop after this long (overrides the file's budget:); the cells whose intervals are widest against their precision get the time first")
	lf.add(cmd.Flags())
	return cmd
}

// runStudyAndReport runs what is missing of st, then writes its HTML report to out
// (default STUDY.html).
func (a *app) runStudyAndReport(ctx context.Context, st *study.Study, lf *liveFlags, out string) error {
	if err := a.runStudy(ctx, st, lf); err != nil {
		return err
	}
	if out == "" {
		out = st.Name + ".html"
	}
	return a.writeStudyReport(context.WithoutCancel(ctx), st.Name, out)
}

func (a *app) studyResumeCommand() *cobra.Command {
	var out string
	var lf liveFlags
	var budget time.Duration
	cmd := &cobra.Command{
		Use:               "resume NAME",
		Short:             "Resume a study from its stored definition: run only what is missing",
		Args:              exactArgs(1, "a study NAME (see `dblat study list`)"),
		ValidArgsFunction: firstArg(a.completeStudies),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := lf.check(); err != nil {
				return err
			}
			st, err := a.storedStudy(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if budget > 0 {
				st.Budget = budget
			}
			return a.runStudyAndReport(cmd.Context(), st, &lf, out)
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "where to write the HTML report at the end (default: STUDY.html)")
	cmd.Flags().DurationVar(&budget, "budget", 0, "stop after this long (overrides the file's budget:); the cells whose intervals are widest against their precision get the time first")
	lf.add(cmd.Flags())
	return cmd
}

// storedStudy parses the definition a study was last run with.
func (a *app) storedStudy(ctx context.Context, name string) (*study.Study, error) {
	store, err := a.openStore(ctx)
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
	return st, nil
}

func (a *app) studyStatusCommand() *cobra.Command {
	return &cobra.Command{
		Use:               "status NAME",
		Short:             "Show a study's progress: finished, failed and remaining runs per cell",
		Args:              exactArgs(1, "a study NAME (see `dblat study list`)"),
		ValidArgsFunction: firstArg(a.completeStudies),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := a.storedStudy(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			store, err := a.openStore(cmd.Context())
			if err != nil {
				return err
			}
			defer store.Close()
			counts, err := store.CellCounts(cmd.Context(), st.Name)
			if err != nil {
				return err
			}
			progress, metric, err := execution.Progress(cmd.Context(), store, st)
			if err != nil {
				return err
			}
			tw := words.Columns(a.st.Stdout)
			head := "CELL\tFINISHED\tFAILED\tABORTED\tREMAINING"
			if st.Precision > 0 {
				head += "\t" + intervalHead(metric)
			}
			fmt.Fprintln(tw, head)
			var fin, failed, aborted, remaining, wide int
			for _, c := range st.Cells() {
				n := counts[c.Key]
				p := progress[c.Key]
				rem := st.Remaining(p)
				line := fmt.Sprintf("%s\t%d/%s\t%d\t%d\t%d", st.Label(c), n[results.StatusFinished], wantedText(st, p),
					n[results.StatusFailed], n[results.StatusAborted], rem)
				if st.Precision > 0 {
					line += "\t" + intervalText(st, p)
					if !st.Precise(p.Interval()) {
						wide++
					}
				}
				fmt.Fprintln(tw, line)
				fin += min(n[results.StatusFinished], st.Repeat)
				failed += n[results.StatusFailed]
				aborted += n[results.StatusAborted]
				remaining += rem
			}
			tw.Flush()
			state := "complete"
			if remaining > 0 {
				more := ""
				if st.Adaptive() {
					more = "at least "
				}
				state = fmt.Sprintf("%s%s remaining: `dblat study resume %s`", more, words.Count(remaining, "run"), st.Name)
			}
			a.printf("study %s: %d finished, %d failed, %d aborted; %s\n", st.Name, fin, failed, aborted, state)
			if st.Precision > 0 {
				a.printf("%d of %s within ±%s (95 %% intervals of %s)\n", len(st.Cells())-wide, words.Count(len(st.Cells()), "cell"),
					study.FormatPrecision(st.Precision), metricName(metric))
				if n, ok := st.FixedRepeat(progress); ok {
					a.printf("a fixed design meeting ±%s in every cell, from the variation measured, needs repeat %d: %d runs (this study has %d finished)\n",
						study.FormatPrecision(st.Precision), n, n*len(st.Cells()), fin)
				}
			}
			return nil
		},
	}
}

// wantedText is the runs a cell wants, for its FINISHED column: "3", or for an adaptive
// study "2..6".
func wantedText(st *study.Study, p study.Progress) string {
	if st.Adaptive() && !st.Finished(p) {
		return fmt.Sprintf("%d..%d", st.RepeatMin, st.Repeat)
	}
	return fmt.Sprint(st.Wanted(p))
}

func metricName(metric string) string {
	if metric == "" {
		return "the headline metric"
	}
	return metric
}

func (a *app) studyListCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the studies in the results database",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			store, err := a.openStore(cmd.Context())
			if err != nil {
				return err
			}
			defer store.Close()
			list, err := store.Studies(cmd.Context())
			if err != nil {
				return err
			}
			tw := words.Columns(a.st.Stdout)
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

// runStudy runs what a study still needs, with two-stage Ctrl-C, observed as lf asks (nil:
// the text progress).
func (a *app) runStudy(parent context.Context, st *study.Study, lf *liveFlags) error {
	ctx, drain, stop := a.interrupts(parent, "finishing the current run, saving it and stopping the study")
	defer stop()
	core, _, closeStore, err := a.core(ctx)
	if err != nil {
		return err
	}
	defer closeStore()
	if lf == nil {
		lf = &liveFlags{progress: "text"}
	}
	if err := a.observe(ctx, core, lf, 0); err != nil {
		return err
	}
	return core.RunStudy(ctx, drain, st)
}
