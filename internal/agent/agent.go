package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/dblat/dblat/internal/execution"
	"github.com/dblat/dblat/internal/results"
)

// DefaultHeartbeat is how often an agent tells the store it is alive.
const DefaultHeartbeat = time.Second

// Agent waits for parts of runs in a store and runs them. Its fields are set once.
type Agent struct {
	// Name identifies the agent in the store and in failure reasons.
	Name string
	// Store is the results store the coordinator writes runs to.
	Store Store
	// Core runs the parts; its Store is replaced by the part's own for each part, and its
	// Observer is told of each part as of a run.
	Core *execution.Core
	// Target, when set, replaces the target of every part (for a DSN with a password,
	// which the store never holds, or a path that differs from this agent).
	Target string
	// Heartbeat is how often the agent heart-beats (0: DefaultHeartbeat); Poll how often
	// it looks for work and, during a part, for the run being called off (0: 250 ms).
	Heartbeat, Poll time.Duration
	// IdleExit, when positive, ends Serve (with nil) after that long without a part: how
	// agents started as a Kubernetes Job complete.
	IdleExit time.Duration
}

func (a *Agent) info(format string, args ...any) {
	if a.Core.Observer != nil {
		a.Core.Observer.Info(fmt.Sprintf("agent %s: ", a.Name) + fmt.Sprintf(format, args...))
	}
}

// Serve joins the store and runs the parts given to the agent, one at a time, until ctx
// ends (or IdleExit passes without work); then it leaves the store and returns nil. A part in progress when ctx ends is
// drained (its transactions in flight finish) and reported failed, so the coordinator
// does not wait for it: that is how SIGTERM stops an agent cleanly.
func (a *Agent) Serve(ctx context.Context) error {
	if a.Name == "" {
		return execution.Inputf("an agent needs a name: give --name")
	}
	host, _ := os.Hostname()
	// A name still held by a process that just died (a restarted pod) frees itself once that
	// process's heartbeat is AgentNameHeld old: wait that long before giving up.
	for giveUp := time.Now().Add(results.AgentNameHeld + 2*time.Second); ; {
		err := a.Store.JoinAgent(ctx, results.Agent{Name: a.Name, Hostname: host, PID: os.Getpid()})
		if err == nil {
			break
		}
		if !errors.Is(err, results.ErrAgentNameTaken) || time.Now().After(giveUp) {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Second):
		}
	}
	a.info("joined %s; waiting for work", storeName(a.Store))
	defer func() {
		leaveCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := a.Store.LeaveAgent(leaveCtx, a.Name); err != nil {
			a.info("warning: %v", err)
		}
	}()
	beatCtx, stopBeats := context.WithCancel(context.WithoutCancel(ctx))
	beats := sync.WaitGroup{}
	beats.Go(func() { a.heartbeats(beatCtx) })
	defer func() { stopBeats(); beats.Wait() }()

	tick := time.NewTicker(orDefault(a.Poll, 250*time.Millisecond))
	defer tick.Stop()
	lastWork := time.Now()
	for {
		select {
		case <-ctx.Done():
			a.info("stopping")
			return nil
		case <-tick.C:
		}
		if a.IdleExit > 0 && time.Since(lastWork) > a.IdleExit {
			a.info("no work for %v: stopping", a.IdleExit)
			return nil
		}
		p, err := a.Store.AgentPart(ctx, a.Name)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			a.info("warning: %v", err)
			continue
		}
		if p != nil {
			a.runPart(ctx, p)
			lastWork = time.Now()
		}
	}
}

// heartbeats heart-beats until ctx ends.
func (a *Agent) heartbeats(ctx context.Context) {
	tick := time.NewTicker(orDefault(a.Heartbeat, DefaultHeartbeat))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if err := a.Store.Heartbeat(ctx, a.Name); err != nil && ctx.Err() == nil {
			a.info("warning: %v", err)
		}
	}
}

