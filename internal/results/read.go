package results

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Filter selects runs for List. Zero fields select everything.
type Filter struct {
	Study   string // exact study name
	CellKey string // exact cell key
	Status  Status // exact status
	Limit   int    // at most this many runs (the newest); 0 = no limit
}

// runSelect returns the select of the runs columns in the order scanRun expects.
func runSelect(d *dialect) string {
	return `SELECT id, uid, study, cell_key, status, reason, ` +
		d.runTimeSelect("started") + `, ` + d.runTimeSelect("ended") + `,
	workload, scale, terminals, connections, duration_ns, warmup_ns, seed, think, rtt_ns,
	mix, options, link,
	engine, target, managed, server_version, settings, database_bytes,
	client, stats_before, stats_after,
	elapsed_ns, committed, rollbacks, errors, tps, tpm, nopm, error_examples, metric,
	rate, arrival, latency_limit_ns, max_tries, retries, retried, late,
	offered, skipped, backlog, achieved_rate, overload, agents, start_skew_ns, observation,
	scripts, builtins, defines, init,
	warmup_auto, warmup_used_ns, connect_timeout_ns, min_transactions, disturbances, set_aside,
	up_ns, down_ns, jitter_ns, distribution, bandwidth, loss, profile,
	during, operations, memory_limit
FROM runs`
}

type scanner interface{ Scan(dest ...any) error }

// unmapJSON decodes a nullable JSON object column into *m (nil for NULL).
func unmapJSON[M ~map[string]V, V any](col string, ns sql.NullString, m *M) error {
	if !ns.Valid {
		*m = nil
		return nil
	}
	if err := json.Unmarshal([]byte(ns.String), m); err != nil {
		return fmt.Errorf("column %s: %w", col, err)
	}
	return nil
}

// unlistJSON decodes a nullable JSON array column into *l (nil for NULL).
func unlistJSON(col string, ns sql.NullString, l *[]string) error {
	if !ns.Valid {
		*l = nil
		return nil
	}
	if err := json.Unmarshal([]byte(ns.String), l); err != nil {
		return fmt.Errorf("column %s: %w", col, err)
	}
	return nil
}

