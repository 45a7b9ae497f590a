package cli

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/spf13/cobra"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/engine/firebird"
	"github.com/dblat/dblat/internal/managed"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/runner"
	"github.com/dblat/dblat/internal/sysinfo"
	"github.com/dblat/dblat/internal/workload"
	"github.com/dblat/dblat/internal/workload/tpcc"
)

// runOptions are the flags of `dblat run tpcc`.
type runOptions struct {
	target      string
	terminals   int
	connections int
	duration    time.Duration
	warmup      time.Duration
	warehouses  int
	seed        int64
	mix         string
	think       bool
	printEvery  time.Duration
	link        linkOptions
	// transport is "tcp" (default) or "unix" (managed PostgreSQL and MariaDB servers).
	transport string
	// mode is TPC-C's round-trip mode: client, batched or procedure.
	mode string
	// gstat adds Firebird's record/version statistics (gstat -r) to the statistics taken
	// before and after the run; sweep sweeps the database before it (seed 001).
	gstat, sweep bool
	// interpolate makes go-sql-driver/mysql interpolate parameters client-side (1 round trip
	// per statement) instead of server-side prepared statements.
	interpolate bool
}

func (o *runOptions) add(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.target, "target", "", "managed server name or DSN (required)")
	f.IntVar(&o.terminals, "terminals", 10, "concurrent terminals (emulated users)")
	f.IntVar(&o.connections, "connections", 0, "connection pool size (default: one per terminal); with fewer, terminals queue and the wait is reported apart")
	f.DurationVar(&o.duration, "duration", time.Minute, "measurement window")
	f.DurationVar(&o.warmup, "warmup", 10*time.Second, "warm-up before the window, excluded from all figures")
	f.IntVar(&o.warehouses, "warehouses", 0, "warehouses to use (default: all loaded)")
	f.Int64Var(&o.seed, "seed", 1, "random seed of the terminals")
	f.StringVar(&o.mix, "mix", "45,43,4,4,4", "weights of new_order,payment,order_status,delivery,stock_level")
	f.BoolVar(&o.think, "think", false, "keying and think times per TPC-C 5.2.5 (off: terminals run flat out, as HammerDB does)")
	f.DurationVar(&o.printEvery, "print-every", 10*time.Second, "how often to print progress (0: never)")
	f.StringVar(&o.transport, "transport", "tcp", "tcp, or unix for a managed PostgreSQL or MariaDB server's Unix socket")
	f.StringVar(&o.mode, "mode", "client", "TPC-C round-trip mode: client (one statement per round trip), batched (pipelines, multi-row reads, EXECUTE BLOCK) or procedure (one server-side call per transaction)")
	f.BoolVar(&o.gstat, "gstat", false, "Firebird (managed): add gstat -r record and version statistics before and after the run")
	f.BoolVar(&o.sweep, "sweep", false, "Firebird (managed): sweep the database before the run")
	f.BoolVar(&o.interpolate, "interpolate-params", false, "MariaDB/MySQL: interpolate parameters in the client (1 round trip per statement) instead of server-side prepared statements (2 the first time)")
	o.link.add(cmd)
}

// runMeta ties a run to a study cell and carries the options stored with it.
type runMeta struct {
	study, cell string
	// options are stored in Params.Options (requested server settings as "set.NAME", ...).
	options map[string]string
	// quiet suppresses the summary table (studies print one line per run).
	quiet bool
}

func (a *app) runCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run WORKLOAD",
		Short: "Run a workload against a target and store the run",
	}
	var o runOptions
	tc := &cobra.Command{
		Use:   "tpcc --target TARGET [--terminals N] [--duration D] [--warmup D] [--rtt D]",
		Short: "Run TPC-C and store the run in the results database",
		Long: `Runs TPC-C with N terminals for a warm-up and a measurement window, prints progress,
then the summary, and stores the run (status, parameters, the server's settings read back,
statistics before and after, per-transaction histograms, round trips and bytes per
transaction, and per-second samples).

With --rtt (or --up/--down/--jitter/--bandwidth) the terminals reach the server through
dblat's latency link, which adds that delay precisely; a short calibration before the run
stores the RTT actually added next to the one requested.

NOPM is committed New-Order transactions per minute; TPM is all completed transactions per
minute (New-Order's designed 1 % rollbacks included). Ctrl-C once finishes the transactions
in flight and saves the run as aborted with what was measured; twice stops at once.`,
		Example: `  dblat run tpcc --target pg1 --terminals 20 --duration 5m --warmup 1m
  dblat run tpcc --target pg1 --terminals 20 --rtt 2ms`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.link.resolve(cmd); err != nil {
				return err
			}
			ctx, drain, stop := a.interrupts(cmd.Context(), "finishing in-flight transactions and saving the run")
			defer stop()
			_, err := a.runTPCC(ctx, drain, o, runMeta{})
			return err
		},
	}
	o.add(tc)
	cmd.AddCommand(tc, a.runSimpleCommand())
	return cmd
}

// built is a workload ready to run on an open target, with what the run stores about it.
type built struct {
	w       workload.Workload
	name    string // Params.Workload
	scale   int
	options map[string]string // stored in Params.Options
}

