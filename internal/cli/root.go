package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/execution"
	"github.com/dblat/dblat/internal/managed"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/spec"
	"github.com/dblat/dblat/internal/study"
	"github.com/dblat/dblat/internal/sysinfo"

	// Every engine and workload dblat ships registers itself.
	_ "github.com/dblat/dblat/internal/engine/all"
	_ "github.com/dblat/dblat/internal/workload/all"
)

// app holds the global flags and the process state for one invocation.
type app struct {
	st         *State
	stateDir   string
	resultsDB  string
	cpuProfile string
	profFile   *os.File
	// noCPUHold turns off holding the CPUs out of deep idle states (--no-cpu-latency-hold).
	noCPUHold bool
	// json, when set, prints progress and results as JSON lines (--progress json) instead
	// of the text summaries.
	json *jsonProgress
	// runAs and binDirs are set by `server start`'s flags; other commands use the defaults.
	runAs   string
	binDirs map[string]string
	// tapes are the recordings (--capture) of the observation sessions that write one.
	tapes sync.Map // *observe.Session → *replay.Tape
}

// registry returns the managed servers of the state directory. Its root is absolute: servers
// resolve relative paths against their own data directory, not dblat's.
func (a *app) registry() managed.Registry {
	root, err := filepath.Abs(a.stateDir)
	if err != nil {
		root = a.stateDir
	}
	return managed.Registry{Root: root}
}

// openStore opens the results store named by --results (DBLAT_RESULTS).
func (a *app) openStore(ctx context.Context) (results.Store, error) {
	return results.Open(ctx, a.resultsDB)
}

// core returns the execution core of this invocation with the results store open; call
// the returned function to close the store.
func (a *app) core(ctx context.Context) (*execution.Core, results.Store, func(), error) {
	store, err := a.openStore(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	reg := a.registry()
	c := &execution.Core{Store: store, Servers: reg, Observer: &observer{a: a},
		Launch: engine.LaunchConfig{RunAs: a.runAs, StateDir: reg.Root}, BinDirs: a.binDirs, HoldCPULatency: !a.noCPUHold}
	c.Agents = func(ctx context.Context, drain <-chan struct{}, rs spec.Run, n int) (*results.Run, error) {
		return a.coordinate(ctx, drain, c, store, rs, n, 0)
	}
	return c, store, func() { store.Close() }, nil
}

// servers returns an execution core for managing servers only (no results store).
func (a *app) servers() *execution.Core {
	reg := a.registry()
	return &execution.Core{Servers: reg, Observer: &observer{a: a},
		Launch: engine.LaunchConfig{RunAs: a.runAs, StateDir: reg.Root}, BinDirs: a.binDirs}
}

func (a *app) printf(format string, args ...any) { fmt.Fprintf(a.st.Stdout, format, args...) }

// info prints a progress or status line on stderr, keeping stdout for results.
func (a *app) info(format string, args ...any) { fmt.Fprintf(a.st.Stderr, format+"\n", args...) }

// Main runs the CLI with args and returns the process exit code.
func Main(st *State, args []string) int {
	a := &app{st: st}
	root := a.rootCommand()
	root.SetArgs(args)
	root.SetOut(st.Stdout)
	root.SetErr(st.Stderr)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err := root.ExecuteContext(ctx)
	a.stopProfile() // PersistentPostRun does not run when the command fails
	var list study.ErrorList
	switch {
	case err == nil, err == errCheckFailed: // a check's findings are printed already
	case errors.As(err, &list):
		// Every problem of a study file, one per line, each with its position.
		for _, e := range list {
			fmt.Fprintf(st.Stderr, "dblat: %s\n", oneLine(e))
		}
	default:
		fmt.Fprintf(st.Stderr, "dblat: %s\n", oneLine(err))
	}
	return exitCode(err)
}

func oneLine(err error) string {
	return strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n", " ")
}

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "dblat",
		Short: "Measure what network latency costs a database's OLTP throughput",
		Long: `dblat drives real PostgreSQL, MariaDB and Firebird servers with TPC-C; between its
terminals and the server it adds network latency precisely and counts the round trips and
bytes each transaction costs; and it stores every run with the configuration the server
really ran with, in a results database.

Start here:
  dblat quickstart                                  the embedded study: managed PostgreSQL, TPC-C
                                                    at 5 RTTs × 2 terminal counts, about 6 minutes
  dblat server start postgres --name pg1            a private server; prints its DSN
  dblat load tpcc --target pg1 --warehouses 10
  dblat run tpcc --target pg1 --terminals 20 --duration 5m --warmup 1m
  dblat results list`,
		Version:       sysinfo.Version(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.PersistentFlags().StringVar(&a.stateDir, "state", envOr(a.st, "DBLAT_STATE", ".dblat"),
		"state directory for managed servers (env DBLAT_STATE)")
	root.PersistentFlags().StringVar(&a.resultsDB, "results", envOr(a.st, "DBLAT_RESULTS", "dblat.db"),
		"results store: a SQLite file, or a PostgreSQL database shared by several machines (postgres://user@host/db) (env DBLAT_RESULTS)")
	root.PersistentFlags().StringVar(&a.cpuProfile, "cpuprofile", "", "write a CPU profile of dblat itself to this file (go tool pprof)")
	root.PersistentFlags().BoolVar(&a.noCPUHold, "no-cpu-latency-hold", false,
		"do not hold the CPUs out of deep idle states during runs, studies and calibrations (by default dblat writes 0 to /dev/cpu_dma_latency where permitted, so the latency link wakes on time; every run records which)")
	root.PersistentPreRunE = func(*cobra.Command, []string) error { return a.startProfile() }
	root.PersistentPostRun = func(*cobra.Command, []string) { a.stopProfile() }
	root.AddCommand(a.serverCommand(), a.loadCommand(), a.runCommand(), a.checkCommand(),
		a.resultsCommand(), a.studyCommand(), a.reportCommand(), a.analyzeCommand(), a.proxyCommand(), a.observeCommand(), a.replayCommand(), a.predictCommand(), a.calibrateCommand(), a.echoServerCommand(), a.quickstartCommand(), a.versionCommand(), a.agentCommand())
	refuseUnknownSubcommands(root)
	classifyInputErrors(root)
	a.registerFlagCompletions(root)
	return root
}

// classifyInputErrors makes the errors cobra finds in a command's arguments and required
// flags usage errors (exit 2), as its flag-parsing errors are (SetFlagErrorFunc): cobra
// returns them as plain errors, which would exit 1 like a failed run. Required flags are
// checked before cobra's own check, so that the error names the flag and the help.
func classifyInputErrors(cmd *cobra.Command) {
	for _, sub := range cmd.Commands() {
		classifyInputErrors(sub)
	}
	if args := cmd.Args; args != nil {
		cmd.Args = func(c *cobra.Command, a []string) error {
			err := args(c, a)
			var ue usageError
			if err != nil && !errors.As(err, &ue) {
				return usageError{err}
			}
			return err
		}
	}
	var required []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if v := f.Annotations[cobra.BashCompOneRequiredFlag]; len(v) > 0 && v[0] == "true" {
			required = append(required, f.Name)
		}
	})
	if len(required) == 0 {
		return
	}
	pre := cmd.PreRunE
	cmd.PreRunE = func(c *cobra.Command, a []string) error {
		for _, name := range required {
			if !c.Flags().Changed(name) {
				return usagef("%s needs --%s (see `%s --help`)", c.CommandPath(), name, c.CommandPath())
			}
		}
		if pre != nil {
			return pre(c, a)
		}
		return nil
	}
}