func (s *sqlStore) scanRun(sc scanner) (Run, error) {
	var (
		r                                     Run
		status, client                        string
		started, ended                        = s.d.runTimeDest(), s.d.runTimeDest()
		mix, options, settings, before, after sql.NullString
		link, examples, observation           sql.NullString
		errs                                  sql.NullString
		duration, warmup, rtt, elapsed        int64
		think, managed                        bool
		tps, tpm, nopm                        sql.NullFloat64 // SQLite stores NaN as NULL
		rate, achieved                        sql.NullFloat64
		latencyLimit, skew, warmupUsed, connT int64
		scripts, builtins, defines            sql.NullString
		disturbances, operations              sql.NullString
		up, down, jitter                      int64
	)
	dest := []any{&r.ID, &r.UID, &r.Study, &r.CellKey, &status, &r.Reason}
	dest = append(dest, started.dests()...)
	dest = append(dest, ended.dests()...)
	dest = append(dest,
		&r.Params.Workload, &r.Params.Scale, &r.Params.Terminals, &r.Params.Connections,
		&duration, &warmup, &r.Params.Seed, &think, &rtt,
		&mix, &options, &link,
		&r.Server.Engine, &r.Server.Target, &managed, &r.Server.Version, &settings,
		&r.Server.DatabaseBytes,
		&client, &before, &after,
		&elapsed, &r.Summary.Committed, &r.Summary.Rollbacks, &errs, &tps, &tpm, &nopm, &examples, &r.Summary.Metric,
		&rate, &r.Params.Arrival, &latencyLimit, &r.Params.MaxTries, &r.Summary.Retries, &r.Summary.Retried, &r.Summary.Late,
		&r.Summary.Offered, &r.Summary.Skipped, &r.Summary.Backlog, &achieved, &r.Summary.Overload,
		&r.Agents, &skew, &observation,
		&scripts, &builtins, &defines, &r.Params.Init,
		&r.Params.WarmupAuto, &warmupUsed, &connT, &r.Params.MinTransactions, &disturbances, &r.SetAside,
		&up, &down, &jitter, &r.Params.Distribution, &r.Params.Bandwidth, &r.Params.Loss, &r.Params.Profile,
		&r.Params.During, &operations, &r.Server.MemoryLimit)
	if err := sc.Scan(dest...); err != nil {
		return Run{}, err
	}
	var err error
	r.Status = Status(status)
	r.Params.Duration, r.Params.Warmup, r.Params.RTT = time.Duration(duration), time.Duration(warmup), time.Duration(rtt)
	r.Params.Think, r.Server.Managed = think, managed
	r.Summary.Elapsed, r.StartSkew, r.Summary.Warmup = time.Duration(elapsed), time.Duration(skew), time.Duration(warmupUsed)
	r.Summary.TPS, r.Summary.TPM, r.Summary.NOPM = tps.Float64, tpm.Float64, nopm.Float64
	r.Params.Rate, r.Params.LatencyLimit, r.Summary.AchievedRate = rate.Float64, time.Duration(latencyLimit), achieved.Float64
	r.Params.ConnectTimeout = time.Duration(connT)
	r.Params.Up, r.Params.Down, r.Params.Jitter = time.Duration(up), time.Duration(down), time.Duration(jitter)
	if r.Started, err = started.value(); err != nil {
		return Run{}, fmt.Errorf("run %d: column started: %w", r.ID, err)
	}
	if r.Ended, err = ended.value(); err != nil {
		return Run{}, fmt.Errorf("run %d: column ended: %w", r.ID, err)
	}
	if observation.Valid {
		// Compact: PostgreSQL's jsonb writes spaces of its own.
		var b bytes.Buffer
		if err := json.Compact(&b, []byte(observation.String)); err != nil {
			return Run{}, fmt.Errorf("run %d: column observation: %w", r.ID, err)
		}
		r.Observation = b.Bytes()
	}
	if link.Valid {
		r.Link = &Link{}
		if err := json.Unmarshal([]byte(link.String), r.Link); err != nil {
			return Run{}, fmt.Errorf("run %d: column link: %w", r.ID, err)
		}
	}
	if err := json.Unmarshal([]byte(client), &r.Client); err != nil {
		return Run{}, fmt.Errorf("run %d: column client: %w", r.ID, err)
	}
	if disturbances.Valid {
		if err := json.Unmarshal([]byte(disturbances.String), &r.Disturbances); err != nil {
			return Run{}, fmt.Errorf("run %d: column disturbances: %w", r.ID, err)
		}
	}
	if operations.Valid {
		if err := json.Unmarshal([]byte(operations.String), &r.Operations); err != nil {
			return Run{}, fmt.Errorf("run %d: column operations: %w", r.ID, err)
		}
	}
	if err := errors.Join(
		unmapJSON("mix", mix, &r.Params.Mix),
		unmapJSON("options", options, &r.Params.Options),
		unmapJSON("settings", settings, &r.Server.Settings),
		unmapJSON("stats_before", before, &r.StatsBefore),
		unmapJSON("stats_after", after, &r.StatsAfter),
		unmapJSON("errors", errs, &r.Summary.Errors),
		unmapJSON("error_examples", examples, &r.Summary.ErrorExamples),
		unmapJSON("defines", defines, &r.Params.Defines),
		unlistJSON("scripts", scripts, &r.Params.Scripts),
		unlistJSON("builtins", builtins, &r.Params.Builtins),
	); err != nil {
		return Run{}, fmt.Errorf("run %d: %w", r.ID, err)
	}
	return r, nil
}

