package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/workload"
	"github.com/dblat/dblat/internal/workload/simple"
)

func checkSimpleName(name string) error {
	if !slices.Contains(simple.Names, name) {
		return usagef("unknown simple workload %q (known: %s)", name, strings.Join(simple.Names, ", "))
	}
	return nil
}

func (a *app) loadSimpleCommand() *cobra.Command {
	var (
		spec string
		cfg  simple.LoadConfig
	)
	cmd := &cobra.Command{
		Use:   "simple WORKLOAD --target TARGET [--scale N] [--blob-size B --blob-rows N]",
		Short: "Load a pgbench-style workload: tpcb, select-only, blob or ping",
		Long: `Loads the data of a simple workload. tpcb and select-only share pgbench's own tables
(pgbench_branches, _tellers, _accounts, _history, filled as ` + "`pgbench -i -s SCALE`" + ` does), so
pgbench itself can run on them on PostgreSQL and seed 003 can be repeated on any engine.
blob stores rows with a binary column of --blob-size bytes; ping needs no data.`,
		Example: `  dblat load simple select-only --target pg1 --scale 1
  dblat load simple blob --target fb1 --blob-size 40000 --blob-rows 1000`,
		Args: exactArgs(1, "a WORKLOAD (tpcb, select-only, blob or ping)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkSimpleName(args[0]); err != nil {
				return err
			}
			cfg.Workload = args[0]
			t, err := a.resolveTarget(spec)
			if err != nil {
				return err
			}
			wt, err := t.open(cmd.Context(), engine.OpenOptions{})
			if err != nil {
				return err
			}
			defer closeDB(wt)
			bar := a.newProgress("loading " + cfg.Workload)
			cfg.Progress = bar.update
			start := time.Now()
			if err := simple.Load(cmd.Context(), wt, cfg); err != nil {
				return fmt.Errorf("load %s into %s: %w", cfg.Workload, t.label, err)
			}
			a.info("loaded %s into %s in %.1f s", cfg.Workload, t.label, time.Since(start).Seconds())
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&spec, "target", "", "managed server name or DSN (required)")
	f.IntVar(&cfg.Scale, "scale", 1, "pgbench scale: 100,000 accounts per unit (tpcb, select-only)")
	f.IntVar(&cfg.BlobSize, "blob-size", 40000, "bytes per blob (blob)")
	f.IntVar(&cfg.BlobRows, "blob-rows", 1000, "rows of blobs (blob)")
	f.Int64Var(&cfg.Seed, "seed", 1, "random seed of the blob bytes")
	f.IntVar(&cfg.Workers, "workers", 0, "parallel loader connections (default: 2 × CPUs)")
	return cmd
}

// simpleOptions are the flags of `dblat run simple` besides the common run flags.
type simpleOptions struct {
	scale      int
	protocol   string
	blobsPerTx int
	blobWrite  bool
}

func (a *app) runSimpleCommand() *cobra.Command {
	var (
		o  runOptions
		so simpleOptions
	)
	cmd := &cobra.Command{
		Use:   "simple WORKLOAD --target TARGET [--protocol prepared|simple|extended] [--rtt D]",
		Short: "Run a pgbench-style workload: tpcb, select-only, blob or ping",
		Long: `Runs a simple workload like ` + "`run tpcc`" + ` does, and stores the run. tpcb and select-only are
pgbench's built-in scripts; --protocol chooses how PostgreSQL statements travel, as
pgbench -M does. blob reads (or with --blob-write, replaces) --blobs-per-tx blobs per
transaction: on Firebird each blob costs extra round trips (seed 000). ping is SELECT 1,
the floor.`,
		Example: `  dblat run simple select-only --target pg1 --terminals 10 --rtt 20ms
  dblat run simple blob --target fb1 --blobs-per-tx 10 --rtt 1ms`,
		Args: exactArgs(1, "a WORKLOAD (tpcb, select-only, blob or ping)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkSimpleName(args[0]); err != nil {
				return err
			}
			if err := o.link.resolve(cmd); err != nil {
				return err
			}
			ctx, drain, stop := a.interrupts(cmd.Context(), "finishing in-flight transactions and saving the run")
			defer stop()
			_, err := a.runSimple(ctx, drain, args[0], o, so, runMeta{})
			return err
		},
	}
	o.add(cmd)
	_ = cmd.Flags().MarkHidden("warehouses")
	_ = cmd.Flags().MarkHidden("mix")
	_ = cmd.Flags().MarkHidden("think")
	f := cmd.Flags()
	f.IntVar(&so.scale, "scale", 0, "pgbench scale the terminals use (default: all loaded)")
	f.StringVar(&so.protocol, "protocol", "prepared", "PostgreSQL: prepared, simple or extended (pgbench -M)")
	f.IntVar(&so.blobsPerTx, "blobs-per-tx", 1, "blobs read or written per transaction (blob)")
	f.BoolVar(&so.blobWrite, "blob-write", false, "write the blobs instead of reading them (blob)")
	return cmd
}

// runSimple measures one run of a simple workload and stores it.
func (a *app) runSimple(ctx context.Context, drain <-chan struct{}, name string, o runOptions, so simpleOptions, meta runMeta) (*results.Run, error) {
	return a.runWorkload(ctx, drain, o, meta, func(ctx context.Context, t *target, wt workload.Target) (*built, error) {
		info, err := simple.Loaded(ctx, wt.DB, name)
		if err != nil {
			if errors.Is(err, workload.ErrNotLoaded) {
				return nil, fmt.Errorf("%s has no %s data: %w (run `dblat load simple %s --target %s` first)", t.label, name, err, name, o.target)
			}
			return nil, err
		}
		w, err := simple.New(wt, simple.Config{Workload: name, Scale: so.scale, Seed: o.seed, Protocol: so.protocol,
			BlobsPerTx: so.blobsPerTx, BlobWrite: so.blobWrite})
		if err != nil {
			return nil, usageError{err}
		}
		scale := so.scale
		if scale == 0 {
			scale = info.Scale
		}
		opts := map[string]string{"protocol": w.Protocol(), "explicit_tx": strconv.FormatBool(w.ExplicitTx())}
		if name == "blob" {
			opts["blob_size"] = strconv.Itoa(info.BlobSize)
			opts["blobs_per_tx"] = strconv.Itoa(max(so.blobsPerTx, 1))
			opts["blob_write"] = strconv.FormatBool(so.blobWrite)
		}
		return &built{w: w, name: name, scale: scale, options: opts}, nil
	})
}
