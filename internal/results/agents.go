package results

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// ErrAgentBusy is wrapped by AssignParts' error when an agent it names is unknown, already
// works on a part, or its heartbeat is older than the staleness given: nothing was
// assigned, and the coordinator may choose other agents.
var ErrAgentBusy = errors.New("agent not available")

// ErrAgentNameTaken is wrapped by JoinAgent's error when another process holds the name and
// heart-beat within AgentNameHeld.
var ErrAgentNameTaken = errors.New("the name is taken by a live agent")

// AgentNameHeld is how long after its last heartbeat an agent's name stays its own: five
// of its one-second beats, as long as a coordinator waits before it counts the agent gone.
const AgentNameHeld = 5 * time.Second

// Agent is a dblat agent process that has joined a store (see `dblat agent`). Its times
// are on the store's clock (Store.Clock).
type Agent struct {
	// Name identifies the agent; a process joining under a name already known takes it over.
	Name     string `json:"name"`
	Hostname string `json:"hostname"`
	PID      int    `json:"pid"`
	// Joined is when it joined; Heartbeat its latest sign of life.
	Joined    time.Time `json:"joined"`
	Heartbeat time.Time `json:"heartbeat"`
	// RunID is the run whose part it works on; 0 when it is idle.
	RunID int64 `json:"run_id,omitempty"`
}

// PartState is how far a part of a run has come. A part moves forward only: assigned,
// ready, running, then done or failed.
type PartState string

// The states of a part.
const (
	// PartAssigned: the coordinator has given the part to its agent.
	PartAssigned PartState = "assigned"
	// PartReady: the agent has connected, calibrated its link, measured its clock offset
	// and waits for the start time.
	PartReady PartState = "ready"
	// PartRunning: the agent started its terminals at the announced start.
	PartRunning PartState = "running"
	// PartDone: the part's figures are stored (Part.Result).
	PartDone PartState = "done"
	// PartFailed: the part ended without figures that count (Part.Reason says why).
	PartFailed PartState = "failed"
)

var partOrder = map[PartState]int{PartAssigned: 0, PartReady: 1, PartRunning: 2, PartDone: 3, PartFailed: 3}

// Part is one agent's share of a run driven by several agents. Its times are on the
// store's clock.
type Part struct {
	RunID int64  `json:"run_id"`
	Agent string `json:"agent"`
	// Index numbers the parts of a run from 0.
	Index int       `json:"index"`
	State PartState `json:"state"`
	// Assignment is the part's work as JSON, written by the coordinator and read by the
	// agent; the store does not interpret it.
	Assignment string `json:"assignment"`
	// ClockOffset is the agent's clock minus the store's, as the agent measured it.
	ClockOffset time.Duration `json:"clock_offset_ns"`
	// StartAt is the start announced to every part of the run; Started is when this part
	// actually started its terminals. Zero until known.
	StartAt time.Time `json:"start_at"`
	Started time.Time `json:"started"`
	// Reason says why a failed part failed.
	Reason string `json:"reason,omitempty"`
	// Result is the part's run as its agent measured it, with its samples; nil until done.
	Result *Run `json:"result,omitempty"`
}

// Clock implements Store.Clock.
func (s *sqlStore) Clock(ctx context.Context) (time.Time, error) {
	if !s.d.pg {
		return time.Now(), nil // a SQLite store is a file on this machine: its clock is ours
	}
	var t time.Time
	if err := s.db.QueryRowContext(ctx, "SELECT clock_timestamp()").Scan(&t); err != nil {
		return time.Time{}, fmt.Errorf("results: read the store's clock: %w", err)
	}
	return t, nil
}

