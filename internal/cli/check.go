package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dblat/dblat/internal/words"
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
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			checks, label, err := a.servers().Check(cmd.Context(), spec, def.Name)
			if err != nil {
				return err
			}
			return a.printChecks(checks, label)
		},
	}
	cmd.Flags().StringVar(&spec, "target", "", "managed server name or DSN (required)")
	return cmd
}

// printChecks prints one line per consistency condition — "ok", "FAIL" with the violating
// rows, or "skip" with why it was not evaluated — and a summary that counts skipped
// conditions apart: a condition dblat did not evaluate is never reported as holding. It
// returns errCheckFailed when any condition failed.
func (a *app) printChecks(checks []workload.CheckResult, label string) error {
	var failed, skipped []string
	for _, c := range checks {
		status, detail := "ok  ", ""
		switch {
		case c.Skipped:
			status, detail = "skip", c.Detail
			skipped = append(skipped, c.Clause)
		case !c.OK:
			status, detail = "FAIL", c.Detail
			failed = append(failed, c.Clause)
		case c.Detail != "":
			detail = c.Detail // a condition that holds on the part of the data it covers
		}
		line := fmt.Sprintf("%s  %-9s %s", status, c.Clause, c.Name)
		if detail != "" {
			line += ": " + detail
		}
		a.printf("%s\n", line)
	}
	held := len(checks) - len(failed) - len(skipped)
	var parts []string
	if len(failed) > 0 {
		parts = append(parts, fmt.Sprintf("%d failed (%s)", len(failed), strings.Join(failed, ", ")))
	}
	parts = append(parts, fmt.Sprintf("%d hold", held))
	if len(skipped) > 0 {
		parts = append(parts, fmt.Sprintf("%d skipped, not evaluated (%s)", len(skipped), strings.Join(skipped, ", ")))
	}
	summary := fmt.Sprintf("%s of %s on %s", strings.Join(parts, ", "), words.Count(len(checks), "consistency condition"), label)
	if len(failed) == 0 && len(skipped) == 0 {
		summary = fmt.Sprintf("all %s hold on %s", words.Count(len(checks), "consistency condition"), label)
	}
	a.info("%s", summary)
	if len(failed) > 0 {
		return errCheckFailed
	}
	return nil
}
