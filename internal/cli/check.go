package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/dblat/dblat/internal/workload"
)

func (a *app) checkCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "check WORKLOAD|study|runs",
		Short: "Check a workload's data for consistency, or stored runs for credibility",
	}
	for _, def := range workload.InGroup("") {
		if def.Check != nil {
			cmd.AddCommand(a.checkWorkloadCommand(def))
		}
	}
	cmd.AddCommand(a.checkStudyCommand(), a.checkRunsCommand())
	return cmd
}

func (a *app) checkWorkloadCommand(def *workload.Definition) *cobra.Command {
	var spec string
	cmd := &cobra.Command{
		Use:   def.Name + " --target TARGET",
		Short: fmt.Sprintf("Check the consistency conditions of %s's data; exit 3 if any fails", def.Name),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			checks, label, err := a.servers().Check(cmd.Context(), spec, def.Name)
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
				a.info("%d of %d consistency conditions failed on %s", failed, len(checks), label)
				return errCheckFailed
			}
			a.info("all %d consistency conditions hold on %s", len(checks), label)
			return nil
		},
	}
	cmd.Flags().StringVar(&spec, "target", "", "managed server name or DSN (required)")
	return cmd
}
