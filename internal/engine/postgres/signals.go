package postgres

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/dblat/dblat/internal/engine"
)

var _ engine.Signaler = Engine{}

// SignalReader implements engine.Signaler: one query a second of the sessions' waits
// (pg_stat_activity, read live) and of the WAL's and the checkpointer's counters (their
// views moved between versions, as for Stats):
//
//	waiting_io, waiting_wal, waiting_lwlock, waiting_lock  active sessions waiting on IO
//	                       (of which on WAL writes and syncs), on a lightweight lock, on a lock
//	autovacuum             autovacuum workers running
//	checkpointing          1 while the checkpointer writes or syncs a checkpoint (its wait
//	                       event is not its idle one)
//	wal_syncs, wal_writes  WAL syncs and writes (counters; 14 to 17)
//	wal_sync_s, wal_write_s  their time in seconds (counters; only with track_wal_io_timing)
//	checkpoints            checkpoints completed (counter)
//	checkpoint_write_s, checkpoint_sync_s  their time in seconds (counters)
//	buffers_checkpoint     buffers the checkpoints wrote (counter)
func (Engine) SignalReader(ctx context.Context, db *sql.DB) (func(context.Context) ([]engine.Signal, error), error) {
	var num int
	if err := db.QueryRowContext(ctx, "SELECT current_setting('server_version_num')::int").Scan(&num); err != nil {
		return nil, err
	}
	q, counters := signalQuery(num)
	return func(ctx context.Context) ([]engine.Signal, error) {
		rows, err := db.QueryContext(ctx, q)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		cols, err := rows.Columns()
		if err != nil {
			return nil, err
		}
		vals := make([]sql.NullFloat64, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if !rows.Next() {
			return nil, fmt.Errorf("no row: %w", rows.Err())
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		out := make([]engine.Signal, 0, len(cols))
		for i, c := range cols {
			if vals[i].Valid {
				out = append(out, engine.Signal{Name: c, Value: vals[i].Float64, Counter: counters[c]})
			}
		}
		return out, rows.Err()
	}, nil
}

// signalQuery is SignalReader's query for a server of version num, and which of its
// columns are counters.
func signalQuery(num int) (string, map[string]bool) {
	q := `SELECT
	count(*) FILTER (WHERE a.state = 'active' AND a.wait_event_type = 'IO') AS waiting_io,
	count(*) FILTER (WHERE a.state = 'active' AND a.wait_event IN ('WALSync', 'WALWrite', 'WALInitSync', 'WALInitWrite')) AS waiting_wal,
	count(*) FILTER (WHERE a.state = 'active' AND a.wait_event_type = 'LWLock') AS waiting_lwlock,
	count(*) FILTER (WHERE a.state = 'active' AND a.wait_event_type = 'Lock') AS waiting_lock,
	count(*) FILTER (WHERE a.backend_type = 'autovacuum worker') AS autovacuum,
	count(*) FILTER (WHERE a.backend_type = 'checkpointer' AND a.wait_event IS DISTINCT FROM 'CheckpointerMain') AS checkpointing`
	counters := map[string]bool{}
	add := func(cols string, names ...string) {
		q += ",\n\t" + cols
		for _, n := range names {
			counters[n] = true
		}
	}
	if num >= 140000 && num < 180000 {
		add(`(SELECT wal_sync FROM pg_stat_wal) AS wal_syncs, (SELECT wal_write FROM pg_stat_wal) AS wal_writes,
	(SELECT CASE WHEN current_setting('track_wal_io_timing')::bool THEN wal_sync_time / 1000 END FROM pg_stat_wal) AS wal_sync_s,
	(SELECT CASE WHEN current_setting('track_wal_io_timing')::bool THEN wal_write_time / 1000 END FROM pg_stat_wal) AS wal_write_s`,
			"wal_syncs", "wal_writes", "wal_sync_s", "wal_write_s")
	}
	if num >= 170000 {
		add(`(SELECT num_timed + num_requested FROM pg_stat_checkpointer) AS checkpoints,
	(SELECT write_time / 1000 FROM pg_stat_checkpointer) AS checkpoint_write_s,
	(SELECT sync_time / 1000 FROM pg_stat_checkpointer) AS checkpoint_sync_s,
	(SELECT buffers_written FROM pg_stat_checkpointer) AS buffers_checkpoint`,
			"checkpoints", "checkpoint_write_s", "checkpoint_sync_s", "buffers_checkpoint")
	} else {
		add(`(SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter) AS checkpoints,
	(SELECT checkpoint_write_time / 1000 FROM pg_stat_bgwriter) AS checkpoint_write_s,
	(SELECT checkpoint_sync_time / 1000 FROM pg_stat_bgwriter) AS checkpoint_sync_s,
	(SELECT buffers_checkpoint FROM pg_stat_bgwriter) AS buffers_checkpoint`,
			"checkpoints", "checkpoint_write_s", "checkpoint_sync_s", "buffers_checkpoint")
	}
	return q + "\nFROM pg_stat_activity a", counters
}
