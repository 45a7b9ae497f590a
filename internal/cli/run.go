package cli

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/option"
	"github.com/dblat/dblat/internal/report"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/spec"
	"github.com/dblat/dblat/internal/workload"
)

// runFlags are the flags every `dblat run` command has, whatever the workload. The run's own
// parameters (terminals, pool, window, rate, retries) are spec.Fields' flags, read straight
// into run.
type runFlags struct {
	run        spec.Run
	target     string
	printEvery time.Duration
	transport  string
	link       linkOptions
	live       liveFlags
	// failOnOverload turns an overload point into exit status 4.
	failOnOverload bool
	// Agents.
	agents    int
	agentWait time.Duration
}

// driveFlags are the spec.Fields every run command has as flags of their own: each with a
// flag, but those of a workload's (Scoped: Definition.Fields), think, whose flag only a
// workload with think times has (Definition.Think), and the link's (linkOptions).
func driveFlags() []*spec.Field {
	var out []*spec.Field
	for i := range spec.Fields {
		f := &spec.Fields[i]
		if f.FlagName() != "" && !f.Scoped && !f.Link && f.Name != results.FactorThink {
			out = append(out, f)
		}
	}
	return out
}

func (o *runFlags) add(f *pflag.FlagSet, cmd *cobra.Command) {
	o.run = spec.Run{Params: spec.Defaults()}
	f.StringVar(&o.target, "target", "", "managed server name or DSN (required)")
	for _, fld := range driveFlags() {
		fieldFlag(f, fld, &o.run.Params, fld.FlagName(), "", fld.Usage)
	}
	f.DurationVar(&o.printEvery, "print-every", 10*time.Second, "how often to print progress (0: never)")
	f.StringVar(&o.transport, "transport", spec.TransportTCP, "tcp, or unix for a managed server's Unix socket (PostgreSQL, MariaDB)")
	f.BoolVar(&o.failOnOverload, "fail-on-overload", false, "with --rate, exit with status 4 when the run is an overload point (the rate was not sustained)")
	f.IntVar(&o.agents, "agents", 0, "drive the run with N \"dblat agent\" processes instead of this one: it waits for N idle agents in the results store, gives each a part of the terminals and stores the exact merge")
	f.DurationVar(&o.agentWait, "agents-wait", 10*time.Minute, "with --agents, how long to wait for enough idle agents")
	o.link.add(cmd, &o.run.Params)
	o.live.add(f)
}

// optionFlags registers one flag per option and collects the ones given.
type optionFlags struct {
	set    option.Set
	values map[string]*string
	bools  map[string]*bool
}

func newOptionFlags() *optionFlags {
	return &optionFlags{values: map[string]*string{}, bools: map[string]*bool{}}
}

// add registers the options of s not registered yet (several engines or workloads may
// declare an option of the same name: the first declaration gives the flag).
func (of *optionFlags) add(f *pflag.FlagSet, s option.Set) {
	for _, o := range s {
		if _, dup := of.set.Lookup(o.Name); dup {
			continue
		}
		of.set = append(of.set, o)
		if o.Kind == option.Bool {
			of.bools[o.Name] = f.Bool(o.FlagName(), o.Default == "true", o.Usage)
			declared(f, o.FlagName(), o)
			continue
		}
		usage := o.Usage
		if len(o.Values) > 0 && !strings.Contains(usage, o.Values[0]) {
			usage += " (" + strings.Join(o.Values, ", ") + ")"
		}
		of.values[o.Name] = f.String(o.FlagName(), o.Default, usage)
		declared(f, o.FlagName(), o)
	}
}

// given returns the options whose flags were given, by option name, as strings.
func (of *optionFlags) given(f *pflag.FlagSet) map[string]string {
	out := map[string]string{}
	for _, o := range of.set {
		if !f.Changed(o.FlagName()) {
			continue
		}
		if b, ok := of.bools[o.Name]; ok {
			out[o.Name] = fmt.Sprint(*b)
		} else {
			out[o.Name] = *of.values[o.Name]
		}
	}
	return out
}

