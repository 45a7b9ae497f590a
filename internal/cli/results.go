package cli

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dblat/dblat/internal/report"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/spec"
	"github.com/dblat/dblat/internal/words"
)

func (a *app) resultsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "results",
		Short: "List, show and export stored runs",
	}
	cmd.AddCommand(a.resultsListCommand(), a.resultsShowCommand(), a.resultsExportCommand(), a.resultsDiffCommand(),
		a.resultsImportCommand())
	return cmd
}

func (a *app) resultsListCommand() *cobra.Command {
	var f results.Filter
	var status string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List runs, newest first",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			store, err := a.openStore(cmd.Context())
			if err != nil {
				return err
			}
			defer store.Close()
			if err := checkStudy(cmd.Context(), store, f.Study); err != nil {
				return err
			}
			f.Status = results.Status(status)
			runs, err := store.List(cmd.Context(), f)
			if err != nil {
				return err
			}
			// Every other parameter in which the listed runs differ gets a column of its own.
			fixed := []string{results.FactorRTT, results.FactorTerminals, results.FactorConnections, results.FactorWarehouses,
				results.FactorEngine, results.FactorTarget}
			var more []string
			for _, k := range results.InferFactors(runs) {
				if !slices.Contains(fixed, k) {
					more = append(more, k)
				}
			}
			tw := words.Columns(a.st.Stdout)
			fmt.Fprint(tw, "ID\tSTARTED\tSTATUS\tENGINE\tTARGET\tWORKLOAD\tSCALE\tTERM\tCONN\tPATH\tWINDOW\tTHROUGHPUT")
			for _, k := range more {
				fmt.Fprint(tw, "\t"+strings.ToUpper(strings.TrimPrefix(k, results.OptionPrefix)))
			}
			fmt.Fprintln(tw)
			for _, r := range runs {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t%.0fs\t%s", r.ID, r.Started.Format("2006-01-02 15:04:05"),
					r.Status, r.Server.Engine, r.Server.Target, r.Params.Workload, r.Params.Scale, r.Params.Terminals,
					r.Params.Connections, report.RunPathText(&r), r.Summary.Elapsed.Seconds(), throughputText(&r))
				for _, k := range more {
					v := results.FactorValue(&r, k)
					if v == "" {
						v = "–"
					}
					fmt.Fprint(tw, "\t"+v)
				}
				fmt.Fprintln(tw)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVar(&f.Study, "study", "", "only runs of this study")
	cmd.Flags().StringVar(&status, "status", "", "only runs with this status (running, finished, failed, aborted)")
	cmd.Flags().IntVar(&f.Limit, "limit", 50, "at most this many runs (0: all)")
	return cmd
}

