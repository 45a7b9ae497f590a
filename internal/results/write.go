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

	"github.com/google/uuid"
)

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

// column is one column of a table with the value a Run gives it.
type column struct {
	name string
	val  any
	json bool // val is JSON text (or nil)
}

// runColumns lists the runs columns a Run fills (all but id), in schema order, as the
// dialect stores them.
func runColumns(d *dialect, r *Run) ([]column, error) {
	var errs []error
	js := func(name string, v any, err error) column {
		errs = append(errs, err)
		return column{name: name, val: v, json: true}
	}
	c := r.Client
	c.CPUSeconds = finite(c.CPUSeconds)
	client, err := json.Marshal(c)
	errs = append(errs, err)
	cols := []column{
		{name: "uid", val: r.UID},
		{name: "study", val: r.Study},
		{name: "cell_key", val: r.CellKey},
		{name: "status", val: string(r.Status)},
		{name: "reason", val: r.Reason},
	}
	cols = append(cols, d.runTime("started", r.Started)...)
	cols = append(cols, d.runTime("ended", r.Ended)...)
	cols = append(cols,
		column{name: "workload", val: r.Params.Workload},
		column{name: "scale", val: r.Params.Scale},
		column{name: "terminals", val: r.Params.Terminals},
		column{name: "connections", val: r.Params.Connections},
		column{name: "duration_ns", val: int64(r.Params.Duration)},
		column{name: "warmup_ns", val: int64(r.Params.Warmup)},
		column{name: "seed", val: r.Params.Seed},
		column{name: "think", val: r.Params.Think}, // SQLite stores a bool as 1 or 0
		column{name: "rtt_ns", val: int64(r.Params.RTT)},
		js(jsonAny("mix", finiteMap(r.Params.Mix))),
		js(jsonAny("options", r.Params.Options)),
		js(jsonPtr("link", r.Link)),

		column{name: "engine", val: r.Server.Engine},
		column{name: "target", val: r.Server.Target},
		column{name: "managed", val: r.Server.Managed},
		column{name: "server_version", val: r.Server.Version},
		js(jsonAny("settings", r.Server.Settings)),
		column{name: "database_bytes", val: r.Server.DatabaseBytes},

		column{name: "hostname", val: r.Client.Hostname},
		column{name: "pid", val: r.Client.PID},
		column{name: "client", val: string(client), json: true},

		js(jsonAny("stats_before", finiteMap(r.StatsBefore))),
		js(jsonAny("stats_after", finiteMap(r.StatsAfter))),

		column{name: "elapsed_ns", val: int64(r.Summary.Elapsed)},
		column{name: "committed", val: r.Summary.Committed},
		column{name: "rollbacks", val: r.Summary.Rollbacks},
		js(jsonAny("errors", r.Summary.Errors)),
		js(jsonAny("error_examples", r.Summary.ErrorExamples)),
		column{name: "tps", val: finite(r.Summary.TPS)},
		column{name: "tpm", val: finite(r.Summary.TPM)},
		column{name: "nopm", val: finite(r.Summary.NOPM)},
		column{name: "metric", val: r.Summary.Metric},
		column{name: "rate", val: finite(r.Params.Rate)},
		column{name: "arrival", val: r.Params.Arrival},
		column{name: "latency_limit_ns", val: int64(r.Params.LatencyLimit)},
		column{name: "max_tries", val: r.Params.MaxTries},
		column{name: "retries", val: r.Summary.Retries},
		column{name: "retried", val: r.Summary.Retried},
		column{name: "late", val: r.Summary.Late},
		column{name: "offered", val: r.Summary.Offered},
		column{name: "skipped", val: r.Summary.Skipped},
		column{name: "backlog", val: r.Summary.Backlog},
		column{name: "achieved_rate", val: finite(r.Summary.AchievedRate)},
		column{name: "overload", val: r.Summary.Overload},
		column{name: "agents", val: r.Agents},
		column{name: "start_skew_ns", val: int64(r.StartSkew)},
		column{name: "observation", val: rawJSON(r.Observation), json: true},
		js(jsonList("scripts", r.Params.Scripts)),
		js(jsonList("builtins", r.Params.Builtins)),
		js(jsonAny("defines", r.Params.Defines)),
		column{name: "init", val: r.Params.Init},
		column{name: "warmup_auto", val: r.Params.WarmupAuto},
		column{name: "warmup_used_ns", val: int64(r.Summary.Warmup)},
		column{name: "connect_timeout_ns", val: int64(r.Params.ConnectTimeout)},
		column{name: "min_transactions", val: r.Params.MinTransactions},
		js(jsonSlice("disturbances", r.Disturbances)),
		column{name: "set_aside", val: r.SetAside},
		column{name: "up_ns", val: int64(r.Params.Up)},
		column{name: "down_ns", val: int64(r.Params.Down)},
		column{name: "jitter_ns", val: int64(r.Params.Jitter)},
		column{name: "distribution", val: r.Params.Distribution},
		column{name: "bandwidth", val: r.Params.Bandwidth},
		column{name: "loss", val: finite(r.Params.Loss)},
		column{name: "profile", val: r.Params.Profile},
		column{name: "during", val: r.Params.During},
		js(jsonSlice("operations", r.Operations)),
		column{name: "memory_limit", val: r.Server.MemoryLimit},
	)
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("encoding run as JSON: %w", err)
	}
	return cols, nil
}