// engineRunOptions are the run options and database options of every registered engine.
func engineRunOptions() option.Set {
	var s option.Set
	for _, name := range engine.Names() {
		e, _ := engine.Lookup(name)
		caps := engine.Caps(e)
		if caps.RunHooks != nil {
			s = append(s, caps.RunHooks.RunOptions()...)
		}
		if caps.Databases != nil {
			s = append(s, caps.Databases.DatabaseOptions()...)
		}
	}
	return s
}

// workloadFlags are the flags a workload's definition gives a run command: its scale, mix,
// think times and options.
type workloadFlags struct {
	mix  string
	opts *optionFlags
}

func (a *app) runCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run WORKLOAD",
		Short: "Run a workload against a target and store the run",
	}
	for _, def := range workload.InGroup("") {
		cmd.AddCommand(a.runWorkloadCommand(def))
	}
	cmd.AddCommand(a.runGroupCommand("simple", "Run a pgbench-style workload"))
	return cmd
}

const runLong = `Runs %s with N terminals for a warm-up and a measurement window, prints progress, then
the summary, and stores the run (status, parameters, the server's settings read back,
statistics before and after, per-transaction histograms, round trips and bytes per
transaction, and per-second samples).

With --rtt (or --up/--down/--jitter/--bandwidth) the terminals reach the server through
dblat's latency link, which adds that delay precisely; a short calibration before the run
stores the RTT actually added next to the one requested.
%s
With --rate R the run is open-loop: transactions arrive at R per second in total on a
schedule fixed in advance, whatever the server does, and the summary shows response times
from each arrival's intended start (service time and schedule lag beside them). A run that
could not keep the rate is marked an overload point. Without --rate each terminal starts its
next transaction when the last one ends (closed loop), which slows down with the server and
never shows a backlog.

Ctrl-C once finishes the transactions in flight and saves the run as aborted with what was
measured; twice stops at once.`

// runWorkloadCommand is `dblat run NAME` for a workload run by its own name (tpcc).
func (a *app) runWorkloadCommand(def *workload.Definition) *cobra.Command {
	var (
		rf runFlags
		wf = workloadFlags{opts: newOptionFlags()}
	)
	metric := "\nTPS is completed transactions per second.\n"
	if def.Metric.TxType != "" {
		metric = fmt.Sprintf("\n%s is committed %s transactions per minute; TPM is all completed transactions per\nminute (designed rollbacks included).\n", def.Metric.Name, def.Metric.TxType)
	}
	example := fmt.Sprintf(`  dblat run %[1]s --target pg1 --terminals 20 --duration 5m --warmup 1m
  dblat run %[1]s --target pg1 --terminals 20 --rtt 2ms
  dblat run %[1]s --target pg1 --duration 2m --during backup@30s`, def.Name)
	if def.RunExample != "" {
		example = def.RunExample
	}
	use := def.Name
	for _, key := range def.Fields {
		if fld, _ := spec.Lookup(key); fld.List() && fld.Short != "" {
			value, _, _ := strings.Cut(fld.Usage, ":")
			use += fmt.Sprintf(" [-%s %s ...]", fld.Short, value)
		}
	}
	cmd := &cobra.Command{
		Use:     use + " --target TARGET [--terminals N] [--duration D] [--warmup D] [--rtt D]",
		Short:   def.Summary,
		Long:    fmt.Sprintf(runLong, def.Name, metric) + fieldsLong(def),
		Example: example,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runWorkload(cmd, def, &rf, &wf, nil)
		},
	}
	f := cmd.Flags()
	rf.add(f, cmd)
	wf.addFlags(f, &rf.run, def, def.Options)
	addFieldFlags(f, &rf.run.Params, def.Fields)
	wf.opts.add(f, engineRunOptions())
	return cmd
}

// addFieldFlags registers the flags of the scoped run parameters keys (a workload's
// Definition.Fields or LoadFields) into p.
func addFieldFlags(f *pflag.FlagSet, p *spec.Params, keys []string) {
	for _, key := range keys {
		fld, _ := spec.Lookup(key)
		fieldFlag(f, fld, p, fld.FlagName(), fld.Short, fld.Usage)
	}
}

// fieldsLong is what a workload's own help adds to the run command's (Definition.Help).
func fieldsLong(def *workload.Definition) string {
	if def.Help == "" {
		return ""
	}
	return "\n\n" + def.Help
}

