package execution

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/dblat/dblat/internal/disturb"
	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/latency"
	"github.com/dblat/dblat/internal/managed"
	"github.com/dblat/dblat/internal/option"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/runner"
	"github.com/dblat/dblat/internal/signals"
	"github.com/dblat/dblat/internal/spec"
	"github.com/dblat/dblat/internal/sysinfo"
	"github.com/dblat/dblat/internal/workload"
)

// Run measures one run of rs and stores it, from the start of its warm-up to its final
// status; it returns the stored run. Everything that can be judged before the run starts
// (its description, the data it needs, the workload's preparation) is judged first: such a
// problem stores nothing and is an *InputError. Closing drain ends the run early: it is saved
// as aborted with what was measured, and the error is ErrInterrupted. Canceling ctx stops at
// once; the run is saved as aborted too. A run that failed is stored as failed and returned
// with its error.
func (c *Core) Run(ctx context.Context, drain <-chan struct{}, rs spec.Run) (*results.Run, error) {
	t, err := c.Resolve(rs.Target)
	if err != nil {
		return nil, err
	}
	rs.Resolve()
	return c.runOn(ctx, drain, &rs, t, nil)
}

// SetAside decides, as a run ends and before it is stored, whether a run that finished is
// left out of its cell's figures, and why ("" counts it): a study's policy for disturbed
// runs (package study). nil sets nothing aside.
type SetAside func(run *results.Run) string

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

// loadCommand is the command that loads the data rs runs on: LoadCommand with the run's
// own load parameters (the script workload's init script, its scale).
func loadCommand(def *workload.Definition, rs *spec.Run) string {
	cmd := LoadCommand(def, rs.Target)
	given := false
	for _, key := range def.LoadFields {
		f, _ := spec.Lookup(key)
		v := f.Value(&rs.Params)
		if v == "" {
			continue
		}
		given = true
		values := []string{v}
		if f.List() {
			values = strings.Split(v, ",")
		}
		for _, x := range values {
			if f.File {
				x = filepath.Join(rs.Dir, x)
			}
			cmd += " --" + f.FlagName() + " " + x
		}
	}
	if given && rs.Scale > 0 && def.Scale.Name != "" && def.Scale.Name != "warehouses" {
		cmd += fmt.Sprintf(" --%s %d", def.Scale.Name, rs.Scale)
	}
	return cmd
}

// runOn is the lifecycle of one run on the resolved target t. Its steps, in order:
//
//	check      the description against the workload and the engine (nothing touched yet)
//	connect    the run's database, its path (link) and a direct connection for dblat's own queries
//	data       the workload's data is loaded, at the scale asked for
//	prepare    the workload built, the pool opened and the statements prepared
//	inspect    the server's settings read back, the engine's before-run hook, statistics
//	calibrate  the latency link measured on its own
//	begin      the run stored as running
//	start      the start barrier (Core.BeforeStart: agents wait for the announced start)
//	measure    warm-up and window (package runner)
//	finish     status, statistics after, the stored run completed
//
// A step before begin that fails stores nothing; one after stores the run as failed. A
// finished run is judged for disturbances (package disturb) and, by aside, maybe set aside.
func (c *Core) runOn(ctx context.Context, drain <-chan struct{}, rs *spec.Run, t *Target, aside SetAside) (*results.Run, error) {
	r := &runState{c: c, rs: rs, t: t, aside: aside}
	defer r.close()
	defer c.holdCPU()()
	for _, step := range []func(context.Context) error{r.check, r.connect, r.data, r.prepare, r.inspect, r.calibrate} {
		if err := step(ctx); err != nil {
			return nil, err
		}
	}
	if err := r.begin(ctx); err != nil {
		return nil, err
	}
	return r.measure(ctx, drain)
}