// builder checks that a workload's data is in wt and builds the workload.
type builder func(ctx context.Context, t *target, wt workload.Target) (*built, error)

// runTPCC measures one TPC-C run and stores it; it returns the stored run. Closing drain
// ends the run early (it is saved as aborted); canceling ctx stops at once.
func (a *app) runTPCC(ctx context.Context, drain <-chan struct{}, o runOptions, meta runMeta) (*results.Run, error) {
	mix, err := tpcc.ParseMix(o.mix)
	if err != nil {
		return nil, usageError{fmt.Errorf("--mix: %w", err)}
	}
	return a.runWorkload(ctx, drain, o, meta, func(ctx context.Context, t *target, wt workload.Target) (*built, error) {
		loaded, err := tpcc.LoadedWarehouses(ctx, wt.DB)
		if err != nil {
			if errors.Is(err, workload.ErrNotLoaded) {
				return nil, fmt.Errorf("%s has no TPC-C data: %w (run `dblat load tpcc --target %s --warehouses N` first)", t.label, err, o.target)
			}
			return nil, err
		}
		if o.warehouses > loaded {
			return nil, usagef("--warehouses %d: only %d loaded in %s (load more with `dblat load tpcc --warehouses %d`)",
				o.warehouses, loaded, t.label, o.warehouses)
		}
		n := o.warehouses
		if n == 0 {
			n = loaded
		}
		w, err := tpcc.New(wt, tpcc.Config{Warehouses: n, Seed: o.seed, Mix: mix, Think: o.think, Mode: o.mode})
		if err != nil {
			return nil, usageError{err}
		}
		return &built{w: w, name: "tpcc", scale: n, options: map[string]string{"mode": w.Mode()}}, nil
	})
}

