package execution

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/managed"
	"github.com/dblat/dblat/internal/option"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/runner"
	"github.com/dblat/dblat/internal/sysinfo"
	"github.com/dblat/dblat/internal/workload"
)

// Run measures one run of spec and stores it, from the start of its warm-up to its final
// status; it returns the stored run. Closing drain ends the run early: it is saved as
// aborted with what was measured, and the error is ErrInterrupted. Canceling ctx stops at
// once; the run is saved as aborted too. A run that failed is stored as failed and
// returned with its error.
func (c *Core) Run(ctx context.Context, drain <-chan struct{}, spec Spec) (*results.Run, error) {
	t, err := c.Resolve(spec.Target)
	if err != nil {
		return nil, err
	}
	return c.runOn(ctx, drain, &spec, t)
}

// LoadCommand is the command that loads def's data into target, for error messages.
func LoadCommand(def *workload.Definition, target string) string {
	cmd := "dblat load "
	if def.Group != "" {
		cmd += def.Group + " "
	}
	cmd += def.Name + " --target " + target
	if def.Scale.Name == "warehouses" {
		cmd += " --warehouses N"
	}
	return cmd
}

// database returns the DSN of the database a run of p connects to on t: the database the
// run's database options select, reached through the run's transport, with the engine's
// run options applied.
func (c *Core) database(ctx context.Context, t *Target, p *plan, spec *Spec) (string, error) {
	dsn := t.DSN
	if len(p.db) > 0 {
		if spec.Transport == TransportUnix {
			return "", Inputf("transport unix reaches only the server's default database; drop the database options %s", strings.Join(sortedKeys(p.db), ", "))
		}
		d, err := t.Engine.(engine.Databases).Database(ctx, t.Server, p.db)
		if err != nil {
			return "", fmt.Errorf("database with %s: %w", fmtValues(p.db), err)
		}
		dsn = d
	}
	if spec.Transport == TransportUnix {
		d, err := t.Engine.(engine.Sockets).SocketDSN(t.Server)
		if err != nil {
			return "", err
		}
		dsn = d
	}
	if h, ok := t.Engine.(engine.RunHooks); ok {
		d, err := h.RunDSN(dsn, p.run)
		if err != nil {
			return "", asInput(err)
		}
		dsn = d
	}
	return dsn, nil
}

func fmtValues(v option.Values) string {
	parts := make([]string, 0, len(v))
	for _, k := range sortedKeys(v) {
		parts = append(parts, k+"="+v[k])
	}
	return strings.Join(parts, " ")
}

