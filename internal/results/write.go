package results

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"time"
)

// timeLayout stores times in UTC with a fixed width, so that text order is time order.
const timeLayout = "2006-01-02T15:04:05.000000000Z07:00"

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

// nullTime stores the zero time as NULL.
func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return formatTime(t)
}

// jsonMap stores a nil map as NULL and any other map (even empty) as a JSON object, so that
// nil and empty survive the round trip.
func jsonMap[M ~map[string]V, V any](m M) (any, error) {
	if m == nil {
		return nil, nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return string(b), nil
}

// jsonValue stores a nil pointer as NULL and anything else as JSON.
func jsonValue[T any](v *T) (any, error) {
	if v == nil {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return string(b), nil
}

// finite stores NaN and ±Inf, which neither SQLite REAL columns (NaN becomes NULL) nor JSON
// can carry, as 0: recording the run matters more than one meaningless figure.
func finite(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}

// finiteMap returns m, or a copy with its non-finite values replaced by 0.
func finiteMap(m map[string]float64) map[string]float64 {
	for _, v := range m {
		if finite(v) != v {
			c := make(map[string]float64, len(m))
			for k, v := range m {
				c[k] = finite(v)
			}
			return c
		}
	}
	return m
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// column is one column of the runs table with the value a Run gives it.
type column struct {
	name string
	val  any
}

// runColumns lists the runs columns a Run fills (all but id), in schema order.
func runColumns(r *Run) ([]column, error) {
	var errs []error
	js := func(v any, err error) any {
		errs = append(errs, err)
		return v
	}
	c := r.Client
	c.CPUSeconds = finite(c.CPUSeconds)
	client, err := json.Marshal(c)
	errs = append(errs, err)
	cols := []column{
		{"study", r.Study},
		{"cell_key", r.CellKey},
		{"status", string(r.Status)},
		{"reason", r.Reason},
		{"started", formatTime(r.Started)},
		{"ended", nullTime(r.Ended)},

		{"workload", r.Params.Workload},
		{"scale", r.Params.Scale},
		{"terminals", r.Params.Terminals},
		{"connections", r.Params.Connections},
		{"duration_ns", int64(r.Params.Duration)},
		{"warmup_ns", int64(r.Params.Warmup)},
		{"seed", r.Params.Seed},
		{"think", boolInt(r.Params.Think)},
		{"rtt_ns", int64(r.Params.RTT)},
		{"mix", js(jsonMap(finiteMap(r.Params.Mix)))},
		{"options", js(jsonMap(r.Params.Options))},
		{"link", js(jsonValue(r.Link))},

		{"engine", r.Server.Engine},
		{"target", r.Server.Target},
		{"managed", boolInt(r.Server.Managed)},
		{"server_version", r.Server.Version},
		{"settings", js(jsonMap(r.Server.Settings))},
		{"database_bytes", r.Server.DatabaseBytes},

		{"hostname", r.Client.Hostname},
		{"pid", r.Client.PID},
		{"client", string(client)},

		{"stats_before", js(jsonMap(finiteMap(r.StatsBefore)))},
		{"stats_after", js(jsonMap(finiteMap(r.StatsAfter)))},

		{"elapsed_ns", int64(r.Summary.Elapsed)},
		{"committed", r.Summary.Committed},
		{"rollbacks", r.Summary.Rollbacks},
		{"errors", js(jsonMap(r.Summary.Errors))},
		{"error_examples", js(jsonMap(r.Summary.ErrorExamples))},
		{"tps", finite(r.Summary.TPS)},
		{"tpm", finite(r.Summary.TPM)},
		{"nopm", finite(r.Summary.NOPM)},
		{"metric", r.Summary.Metric},
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("encoding run as JSON: %w", err)
	}
	return cols, nil
}

// Begin records r as a run that has started: it inserts it with StatusRunning and sets
// r.ID and r.Status. If r.Started is zero it is set to now; if r.Client.PID or
// r.Client.Hostname are unset they are set to this process's, since they are how a later
// Open recognises a run whose process died. r.Tx and r.Samples are ignored (see AddSamples
// and Finish). Non-finite floats (NaN, ±Inf) are stored as 0, here and in Finish. Safe for
// concurrent use.
func (s *Store) Begin(ctx context.Context, r *Run) (int64, error) {
	if r == nil {
		return 0, errors.New("results: begin: nil run")
	}
	if r.Started.IsZero() {
		r.Started = time.Now()
	}
	if r.Client.PID == 0 {
		r.Client.PID = os.Getpid()
	}
	if r.Client.Hostname == "" {
		r.Client.Hostname = s.host
	}
	saved, savedEnded := r.Status, r.Ended
	r.Status, r.Ended = StatusRunning, time.Time{}
	cols, err := runColumns(r)
	if err != nil {
		r.Status, r.Ended = saved, savedEnded
		return 0, fmt.Errorf("results: begin: %w", err)
	}
	names := make([]string, len(cols))
	args := make([]any, len(cols))
	for i, c := range cols {
		names[i], args[i] = c.name, c.val
	}
	query := "INSERT INTO runs (" + strings.Join(names, ", ") + ") VALUES (?" +
		strings.Repeat(", ?", len(cols)-1) + ")"
	res, err := s.db.ExecContext(ctx, query, args...)
	if err != nil {
		r.Status, r.Ended = saved, savedEnded
		return 0, fmt.Errorf("results: begin: %w", err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, fmt.Errorf("results: begin: %w", err)
	}
	r.ID = id
	return id, nil
}

// checkRunning returns nil if run id exists and is running, an error wrapping ErrNotFound
// if it does not exist, and an error naming its status otherwise.
func checkRunning(ctx context.Context, tx *sql.Tx, id int64) error {
	var status string
	err := tx.QueryRowContext(ctx, "SELECT status FROM runs WHERE id = ?", id).Scan(&status)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("run %d: %w", id, ErrNotFound)
	case err != nil:
		return err
	case Status(status) != StatusRunning:
		return fmt.Errorf("run %d is already %s", id, status)
	}
	return nil
}

// AddSamples appends interval samples to a running run, in one transaction; they are read
// back in the order added. It fails, storing nothing, if the run does not exist (wrapping
// ErrNotFound) or has already ended. An empty slice is a no-op. Safe for concurrent use.
func (s *Store) AddSamples(ctx context.Context, runID int64, samples []Sample) error {
	if len(samples) == 0 {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("results: add samples: %w", err)
	}
	defer tx.Rollback()
	if err := checkRunning(ctx, tx, runID); err != nil {
		return fmt.Errorf("results: add samples: %w", err)
	}
	stmt, err := tx.PrepareContext(ctx, `
		INSERT INTO run_samples (run_id, offset_ns, type, committed, errors, p50_us, p99_us, max_us)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return fmt.Errorf("results: add samples: %w", err)
	}
	defer stmt.Close()
	for _, sm := range samples {
		if _, err := stmt.ExecContext(ctx, runID, int64(sm.Offset), sm.Type, sm.Committed,
			sm.Errors, sm.P50Us, sm.P99Us, sm.MaxUs); err != nil {
			return fmt.Errorf("results: add samples to run %d: %w", runID, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("results: add samples to run %d: %w", runID, err)
	}
	return nil
}

// Finish records the end of a running run in one transaction: every field of r except
// ID, Started and Samples is written (status, reason, ended, params, server, client,
// stats, summary) and r.Tx replaces the run's per-type rows. r.Status must be finished,
// failed or aborted; r.Ended is set to now if zero; tx types must be unique. Finish
// fails, changing nothing, if the run does not exist (wrapping ErrNotFound) or has
// already ended, so a run ends exactly once.
//
// Pass a context that is still live: if the run ended because its context was cancelled,
// use a fresh one (with a timeout) to record that. Safe for concurrent use.
func (s *Store) Finish(ctx context.Context, r *Run) error {
	if r == nil {
		return errors.New("results: finish: nil run")
	}
	switch r.Status {
	case StatusFinished, StatusFailed, StatusAborted:
	default:
		return fmt.Errorf("results: finish run %d: status %q is not an end state (want %s, %s or %s)",
			r.ID, r.Status, StatusFinished, StatusFailed, StatusAborted)
	}
	if r.Ended.IsZero() {
		r.Ended = time.Now()
	}
	cols, err := runColumns(r)
	if err != nil {
		return fmt.Errorf("results: finish run %d: %w", r.ID, err)
	}
	sets := make([]string, 0, len(cols))
	args := make([]any, 0, len(cols)+1)
	for _, c := range cols {
		if c.name == "started" {
			continue // fixed at Begin
		}
		sets = append(sets, c.name+" = ?")
		args = append(args, c.val)
	}
	args = append(args, r.ID)

	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("results: finish run %d: %w", r.ID, err)
	}
	defer tx.Rollback()
	if err := checkRunning(ctx, tx, r.ID); err != nil {
		return fmt.Errorf("results: finish: %w", err)
	}
	if _, err := tx.ExecContext(ctx,
		"UPDATE runs SET "+strings.Join(sets, ", ")+" WHERE id = ?", args...); err != nil {
		return fmt.Errorf("results: finish run %d: %w", r.ID, err)
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM run_tx WHERE run_id = ?", r.ID); err != nil {
		return fmt.Errorf("results: finish run %d: %w", r.ID, err)
	}
	if len(r.Tx) > 0 {
		stmt, err := tx.PrepareContext(ctx, `
			INSERT INTO run_tx (run_id, ord, type, committed, rollbacks, errors, mean_us,
				p50_us, p90_us, p95_us, p99_us, p999_us, max_us, wait_mean_us, wait_p99_us,
				round_trips, round_trips_p50, round_trips_p99, bytes_up, bytes_down, writes_up,
				hist, wait_hist)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return fmt.Errorf("results: finish run %d: %w", r.ID, err)
		}
		defer stmt.Close()
		for i, t := range r.Tx {
			errs, err := jsonMap(t.Errors)
			if err != nil {
				return fmt.Errorf("results: finish run %d: encoding %s errors: %w", r.ID, t.Type, err)
			}
			if _, err := stmt.ExecContext(ctx, r.ID, i, t.Type, t.Committed, t.Rollbacks, errs,
				finite(t.MeanUs), t.P50Us, t.P90Us, t.P95Us, t.P99Us, t.P999Us, t.MaxUs,
				finite(t.WaitMeanUs), t.WaitP99Us,
				finite(t.RoundTrips), t.RoundTripsP50, t.RoundTripsP99,
				finite(t.BytesUp), finite(t.BytesDown), finite(t.WritesUp),
				t.Hist, t.WaitHist); err != nil {
				return fmt.Errorf("results: finish run %d: tx type %q: %w", r.ID, t.Type, err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("results: finish run %d: %w", r.ID, err)
	}
	return nil
}

// MarkAbandoned marks aborted every run still running that was begun on this host by a
// process that no longer exists, and returns how many it marked. Runs whose process is
// alive, whose PID is unknown, or that were begun on another host are left alone. Open
// calls it; long-lived readers may call it again. Safe for concurrent use.
func (s *Store) MarkAbandoned(ctx context.Context) (int, error) {
	tx, err := s.db.BeginTx(ctx, nil) // holds the write lock: no run can end meanwhile
	if err != nil {
		return 0, fmt.Errorf("results: mark abandoned runs: %w", err)
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx,
		"SELECT id, pid FROM runs WHERE status = 'running' AND hostname = ?", s.host)
	if err != nil {
		return 0, fmt.Errorf("results: mark abandoned runs: %w", err)
	}
	type dead struct {
		id  int64
		pid int
	}
	var deads []dead
	for rows.Next() {
		var d dead
		if err := rows.Scan(&d.id, &d.pid); err != nil {
			rows.Close()
			return 0, fmt.Errorf("results: mark abandoned runs: %w", err)
		}
		if !processAlive(d.pid) {
			deads = append(deads, d)
		}
	}
	if err := rows.Close(); err != nil {
		return 0, fmt.Errorf("results: mark abandoned runs: %w", err)
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("results: mark abandoned runs: %w", err)
	}
	for _, d := range deads {
		reason := fmt.Sprintf("dblat process %d ended before the run finished", d.pid)
		if _, err := tx.ExecContext(ctx,
			"UPDATE runs SET status = 'aborted', reason = ? WHERE id = ? AND status = 'running'",
			reason, d.id); err != nil {
			return 0, fmt.Errorf("results: mark run %d aborted: %w", d.id, err)
		}
	}
	if len(deads) == 0 {
		return 0, nil
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("results: mark abandoned runs: %w", err)
	}
	return len(deads), nil
}