// runGroupCommand is `dblat run GROUP NAME` for the workloads of a group (simple): the flags
// are the union of theirs, and a flag the named workload does not use is refused.
func (a *app) runGroupCommand(group, short string) *cobra.Command {
	defs := workload.InGroup(group)
	var names, lines []string
	var opts option.Set
	hasScale := false
	for _, d := range defs {
		names = append(names, d.Name)
		lines = append(lines, fmt.Sprintf("  %-12s %s", d.Name, d.Summary))
		opts = append(opts, d.Options...)
		hasScale = hasScale || d.Scale.Name != ""
	}
	var (
		rf runFlags
		wf = workloadFlags{opts: newOptionFlags()}
	)
	cmd := &cobra.Command{
		Use:   group + " WORKLOAD --target TARGET [--rtt D]",
		Short: short + ": " + strings.Join(names, ", "),
		Long: fmt.Sprintf(runLong, "a "+group+" workload", "\nTPS is completed transactions per second.\n") +
			"\n\nWorkloads:\n" + strings.Join(lines, "\n"),
		Example: fmt.Sprintf(`  dblat run %[1]s select-only --target pg1 --terminals 10 --rtt 20ms
  dblat run %[1]s blob --target fb1 --blobs-per-tx 10 --rtt 1ms`, group),
		Args: exactArgs(1, "a WORKLOAD ("+strings.Join(names, ", ")+")"),
		RunE: func(cmd *cobra.Command, args []string) error {
			def, err := workload.Lookup(args[0])
			if err != nil || def.Group != group {
				return usagef("unknown %s workload %q (known: %s)", group, args[0], strings.Join(names, ", "))
			}
			return a.runWorkload(cmd, def, &rf, &wf, opts)
		},
	}
	f := cmd.Flags()
	rf.add(f, cmd)
	if hasScale {
		scale, _ := spec.Lookup("warehouses")
		fieldFlag(f, scale, &rf.run.Params, "scale", "", scale.Usage)
	}
	wf.opts.add(f, opts)
	wf.opts.add(f, engineRunOptions())
	return cmd
}

// addFlags adds the flags of def's scale, mix and think times (into run), and of opts.
func (wf *workloadFlags) addFlags(f *pflag.FlagSet, run *spec.Run, def *workload.Definition, opts option.Set) {
	if def.Scale.Name != "" {
		scale, _ := spec.Lookup("warehouses")
		fieldFlag(f, scale, &run.Params, def.Scale.Name, "", fmt.Sprintf("%s to use (default: all loaded)", def.Scale.Name))
	}
	if len(def.TxTypes) > 1 {
		weights := make([]string, len(def.TxTypes))
		for i, t := range def.TxTypes {
			weights[i] = fmt.Sprint(def.DefaultMix[t])
		}
		f.StringVar(&wf.mix, "mix", strings.Join(weights, ","), "weights of "+strings.Join(def.TxTypes, ","))
	}
	if def.Think {
		think, _ := spec.Lookup("think")
		fieldFlag(f, think, &run.Params, think.FlagName(), "", think.Usage)
		f.Lookup(think.FlagName()).NoOptDefVal = "true"
	}
	wf.opts.add(f, opts)
}

