package cli

import (
	"fmt"
	"sort"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/dblat/dblat/internal/results"
)

func (a *app) resultsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "results",
		Short: "List, show and export stored runs",
	}
	cmd.AddCommand(a.resultsListCommand(), a.resultsShowCommand(), a.resultsExportCommand())
	return cmd
}

func (a *app) resultsListCommand() *cobra.Command {
	var f results.Filter
	var status string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List runs, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			store, err := a.openStore(cmd.Context())
			if err != nil {
				return err
			}
			defer store.Close()
			f.Status = results.Status(status)
			runs, err := store.List(cmd.Context(), f)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(a.st.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tSTARTED\tSTATUS\tENGINE\tTARGET\tWORKLOAD\tW\tTERM\tCONN\tRTT\tWINDOW\tNOPM\tTPM")
			for _, r := range runs {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%v\t%.0fs\t%.0f\t%.0f\n", r.ID, r.Started.Format("2006-01-02 15:04:05"),
					r.Status, r.Server.Engine, r.Server.Target, r.Params.Workload, r.Params.Scale, r.Params.Terminals,
					r.Params.Connections, r.Params.RTT, r.Summary.Elapsed.Seconds(), r.Summary.NOPM, r.Summary.TPM)
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
	var settings bool
	cmd := &cobra.Command{
		Use:   "show RUN",
		Short: "Show one run: summary, per-type figures, server and client",
		Args:  exactArgs(1, "a RUN id (see `dblat results list`)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := strconv.ParseInt(args[0], 10, 64)
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
			printSummary(a.st.Stdout, r)
			w := a.st.Stdout
			fmt.Fprintf(w, "server: %s\n", r.Server.Version)
			fmt.Fprintf(w, "client: %s, %s, %s, %d cores, %.1f GiB, %s, dblat %s\n", r.Client.Hostname, r.Client.OS,
				r.Client.CPUModel, r.Client.Cores, float64(r.Client.MemoryBytes)/(1<<30), r.Client.GoVersion, r.Client.DblatVersion)
			fmt.Fprintf(w, "started %s, ended %s, database %.1f MB\n", r.Started.Format("2006-01-02 15:04:05"),
				r.Ended.Format("15:04:05"), float64(r.Server.DatabaseBytes)/1e6)
			if settings {
				tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
				for _, k := range sortedKeys(r.Server.Settings) {
					fmt.Fprintf(tw, "  %s\t%s\n", k, r.Server.Settings[k])
				}
				tw.Flush()
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&settings, "settings", false, "also list the server settings the run ran with")
	return cmd
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
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "json" && format != "csv" {
				return usagef("--format %q: use json or csv", format)
			}
			store, err := a.openStore(cmd.Context())
			if err != nil {
				return err
			}
			defer store.Close()
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

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
