package cli

import (
	"context"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/dblat/dblat/examples"
	"github.com/dblat/dblat/internal/report"
	"github.com/dblat/dblat/internal/study"
)

func (a *app) quickstartCommand() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "quickstart",
		Short: "Run the embedded default study on a managed PostgreSQL and write its report",
		Long: `The embedded default (examples/quickstart.yaml): starts a managed PostgreSQL in the
state directory, its data directory in memory (no disk stalls; durability is not measured),
loads two TPC-C warehouses, runs TPC-C at RTT 0/0.2/0.5/1/5 ms × 2/4 terminals, two to four
times each until each cell's interval is within ±10 % (within a budget of seven minutes),
sets aside and reruns a run that the machine disturbed, stores every run, stops the server,
and writes a self-contained HTML report whose path it prints. Run it again to resume an
interrupted quickstart; once complete it only rewrites the report.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			st, err := study.Parse("quickstart.yaml (embedded)", examples.Quickstart)
			if err != nil {
				return err
			}
			if err := a.runStudy(ctx, st, nil); err != nil {
				return err
			}
			return a.writeStudyReport(context.WithoutCancel(ctx), st.Name, out)
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "dblat-quickstart.html", "where to write the HTML report")
	return cmd
}

// writeStudyReport writes a study's HTML report to out and prints its one-screen summary
// with the report's path.
func (a *app) writeStudyReport(ctx context.Context, name, out string) error {
	rep, _, err := a.buildReport(ctx, name, report.Options{})
	if err != nil {
		return err
	}
	f, err := os.Create(out)
	if err != nil {
		return usagef("-o %s: %v", out, err)
	}
	if err := report.WriteHTML(f, rep); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	abs, _ := filepath.Abs(out)
	if a.json != nil {
		a.json.studyEnded(name, abs)
		return nil
	}
	return report.WriteSummary(a.st.Stdout, rep, abs)
}
