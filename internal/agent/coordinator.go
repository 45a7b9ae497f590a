package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/execution"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/spec"
	"github.com/dblat/dblat/internal/sysinfo"
	"github.com/dblat/dblat/internal/workload"
)

// Defaults of the Coordinator's and the Agent's timing.
const (
	// DefaultStale is how old an agent's heartbeat may grow before the agent counts as
	// gone: five of its one-second heartbeats.
	DefaultStale = 5 * time.Second
	// DefaultJoinWait is how long a coordinator waits for enough agents.
	DefaultJoinWait = 10 * time.Minute
	// DefaultLead is how far ahead of the store's clock the start is announced: long
	// enough for every agent to see it (it polls every 50 ms) across a slow network.
	DefaultLead = time.Second
	// readyWait bounds how long the parts may take to connect and calibrate their links.
	readyWait = 2 * time.Minute
	// reportWait is how long after the end of the window the parts may take to report:
	// the drain, the statistics after the run and the write of the part.
	reportWait = 2 * time.Minute
)

// Store is what the agents and the coordinator need of the results store.
type Store interface {
	execution.Store
	Clock(ctx context.Context) (time.Time, error)
	JoinAgent(ctx context.Context, a results.Agent) error
	Heartbeat(ctx context.Context, agent string) error
	LeaveAgent(ctx context.Context, agent string) error
	Agents(ctx context.Context) ([]results.Agent, error)
	AssignParts(ctx context.Context, runID int64, parts []results.Part, stale time.Duration) error
	Parts(ctx context.Context, runID int64) ([]results.Part, error)
	AgentPart(ctx context.Context, agent string) (*results.Part, error)
	AdvancePart(ctx context.Context, p results.Part) (bool, error)
	AnnounceStart(ctx context.Context, runID int64, at time.Time) error
}

var _ Store = results.Store(nil)

// Coordinator runs a run in parts on several agents. Its fields are set once.
type Coordinator struct {
	// Store is the results store the agents watch.
	Store Store
	// Core resolves the target (a managed server's name or a DSN) and reads how much data
	// it holds; it runs nothing itself.
	Core *execution.Core
	// Agents is how many agents drive each run.
	Agents int
	// JoinWait bounds the wait for Agents idle agents (0: DefaultJoinWait); Stale is the
	// heartbeat age at which an agent counts as gone (0: DefaultStale); Lead is how far
	// ahead the start is announced (0: DefaultLead); Poll how often the store is read
	// (0: 100 ms).
	JoinWait, Stale, Lead, Poll time.Duration
	// Observer is told what happens; nil means execution.NopObserver.
	Observer execution.Observer
}