func (a *app) resultsShowCommand() *cobra.Command {
	var settings, scripts bool
	cmd := &cobra.Command{
		Use:   "show RUN",
		Short: "Show one run: summary, per-type figures, server and client",
		Args:  exactArgs(1, "a RUN id (see `dblat results list`)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := results.ParseID(args[0])
			if err != nil {
				return usagef("run id %q is not a number (see `dblat results list`)", args[0])
			}
			store, err := a.openStore(cmd.Context())
			if err != nil {
				return err
			}
			defer store.Close()
			r, err := store.Get(cmd.Context(), id, false)
			if err != nil {
				return err
			}
			if err := report.WriteRunSummary(a.st.Stdout, r); err != nil {
				return err
			}
			w := a.st.Stdout
			fmt.Fprintf(w, "server: %s\n", r.Server.Version)
			cores := words.Count(r.Client.Cores, "core")
			if p := r.Client.Procs; p > 0 && p < r.Client.Cores {
				cores += fmt.Sprintf(" (GOMAXPROCS %d)", p)
			}
			fmt.Fprintf(w, "client: %s, %s, %s, %s, %.1f GiB, %s, dblat %s\n", r.Client.Hostname, r.Client.OS,
				r.Client.CPUModel, cores, float64(r.Client.MemoryBytes)/(1<<30), r.Client.GoVersion, r.Client.DblatVersion)
			fmt.Fprintf(w, "started %s, ended %s, database %.1f MB\n", r.Started.Format("2006-01-02 15:04:05"),
				r.Ended.Format("15:04:05"), float64(r.Server.DatabaseBytes)/1e6)
			if len(r.Observation) > 0 {
				if err := printObservation(w, r); err != nil {
					return err
				}
			}
			if r.Agents > 0 {
				parts, err := store.Parts(cmd.Context(), r.ID)
				if err != nil {
					return err
				}
				printParts(w, r, parts)
			}
			if settings {
				tw := words.Columns(w)
				for _, k := range slices.Sorted(maps.Keys(r.Server.Settings)) {
					fmt.Fprintf(tw, "  %s\t%s\n", k, r.Server.Settings[k])
				}
				tw.Flush()
			}
			if scripts {
				printScripts(w, r.Scripts)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&settings, "settings", false, "also list the server settings the run ran with")
	cmd.Flags().BoolVar(&scripts, "scripts", false, "also print the scripts the run ran (the script workload), each with its SHA-256")
	return cmd
}

// printParts prints one line per agent's part of a run that several agents drove: what
// each measured on its own (report.AgentRows), so that one slow or client-bound agent stands
// out.
func printParts(w io.Writer, r *results.Run, parts []results.Part) {
	fmt.Fprintf(w, "driven by %s (start skew %s):\n", words.Count(len(parts), "agent"), spec.FormatDuration(r.StartSkew.Round(time.Microsecond)))
	metric := results.MetricOf([]results.Run{*r})
	tw := words.NumberColumns(w)
	fmt.Fprintf(tw, "agent\tstate\tterminals\tcommitted\t%s\tclient CPU µs/tx\tlink\tlate p99 up/down µs\tstarted after announced\t\n", metric)
	for _, a := range report.AgentRows([]results.Run{*r}, map[int64][]results.Part{r.ID: parts}, metric) {
		state := a.State
		if a.Reason != "" {
			state += ": " + a.Reason
		}
		terms, committed, thr, cpu, link, late, started := "–", "–", "–", "–", "–", "–", "–"
		if a.Terminals > 0 {
			terms, committed = strconv.Itoa(a.Terminals), strconv.FormatInt(a.Committed, 10)
			thr = strconv.FormatFloat(a.Throughput, 'f', 1, 64)
		}
		if a.ClientCPUPerTxUs > 0 {
			cpu = strconv.FormatFloat(a.ClientCPUPerTxUs, 'f', 0, 64)
		}
		if a.LinkP50 != 0 {
			link = "+" + spec.FormatDuration(a.LinkP50.Round(time.Microsecond))
			late = fmt.Sprintf("%d/%d", a.LateUpP99.Microseconds(), a.LateDownP99.Microseconds())
		}
		if a.Started {
			started = spec.FormatDuration(a.StartedAfter.Round(time.Microsecond))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", a.Agent, state, terms, committed, thr, cpu, link, late, started)
	}
	tw.Flush()
}

func (a *app) resultsExportCommand() *cobra.Command {
	var (
		format string
		f      results.Filter
		withS  bool
	)
	cmd := &cobra.Command{
		Use:   "export --format json|csv",
		Short: "Export runs to stdout as JSON (full detail) or CSV (one row per run and transaction type)",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "json" && format != "csv" {
				return usagef("--format %q: use json or csv", format)
			}
			store, err := a.openStore(cmd.Context())
			if err != nil {
				return err
			}
			defer store.Close()
			if err := checkStudy(cmd.Context(), store, f.Study); err != nil {
				return err
			}
			runs, err := store.List(cmd.Context(), f)
			if err != nil {
				return err
			}
			if withS {
				for i := range runs {
					full, err := store.Get(cmd.Context(), runs[i].ID, true)
					if err != nil {
						return err
					}
					runs[i] = *full
				}
			}
			return results.Export(a.st.Stdout, runs, format)
		},
	}
	cmd.Flags().StringVar(&format, "format", "json", "json or csv")
	cmd.Flags().StringVar(&f.Study, "study", "", "only runs of this study")
	cmd.Flags().BoolVar(&withS, "samples", false, "include per-second samples (json)")
	return cmd
}

// checkStudy fails with the store's "no study" error (exit 2) when --study names a study
// the store does not hold: an empty list would read as a study without runs.
func checkStudy(ctx context.Context, store results.Store, name string) error {
	if name == "" {
		return nil
	}
	_, err := store.Study(ctx, name)
	return err
}

// throughputText is a run's headline figure with its unit: "NOPM 3120" or "TPS 8813.7";
// "–" for a run that measured nothing.
func throughputText(r *results.Run) string {
	if r.Summary.Elapsed <= 0 {
		return "–"
	}
	metric := results.MetricOf([]results.Run{*r})
	s := fmt.Sprintf("TPS %.1f", r.Summary.TPS)
	if metric == results.MetricNOPM {
		s = fmt.Sprintf("NOPM %.0f", r.Summary.NOPM)
	}
	if r.Params.OpenLoop() {
		s += " at " + spec.FormatRate(r.Params.Rate) + "/s offered"
		if r.Summary.Overload {
			s += " (overload point)"
		}
	}
	return s
}

func (a *app) resultsDiffCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "diff A B",
		Short: "Compare two runs or two studies: what differed in configuration, and each figure's change",
		Long: `Compares A with B side by side. Each side is a run id (12), several run ids joined by
commas (12,13,14: repeats of one configuration), or a study name (every finished run of it).
It lists only the configuration that differs between the sides (server version and
settings, parameters, client), then each figure's change from A to B per matching cell,
with a 95 % interval where both sides have two or more runs of the cell.`,
		Example: `  dblat results diff 12 15
  dblat results diff 12,13,14 15,16,17
  dblat results diff baseline-study tuned-study`,
		Args: exactArgs(2, "two sides to compare, A and B (run ids, comma-separated run ids, or study names)"),
		ValidArgsFunction: func(cmd *cobra.Command, args []string, s string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(args) >= 2 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return a.completeStudies(cmd, args, s)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			store, err := a.openStore(cmd.Context())
			if err != nil {
				return err
			}
			defer store.Close()
			var sides [2][]results.Run
			for i, spec := range args {
				if sides[i], err = a.diffSide(cmd.Context(), store, spec); err != nil {
					return err
				}
			}
			d, err := report.DiffRuns(sides[0], sides[1])
			if err != nil {
				return usageError{err}
			}
			return report.WriteDiff(a.st.Stdout, d)
		},
	}
}