// rawJSON stores nil or empty JSON as NULL, anything else as its text.
func rawJSON(b json.RawMessage) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}

// jsonAny and jsonPtr adapt jsonMap and jsonValue to runColumns' js.
func jsonAny[M ~map[string]V, V any](name string, m M) (string, any, error) {
	v, err := jsonMap(m)
	return name, v, err
}

// jsonList stores a nil slice as NULL and any other (even empty) as a JSON array.
func jsonList(name string, l []string) (string, any, error) { return jsonSlice(name, l) }

// jsonSlice stores a nil slice as NULL and any other (even empty) as a JSON array.
func jsonSlice[T any](name string, l []T) (string, any, error) {
	if l == nil {
		return name, nil, nil
	}
	b, err := json.Marshal(l)
	return name, string(b), err
}

func jsonPtr[T any](name string, p *T) (string, any, error) {
	v, err := jsonValue(p)
	return name, v, err
}

// Begin implements Store.Begin.
func (s *sqlStore) Begin(ctx context.Context, r *Run) (int64, error) {
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
	newUID := r.UID == ""
	if newUID {
		r.UID = uuid.NewString()
	}
	saved, savedEnded := r.Status, r.Ended
	restore := func() {
		r.Status, r.Ended = saved, savedEnded
		if newUID {
			r.UID = ""
		}
	}
	r.Status, r.Ended = StatusRunning, time.Time{}
	cols, err := runColumns(s.d, r)
	if err != nil {
		restore()
		return 0, fmt.Errorf("results: begin: %w", err)
	}
	id, err := s.beginRun(ctx, cols, r.Scripts)
	if err != nil {
		restore()
		return 0, fmt.Errorf("results: begin: %w", err)
	}
	r.ID = id
	return id, nil
}