// runWorkload measures one run of the workload build makes and stores it.
func (a *app) runWorkload(ctx context.Context, drain <-chan struct{}, o runOptions, meta runMeta, build builder) (*results.Run, error) {
	if o.terminals < 1 {
		return nil, usagef("--terminals must be at least 1, got %d", o.terminals)
	}
	if o.duration <= 0 {
		return nil, usagef("--duration must be positive, got %v", o.duration)
	}
	if o.warmup < 0 {
		return nil, usagef("--warmup must not be negative, got %v", o.warmup)
	}
	t, err := a.resolveTarget(o.target)
	if err != nil {
		return nil, err
	}
	options := maps.Clone(meta.options)
	if options == nil {
		options = map[string]string{}
	}
	if err := t.applyTransport(o.transport, o.link.enabled()); err != nil {
		return nil, err
	}
	options["transport"] = o.transport
	if o.interpolate {
		if err := t.setDSNParam("interpolateParams", "true"); err != nil {
			return nil, err
		}
		options["interpolate_params"] = "true"
	}
	store, err := results.Open(ctx, a.resultsDB)
	if err != nil {
		return nil, err
	}
	defer store.Close()

	links, err := newLinkSet(&o.link)
	if err != nil {
		return nil, err
	}
	defer links.close()
	wt, err := t.open(ctx, engine.OpenOptions{Dial: links.dial})
	if err != nil {
		return nil, err
	}
	defer closeDB(wt)
	b, err := build(ctx, t, wt)
	if err != nil {
		return nil, err
	}
	w := b.w
	maps.Copy(options, b.options)
	if (o.gstat || o.sweep) && (t.managed == nil || t.managed.Engine != "firebird") {
		return nil, usagef("--gstat and --sweep are for managed Firebird servers")
	}
	if o.sweep {
		took, err := firebird.Sweep(ctx, t.managed)
		if err != nil {
			return nil, fmt.Errorf("sweep before the run: %w", err)
		}
		options["swept_before"] = "true"
		a.info("swept %s in %.2f s", t.label, took.Seconds())
	}
	info, err := t.engine.Inspect(ctx, wt.DB)
	if err != nil {
		return nil, fmt.Errorf("read server settings: %w", err)
	}
	before, err := t.engine.Stats(ctx, wt.DB)
	if err != nil {
		return nil, fmt.Errorf("read server statistics: %w", err)
	}
	if o.gstat {
		g, err := firebird.RecordStats(ctx, t.managed)
		if err != nil {
			return nil, fmt.Errorf("gstat -r before the run: %w", err)
		}
		maps.Copy(before, g)
	}
	cal, err := links.calibrate(ctx)
	if err != nil {
		return nil, fmt.Errorf("calibrate the latency link: %w", err)
	}
	conns := o.connections
	if conns <= 0 || conns > o.terminals {
		conns = o.terminals
	}
	run := &results.Run{
		Study: meta.study, CellKey: meta.cell, Status: results.StatusRunning, Started: time.Now(),
		Params: results.Params{
			Workload: b.name, Scale: b.scale, Terminals: o.terminals, Connections: conns,
			Duration: o.duration, Warmup: o.warmup, Seed: o.seed, Mix: mixMap(w), Think: o.think,
			RTT: linkRTT(links), Options: options,
		},
		Link: links.describe(cal),
		Server: results.Server{Engine: t.engine.Name(), Target: t.label, Managed: t.managed != nil,
			Version: info.Version, Settings: info.Settings, DatabaseBytes: info.DatabaseBytes},
		Client:      sysinfo.Client(),
		StatsBefore: before,
	}
	if _, err := store.Begin(ctx, run); err != nil {
		return nil, err
	}
	a.info("run %d: %s on %s, scale %d, %d terminals, %d connections, %s, warm-up %v, window %v",
		run.ID, b.name, t.label, b.scale, o.terminals, conns, describeLink(run.Link), o.warmup, o.duration)

	// A managed server that dies mid-run fails the run (instead of a window of errors).
	runDrain, serverDied := watchServer(drain, t.managed)
	prog := newRunProgress(a, o.printEvery)
	res, runErr := runner.Run(ctx, wt, w, runner.Config{
		Terminals: o.terminals, Connections: conns, Warmup: o.warmup, Duration: o.duration,
		Drain: runDrain,
		Samples: func(s []results.Sample) {
			prog.sample(s)
			if err := store.AddSamples(context.WithoutCancel(ctx), run.ID, s); err != nil {
				a.info("warning: cannot store samples: %v", err)
			}
		},
	})
	saveCtx := context.WithoutCancel(ctx)
	run.Ended = time.Now()
	died := serverDied()
	switch {
	case runErr != nil && ctx.Err() != nil:
		run.Status, run.Reason = results.StatusAborted, "stopped by a second interrupt"
	case died != "":
		run.Status, run.Reason = results.StatusFailed, died
	case runErr != nil:
		run.Status, run.Reason = results.StatusFailed, oneLine(runErr)
	case res.Interrupted:
		run.Status, run.Reason = results.StatusAborted, fmt.Sprintf("interrupted after %.1f s of the %v window", res.Summary.Elapsed.Seconds(), o.duration)
	default:
		run.Status = results.StatusFinished
	}
	if res != nil {
		run.Summary, run.Tx = res.Summary, res.Tx
		run.Client.CPUSeconds = res.CPUSeconds
		run.Link = links.describe(cal)
		if died == "" {
			// Backends publish their counters when they go idle or exit; the pool is closed by now.
			time.Sleep(300 * time.Millisecond)
			if after, err := t.engine.Stats(saveCtx, wt.DB); err == nil {
				run.StatsAfter = after
				if o.gstat {
					if g, err := firebird.RecordStats(saveCtx, t.managed); err == nil {
						maps.Copy(after, g)
					} else {
						a.info("warning: gstat -r after the run: %v", err)
					}
				}
			} else {
				a.info("warning: cannot read server statistics after the run: %v", err)
			}
			if info, err := t.engine.Inspect(saveCtx, wt.DB); err == nil {
				run.Server.DatabaseBytes = info.DatabaseBytes
			}
		}
	}
	if err := store.Finish(saveCtx, run); err != nil {
		return nil, fmt.Errorf("save run %d: %w", run.ID, err)
	}
	switch {
	case runErr != nil && ctx.Err() != nil:
		return run, errInterrupted
	case died != "":
		return run, fmt.Errorf("run %d failed: %s", run.ID, died)
	case runErr != nil:
		return run, fmt.Errorf("run %d failed: %w", run.ID, runErr)
	}
	if !meta.quiet {
		printSummary(a.st.Stdout, run)
		a.info("stored as run %d in %s", run.ID, a.resultsDB)
	}
	if res.Interrupted {
		return run, errInterrupted
	}
	return run, nil
}

// watchServer returns a drain channel that closes when drain closes or when the managed
// server's process exits, and a function that says (after the run) why the server ended,
// or "" if it did not.
func watchServer(drain <-chan struct{}, inst *managed.Instance) (<-chan struct{}, func() string) {
	if inst == nil {
		return drain, func() string { return "" }
	}
	out := make(chan struct{})
	done := make(chan struct{})
	var reason string
	go func() {
		defer close(done)
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-drain:
				close(out)
				return
			case <-tick.C:
				if !managed.Alive(inst.PID) {
					reason = fmt.Sprintf("server %s (PID %d) exited during the run", inst.Name, inst.PID)
					close(out)
					return
				}
			}
		}
	}()
	return out, func() string {
		select {
		case <-done:
			return reason
		default:
			return ""
		}
	}
}

// linkRTT is the RTT the run asked the link to add (0 without a link).
func linkRTT(ls *linkSet) time.Duration {
	if ls.cfg == nil {
		return 0
	}
	return ls.cfg.AddedRTT()
}

func describeLink(l *results.Link) string {
	if l == nil {
		return "direct"
	}
	s := fmt.Sprintf("rtt %s", results.FormatDuration(l.RTT))
	if l.Samples > 0 {
		s += fmt.Sprintf(" (measured +%s)", results.FormatDuration(l.AchievedP50.Round(time.Microsecond)))
	}
	return s
}

func mixMap(w workload.Workload) map[string]float64 {
	m := map[string]float64{}
	for _, t := range w.TxTypes() {
		m[t.Name] = t.Weight
	}
	return m
}