// runState is one run on its way through the lifecycle (Core.runOn).
type runState struct {
	c  *Core
	rs *spec.Run
	t  *Target
	p  *plan
	// dsn is the database the run connects to; links its path to the server.
	dsn   string
	links *linkSet
	// wt is the terminals' database handle (through the link), admin dblat's own.
	wt, admin workload.Target
	closers   []func()
	// scale is the scale the run uses (all loaded when the Run asks for 0).
	scale   int
	w       workload.Workload
	session *runner.Session
	hooks   engine.RunHooks
	rc      *engine.RunContext
	info    engine.Info
	before  engine.Stats
	cal     *latency.Calibration
	run     *results.Run
	aside   SetAside
	// op is the operation the run starts during its window (spec.Params.During); nil
	// without one. memLimit is the memory limit of its managed server, read back from
	// its cgroup (0: none).
	op       *operation
	memLimit int64
}

func (r *runState) close() {
	for i := len(r.closers) - 1; i >= 0; i-- {
		r.closers[i]()
	}
}

// check checks the description against the workload and the engine, and the operation
// during its window against the server.
func (r *runState) check(context.Context) (err error) {
	if r.p, err = check(r.rs, r.t.Engine, r.t.Server != nil); err != nil {
		return err
	}
	cfg := r.c.launchConfig(r.t.Engine.Name())
	if inst := r.t.Server; inst != nil {
		cfg.Install, cfg.Version = inst.Install, inst.Version
	}
	if fe := checkDuring(r.rs, r.t.Engine, r.p.def, r.t.Server != nil, cfg); fe != nil {
		return asInput(spec.Errors(field.ErrorList{fe}))
	}
	return nil
}

// connect opens the run's database through its path, and a direct handle of its own for
// dblat's queries (is the data loaded, the settings, the statistics before and after):
// through the link each would pay the added RTT, and at 20 ms they cost seconds a run; and
// the terminals' pool holds every connection of theirs from prepare on. Only the
// terminals' connections take the link; every connection has the run's connect timeout.
func (r *runState) connect(ctx context.Context) (err error) {
	if r.dsn, err = r.c.database(ctx, r.t, r.p, r.rs); err != nil {
		return err
	}
	r.links = newLinkSet(r.rs.Link)
	r.closers = append(r.closers, r.links.close)
	if r.wt, err = r.t.Open(ctx, r.dsn, engine.OpenOptions{Dial: r.links.dial, ConnectTimeout: r.rs.ConnectTimeout}); err != nil {
		return err
	}
	r.closers = append(r.closers, func() { closeDB(r.wt) })
	if r.admin, err = r.t.Open(ctx, r.dsn, engine.OpenOptions{ConnectTimeout: r.rs.ConnectTimeout}); err != nil {
		return err
	}
	r.closers = append(r.closers, func() { closeDB(r.admin) })
	return nil
}

// data checks that the workload's data is loaded, at the scale asked for.
func (r *runState) data(ctx context.Context) error {
	def := r.p.def
	loaded, err := def.Loaded(ctx, r.admin, r.p.workloadConfig(r.rs))
	if err != nil {
		if errors.Is(err, workload.ErrNotLoaded) {
			return Inputf("%s has no %s data: %v (run `%s` first)", r.t.Label, def.Name, err, loadCommand(def, r.rs))
		}
		return workloadInput(err)
	}
	if r.rs.Scale > loaded {
		return asInput(spec.Errors(field.ErrorList{spec.Invalid(spec.FieldPath("warehouses"),
			"%d: only %d loaded in %s (load more with `%s`)", r.rs.Scale, loaded, r.t.Label, LoadCommand(def, r.rs.Target))}))
	}
	r.scale = r.rs.Scale
	if r.scale == 0 {
		r.scale = loaded
	}
	if inst := r.t.Server; limited(inst) {
		// The page cache of what dblat copied (a restore) or another server read is not
		// charged to this server's cgroup: read through it, its data would be in memory
		// beyond its limit.
		n, err := managed.DropCache(inst)
		if err != nil {
			return fmt.Errorf("drop server %s's data from the page cache: %w", inst.Name, err)
		}
		r.c.info("server %s runs under a memory limit: its %s of data dropped from the page cache", inst.Name, engine.FormatBytes(float64(n)))
	}
	return nil
}