// noArgs is cobra.NoArgs with a usage-class error that says what was given.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usagef("%s takes no arguments, got %q (see `%s --help`)", cmd.CommandPath(), strings.Join(args, " "), cmd.CommandPath())
	}
	return nil
}

// minArgs is cobra.MinimumNArgs with a usage-class error that names what is missing.
func minArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < n {
			return usagef("%s needs %s (see `%s --help`)", cmd.CommandPath(), what, cmd.CommandPath())
		}
		return nil
	}
}

// refuseUnknownSubcommands makes every command that only groups others (dblat results,
// dblat study, ...) fail with "unknown command" and a suggestion when given one it does
// not have, instead of printing its help and exiting 0: a typo in a script must not pass.
// Without arguments it still prints its help.
func refuseUnknownSubcommands(cmd *cobra.Command) {
	for _, sub := range cmd.Commands() {
		refuseUnknownSubcommands(sub)
	}
	if !cmd.HasSubCommands() || cmd.Runnable() {
		return
	}
	cmd.SuggestionsMinimumDistance = 2
	cmd.Args = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		msg := fmt.Sprintf("unknown command %q for %q", args[0], c.CommandPath())
		if s := c.SuggestionsFor(args[0]); len(s) > 0 {
			msg += fmt.Sprintf(" (did you mean %s?)", strings.Join(s, " or "))
		}
		return usagef("%s; see `%s --help`", msg, c.CommandPath())
	}
	cmd.RunE = func(c *cobra.Command, _ []string) error { return c.Help() }
}

func envOr(st *State, key, def string) string {
	if v := st.Getenv(key); v != "" {
		return v
	}
	return def
}

// exactArgs is cobra.ExactArgs with a usage-class error that names the command.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usagef("%s needs %s (see `%s --help`)", cmd.CommandPath(), what, cmd.CommandPath())
		}
		return nil
	}
}

func (a *app) versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print dblat's version",
		Args:  noArgs,
		Long: `Prints dblat's version: the one ` + "`make build`" + ` stamps (git describe), else the commit Go
stamped into a build from a checkout, else the module version of ` + "`go install`" + `; then the
commit, its time and whether the tree was modified, where the binary carries them, and
the Go release. "dev" is a build that carries none of them.`,
		Run: func(*cobra.Command, []string) {
			b := sysinfo.Build()
			a.printf("dblat %s\n", b.Version)
			if b.Revision != "" {
				line := "commit " + b.Revision
				if b.Time != "" {
					line += " of " + b.Time
				}
				if b.Modified {
					line += ", with uncommitted changes"
				}
				a.printf("%s\n", line)
			}
			a.printf("built with %s\n", b.Go)
			if b.Version == "dev" {
				a.info("this build carries no version: it was built without make's -ldflags and without Go's VCS stamp " +
					"(GOFLAGS=-buildvcs=false, go run, or a git worktree, which go build does not stamp); `make build` stamps `git describe`")
			}
		},
	}
}

// startProfile starts CPU profiling when --cpuprofile is set.
func (a *app) startProfile() error {
	if a.cpuProfile == "" {
		return nil
	}
	f, err := os.Create(a.cpuProfile)
	if err != nil {
		return usagef("--cpuprofile: %v", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return err
	}
	a.profFile = f
	return nil
}

// stopProfile ends CPU profiling, if it runs.
func (a *app) stopProfile() {
	if a.profFile != nil {
		pprof.StopCPUProfile()
		a.profFile.Close()
		a.profFile = nil
	}
}
