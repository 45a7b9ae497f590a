package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/workload/tpcc"
)

func (a *app) loadCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "load WORKLOAD",
		Short: "Create a workload's schema and load its data",
	}
	cmd.AddCommand(a.loadTPCCCommand(), a.loadSimpleCommand())
	return cmd
}

func (a *app) loadTPCCCommand() *cobra.Command {
	var (
		spec       string
		warehouses int
		seed       int64
		workers    int
	)
	cmd := &cobra.Command{
		Use:   "tpcc --target TARGET --warehouses N",
		Short: "Load TPC-C (drops existing TPC-C tables in the target database)",
		Example: `  dblat load tpcc --target pg1 --warehouses 10
  dblat load tpcc --target 'postgres://bench@db.example:5432/bench' --warehouses 4 --seed 7`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if warehouses < 1 {
				return usagef("--warehouses must be at least 1, got %d", warehouses)
			}
			t, err := a.resolveTarget(spec)
			if err != nil {
				return err
			}
			return a.loadTPCC(cmd.Context(), t, warehouses, seed, workers)
		},
	}
	cmd.Flags().StringVar(&spec, "target", "", "managed server name or DSN (required)")
	cmd.Flags().IntVar(&warehouses, "warehouses", 1, "number of warehouses (scale; ~100 MB each)")
	cmd.Flags().Int64Var(&seed, "seed", 1, "random seed: the same seed loads the same data")
	cmd.Flags().IntVar(&workers, "workers", 0, "parallel loader connections (default: 2 × CPUs)")
	return cmd
}

func (a *app) loadTPCC(ctx context.Context, t *target, warehouses int, seed int64, workers int) error {
	wt, err := t.open(ctx, engine.OpenOptions{})
	if err != nil {
		return err
	}
	defer closeDB(wt)
	bar := a.newProgress(fmt.Sprintf("loading %d warehouses", warehouses))
	start := time.Now()
	err = tpcc.Load(ctx, wt, tpcc.LoadConfig{Warehouses: warehouses, Seed: seed, Workers: workers, Progress: bar.update})
	if err != nil {
		return fmt.Errorf("load tpcc into %s: %w", t.label, err)
	}
	el := time.Since(start)
	a.info("loaded %d warehouses into %s in %.1f s (%.1f warehouses/min)", warehouses, t.label, el.Seconds(),
		float64(warehouses)/el.Minutes())
	return nil
}
