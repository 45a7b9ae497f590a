package cli

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/execution"
	"github.com/dblat/dblat/internal/option"
	"github.com/dblat/dblat/internal/spec"
	"github.com/dblat/dblat/internal/workload"
)

func (a *app) loadCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "load WORKLOAD",
		Short: "Create a workload's schema and load its data",
	}
	for _, def := range workload.InGroup("") {
		cmd.AddCommand(a.loadWorkloadCommand(def))
	}
	cmd.AddCommand(a.loadGroupCommand("simple"))
	return cmd
}

// loadFlags are the flags of every `dblat load` command.
type loadFlags struct {
	target  string
	scale   int
	seed    int64
	workers int
	opts    *optionFlags
	// params holds the workload's load parameters (Definition.LoadFields).
	params spec.Params
}

func (lf *loadFlags) add(f *pflag.FlagSet, scaleFlag, scaleUsage string, opts option.Set) {
	lf.opts = newOptionFlags()
	f.StringVar(&lf.target, "target", "", "managed server name or DSN (required)")
	if scaleFlag != "" {
		f.IntVar(&lf.scale, scaleFlag, 1, scaleUsage)
	}
	f.Int64Var(&lf.seed, "seed", 1, "random seed: the same seed loads the same data")
	f.IntVar(&lf.workers, "workers", 0, "parallel loader connections (default: 2 × CPUs)")
	lf.opts.add(f, opts)
	// Which database of a managed server to load (Firebird's page size).
	lf.opts.add(f, databaseOptions())
}

func (a *app) load(cmd *cobra.Command, def *workload.Definition, lf *loadFlags) error {
	if lf.target == "" {
		return usagef("--target is required: a managed server's name (see `dblat server list`) or a DSN")
	}
	if lf.scale < 1 && def.Scale.Name != "" {
		return usagef("--%s must be at least 1, got %d", def.Scale.Name, lf.scale)
	}
	given := lf.opts.given(cmd.Flags())
	if err := checkOptionFlags(given, append(slices.Clone(def.LoadOptions), databaseOptions()...)); err != nil {
		return err
	}
	c := a.servers()
	err := c.Load(cmd.Context(), lf.target, execution.LoadSpec{Workload: def.Name, Scale: lf.scale, Seed: lf.seed,
		Workers: lf.workers, Options: given, ScriptParams: lf.params.ScriptParams})
	return flagErrors(err, runFlagNames(def, cmd.Flags()))
}

// databaseOptions are the options of every registered engine that choose which database of
// a managed server to use (Firebird's page size).
func databaseOptions() option.Set {
	var s option.Set
	for _, name := range engine.Names() {
		e, _ := engine.Lookup(name)
		if d := engine.Caps(e).Databases; d != nil {
			s = append(s, d.DatabaseOptions()...)
		}
	}
	return s
}

// checkOptionFlags checks the value of each option given as a flag (by option name)
// against its declaration in decl, so that a bad value is refused with the flag's name
// (--blob-size) rather than the study file's key (blob_size). Names decl does not know are
// left to the execution core.
func checkOptionFlags(given map[string]string, decl option.Set) error {
	for _, name := range slices.Sorted(maps.Keys(given)) {
		if o, ok := decl.Lookup(name); ok {
			if _, err := o.Canonical(given[name]); err != nil {
				return usagef("--%s %v", o.FlagName(), err)
			}
		}
	}
	return nil
}

func (a *app) loadWorkloadCommand(def *workload.Definition) *cobra.Command {
	var lf loadFlags
	example := fmt.Sprintf(`  dblat load %[1]s --target pg1 --%[2]s 10
  dblat load %[1]s --target 'postgres://bench@db.example:5432/bench' --%[2]s 4 --seed 7`, def.Name, def.Scale.Name)
	if def.LoadExample != "" {
		example = def.LoadExample
	}
	cmd := &cobra.Command{
		Use:     def.Name + " --target TARGET --" + def.Scale.Name + " N",
		Short:   fmt.Sprintf("Load %s (drops an earlier load of its tables in the target database)", def.Name),
		Example: example,
		Args:    noArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return a.load(cmd, def, &lf) },
	}
	if len(def.LoadFields) > 0 {
		cmd.Short = fmt.Sprintf("Load the data %s runs on", def.Name)
	}
	usage := fmt.Sprintf("number of %s (%s)", def.Scale.Name, def.Scale.Usage)
	if def.Scale.Name == "scale" { // a factor, not a count of things
		usage = "scale: " + def.Scale.Usage
	}
	lf.add(cmd.Flags(), def.Scale.Name, usage, def.LoadOptions)
	addFieldFlags(cmd.Flags(), &lf.params, def.LoadFields)
	return cmd
}

func (a *app) loadGroupCommand(group string) *cobra.Command {
	defs := workload.InGroup(group)
	var names, lines []string
	var opts option.Set
	for _, d := range defs {
		names = append(names, d.Name)
		lines = append(lines, fmt.Sprintf("  %-12s %s", d.Name, d.Summary))
		opts = append(opts, d.LoadOptions...)
	}
	var lf loadFlags
	cmd := &cobra.Command{
		Use:   group + " WORKLOAD --target TARGET [--scale N]",
		Short: "Load a pgbench-style workload: " + strings.Join(names, ", "),
		Long: `Loads the data of a simple workload. tpcb and select-only share pgbench's own tables
(pgbench_branches, _tellers, _accounts, _history, filled as ` + "`pgbench -i -s SCALE`" + ` does), so
pgbench itself can run on them on PostgreSQL and seed 003 can be repeated on any engine.
blob stores rows with a binary column of --blob-size bytes; ping needs no data.

Workloads:
` + strings.Join(lines, "\n"),
		Example: fmt.Sprintf(`  dblat load %[1]s select-only --target pg1 --scale 1
  dblat load %[1]s blob --target fb1 --blob-size 40000 --blob-rows 1000`, group),
		Args: exactArgs(1, "a WORKLOAD ("+strings.Join(names, ", ")+")"),
		RunE: func(cmd *cobra.Command, args []string) error {
			def, err := workload.Lookup(args[0])
			if err != nil || def.Group != group {
				return usagef("unknown %s workload %q (known: %s)", group, args[0], strings.Join(names, ", "))
			}
			given := lf.opts.given(cmd.Flags())
			for name := range given {
				if _, mine := def.LoadOptions.Lookup(name); !mine {
					if _, ours := opts.Lookup(name); ours {
						return usagef("--%s is not an option of loading %s (its options: %s)", option.Option{Name: name}.FlagName(),
							def.Name, flagList(def.LoadOptions))
					}
				}
			}
			if cmd.Flags().Changed("scale") && def.Scale.Name == "" {
				return usagef("--scale: %s has no scale", def.Name)
			}
			return a.load(cmd, def, &lf)
		},
	}
	lf.add(cmd.Flags(), "scale", "pgbench scale: 100,000 accounts per unit (tpcb, select-only)", opts)
	return cmd
}