// beginRun inserts a runs row and its scripts in one transaction and returns its id.
func (s *sqlStore) beginRun(ctx context.Context, cols []column, scripts []Script) (int64, error) {
	if len(scripts) == 0 {
		return s.insertRun(ctx, s.db, cols, "")
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	id, err := s.insertRun(ctx, tx, cols, "")
	if err != nil {
		return 0, err
	}
	if err := s.insertScripts(ctx, tx, id, scripts); err != nil {
		return 0, err
	}
	return id, tx.Commit()
}

// querier is what insertRun needs of a *sql.DB or *sql.Tx.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// insertRun inserts a runs row and returns its id. onConflict is appended before RETURNING
// ("ON CONFLICT (uid) DO NOTHING" makes a stored uid return sql.ErrNoRows).
func (s *sqlStore) insertRun(ctx context.Context, q querier, cols []column, onConflict string) (int64, error) {
	names := make([]string, len(cols))
	args := make([]any, len(cols))
	for i, c := range cols {
		names[i], args[i] = c.name, s.d.arg(c)
	}
	query := "INSERT INTO runs (" + strings.Join(names, ", ") + ") VALUES (?" +
		strings.Repeat(", ?", len(cols)-1) + ")" + onConflict + " RETURNING id"
	var id int64
	if err := q.QueryRowContext(ctx, s.d.q(query), args...).Scan(&id); err != nil {
		return 0, err
	}
	return id, nil
}

// checkRunning returns nil if run id exists and is running, an error wrapping ErrNotFound
// if it does not exist, and an error naming its status otherwise. On PostgreSQL it locks
// the run's row until tx ends.
func (s *sqlStore) checkRunning(ctx context.Context, tx *sql.Tx, id int64) error {
	var status string
	err := tx.QueryRowContext(ctx, s.d.q("SELECT status FROM runs WHERE id = ?"+s.d.lock()), id).Scan(&status)
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

// AddSamples implements Store.AddSamples.
func (s *sqlStore) AddSamples(ctx context.Context, runID int64, samples []Sample) error {
	if len(samples) == 0 {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("results: add samples: %w", err)
	}
	defer tx.Rollback()
	if err := s.checkRunning(ctx, tx, runID); err != nil {
		return fmt.Errorf("results: add samples: %w", err)
	}
	if err := s.insertSamples(ctx, tx, runID, samples); err != nil {
		return fmt.Errorf("results: add samples to run %d: %w", runID, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("results: add samples to run %d: %w", runID, err)
	}
	return nil
}

func (s *sqlStore) insertSamples(ctx context.Context, tx *sql.Tx, runID int64, samples []Sample) error {
	rows := make([][]any, len(samples))
	for i, sm := range samples {
		rows[i] = []any{runID, int64(sm.Offset), s.d.text(sm.Type), sm.Committed, sm.Errors, sm.P50Us, sm.P99Us, sm.MaxUs, sm.RespP99Us, sm.StallUs}
	}
	return s.insertRows(ctx, tx, "run_samples",
		[]string{"run_id", "offset_ns", "type", "committed", "errors", "p50_us", "p99_us", "max_us", "resp_p99_us", "stall_us"}, rows)
}

// insertSignals inserts a run's signals; non-finite values are stored as 0.
func (s *sqlStore) insertSignals(ctx context.Context, tx *sql.Tx, runID int64, signals []Signal) error {
	rows := make([][]any, len(signals))
	for i, sg := range signals {
		rows[i] = []any{runID, int64(sg.Offset), int64(sg.Span), s.d.text(sg.Name), finite(sg.Value)}
	}
	return s.insertRows(ctx, tx, "run_signals", []string{"run_id", "offset_ns", "span_ns", "name", "value"}, rows)
}

// insertBatch is the most rows insertRows puts in one INSERT: 500 rows of up to 35
// columns stay under SQLite's and PostgreSQL's limits on bound parameters (32766, 65535).
const insertBatch = 500

// insertRows inserts rows into table in order, as few multi-row INSERTs: one round trip per
// batch rather than per row, which matters on a PostgreSQL store across a network.
func (s *sqlStore) insertRows(ctx context.Context, tx *sql.Tx, table string, cols []string, rows [][]any) error {
	tuple := "(?" + strings.Repeat(", ?", len(cols)-1) + ")"
	head := "INSERT INTO " + table + " (" + strings.Join(cols, ", ") + ") VALUES "
	for len(rows) > 0 {
		n := min(len(rows), insertBatch)
		args := make([]any, 0, n*len(cols))
		for _, r := range rows[:n] {
			args = append(args, r...)
		}
		query := head + tuple + strings.Repeat(", "+tuple, n-1)
		if _, err := tx.ExecContext(ctx, s.d.q(query), args...); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}

// Finish implements Store.Finish.
func (s *sqlStore) Finish(ctx context.Context, r *Run) error {
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
	cols, err := runColumns(s.d, r)
	if err != nil {
		return fmt.Errorf("results: finish run %d: %w", r.ID, err)
	}
	sets := make([]string, 0, len(cols))
	args := make([]any, 0, len(cols)+1)
	for _, c := range cols {
		switch c.name {
		case "uid", "started", "started_nanos":
			continue // fixed at Begin
		}
		sets = append(sets, c.name+" = ?")
		args = append(args, s.d.arg(c))
	}
	args = append(args, r.ID)

	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("results: finish run %d: %w", r.ID, err)
	}
	defer tx.Rollback()
	if err := s.checkRunning(ctx, tx, r.ID); err != nil {
		return fmt.Errorf("results: finish: %w", err)
	}
	if _, err := tx.ExecContext(ctx,
		s.d.q("UPDATE runs SET "+strings.Join(sets, ", ")+" WHERE id = ?"), args...); err != nil {
		return fmt.Errorf("results: finish run %d: %w", r.ID, err)
	}
	if _, err := tx.ExecContext(ctx, s.d.q("DELETE FROM run_tx WHERE run_id = ?"), r.ID); err != nil {
		return fmt.Errorf("results: finish run %d: %w", r.ID, err)
	}
	if err := s.insertTx(ctx, tx, r.ID, r.Tx); err != nil {
		return fmt.Errorf("results: finish run %d: %w", r.ID, err)
	}
	if err := s.insertSignals(ctx, tx, r.ID, r.Signals); err != nil {
		return fmt.Errorf("results: finish run %d: signals: %w", r.ID, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("results: finish run %d: %w", r.ID, err)
	}
	return nil
}

// insertTx inserts a run's per-type rows in order.
func (s *sqlStore) insertTx(ctx context.Context, tx *sql.Tx, runID int64, txs []TxSummary) error {
	rows := make([][]any, len(txs))
	seen := make(map[string]bool, len(txs))
	for i, t := range txs {
		if seen[t.Type] {
			return fmt.Errorf("tx type %q appears twice", t.Type)
		}
		seen[t.Type] = true
		errs, err := jsonMap(t.Errors)
		if err != nil {
			return fmt.Errorf("encoding %s errors: %w", t.Type, err)
		}
		rows[i] = []any{runID, i, s.d.text(t.Type), t.Committed, t.Rollbacks,
			s.d.arg(column{val: errs, json: true}),
			finite(t.MeanUs), t.P50Us, t.P90Us, t.P95Us, t.P99Us, t.P999Us, t.MaxUs,
			finite(t.WaitMeanUs), t.WaitP99Us,
			finite(t.RoundTrips), t.RoundTripsP50, t.RoundTripsP99,
			finite(t.BytesUp), finite(t.BytesDown), finite(t.WritesUp),
			t.Hist, t.WaitHist,
			t.Retries, t.Retried, finite(t.RespMeanUs), t.RespP50Us, t.RespP90Us, t.RespP99Us, t.RespMaxUs,
			finite(t.LagMeanUs), t.LagP99Us, t.LagMaxUs, t.RespHist, t.LagHist}
	}
	return s.insertRows(ctx, tx, "run_tx", []string{"run_id", "ord", "type", "committed", "rollbacks", "errors", "mean_us",
		"p50_us", "p90_us", "p95_us", "p99_us", "p999_us", "max_us", "wait_mean_us", "wait_p99_us",
		"round_trips", "round_trips_p50", "round_trips_p99", "bytes_up", "bytes_down", "writes_up",
		"hist", "wait_hist",
		"retries", "retried", "resp_mean_us", "resp_p50_us", "resp_p90_us", "resp_p99_us", "resp_max_us",
		"lag_mean_us", "lag_p99_us", "lag_max_us", "resp_hist", "lag_hist"}, rows)
}

// MarkAbandoned implements Store.MarkAbandoned.
func (s *sqlStore) MarkAbandoned(ctx context.Context) (int, error) {
	tx, err := s.db.BeginTx(ctx, nil) // SQLite: holds the write lock, no run can end meanwhile
	if err != nil {
		return 0, fmt.Errorf("results: mark abandoned runs: %w", err)
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx,
		// By id: two processes marking at once lock the rows in the same order, so neither
		// waits for the other in a cycle (PostgreSQL would abort one as a deadlock).
		s.d.q("SELECT id, pid FROM runs WHERE status = 'running' AND hostname = ? ORDER BY id"), s.d.text(s.host))
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
	if err := closeRows(rows); err != nil {
		return 0, fmt.Errorf("results: mark abandoned runs: %w", err)
	}
	marked := 0
	for _, d := range deads {
		reason := fmt.Sprintf("dblat process %d ended before the run finished", d.pid)
		// The status condition makes this a no-op for a run another process ended or
		// marked meanwhile (PostgreSQL does not hold a lock across the SELECT above).
		res, err := tx.ExecContext(ctx,
			s.d.q("UPDATE runs SET status = 'aborted', reason = ? WHERE id = ? AND status = 'running'"),
			reason, d.id)
		if err != nil {
			return 0, fmt.Errorf("results: mark run %d aborted: %w", d.id, err)
		}
		if n, err := res.RowsAffected(); err == nil {
			marked += int(n)
		}
	}
	if len(deads) == 0 {
		return 0, nil
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("results: mark abandoned runs: %w", err)
	}
	return marked, nil
}