func (c *Coordinator) obs() execution.Observer {
	if c.Observer == nil {
		return execution.NopObserver{}
	}
	return c.Observer
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// Run stores rs's run as running, waits for c.Agents idle agents, gives each a part
// (Split), announces the start once every part is ready, and finishes the run with the
// merge of the parts when all are done. It returns the stored run. The run fails, with
// a reason naming the agent, when an agent's heartbeat grows older than Stale or its part
// fails; every other part is then called off. Closing drain or canceling ctx calls the
// parts off too and stores the run as aborted (the error is execution.ErrInterrupted).
func (c *Coordinator) Run(ctx context.Context, drain <-chan struct{}, rs spec.Run) (*results.Run, error) {
	if c.Agents < 1 {
		return nil, execution.Inputf("agents must be at least 1, got %d", c.Agents)
	}
	if rs.WarmupAuto {
		// Each part's runner would end its own warm-up when its own share settled, and the
		// parts' windows would not be one window.
		return nil, execution.Inputf("warmup auto needs the run in one process: agents start their windows at one announced time; give a fixed warm-up")
	}
	t, err := c.Core.Resolve(rs.Target)
	if err != nil {
		return nil, err
	}
	rs.Resolve()
	// The agents connect with the DSN; a managed server's is its loopback address, which
	// serves agents on this machine. A password is never stored: each agent then needs
	// the DSN of its own (Agent.Target).
	dsn, secret := t.DSN, false
	if r := t.Engine.Redact(t.DSN); r != t.DSN && strings.Contains(r, "xxxxx") {
		dsn, secret = r, true
	}
	def, err := workload.Lookup(rs.Workload)
	if err != nil {
		return nil, execution.Inputf("%v", err)
	}
	// Bad input is refused before anything is stored, and the files the run names (a
	// script workload's) travel in the parts' assignments.
	cfg, scripts, err := c.Core.CheckRun(&rs, t)
	if err != nil {
		return nil, err
	}
	scale, err := c.loaded(ctx, t, def, cfg, rs.Scale)
	if err != nil {
		return nil, err
	}
	asg, err := Split(rs, def, c.Agents, scale)
	if err != nil {
		return nil, err
	}
	for i := range asg {
		asg[i].Run.Target, asg[i].TargetSecret = dsn, secret
	}
	run := &results.Run{
		Study: rs.Study, CellKey: rs.Cell, Status: results.StatusRunning, Started: time.Now(),
		Params:  rs.Stored(scale, rs.Mix, rs.Options),
		Server:  results.Server{Engine: t.Engine.Name(), Target: t.Label, Managed: t.Server != nil},
		Client:  sysinfo.Client(),
		Summary: results.Summary{Metric: def.Metric.Name},
		Agents:  c.Agents,
		Scripts: scripts,
	}
	if _, err := c.Store.Begin(ctx, run); err != nil {
		return nil, err
	}
	c.obs().RunStarted(run)
	parts, err := c.drive(ctx, drain, run, asg)
	return c.finish(ctx, run, def, parts, err)
}

// loaded returns the warehouses (the scale) the run uses: scale, checked against what the
// target holds, or all loaded when 0.
func (c *Coordinator) loaded(ctx context.Context, t *execution.Target, def *workload.Definition, cfg workload.Config, scale int) (int, error) {
	wt, err := t.Open(ctx, "", engine.OpenOptions{})
	if err != nil {
		return 0, err
	}
	defer wt.DB.Close()
	n, err := def.Loaded(ctx, wt, cfg)
	if err != nil {
		if errors.Is(err, workload.ErrNotLoaded) {
			return 0, fmt.Errorf("%s has no %s data: %w (run `%s` first)", t.Label, def.Name, err, execution.LoadCommand(def, t.Label))
		}
		return 0, err
	}
	if scale > n {
		return 0, execution.Inputf("%d %s asked for, %d loaded in %s", scale, def.Scale.Name, n, t.Label)
	}
	if scale == 0 {
		scale = n
	}
	return scale, nil
}

// callOff is why drive stopped early: the run's status and reason.
type callOff struct {
	status results.Status
	reason string
}

func (e *callOff) Error() string { return e.reason }

// drive hands out the parts and waits until they are all done; it returns them, or why
// the run was called off.
func (c *Coordinator) drive(ctx context.Context, drain <-chan struct{}, run *results.Run, asg []Assignment) ([]results.Part, error) {
	poll := orDefault(c.Poll, 100*time.Millisecond)
	stale := orDefault(c.Stale, DefaultStale)
	tick := time.NewTicker(poll)
	defer tick.Stop()
	wait := func() error {
		select {
		case <-ctx.Done():
			return &callOff{results.StatusAborted, "stopped by a second interrupt"}
		case <-drain:
			return &callOff{results.StatusAborted, "interrupted before the parts were done"}
		case <-tick.C:
			return nil
		}
	}

	// 1. Enough idle agents, claimed at once.
	deadline := time.Now().Add(orDefault(c.JoinWait, DefaultJoinWait))
	c.obs().Info(fmt.Sprintf("run %d: waiting for %d agents (start them with `dblat agent --results %s`)", run.ID, c.Agents, c.storeLocation()))
	var names []string
	for {
		idle, err := c.idleAgents(ctx, stale)
		if err != nil {
			return nil, err
		}
		if len(idle) >= c.Agents {
			names = idle[:c.Agents]
			parts := make([]results.Part, c.Agents)
			for i, a := range asg {
				b, err := json.Marshal(a)
				if err != nil {
					return nil, err
				}
				parts[i] = results.Part{Agent: names[i], Assignment: string(b)}
			}
			err := c.Store.AssignParts(ctx, run.ID, parts, stale)
			if err == nil {
				break
			}
			if !errors.Is(err, results.ErrAgentBusy) {
				return nil, err
			}
			// Another coordinator took one of them first: look again.
		}
		if time.Now().After(deadline) {
			return nil, &callOff{results.StatusFailed, fmt.Sprintf("only %d of %d agents were idle after %v: start more with `dblat agent --results …`, or lower --agents",
				len(idle), c.Agents, orDefault(c.JoinWait, DefaultJoinWait))}
		}
		if err := wait(); err != nil {
			return nil, err
		}
	}
	c.obs().Info(fmt.Sprintf("run %d: parts assigned to %s", run.ID, strings.Join(names, ", ")))

	// 2. Every part ready (connected, calibrated, clock offset measured), then the start.
	deadline = time.Now().Add(readyWait)
	for {
		parts, err := c.watch(ctx, run.ID, stale)
		if err != nil {
			return nil, err
		}
		if allIn(parts, results.PartReady) {
			break
		}
		if time.Now().After(deadline) {
			return nil, &callOff{results.StatusFailed, fmt.Sprintf("agent %s was not ready after %v", firstNot(parts, results.PartReady), readyWait)}
		}
		if err := wait(); err != nil {
			return nil, err
		}
	}
	now, err := c.Store.Clock(ctx)
	if err != nil {
		return nil, err
	}
	start := now.Add(orDefault(c.Lead, DefaultLead))
	if err := c.Store.AnnounceStart(ctx, run.ID, start); err != nil {
		return nil, err
	}

	// 3. Every part done.
	deadline = time.Now().Add(orDefault(c.Lead, DefaultLead) + run.Params.Warmup + run.Params.Duration + reportWait)
	for {
		parts, err := c.watch(ctx, run.ID, stale)
		if err != nil {
			return nil, err
		}
		if allIn(parts, results.PartDone) {
			return parts, nil
		}
		if time.Now().After(deadline) {
			return nil, &callOff{results.StatusFailed, fmt.Sprintf("agent %s did not report its part in time", firstNot(parts, results.PartDone))}
		}
		if err := wait(); err != nil {
			return nil, err
		}
	}
}

func (c *Coordinator) storeLocation() string {
	if l, ok := c.Store.(interface{ Location() string }); ok {
		return l.Location()
	}
	return "…"
}

// idleAgents lists the agents free for a run whose heartbeat is fresh, by name.
func (c *Coordinator) idleAgents(ctx context.Context, stale time.Duration) ([]string, error) {
	now, err := c.Store.Clock(ctx)
	if err != nil {
		return nil, err
	}
	agents, err := c.Store.Agents(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, a := range agents {
		if a.RunID == 0 && now.Sub(a.Heartbeat) <= stale {
			out = append(out, a.Name)
		}
	}
	return out, nil
}

// watch reads the run's parts and fails the run when a part failed or its agent's
// heartbeat is stale.
func (c *Coordinator) watch(ctx context.Context, runID int64, stale time.Duration) ([]results.Part, error) {
	// The agents before the parts: an agent stores its part and is released in one
	// transaction, so an agent read as released has its part read as done. The other order
	// could read a part not yet done and then its agent already released, and call a
	// finished part a restart.
	now, err := c.Store.Clock(ctx)
	if err != nil {
		return nil, err
	}
	agents, err := c.Store.Agents(ctx)
	if err != nil {
		return nil, err
	}
	parts, err := c.Store.Parts(ctx, runID)
	if err != nil {
		return nil, err
	}
	for _, p := range parts {
		if p.State == results.PartFailed {
			return nil, &callOff{results.StatusFailed, fmt.Sprintf("agent %s failed its part: %s", p.Agent, p.Reason)}
		}
	}
	seen := map[string]results.Agent{}
	for _, a := range agents {
		seen[a.Name] = a
	}
	for _, p := range parts {
		if p.State == results.PartDone {
			continue
		}
		a, ok := seen[p.Agent]
		switch {
		case !ok:
			return nil, &callOff{results.StatusFailed, fmt.Sprintf("agent %s left during its part", p.Agent)}
		case a.RunID != runID:
			return nil, &callOff{results.StatusFailed, fmt.Sprintf("agent %s restarted during its part (it joined again at %s)", p.Agent, a.Joined.Format(time.RFC3339))}
		case now.Sub(a.Heartbeat) > stale:
			return nil, &callOff{results.StatusFailed, fmt.Sprintf("agent %s (%s, PID %d) stopped heart-beating: last heartbeat %.1f s ago",
				p.Agent, a.Hostname, a.PID, now.Sub(a.Heartbeat).Seconds())}
		}
	}
	return parts, nil
}

func allIn(parts []results.Part, st results.PartState) bool {
	for _, p := range parts {
		if p.State != st {
			return false
		}
	}
	return len(parts) > 0
}

func firstNot(parts []results.Part, st results.PartState) string {
	for _, p := range parts {
		if p.State != st {
			return p.Agent
		}
	}
	return "?"
}

// finish stores the run's end: the merge of its parts, or why it was called off (every
// part not done is then failed, which stops its agent).
func (c *Coordinator) finish(ctx context.Context, run *results.Run, def *workload.Definition, parts []results.Part, runErr error) (*results.Run, error) {
	saveCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	var off *callOff
	switch {
	case runErr == nil:
		if err := Merge(run, parts); err != nil {
			runErr = &callOff{results.StatusFailed, err.Error()}
			break
		}
		first := parts[0].Result
		run.Server.Version, run.Server.Settings = first.Server.Version, first.Server.Settings
		run.Params.Mix = first.Params.Mix
		run.Params.Options = mergeOptions(run.Params.Options, first.Params.Options, def.SplitOptions)
		if err := c.Store.AddSamples(saveCtx, run.ID, run.Samples); err != nil {
			runErr = err
			break
		}
		run.Status = results.StatusFinished
	}
	if runErr != nil {
		if !errors.As(runErr, &off) {
			off = &callOff{results.StatusFailed, runErr.Error()}
		}
		run.Status, run.Reason = off.status, off.reason
		if all, err := c.Store.Parts(saveCtx, run.ID); err == nil {
			for _, p := range all {
				_, _ = c.Store.AdvancePart(saveCtx, results.Part{RunID: run.ID, Agent: p.Agent, State: results.PartFailed,
					Reason: "run called off: " + off.reason})
			}
			run.StartSkew = StartSkew(all)
		}
	}
	run.Ended = time.Now()
	if err := c.Store.Finish(saveCtx, run); err != nil {
		return nil, fmt.Errorf("save run %d: %w", run.ID, err)
	}
	c.obs().RunEnded(run)
	switch {
	case off != nil && off.status == results.StatusAborted:
		return run, execution.ErrInterrupted
	case off != nil:
		return run, fmt.Errorf("run %d failed: %s", run.ID, off.reason)
	}
	return run, nil
}

// mergeOptions adds to the run's options those every part recorded (the engine's notes,
// the workload's description), except the options that confined each part to its data.
func mergeOptions(run, part map[string]string, split []string) map[string]string {
	out := maps.Clone(part)
	if out == nil {
		out = map[string]string{}
	}
	for _, o := range split {
		delete(out, o)
	}
	maps.Copy(out, run)
	return out
}