func (c *Core) runOn(ctx context.Context, drain <-chan struct{}, spec *Spec, t *Target) (*results.Run, error) {
	p, err := check(spec, t.Engine, t.Server != nil)
	if err != nil {
		return nil, err
	}
	defer c.holdCPU()()
	dsn, err := c.database(ctx, t, p, spec)
	if err != nil {
		return nil, err
	}
	links := newLinkSet(spec.Link)
	defer links.close()
	wt, err := t.Open(ctx, dsn, engine.OpenOptions{Dial: links.dial})
	if err != nil {
		return nil, err
	}
	defer closeDB(wt)
	// dblat's own queries (is the data loaded, the settings, the statistics before and
	// after) go straight to the server: through the link each pays the added RTT, and at
	// 20 ms they cost seconds a run. Only the terminals' connections take the link.
	admin := wt
	if spec.Link != nil {
		if admin, err = t.Open(ctx, dsn, engine.OpenOptions{}); err != nil {
			return nil, err
		}
		defer closeDB(admin)
	}
	loaded, err := p.def.Loaded(ctx, admin)
	if err != nil {
		if errors.Is(err, workload.ErrNotLoaded) {
			return nil, fmt.Errorf("%s has no %s data: %w (run `%s` first)", t.Label, p.def.Name, err, LoadCommand(p.def, spec.Target))
		}
		return nil, err
	}
	if spec.Scale > loaded {
		return nil, Inputf("%s %d: only %d loaded in %s (load more with `%s`)", scaleName(p.def), spec.Scale, loaded, t.Label,
			LoadCommand(p.def, spec.Target))
	}
	scale := spec.Scale
	if scale == 0 {
		scale = loaded
	}
	w, err := p.def.New(wt, p.workloadConfig(spec))
	if err != nil {
		return nil, asInput(err)
	}
	info, err := t.Engine.Inspect(ctx, admin.DB)
	if err != nil {
		return nil, fmt.Errorf("read server settings: %w", err)
	}
	addBuild(&info, t.Server)
	hooks, _ := t.Engine.(engine.RunHooks)
	rc := &engine.RunContext{DSN: dsn, DB: admin.DB, Server: t.Server, Options: p.run, Stats: engine.Stats{},
		Notes: map[string]string{}, Info: c.info}
	if hooks != nil {
		if err := hooks.BeforeRun(ctx, rc); err != nil {
			return nil, err
		}
	}
	before, err := t.Engine.Stats(ctx, admin.DB)
	if err != nil {
		return nil, fmt.Errorf("read server statistics: %w", err)
	}
	maps.Copy(before, rc.Stats)
	cal, err := links.calibrate(ctx)
	if err != nil {
		return nil, fmt.Errorf("calibrate the latency link: %w", err)
	}
	conns := spec.Connections
	if conns <= 0 || conns > spec.Terminals {
		conns = spec.Terminals
	}
	options := maps.Clone(p.stored)
	maps.Copy(options, rc.Notes)
	run := &results.Run{
		Study: spec.Study, CellKey: spec.Cell, Status: results.StatusRunning, Started: time.Now(),
		Params: results.Params{
			Workload: p.def.Name, Scale: scale, Terminals: spec.Terminals, Connections: conns,
			Duration: spec.Duration, Warmup: spec.Warmup, Seed: spec.Seed, Mix: mixOf(w), Think: spec.Think,
			RTT: links.rtt(), Options: options,
			Rate: spec.Rate, Arrival: spec.arrival(), LatencyLimit: spec.LatencyLimit, MaxTries: spec.maxTries(),
		},
		Link: links.describe(cal),
		Server: results.Server{Engine: t.Engine.Name(), Target: t.Label, Managed: t.Server != nil,
			Version: info.Version, Settings: info.Settings, DatabaseBytes: info.DatabaseBytes},
		Client:      sysinfo.Client(),
		StatsBefore: before,
		Summary:     results.Summary{Metric: p.def.Metric.Name},
	}
	run.Client.CPULatencyHold = c.cpuHeld()
	if _, err := c.Store.Begin(ctx, run); err != nil {
		return nil, err
	}
	c.obs().RunStarted(run)

	// A managed server that dies mid-run fails the run (instead of a window of errors).
	runDrain, serverDied := watchServer(drain, t.Server)
	// The machine's steal time over the window: on a shared VM, a neighbour's load shows
	// there, and it explains runs that differ for no reason of their own.
	var cpuAtStart, cpuAtEnd sysinfo.CPUTimes
	var cpuTimed bool
	windowStart := func() {
		links.windowStart()
		cpuAtStart, cpuTimed = sysinfo.ReadCPUTimes()
	}
	windowEnd := func() {
		links.windowEnd()
		cpuAtEnd, _ = sysinfo.ReadCPUTimes()
	}
	res, runErr := runner.Run(ctx, wt, w, runner.Config{
		Terminals: spec.Terminals, FirstTerminal: spec.FirstTerminal, Connections: conns, Warmup: spec.Warmup, Duration: spec.Duration,
		Drain: runDrain, NOPMType: p.def.Metric.TxType, WindowStart: windowStart, WindowEnd: windowEnd,
		Rate: spec.Rate, Arrival: spec.arrival(), Seed: spec.Seed, LatencyLimit: spec.LatencyLimit, MaxTries: spec.maxTries(),
		Samples: func(s []results.Sample) {
			c.obs().Samples(run, s)
			if err := c.Store.AddSamples(context.WithoutCancel(ctx), run.ID, s); err != nil {
				c.info("warning: cannot store samples: %v", err)
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
		run.Status, run.Reason = results.StatusAborted, fmt.Sprintf("interrupted after %.1f s of the %v window", res.Summary.Elapsed.Seconds(), spec.Duration)
	default:
		run.Status = results.StatusFinished
	}
	if res != nil {
		run.Summary, run.Tx = res.Summary, res.Tx
		run.Summary.Metric = p.def.Metric.Name
		run.Client.CPUSeconds = res.CPUSeconds
		run.Client.CPULatencyHold = c.cpuHeld()
		if share, ok := sysinfo.StealShare(cpuAtStart, cpuAtEnd); ok && cpuTimed {
			run.Client.Steal = &share
		}
		run.Link = links.describe(cal)
		if d, ok := w.(workload.Describer); ok {
			maps.Copy(run.Params.Options, d.Describe())
		}
		if died == "" {
			c.afterRun(saveCtx, t, admin, hooks, rc, run)
		}
	}
	if err := c.Store.Finish(saveCtx, run); err != nil {
		return nil, fmt.Errorf("save run %d: %w", run.ID, err)
	}
	c.obs().RunEnded(run)
	switch {
	case runErr != nil && ctx.Err() != nil:
		return run, ErrInterrupted
	case died != "":
		return run, fmt.Errorf("run %d failed: %s", run.ID, died)
	case runErr != nil:
		return run, fmt.Errorf("run %d failed: %w", run.ID, runErr)
	case res.Interrupted:
		return run, ErrInterrupted
	}
	return run, nil
}

// addBuild fills in the build of a managed server whose engine could not read it from the
// server itself (Firebird has no SQL for it): the word size and instruction set of the
// executable its process runs.
func addBuild(info *engine.Info, inst *managed.Instance) {
	if inst == nil || info.Settings[engine.SettingBits] != "" {
		return
	}
	b, err := managed.ExecutableBuild(inst.PID)
	if err != nil {
		return
	}
	if info.Settings == nil {
		info.Settings = map[string]string{}
	}
	info.Settings[engine.SettingBits], info.Settings[engine.SettingArch] = strconv.Itoa(b.Bits), b.Arch
}

// afterRun runs the engine's after-run hook and reads the statistics and the database size
// after the run.
func (c *Core) afterRun(ctx context.Context, t *Target, admin workload.Target, hooks engine.RunHooks, rc *engine.RunContext, run *results.Run) {
	if s, ok := t.Engine.(engine.Settler); ok {
		time.Sleep(s.StatsSettle())
	}
	after, err := t.Engine.Stats(ctx, admin.DB)
	if err != nil {
		c.info("warning: cannot read server statistics after the run: %v", err)
		return
	}
	if hooks != nil {
		rc.Stats = engine.Stats{}
		if err := hooks.AfterRun(ctx, rc); err != nil {
			c.info("warning: %v", err)
		}
		maps.Copy(after, rc.Stats)
	}
	run.StatsAfter = after
	if info, err := t.Engine.Inspect(ctx, admin.DB); err == nil {
		run.Server.DatabaseBytes = info.DatabaseBytes
	}
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

func mixOf(w workload.Workload) map[string]float64 {
	m := map[string]float64{}
	for _, t := range w.TxTypes() {
		m[t.Name] = t.Weight
	}
	return m
}

// oneLine flattens an error message to one line.
func oneLine(err error) string {
	return strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n", " ")
}