// prepare builds the workload, opens the pool and prepares the workload's statements on it.
// A problem the workload finds with its options against the data (more blobs per
// transaction than rows, home warehouses beyond those active) is the user's input.
func (r *runState) prepare(ctx context.Context) (err error) {
	if r.w, err = r.p.def.New(r.wt, r.p.workloadConfig(r.rs)); err != nil {
		return workloadInput(err)
	}
	r.session, err = runner.Open(ctx, r.wt, r.w, r.runnerConfig())
	var oe *option.Error
	if errors.As(err, &oe) {
		return asInput(spec.Errors(field.ErrorList{workloadError(err)}))
	}
	if err != nil {
		return err
	}
	r.closers = append(r.closers, r.session.Close)
	return nil
}

// runnerConfig is what the runner gets: the run's Drive and the lifecycle's callbacks
// (set by measure).
func (r *runState) runnerConfig() runner.Config {
	return runner.Config{Drive: r.rs.Drive, NOPMType: r.p.def.Metric.TxType}
}

// inspect reads the server's settings and build, runs the engine's before-run hook and reads
// the statistics before the run.
func (r *runState) inspect(ctx context.Context) (err error) {
	if r.info, err = r.t.Engine.Inspect(ctx, r.admin.DB); err != nil {
		return fmt.Errorf("read server settings: %w", err)
	}
	addBuild(&r.info, r.t.Server)
	r.hooks = engine.Caps(r.t.Engine).RunHooks
	r.rc = &engine.RunContext{DSN: r.dsn, DB: r.admin.DB, Server: r.t.Server, Options: r.p.run, Stats: engine.Stats{},
		Notes: map[string]string{}, Info: r.c.info}
	if r.hooks != nil {
		if err := r.hooks.BeforeRun(ctx, r.rc); err != nil {
			return err
		}
	}
	if r.before, err = r.t.Engine.Stats(ctx, r.admin.DB); err != nil {
		return fmt.Errorf("read server statistics: %w", err)
	}
	maps.Copy(r.before, r.rc.Stats)
	if inst := r.t.Server; inst != nil {
		if r.memLimit, err = managed.MemoryLimit(inst); err != nil {
			return fmt.Errorf("read back server %s's memory limit: %w", inst.Name, err)
		}
		addReadBytes(r.before, inst)
	}
	r.op, err = r.newOperation()
	return err
}

// StatReadBytes is the statistic, beside the engine's, of what a managed server's
// processes read from the storage layer (managed.ReadBytes), taken before and after a
// run: the reads its own cache and the machine's page cache did not serve.
const StatReadBytes = "server.read_bytes"

// addReadBytes adds StatReadBytes of inst to st, when it can be read.
func addReadBytes(st engine.Stats, inst *managed.Instance) {
	if n, err := managed.ReadBytes(inst); err == nil {
		st[StatReadBytes] = float64(n)
	}
}

// calibrate measures what the run's link adds, on its own, just before the run.
func (r *runState) calibrate(ctx context.Context) (err error) {
	if r.cal, err = r.links.calibrate(ctx); err != nil {
		return fmt.Errorf("calibrate the latency link: %w", err)
	}
	return nil
}