// runWorkload builds the run's description from the flags and runs it. groupOpts, for a
// group command, are the options of the whole group: those def does not declare are refused.
func (a *app) runWorkload(cmd *cobra.Command, def *workload.Definition, rf *runFlags, wf *workloadFlags, groupOpts option.Set) error {
	if err := rf.link.resolve(cmd); err != nil {
		return err
	}
	if err := rf.live.check(); err != nil {
		return err
	}
	f := cmd.Flags()
	switch {
	case rf.run.Rate == 0 && f.Changed("arrival"):
		return usagef("--arrival spaces the arrivals of an open-loop run: give --rate too")
	case rf.run.Rate == 0 && rf.failOnOverload:
		return usagef("--fail-on-overload needs --rate: only an open-loop run can be an overload point")
	case rf.agents < 0:
		return usagef("--agents must be at least 1 (0: this process runs every terminal), got %d", rf.agents)
	case rf.agents > 0 && rf.run.WarmupAuto:
		return usagef("--warmup auto needs the run in one process: agents start their windows at one announced time; give --warmup a duration")
	case rf.agents > 0 && rf.run.During != "":
		return usagef("--during needs the run in one process: agents drive parts of a run, and none of them owns the server")
	}
	given := wf.opts.given(f)
	for _, o := range groupOpts {
		if _, ok := given[o.Name]; ok && !slices.ContainsFunc(def.Options, func(x option.Option) bool { return x.Name == o.Name }) {
			return usagef("--%s is not an option of %s (its options: %s)", o.FlagName(), def.Name, flagList(def.Options))
		}
	}
	if f.Lookup("scale") != nil && f.Changed("scale") && def.Scale.Name == "" {
		return usagef("--scale: %s has no scale (it loads no sized data)", def.Name)
	}
	link := rf.link.link()
	rs := rf.run.Clone()
	rs.Target, rs.Workload, rs.Options, rs.Link = rf.target, def.Name, given, link
	if f.Changed("transport") {
		rs.Options[spec.OptionTransport] = rf.transport
	}
	if f.Lookup("mix") != nil && f.Changed("mix") {
		rs.Options[spec.OptionMix] = strings.Join(strings.Fields(wf.mix), "")
	}
	if rs.Target == "" {
		return usagef("--target is required: a managed server's name (see `dblat server list`) or a DSN such as postgres://user@host:5432/db or mysql://user:pw@host:3306/db")
	}
	rs.Resolve()
	flags := runFlagNames(def, f)
	if err := spec.Errors(rs.Validate()); err != nil {
		return flagErrors(err, flags)
	}
	ctx, drain, stop := a.interrupts(cmd.Context(), "finishing in-flight transactions and saving the run")
	defer stop()
	core, store, closeStore, err := a.core(ctx)
	if err != nil {
		return err
	}
	defer closeStore()
	if err := a.observe(ctx, core, &rf.live, rf.printEvery); err != nil {
		return err
	}
	var run *results.Run
	if rf.agents > 0 {
		run, err = a.coordinate(ctx, drain, core, store, rs, rf.agents, rf.agentWait)
	} else {
		run, err = core.Run(ctx, drain, rs)
	}
	if run != nil && (err == nil || err == errInterrupted) && a.json == nil {
		if werr := report.WriteRunSummary(a.st.Stdout, run); werr != nil && err == nil {
			err = werr
		}
		a.info("stored as run %d in %s", run.ID, store.Location())
	}
	if err == nil && rf.failOnOverload && run.Summary.Overload {
		return errOverload
	}
	return flagErrors(err, flags)
}

// runFlagNames names the flag of each field path of a run of def (spec's paths): the run's
// fields, the workload's scale, the link, the options by their flags.
func runFlagNames(def *workload.Definition, f *pflag.FlagSet) func(path string) string {
	return func(path string) string {
		if name, ok := spec.OptionName(path); ok {
			return "--" + strings.ReplaceAll(name, "_", "-")
		}
		switch path {
		case spec.LinkPath.String():
			return "--rtt"
		case spec.TargetPath.String():
			return "--target"
		case spec.WorkloadPath.String():
			return "workload " + def.Name
		case "warehouses":
			if def.Scale.Name != "" {
				return "--" + def.Scale.Name
			}
			return "--scale"
		}
		if fld, ok := spec.Lookup(path); ok && fld.FlagName() != "" {
			return "--" + fld.FlagName()
		}
		return path
	}
}

// flagErrors rewrites the field errors err carries with each field's flag (one line each),
// keeping err's exit status; any other error is returned as it is.
func flagErrors(err error, flag func(path string) string) error {
	list, ok := spec.AsList(err)
	if !ok {
		return err
	}
	lines := make([]string, len(list))
	for i, fe := range list {
		lines[i] = flag(fe.Field) + " " + spec.Expand(fe.Detail, flag)
	}
	return usageError{errors.New(strings.Join(lines, "\n"))}
}

func flagList(s option.Set) string {
	if len(s) == 0 {
		return "none"
	}
	out := make([]string, len(s))
	for i, o := range s {
		out[i] = "--" + o.FlagName()
	}
	return strings.Join(out, ", ")
}