// List implements Store.List.
func (s *sqlStore) List(ctx context.Context, f Filter) ([]Run, error) {
	var conds []string
	var args []any
	if f.Study != "" {
		conds, args = append(conds, "study = ?"), append(args, s.d.text(f.Study))
	}
	if f.CellKey != "" {
		conds, args = append(conds, "cell_key = ?"), append(args, s.d.text(f.CellKey))
	}
	if f.Status != "" {
		conds, args = append(conds, "status = ?"), append(args, string(f.Status))
	}
	where := ""
	if len(conds) > 0 {
		where = " WHERE " + strings.Join(conds, " AND ")
	}
	limit := ""
	if f.Limit > 0 {
		limit = fmt.Sprintf(" LIMIT %d", f.Limit)
	}

	tx, err := s.db.BeginTx(ctx, s.d.readTx())
	if err != nil {
		return nil, fmt.Errorf("results: list: %w", err)
	}
	defer tx.Rollback()

	rows, err := tx.QueryContext(ctx, s.d.q(s.runSelect+where+s.d.newestFirst()+limit), args...)
	if err != nil {
		return nil, fmt.Errorf("results: list: %w", err)
	}
	runs := []Run{}
	index := map[int64]int{}
	for rows.Next() {
		r, err := s.scanRun(rows)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("results: list: %w", err)
		}
		index[r.ID] = len(runs)
		runs = append(runs, r)
	}
	if err := closeRows(rows); err != nil {
		return nil, fmt.Errorf("results: list: %w", err)
	}
	if len(runs) == 0 {
		return runs, nil
	}

	txs, err := tx.QueryContext(ctx, s.d.q(txSelect+
		" WHERE run_id IN (SELECT id FROM runs"+where+s.d.newestFirst()+limit+") ORDER BY run_id, ord"), args...)
	if err != nil {
		return nil, fmt.Errorf("results: list: %w", err)
	}
	for txs.Next() {
		id, t, err := scanTx(txs)
		if err != nil {
			txs.Close()
			return nil, fmt.Errorf("results: list: %w", err)
		}
		if i, ok := index[id]; ok {
			runs[i].Tx = append(runs[i].Tx, t)
		}
	}
	if err := closeRows(txs); err != nil {
		return nil, fmt.Errorf("results: list: %w", err)
	}
	if err := s.readScripts(ctx, tx, runs, index, "SELECT id FROM runs"+where+s.d.newestFirst()+limit, args...); err != nil {
		return nil, fmt.Errorf("results: list: %w", err)
	}
	return runs, nil
}