// begin stores the run as running: its parameters derived from the description
// (spec.Run.Stored), the server's settings as read back, the client and the link.
func (r *runState) begin(ctx context.Context) error {
	options := maps.Clone(r.p.stored)
	maps.Copy(options, r.rc.Notes)
	if inst := r.t.Server; inst != nil {
		if inst.StorageOf() != managed.StorageDisk {
			// A data directory in memory measures no durability: runs on disk do not compare.
			options[results.FactorStorage] = inst.StorageOf()
		}
		// What the server was started with, where no study recorded what it asked for.
		if _, ok := options[results.FactorMemory]; !ok && inst.Memory > 0 {
			options[results.FactorMemory] = managed.FormatMemory(inst.Memory)
		}
		if _, ok := options[results.FactorEncryption]; !ok && inst.Encrypted {
			options[results.FactorEncryption] = "on"
		}
	}
	r.run = &results.Run{
		Study: r.rs.Study, CellKey: r.rs.Cell, Status: results.StatusRunning, Started: time.Now(),
		Params: r.rs.Stored(r.scale, mixOf(r.w), options),
		Link:   r.links.describe(r.cal),
		Server: results.Server{Engine: r.t.Engine.Name(), Target: r.t.Label, Managed: r.t.Server != nil,
			Version: r.info.Version, Settings: r.info.Settings, DatabaseBytes: r.info.DatabaseBytes, MemoryLimit: r.memLimit},
		Client:      sysinfo.Client(),
		StatsBefore: r.before,
		Summary:     results.Summary{Metric: r.p.def.Metric.Name},
		Scripts:     scriptsOf(r.p.sources),
	}
	r.run.Client.CPULatencyHold = r.c.cpuHeld()
	if _, err := r.c.Store.Begin(ctx, r.run); err != nil {
		return err
	}
	r.c.obs().RunStarted(r.run)
	return nil
}

// measure passes the start barrier, runs the warm-up and the window, and finishes the
// stored run with its figures and final status.
func (r *runState) measure(ctx context.Context, drain <-chan struct{}) (*results.Run, error) {
	c, run := r.c, r.run
	// A managed server that dies mid-run fails the run (instead of a window of errors).
	runDrain, serverDied, stopWatch := watchServer(drain, r.t.Server)
	defer stopWatch()
	// The machine's steal time over the window: on a shared VM, a neighbour's load shows
	// there, and it explains runs that differ for no reason of their own.
	var cpuAtStart, cpuAtEnd sysinfo.CPUTimes
	var cpuTimed bool
	cfg := r.runnerConfig()
	cfg.Drain = runDrain
	// What the host, dblat and the server did beside the run, from now to its end; the
	// samples are kept too, to judge the window against them.
	sampler := r.startSignals(ctx)
	var windowAt time.Time
	var kept []results.Sample
	windowOver := make(chan struct{})
	cfg.WindowStart = func() {
		windowAt = time.Now()
		r.links.windowStart()
		cpuAtStart, cpuTimed = sysinfo.ReadCPUTimes()
		if r.op != nil {
			r.op.start(ctx, windowAt, windowOver)
		}
	}
	cfg.WindowEnd = func() {
		r.links.windowEnd()
		cpuAtEnd, _ = sysinfo.ReadCPUTimes()
	}
	cfg.Samples = func(s []results.Sample) {
		kept = append(kept, s...)
		c.obs().Samples(run, s)
		if err := c.Store.AddSamples(context.WithoutCancel(ctx), run.ID, s); err != nil {
			c.info("warning: cannot store samples: %v", err)
		}
	}
	var res *runner.Result
	var runErr error
	if c.BeforeStart != nil {
		runErr = c.BeforeStart(ctx, run)
	}
	if runErr == nil {
		res, runErr = r.session.Run(ctx, cfg.Hooks)
	}
	saveCtx := context.WithoutCancel(ctx)
	close(windowOver)
	if r.op != nil {
		// Before the statistics after the run: what the operation read counts in them.
		stopped := ctx.Err() != nil || closed(drain) || res != nil && res.Interrupted
		run.Operations = []results.Operation{r.op.finish(!windowAt.IsZero(), stopped)}
		defer r.op.takeBack(saveCtx)
	}
	run.Ended = time.Now()
	if sampler != nil {
		var notes []string
		run.Signals, notes = sampler.Stop(windowAt)
		run.Client.Pressure = new(sampler.Pressure())
		run.Client.CanaryUs = signals.Canary(run.Signals)
		for _, n := range notes {
			c.info("note: %s", n)
		}
	}
	died := serverDied()
	switch {
	case ctx.Err() != nil:
		// A hard stop: in the middle of the run, or of the drain a first interrupt began.
		run.Status, run.Reason = results.StatusAborted, "stopped by a second interrupt"
	case died != "":
		run.Status, run.Reason = results.StatusFailed, died
	case runErr != nil:
		run.Status, run.Reason = results.StatusFailed, oneLine(runErr)
	case res.Interrupted:
		run.Status, run.Reason = results.StatusAborted, fmt.Sprintf("interrupted after %.1f s of the %v window", res.Summary.Elapsed.Seconds(), r.rs.Duration)
	case res.Summary.Committed == 0 && res.Summary.Rollbacks == 0 && (!r.rs.OpenLoop() || res.Summary.Offered > 0):
		// A window in which nothing completed measured nothing: every terminal stalled (a
		// lock wait with no deadlock detection, a server that stopped answering), or the
		// window is shorter than one paced cycle.
		run.Status, run.Reason = results.StatusFailed, nothingCompleted(r.rs, r.p.def, &res.Summary)
	default:
		run.Status = results.StatusFinished
	}
	if res != nil {
		run.Summary, run.Tx = res.Summary, res.Tx
		run.Summary.Metric = r.p.def.Metric.Name
		run.Client.CPUSeconds = res.CPUSeconds
		run.Client.CPULatencyHold = c.cpuHeld()
		if share, ok := sysinfo.StealShare(cpuAtStart, cpuAtEnd); ok && cpuTimed {
			run.Client.Steal = &share
		}
		run.Link = r.links.describe(r.cal)
		if d, ok := r.w.(workload.Describer); ok {
			maps.Copy(run.Params.Options, d.Describe())
		}
		if died == "" {
			c.afterRun(saveCtx, r.t, r.admin, r.hooks, r.rc, run)
		}
		judged := *run
		judged.Samples = kept
		run.Disturbances = disturb.Find(&judged)
		if run.Status == results.StatusFinished && r.aside != nil {
			run.SetAside = r.aside(run)
		}
	}
	if err := c.Store.Finish(saveCtx, run); err != nil {
		return nil, fmt.Errorf("save run %d: %w", run.ID, err)
	}
	c.obs().RunEnded(run)
	switch {
	case ctx.Err() != nil:
		return run, ErrInterrupted
	case died != "":
		return run, fmt.Errorf("run %d failed: %s", run.ID, died)
	case runErr != nil:
		return run, fmt.Errorf("run %d failed: %w", run.ID, runErr)
	case res.Interrupted:
		return run, ErrInterrupted
	case run.Status == results.StatusFailed:
		return run, fmt.Errorf("run %d failed: %s", run.ID, run.Reason)
	}
	return run, nil
}

