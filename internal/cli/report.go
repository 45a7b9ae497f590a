package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dblat/dblat/internal/report"
	"github.com/dblat/dblat/internal/words"
)

func (a *app) reportCommand() *cobra.Command {
	var out, format, scale, latency string
	var full bool
	cmd := &cobra.Command{
		Use:   "report STUDY|RUN[,RUN...] [-o FILE] [--format html|text|csv|json] [--full]",
		Short: "Render a study's report (or one of stored runs) from the results database",
		Long: `Builds a study's report from the stored runs alone, so it can be rebuilt at any time:
throughput against RTT and against terminals (mean and 95 % confidence interval over the
repeats), response-time percentiles per transaction type, round trips and bytes per
transaction, the configuration of each series, and a table of every run. Given run ids
instead of a study name, it reports those runs. The report of an application observed
through dblat proxy --observe is its prediction: what the observation was, a verdict at
+5 ms, response time and throughput against added RTT, what would help and the caveats,
then its transaction shapes.

The format follows the -o file's suffix (.html or .htm, .txt, .csv, .json; any other is
refused) unless --format is given; without -o the report goes to stdout as text: a summary that fits one screen (the
headline table, the knees, the findings); --full prints every table. HTML is
self-contained (inline SVG charts, no network needed).`,
		Example: `  dblat report quickstart-latency -o latency.html
  dblat report quickstart-latency --format csv > latency.csv`,
		Args:              exactArgs(1, "a STUDY name (see `dblat study list`) or run ids (see `dblat results list`)"),
		ValidArgsFunction: firstArg(a.completeStudies),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format == "" {
				f, err := formatFromPath(out)
				if err != nil {
					return err
				}
				format = f
			}
			if !slices.Contains(report.Formats, format) {
				return usagef("--format %q: use one of %s", format, strings.Join(report.Formats, ", "))
			}
			opts, err := chartOptions(scale)
			if err != nil {
				return err
			}
			switch latency {
			case "auto":
			case report.LatencyResponse, report.LatencyService:
				opts.Latency = latency
			default:
				return usagef("--latency %q: use auto, response or service", latency)
			}
			rep, what, err := a.buildReport(cmd.Context(), args[0], opts)
			if err != nil {
				return err
			}
			runs := rep.Runs
			w := a.st.Stdout
			var f *os.File
			if out != "" && out != "-" {
				if f, err = os.Create(out); err != nil {
					return usagef("-o %s: %v", out, err)
				}
				w = f
			}
			write := func() error { return report.Write(w, rep, format) }
			if format == "text" && !full {
				write = func() error { return report.WriteSummary(w, rep, "") }
			}
			if err := write(); err != nil {
				if f != nil {
					f.Close()
				}
				return err
			}
			if f != nil {
				if err := f.Close(); err != nil {
					return err
				}
				abs, _ := filepath.Abs(out)
				a.info("report of %s (%s) written to %s", what, words.Count(len(runs), "run"), abs)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "write the report to this file (default: stdout)")
	cmd.Flags().StringVar(&format, "format", "", "html, text, csv or json (default: from the -o suffix: .html, .txt, .csv, .json; text on stdout)")
	cmd.Flags().BoolVar(&full, "full", false, "text: every table of the report instead of the one-screen summary")
	cmd.Flags().StringVar(&scale, "scale", "auto", "chart axes: auto (log where values span decades), linear or log")
	cmd.Flags().StringVar(&latency, "latency", "auto", "the time response-time figures show: response (from each transaction's intended start), service (from the connection checkout), or auto (response time when a run is open-loop)")
	return cmd
}

// reportSuffixes are the -o file suffixes that choose a report's format.
var reportSuffixes = map[string]string{".html": "html", ".htm": "html", ".txt": "text", ".text": "text", ".csv": "csv", ".json": "json"}

// formatFromPath chooses a report's format from the -o file's suffix: text without a file
// (stdout); a suffix that names no format is refused rather than written as text.
func formatFromPath(path string) (string, error) {
	if path == "" || path == "-" {
		return "text", nil
	}
	ext := strings.ToLower(filepath.Ext(path))
	if f, ok := reportSuffixes[ext]; ok {
		return f, nil
	}
	what := fmt.Sprintf("its suffix %q names no report format", ext)
	if ext == "" {
		what = "it has no suffix to choose the format by"
	}
	return "", usagef("-o %s: %s; name the file .html, .txt, .csv or .json, or give --format html|text|csv|json", path, what)
}

// chartOptions reads --scale.
func chartOptions(scale string) (report.Options, error) {
	switch scale {
	case "auto", "linear", "log":
		return report.Options{XScale: scale, YScale: scale}, nil
	}
	return report.Options{}, usagef("--scale %q: use auto, linear or log", scale)
}

// buildReport builds the report of a stored study, with its analysis and credibility
// findings, or that of stored runs when name is no study but run ids (report.Load); what
// names which it was.
func (a *app) buildReport(ctx context.Context, name string, opts report.Options) (rep *report.Report, what string, err error) {
	store, err := a.openStore(ctx)
	if err != nil {
		return nil, "", err
	}
	defer store.Close()
	l, err := report.Load(ctx, store, name)
	if err != nil {
		return nil, "", err
	}
	rep, err = l.Build(opts)
	return rep, l.What, err
}