// runPart runs part p and stores its outcome.
func (a *Agent) runPart(ctx context.Context, p *results.Part) {
	saveCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	fail := func(reason string) {
		if _, err := a.Store.AdvancePart(saveCtx, results.Part{RunID: p.RunID, Agent: a.Name, State: results.PartFailed, Reason: reason}); err != nil {
			a.info("warning: %v", err)
		}
	}
	if p.State != results.PartAssigned {
		// This agent (under this name) was restarted in the middle of the part: what it
		// measured is gone.
		fail("the agent restarted during its part")
		return
	}
	var asg Assignment
	if err := json.Unmarshal([]byte(p.Assignment), &asg); err != nil {
		fail(fmt.Sprintf("cannot read the assignment: %v", err))
		return
	}
	rs := asg.Run
	switch {
	case a.Target != "":
		rs.Target = a.Target
	case asg.TargetSecret:
		fail(fmt.Sprintf("agent %s: the run's target DSN holds a password, which the store never holds: start the agent with --target DSN", a.Name))
		return
	}
	a.info("run %d: part %d of %d, terminals %d-%d", p.RunID, asg.Index+1, asg.Parts, rs.FirstTerminal, rs.FirstTerminal+rs.Terminals-1)

	// The part drains when the coordinator calls the run off or this agent is stopped.
	drain := make(chan struct{})
	var once sync.Once
	stop := func() { once.Do(func() { close(drain) }) }
	watchCtx, stopWatch := context.WithCancel(context.WithoutCancel(ctx))
	var watching sync.WaitGroup
	watching.Go(func() { a.watchPart(watchCtx, ctx, p, stop) })
	defer func() { stopWatch(); watching.Wait() }()

	ps := &partStore{store: a.Store, part: *p, agent: a.Name, drain: drain}
	core := *a.Core
	core.Store = ps
	core.BeforeStart = ps.awaitStart
	run, err := core.Run(context.WithoutCancel(ctx), drain, rs)
	ps.wait()
	switch {
	case run != nil && run.Status == results.StatusFinished && ps.finished != nil:
		res := *ps.finished
		res.Samples = ps.samples
		written, werr := a.Store.AdvancePart(saveCtx, results.Part{RunID: p.RunID, Agent: a.Name, State: results.PartDone, Result: &res})
		switch {
		case werr != nil:
			a.info("warning: %v", werr)
		case !written:
			a.info("run %d: part not stored: the run was called off", p.RunID)
		default:
			a.info("run %d: part stored (%d committed)", p.RunID, res.Summary.Committed)
		}
	case ctx.Err() != nil:
		fail(fmt.Sprintf("agent %s was stopped", a.Name))
	case run != nil && run.Reason != "":
		fail(run.Reason)
	case err != nil:
		fail(err.Error())
	default:
		fail("the part ended without figures")
	}
}

// watchPart stops the part when the coordinator calls the run off (the part is failed in
// the store) or when agentCtx ends.
func (a *Agent) watchPart(ctx, agentCtx context.Context, p *results.Part, stop func()) {
	tick := time.NewTicker(orDefault(a.Poll, 250*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-agentCtx.Done():
			stop()
			return
		case <-tick.C:
		}
		parts, err := a.Store.Parts(ctx, p.RunID)
		if err != nil {
			continue
		}
		for _, q := range parts {
			if q.Agent == a.Name && q.State == results.PartFailed {
				a.info("run %d called off: %s", p.RunID, q.Reason)
				stop()
				return
			}
		}
	}
}

// errCalledOff is the start barrier's error when the run is called off before the part
// started.
var errCalledOff = errors.New("the run was called off before this part started")

// partStore is the execution.Store a part runs with: the part's figures stay in memory until
// the agent writes them as the part's result. Its awaitStart is the part's start barrier
// (execution.Core.BeforeStart).
type partStore struct {
	store Store
	part  results.Part
	agent string
	drain <-chan struct{}

	mu       sync.Mutex
	samples  []results.Sample
	finished *results.Run
	pending  sync.WaitGroup // the write of the actual start
}