// startSignals starts sampling the host's, dblat's and the server's signals beside the run
// (package signals): the managed server's process tree or cgroup, and the engine's own view
// through dblat's direct connection where the engine has one (engine.Signaler).
func (r *runState) startSignals(ctx context.Context) *signals.Sampler {
	if r.c.NoSignals {
		return nil
	}
	var cfg signals.Config
	if inst := r.t.Server; inst != nil {
		cfg.ServerPID, cfg.ServerCgroup = inst.PID, inst.Cgroup
	}
	if sg := engine.Caps(r.t.Engine).Signaler; sg != nil {
		read, err := sg.SignalReader(ctx, r.admin.DB)
		if err != nil {
			r.c.info("note: the server's own signals cannot be read: %s", oneLine(err))
		} else {
			cfg.Server = func(ctx context.Context) ([]signals.Reading, error) {
				sigs, err := read(ctx)
				out := make([]signals.Reading, len(sigs))
				for i, s := range sigs {
					out[i] = signals.Reading{Name: s.Name, Value: s.Value, Counter: s.Counter}
				}
				return out, err
			}
		}
	}
	return signals.Start(cfg)
}

// nothingCompleted says why a window that completed no transaction is a failure, with the
// errors it saw.
func nothingCompleted(rs *spec.Run, def *workload.Definition, s *results.Summary) string {
	msg := fmt.Sprintf("no transaction completed in the %s window", spec.FormatDuration(rs.Duration))
	var errs int64
	for _, n := range s.Errors {
		errs += n
	}
	switch {
	case errs > 0:
		msg += fmt.Sprintf(": %d failed", errs)
		for _, class := range slices.Sorted(maps.Keys(s.ErrorExamples)) {
			if ex := s.ErrorExamples[class]; len(ex) > 0 {
				msg += fmt.Sprintf(" (%s: %s)", class, ex[0])
				break
			}
		}
	case rs.Think:
		if cycle, ok := def.ThinkCycle(rs.Mix); ok {
			what := def.Metric.TxType
			if what == "" {
				what = "transaction"
			}
			msg += fmt.Sprintf(": with think times one terminal completes a %s about every %.0f s at this mix, longer than the window; give a window of several such cycles",
				what, cycle.Seconds())
		} else {
			msg += ": the think times are longer than the window"
		}
	default:
		msg += ": every terminal stalled (a lock wait that never ended?)"
	}
	return msg
}