// Get implements Store.Get.
func (s *sqlStore) Get(ctx context.Context, id int64, withSamples bool) (*Run, error) {
	tx, err := s.db.BeginTx(ctx, s.d.readTx())
	if err != nil {
		return nil, fmt.Errorf("results: get run %d: %w", id, err)
	}
	defer tx.Rollback()

	r, err := s.scanRun(tx.QueryRowContext(ctx, s.d.q(s.runSelect+" WHERE id = ?"), id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("results: get run %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("results: get run %d: %w", id, err)
	}

	rows, err := tx.QueryContext(ctx, s.d.q(txSelect+" WHERE run_id = ? ORDER BY ord"), id)
	if err != nil {
		return nil, fmt.Errorf("results: get run %d: %w", id, err)
	}
	for rows.Next() {
		_, t, err := scanTx(rows)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("results: get run %d: %w", id, err)
		}
		r.Tx = append(r.Tx, t)
	}
	if err := closeRows(rows); err != nil {
		return nil, fmt.Errorf("results: get run %d: %w", id, err)
	}
	runs := []Run{r}
	if err := s.readScripts(ctx, tx, runs, map[int64]int{r.ID: 0}, "?", id); err != nil {
		return nil, fmt.Errorf("results: get run %d: %w", id, err)
	}
	r = runs[0]

	if withSamples {
		rows, err := tx.QueryContext(ctx, s.d.q(`
			SELECT offset_ns, type, committed, errors, p50_us, p99_us, max_us, resp_p99_us, stall_us
			FROM run_samples WHERE run_id = ? ORDER BY `+s.d.sampleOrder()), id)
		if err != nil {
			return nil, fmt.Errorf("results: get run %d samples: %w", id, err)
		}
		for rows.Next() {
			var sm Sample
			var offset int64
			if err := rows.Scan(&offset, &sm.Type, &sm.Committed, &sm.Errors,
				&sm.P50Us, &sm.P99Us, &sm.MaxUs, &sm.RespP99Us, &sm.StallUs); err != nil {
				rows.Close()
				return nil, fmt.Errorf("results: get run %d samples: %w", id, err)
			}
			sm.Offset = time.Duration(offset)
			r.Samples = append(r.Samples, sm)
		}
		if err := closeRows(rows); err != nil {
			return nil, fmt.Errorf("results: get run %d samples: %w", id, err)
		}
		if r.Signals, err = s.readSignals(ctx, tx, id); err != nil {
			return nil, fmt.Errorf("results: get run %d signals: %w", id, err)
		}
	}
	return &r, nil
}

// readSignals reads run id's signals, by offset and name.
func (s *sqlStore) readSignals(ctx context.Context, tx *sql.Tx, id int64) ([]Signal, error) {
	rows, err := tx.QueryContext(ctx, s.d.q(`
		SELECT offset_ns, span_ns, name, value FROM run_signals WHERE run_id = ? ORDER BY offset_ns, name`), id)
	if err != nil {
		return nil, err
	}
	var out []Signal
	for rows.Next() {
		var sg Signal
		var offset, span int64
		if err := rows.Scan(&offset, &span, &sg.Name, &sg.Value); err != nil {
			rows.Close()
			return nil, err
		}
		sg.Offset, sg.Span = time.Duration(offset), time.Duration(span)
		out = append(out, sg)
	}
	return out, closeRows(rows)
}

const txSelect = `SELECT run_id, type, committed, rollbacks, errors, mean_us,
	p50_us, p90_us, p95_us, p99_us, p999_us, max_us, wait_mean_us, wait_p99_us,
	round_trips, round_trips_p50, round_trips_p99, bytes_up, bytes_down, writes_up,
	hist, wait_hist,
	retries, retried, resp_mean_us, resp_p50_us, resp_p90_us, resp_p99_us, resp_max_us,
	lag_mean_us, lag_p99_us, lag_max_us, resp_hist, lag_hist
FROM run_tx`

func scanTx(sc scanner) (int64, TxSummary, error) {
	var (
		id   int64
		t    TxSummary
		errs sql.NullString
		mean sql.NullFloat64
		wait sql.NullFloat64
		resp sql.NullFloat64
		lag  sql.NullFloat64
	)
	if err := sc.Scan(&id, &t.Type, &t.Committed, &t.Rollbacks, &errs, &mean,
		&t.P50Us, &t.P90Us, &t.P95Us, &t.P99Us, &t.P999Us, &t.MaxUs, &wait, &t.WaitP99Us,
		&t.RoundTrips, &t.RoundTripsP50, &t.RoundTripsP99, &t.BytesUp, &t.BytesDown, &t.WritesUp,
		&t.Hist, &t.WaitHist,
		&t.Retries, &t.Retried, &resp, &t.RespP50Us, &t.RespP90Us, &t.RespP99Us, &t.RespMaxUs,
		&lag, &t.LagP99Us, &t.LagMaxUs, &t.RespHist, &t.LagHist); err != nil {
		return 0, TxSummary{}, err
	}
	t.MeanUs, t.WaitMeanUs, t.RespMeanUs, t.LagMeanUs = mean.Float64, wait.Float64, resp.Float64, lag.Float64
	if err := unmapJSON("errors", errs, &t.Errors); err != nil {
		return 0, TxSummary{}, fmt.Errorf("run %d tx %s: %w", id, t.Type, err)
	}
	return id, t, nil
}

func closeRows(rows *sql.Rows) error {
	if err := rows.Err(); err != nil {
		rows.Close()
		return err
	}
	return rows.Close()
}
