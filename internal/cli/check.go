package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/workload/tpcc"
)

func (a *app) checkCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "check tpcc|study|runs",
		Short: "Check a workload's data for consistency, or stored runs for credibility",
	}
	var spec string
	tc := &cobra.Command{
		Use:   "tpcc --target TARGET",
		Short: "Check TPC-C consistency conditions 3.3.2.1–3.3.2.12; exit 3 if any fails",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			t, err := a.resolveTarget(spec)
			if err != nil {
				return err
			}
			wt, err := t.open(cmd.Context(), engine.OpenOptions{})
			if err != nil {
				return err
			}
			defer closeDB(wt)
			checks, err := tpcc.Check(cmd.Context(), wt)
			if err != nil {
				return err
			}
			failed := 0
			for _, c := range checks {
				status := "ok  "
				if !c.OK {
					status = "FAIL"
					failed++
				}
				line := fmt.Sprintf("%s  %-9s %s", status, c.Clause, c.Name)
				if c.Detail != "" && !c.OK {
					line += ": " + c.Detail
				}
				a.printf("%s\n", line)
			}
			if failed > 0 {
				a.info("%d of %d consistency conditions failed on %s", failed, len(checks), t.label)
				return errCheckFailed
			}
			a.info("all %d consistency conditions hold on %s", len(checks), t.label)
			return nil
		},
	}
	tc.Flags().StringVar(&spec, "target", "", "managed server name or DSN (required)")
	cmd.AddCommand(tc, a.checkStudyCommand(), a.checkRunsCommand())
	return cmd
}
