package cli

import (
	"context"
	"encoding/json"

	"github.com/spf13/cobra"

	"github.com/dblat/dblat/internal/analysis"
	"github.com/dblat/dblat/internal/report"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/words"
)

// studyRuns loads a stored study's runs and the analysis options that describe it
// (report.LoadStudy).
func (a *app) studyRuns(ctx context.Context, name string) ([]results.Run, analysis.CheckOptions, error) {
	store, err := a.openStore(ctx)
	if err != nil {
		return nil, analysis.CheckOptions{}, err
	}
	defer store.Close()
	l, err := report.LoadStudy(ctx, store, name)
	if err != nil {
		return nil, analysis.CheckOptions{}, err
	}
	return l.Input.Runs, l.Check, nil
}

func (a *app) analyzeCommand() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "analyze STUDY [--format text|json]",
		Short: "Explain a study's numbers: latency model, knees, pool sizing, response-time limits",
		Long: `Fits each series of a study with the latency model X(r) = min(N / (R·r + s), C): N
terminals, R round trips per transaction (measured on the wire), r the RTT the link was
measured to add, s the service time, C the server's capacity. It reports predicted against
measured throughput, the RTTs where throughput has fallen by 10 % and 50 % (interpolated,
never extrapolated), the pool size that maximises throughput at each RTT and what each
extra connection buys, and whether each TPC-C transaction type meets the spec's
90th-percentile response-time limit at each RTT. Where the model does not fit (the server,
not the network, is the bottleneck) it says so instead of forcing a number. The credibility
findings of ` + "`dblat check study`" + ` are included.`,
		Args:              exactArgs(1, "a STUDY name (see `dblat study list`)"),
		ValidArgsFunction: firstArg(a.completeStudies),
		RunE: func(cmd *cobra.Command, args []string) error {
			runs, opt, err := a.studyRuns(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			an := analysis.Analyze(runs, opt)
			switch format {
			case "text":
				return analysis.WriteText(a.st.Stdout, an)
			case "json":
				enc := json.NewEncoder(a.st.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(an)
			}
			return usagef("--format %q: use text or json", format)
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "text or json")
	return cmd
}

// checkStudyCommand and checkRunsCommand gate a pipeline on the credibility of results.
func (a *app) checkStudyCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "study STUDY",
		Short: "Check that a study's runs compare like for like; exit 3 on errors",
		Long: `Flags, with the evidence and the fix: runs in one chart that differ in anything besides
the study's factors (server version, settings that matter, OS, CPU, client version, data
size, seed); engine pitfalls (Firebird Classic with large per-connection caches, clamped
page sizes, a cache left at its default below the data size, data that fits in RAM);
error and conflict rates above 1 % (warning) and 5 % (error); fewer than 5 repeats or a
coefficient of variation above 10 % in a cell; dblat's own CPU near saturation; an RTT the
link did not deliver within max(2 %, 50 µs); a warm-up too short. Exits 3 when any finding
is an error.`,
		Args:              exactArgs(1, "a STUDY name (see `dblat study list`)"),
		ValidArgsFunction: firstArg(a.completeStudies),
		RunE: func(cmd *cobra.Command, args []string) error {
			runs, opt, err := a.studyRuns(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return a.reportFindings(analysis.Check(runs, opt))
		},
	}
}

func (a *app) checkRunsCommand() *cobra.Command {
	var factors []string
	return func() *cobra.Command {
		cmd := &cobra.Command{
			Use:   "runs RUN... [--factors rtt,terminals]",
			Short: "Check that the given runs compare like for like; exit 3 on errors",
			Long: `Like ` + "`dblat check study`" + ` for any set of stored runs. Give --factors (the keys the runs are
meant to differ in: rtt, terminals, connections, engine, set.NAME, opt.NAME); without them
they are inferred from what differs, which cannot tell an intended difference from an
accident.`,
			Args: minArgs(1, "one RUN id or more (see `dblat results list`)"),
			RunE: func(cmd *cobra.Command, args []string) error {
				store, err := a.openStore(cmd.Context())
				if err != nil {
					return err
				}
				defer store.Close()
				var runs []results.Run
				for _, s := range args {
					id, err := results.ParseID(s)
					if err != nil {
						return usagef("run id %q is not a number (see `dblat results list`)", s)
					}
					r, err := store.Get(cmd.Context(), id, false)
					if err != nil {
						return err
					}
					runs = append(runs, *r)
				}
				parts, err := results.PartsOf(cmd.Context(), store, runs)
				if err != nil {
					return err
				}
				return a.reportFindings(analysis.Check(runs, analysis.CheckOptions{Factors: factors, Parts: parts}))
			},
		}
		cmd.Flags().StringSliceVar(&factors, "factors", nil, "factor keys the runs are meant to differ in")
		return cmd
	}()
}

// reportFindings prints findings and maps errors among them to the check exit code.
func (a *app) reportFindings(fs []analysis.Finding) error {
	if len(fs) == 0 {
		a.info("no findings: the runs compare like for like")
		return nil
	}
	if err := analysis.WriteFindings(a.st.Stdout, fs); err != nil {
		return err
	}
	if analysis.HasErrors(fs) {
		a.info("%s, some of them errors", words.Count(len(fs), "finding"))
		return errCheckFailed
	}
	a.info("%s, none of them errors", words.Count(len(fs), "finding"))
	return nil
}