func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// JoinAgent implements Store.JoinAgent.
func (s *sqlStore) JoinAgent(ctx context.Context, a Agent) error {
	if a.Name == "" {
		return errors.New("results: join agent: no name")
	}
	now, err := s.Clock(ctx)
	if err != nil {
		return err
	}
	// A name is taken over from a process that stopped heart-beating, or rejoins from the
	// same process; never from another live one, which would run the same parts.
	res, err := s.db.ExecContext(ctx, s.d.q(`INSERT INTO agents (name, hostname, pid, joined_ns, heartbeat_ns, run_id)
VALUES (?, ?, ?, ?, ?, NULL)
ON CONFLICT (name) DO UPDATE SET hostname = excluded.hostname, pid = excluded.pid,
	joined_ns = excluded.joined_ns, heartbeat_ns = excluded.heartbeat_ns, run_id = NULL
WHERE agents.heartbeat_ns < ? OR (agents.hostname = excluded.hostname AND agents.pid = excluded.pid)`),
		s.d.text(a.Name), s.d.text(a.Hostname), a.PID, nanos(now), nanos(now), nanos(now.Add(-AgentNameHeld)))
	if err != nil {
		return fmt.Errorf("results: join agent %s: %w", a.Name, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		var host string
		var pid int
		var beat int64
		_ = s.db.QueryRowContext(ctx, s.d.q("SELECT hostname, pid, heartbeat_ns FROM agents WHERE name = ?"), s.d.text(a.Name)).Scan(&host, &pid, &beat)
		return fmt.Errorf("results: join agent %s: %w: host %s, PID %d heart-beat %s ago; give each agent its own --name",
			a.Name, ErrAgentNameTaken, host, pid, now.Sub(fromNanos(beat)).Round(time.Millisecond))
	}
	return nil
}

// Heartbeat implements Store.Heartbeat.
func (s *sqlStore) Heartbeat(ctx context.Context, agent string) error {
	now, err := s.Clock(ctx)
	if err != nil {
		return err
	}
	res, err := s.db.ExecContext(ctx, s.d.q("UPDATE agents SET heartbeat_ns = ? WHERE name = ?"), nanos(now), s.d.text(agent))
	if err != nil {
		return fmt.Errorf("results: heartbeat of agent %s: %w", agent, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("results: heartbeat of agent %s: %w", agent, ErrNotFound)
	}
	return nil
}

// LeaveAgent implements Store.LeaveAgent.
func (s *sqlStore) LeaveAgent(ctx context.Context, agent string) error {
	if _, err := s.db.ExecContext(ctx, s.d.q("DELETE FROM agents WHERE name = ?"), s.d.text(agent)); err != nil {
		return fmt.Errorf("results: agent %s leaves: %w", agent, err)
	}
	return nil
}

// Agents implements Store.Agents.
func (s *sqlStore) Agents(ctx context.Context) ([]Agent, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT name, hostname, pid, joined_ns, heartbeat_ns, run_id FROM agents ORDER BY name")
	if err != nil {
		return nil, fmt.Errorf("results: list agents: %w", err)
	}
	var out []Agent
	for rows.Next() {
		var a Agent
		var joined, beat int64
		var run sql.NullInt64
		if err := rows.Scan(&a.Name, &a.Hostname, &a.PID, &joined, &beat, &run); err != nil {
			rows.Close()
			return nil, fmt.Errorf("results: list agents: %w", err)
		}
		a.Joined, a.Heartbeat, a.RunID = fromNanos(joined), fromNanos(beat), run.Int64
		out = append(out, a)
	}
	if err := closeRows(rows); err != nil {
		return nil, fmt.Errorf("results: list agents: %w", err)
	}
	return out, nil
}

// AssignParts implements Store.AssignParts.
func (s *sqlStore) AssignParts(ctx context.Context, runID int64, parts []Part, stale time.Duration) error {
	now, err := s.Clock(ctx)
	if err != nil {
		return err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("results: assign parts of run %d: %w", runID, err)
	}
	defer tx.Rollback()
	if err := s.checkRunning(ctx, tx, runID); err != nil {
		return fmt.Errorf("results: assign parts: %w", err)
	}
	for i, p := range parts {
		// Claiming the agent and inserting its part in one transaction: two coordinators
		// never get one agent, and an agent never gets two parts.
		res, err := tx.ExecContext(ctx, s.d.q("UPDATE agents SET run_id = ? WHERE name = ? AND run_id IS NULL AND heartbeat_ns >= ?"),
			runID, s.d.text(p.Agent), nanos(now.Add(-stale)))
		if err != nil {
			return fmt.Errorf("results: assign part %d of run %d: %w", i, runID, err)
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return fmt.Errorf("results: assign part %d of run %d to agent %s: %w", i, runID, p.Agent, ErrAgentBusy)
		}
		if _, err := tx.ExecContext(ctx, s.d.q("INSERT INTO run_parts (run_id, agent, ord, state, assignment) VALUES (?, ?, ?, ?, ?)"),
			runID, s.d.text(p.Agent), i, string(PartAssigned), s.d.json(p.Assignment)); err != nil {
			return fmt.Errorf("results: assign part %d of run %d: %w", i, runID, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("results: assign parts of run %d: %w", runID, err)
	}
	return nil
}

// partResultJSON encodes a part's result for the result column, with its non-finite
// rates stored as 0 as the runs table stores them.
func partResultJSON(r *Run) (string, error) {
	c := *r
	c.Summary.TPS, c.Summary.TPM, c.Summary.NOPM = finite(c.Summary.TPS), finite(c.Summary.TPM), finite(c.Summary.NOPM)
	b, err := json.Marshal(c)
	return string(b), err
}

const partSelect = "SELECT run_id, agent, ord, state, assignment, clock_offset_ns, start_at_ns, started_ns, reason, result FROM run_parts"

func scanParts(rows *sql.Rows) ([]Part, error) {
	var out []Part
	for rows.Next() {
		var p Part
		var state string
		var offset, startAt, started int64
		var result sql.NullString
		if err := rows.Scan(&p.RunID, &p.Agent, &p.Index, &state, &p.Assignment, &offset, &startAt, &started, &p.Reason, &result); err != nil {
			rows.Close()
			return nil, err
		}
		p.State, p.ClockOffset, p.StartAt, p.Started = PartState(state), time.Duration(offset), fromNanos(startAt), fromNanos(started)
		if result.Valid {
			p.Result = &Run{}
			if err := json.Unmarshal([]byte(result.String), p.Result); err != nil {
				rows.Close()
				return nil, fmt.Errorf("part %d of run %d: column result: %w", p.Index, p.RunID, err)
			}
		}
		out = append(out, p)
	}
	return out, closeRows(rows)
}

// Parts implements Store.Parts.
func (s *sqlStore) Parts(ctx context.Context, runID int64) ([]Part, error) {
	rows, err := s.db.QueryContext(ctx, s.d.q(partSelect+" WHERE run_id = ? ORDER BY ord"), runID)
	if err != nil {
		return nil, fmt.Errorf("results: parts of run %d: %w", runID, err)
	}
	parts, err := scanParts(rows)
	if err != nil {
		return nil, fmt.Errorf("results: parts of run %d: %w", runID, err)
	}
	return parts, nil
}

// AgentPart implements Store.AgentPart.
func (s *sqlStore) AgentPart(ctx context.Context, agent string) (*Part, error) {
	rows, err := s.db.QueryContext(ctx, s.d.q(partSelect+
		" WHERE agent = ? AND state IN ('assigned', 'ready', 'running') ORDER BY run_id DESC LIMIT 1"), s.d.text(agent))
	if err != nil {
		return nil, fmt.Errorf("results: part of agent %s: %w", agent, err)
	}
	parts, err := scanParts(rows)
	if err != nil || len(parts) == 0 {
		return nil, err
	}
	return &parts[0], nil
}

// AdvancePart implements Store.AdvancePart.
func (s *sqlStore) AdvancePart(ctx context.Context, p Part) (bool, error) {
	to, ok := partOrder[p.State]
	if !ok || p.State == PartAssigned {
		return false, fmt.Errorf("results: advance part of run %d: %q is not a state a part moves to", p.RunID, p.State)
	}
	var earlier []any
	for st, o := range partOrder {
		if o < to {
			earlier = append(earlier, string(st))
		}
	}
	set, args := "state = ?", []any{string(p.State)}
	switch p.State {
	case PartReady:
		set, args = set+", clock_offset_ns = ?", append(args, int64(p.ClockOffset))
	case PartRunning:
		set, args = set+", started_ns = ?", append(args, nanos(p.Started))
	case PartDone:
		if p.Result == nil {
			return false, fmt.Errorf("results: part of run %d by agent %s is done without a result", p.RunID, p.Agent)
		}
		b, err := partResultJSON(p.Result)
		if err != nil {
			return false, fmt.Errorf("results: encode part of run %d: %w", p.RunID, err)
		}
		set, args = set+", result = ?", append(args, s.d.json(b))
	case PartFailed:
		set, args = set+", reason = ?", append(args, s.d.text(p.Reason))
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("results: advance part of run %d: %w", p.RunID, err)
	}
	defer tx.Rollback()
	args = append(args, p.RunID, s.d.text(p.Agent))
	args = append(args, earlier...)
	in := "?"
	for range len(earlier) - 1 {
		in += ", ?"
	}
	res, err := tx.ExecContext(ctx, s.d.q("UPDATE run_parts SET "+set+" WHERE run_id = ? AND agent = ? AND state IN ("+in+")"), args...)
	if err != nil {
		return false, fmt.Errorf("results: advance part of run %d by agent %s to %s: %w", p.RunID, p.Agent, p.State, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, err
	}
	if n == 0 {
		return false, nil // already there or past it: a retry, or the run failed meanwhile
	}
	if p.State == PartDone || p.State == PartFailed {
		if _, err := tx.ExecContext(ctx, s.d.q("UPDATE agents SET run_id = NULL WHERE name = ? AND run_id = ?"), s.d.text(p.Agent), p.RunID); err != nil {
			return false, fmt.Errorf("results: release agent %s: %w", p.Agent, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("results: advance part of run %d by agent %s: %w", p.RunID, p.Agent, err)
	}
	return true, nil
}

// AnnounceStart implements Store.AnnounceStart.
func (s *sqlStore) AnnounceStart(ctx context.Context, runID int64, at time.Time) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("results: announce the start of run %d: %w", runID, err)
	}
	defer tx.Rollback()
	if err := s.checkRunning(ctx, tx, runID); err != nil {
		return fmt.Errorf("results: announce the start: %w", err)
	}
	var notReady int
	if err := tx.QueryRowContext(ctx, s.d.q("SELECT count(*) FROM run_parts WHERE run_id = ? AND state <> 'ready'"), runID).Scan(&notReady); err != nil {
		return fmt.Errorf("results: announce the start of run %d: %w", runID, err)
	}
	if notReady > 0 {
		return fmt.Errorf("results: announce the start of run %d: %d of its parts are not ready", runID, notReady)
	}
	if _, err := tx.ExecContext(ctx, s.d.q("UPDATE run_parts SET start_at_ns = ? WHERE run_id = ?"), nanos(at), runID); err != nil {
		return fmt.Errorf("results: announce the start of run %d: %w", runID, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("results: announce the start of run %d: %w", runID, err)
	}
	return nil
}

// PartsOf reads the parts of those of runs that several agents drove and that finished, by
// run id: what the credibility check's per-agent rule and a report's agent table read.
func PartsOf(ctx context.Context, store Store, runs []Run) (map[int64][]Part, error) {
	parts := map[int64][]Part{}
	for _, r := range runs {
		if r.Agents == 0 || r.Status != StatusFinished {
			continue
		}
		p, err := store.Parts(ctx, r.ID)
		if err != nil {
			return nil, err
		}
		parts[r.ID] = p
	}
	return parts, nil
}