// Begin gives the part the whole run's ID; the part is not stored as a run of its own.
func (s *partStore) Begin(_ context.Context, r *results.Run) (int64, error) {
	r.ID = s.part.RunID
	return r.ID, nil
}

// awaitStart measures the clock offset to the store, reports the part ready, waits for the
// announced start and returns at it: the runner starts the terminals right after.
func (s *partStore) awaitStart(ctx context.Context, r *results.Run) error {
	offset, err := ClockOffset(ctx, s.store, 7)
	if err != nil {
		return err
	}
	ok, err := s.store.AdvancePart(ctx, results.Part{RunID: s.part.RunID, Agent: s.agent, State: results.PartReady, ClockOffset: offset})
	if err != nil {
		return err
	}
	if !ok {
		return errCalledOff
	}
	var startAt time.Time
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	// A coordinator waits at most readyWait for every part to be ready, then announces the
	// start at once: one that has not announced it by then is gone.
	deadline := time.After(readyWait + time.Minute)
	for startAt.IsZero() {
		select {
		case <-s.drain:
			return errCalledOff
		case <-deadline:
			return fmt.Errorf("no start was announced within %v of this part being ready: the coordinator is gone", readyWait+time.Minute)
		case <-tick.C:
		}
		parts, err := s.store.Parts(ctx, s.part.RunID)
		if err != nil {
			continue
		}
		for _, q := range parts {
			if q.Agent != s.agent {
				continue
			}
			if q.State != results.PartReady {
				return errCalledOff
			}
			startAt = q.StartAt
		}
	}
	// The store's clock reads startAt when this machine's reads startAt + offset.
	local := startAt.Add(offset)
	select {
	case <-s.drain:
		return errCalledOff
	case <-time.After(time.Until(local)):
	}
	started := time.Now()
	s.pending.Go(func() {
		_, _ = s.store.AdvancePart(context.WithoutCancel(ctx), results.Part{RunID: s.part.RunID, Agent: s.agent,
			State: results.PartRunning, Started: started.Add(-offset)})
	})
	r.Started = started
	return nil
}

// wait waits for the write of the actual start.
func (s *partStore) wait() { s.pending.Wait() }

// AddSamples keeps the part's samples.
func (s *partStore) AddSamples(_ context.Context, _ int64, samples []results.Sample) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.samples = append(s.samples, samples...)
	return nil
}

// Finish keeps the part's figures.
func (s *partStore) Finish(_ context.Context, r *results.Run) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := *r
	s.finished = &c
	return nil
}

// SaveStudy is not part of a part's life.
func (s *partStore) SaveStudy(context.Context, results.Study) error {
	return errors.New("agent: a part saves no study")
}

// CellCounts is not part of a part's life.
func (s *partStore) CellCounts(context.Context, string) (map[string]map[results.Status]int, error) {
	return nil, errors.New("agent: a part counts no cells")
}

// List is not part of a part's life.
func (s *partStore) List(context.Context, results.Filter) ([]results.Run, error) {
	return nil, errors.New("agent: a part lists no runs")
}

// ClockOffset measures this machine's clock minus the store's: it reads the store's clock
// n times and keeps the reading with the shortest round trip, taking the store's time to
// be that of the round trip's midpoint. Its error is at most half that round trip.
func ClockOffset(ctx context.Context, s interface {
	Clock(context.Context) (time.Time, error)
}, n int) (time.Duration, error) {
	best, bestRTT := time.Duration(0), time.Duration(-1)
	for range max(n, 1) {
		t0 := time.Now()
		st, err := s.Clock(ctx)
		if err != nil {
			return 0, err
		}
		rtt := time.Since(t0)
		if bestRTT < 0 || rtt < bestRTT {
			// t0 + rtt/2 is a wall-clock reading of this machine; st one of the store's.
			best, bestRTT = t0.Add(rtt/2).Round(0).Sub(st), rtt
		}
	}
	return best, nil
}

func storeName(s Store) string {
	if l, ok := s.(interface{ Location() string }); ok {
		return l.Location()
	}
	return "the results store"
}