// diffSide reads one side of `results diff`: run ids or a study's runs.
func (a *app) diffSide(ctx context.Context, store results.Store, spec string) ([]results.Run, error) {
	var runs []results.Run
	first, _, _ := strings.Cut(spec, ",")
	if _, err := results.ParseID(first); err == nil {
		ids, err := results.ParseIDs(spec)
		if err != nil {
			return nil, usagef("%q: run ids are numbers, joined by commas", spec)
		}
		for _, id := range ids {
			r, err := store.Get(ctx, id, false)
			if err != nil {
				return nil, err
			}
			runs = append(runs, *r)
		}
		return runs, nil
	}
	if _, err := store.Study(ctx, spec); err != nil {
		return nil, fmt.Errorf("%q is neither run ids nor a study: %w", spec, err)
	}
	return store.List(ctx, results.Filter{Study: spec, Status: results.StatusFinished})
}

func (a *app) resultsImportCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "import SOURCE",
		Short: "Copy the runs and studies of another results store (a SQLite file) into this one",
		Long: `Copies every ended run of SOURCE (a SQLite file or another store's location) with its
per-type figures and samples, and its studies, into the store --results names. Runs keep
their identity (uid), so importing the same source again adds nothing: it is safe to
repeat after more runs were added to the source. Run ids may differ between stores.`,
		Example: `  dblat --results postgres://bench@results-db/dblat results import dblat.db`,
		Args:    exactArgs(1, "a SOURCE store (a SQLite file)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := os.Stat(args[0]); err != nil && !strings.Contains(args[0], "://") {
				return usagef("import %s: %v (give the path of a results file)", args[0], err)
			}
			src, err := results.Open(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			defer src.Close()
			dst, err := a.openStore(cmd.Context())
			if err != nil {
				return err
			}
			defer dst.Close()
			st, err := results.Import(cmd.Context(), dst, src)
			if err != nil {
				return err
			}
			a.info("imported %s and %s from %s into %s (%s and %s were already there, %s still running were skipped)",
				words.Count(st.Runs, "run"), words.Count(st.Studies, "study"), src.Location(), dst.Location(), words.Count(st.RunsPresent, "run"), words.Count(st.StudiesPresent, "study"),
				words.Count(st.RunsSkipped, "run"))
			return nil
		},
	}
}