// database returns the DSN of the database a run of p connects to on t: the database the
// run's database options select, reached through the run's transport, with the engine's
// run options applied.
func (c *Core) database(ctx context.Context, t *Target, p *plan, rs *spec.Run) (string, error) {
	dsn := t.DSN
	if len(p.db) > 0 {
		d, err := engine.Caps(t.Engine).Databases.Database(ctx, t.Server, p.db)
		if err != nil {
			return "", fmt.Errorf("database with %s: %w", fmtValues(p.db), err)
		}
		dsn = d
	}
	if rs.Transport() == spec.TransportUnix {
		d, err := engine.Caps(t.Engine).Sockets.SocketDSN(t.Server)
		if err != nil {
			return "", err
		}
		dsn = d
	}
	if h := engine.Caps(t.Engine).RunHooks; h != nil {
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
	for _, k := range slices.Sorted(maps.Keys(v)) {
		parts = append(parts, k+"="+v[k])
	}
	return strings.Join(parts, " ")
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
	if s := engine.Caps(t.Engine).Settler; s != nil {
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
	if t.Server != nil {
		addReadBytes(after, t.Server)
	}
	run.StatsAfter = after
	if info, err := t.Engine.Inspect(ctx, admin.DB); err == nil {
		run.Server.DatabaseBytes = info.DatabaseBytes
	}
}

// watchServer returns a drain channel that closes when drain closes or when the managed
// server's process exits, a function that says (after the run) why the server ended, or ""
// if it did not, and a function that stops the watching.
func watchServer(drain <-chan struct{}, inst *managed.Instance) (<-chan struct{}, func() string, func()) {
	if inst == nil {
		return drain, func() string { return "" }, func() {}
	}
	out := make(chan struct{})
	done := make(chan struct{})
	quit := make(chan struct{})
	var reason string
	go func() {
		defer close(done)
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-quit:
				return
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
	died := func() string {
		select {
		case <-done:
			return reason
		default:
			return ""
		}
	}
	var once sync.Once
	return out, died, func() { once.Do(func() { close(quit); <-done }) }
}

// scriptsOf is what a run stores of the texts its workload runs.
func scriptsOf(sources []workload.Source) []results.Script {
	var out []results.Script
	for _, s := range sources {
		out = append(out, results.Script{Kind: s.Kind, Name: s.Name, Path: s.Path, Weight: s.Weight,
			SHA256: results.ScriptSum(s.Text), Text: s.Text})
	}
	return out
}

// CheckRun checks rs against its workload and t's engine as a run does before it connects
// (nothing is touched), reads the files it names into rs.Files, so that the run handed to
// agents on other machines carries their text, and returns the workload configuration its
// data is looked up with and the texts it runs, to store with it. Its errors are the
// user's input (*InputError).
func (c *Core) CheckRun(rs *spec.Run, t *Target) (workload.Config, []results.Script, error) {
	p, err := check(rs, t.Engine, t.Server != nil)
	if err != nil {
		return workload.Config{}, nil, err
	}
	return p.workloadConfig(rs), scriptsOf(p.sources), nil
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
