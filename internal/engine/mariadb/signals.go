package mariadb

import (
	"context"
	"database/sql"
	"strconv"
	"strings"

	"github.com/dblat/dblat/internal/engine"
)

var _ engine.Signaler = Engine{}

// statusSignals maps the SHOW GLOBAL STATUS variables SignalReader reads to the signals
// they become, with their scale (Innodb_row_lock_time is in milliseconds) and whether they
// are counters. A variable the server does not have (they come and go between versions)
// is left out.
var statusSignals = map[string]struct {
	name    string
	scale   float64
	counter bool
}{
	"Innodb_os_log_fsyncs":             {"log_fsyncs", 1, true},
	"Innodb_data_fsyncs":               {"data_fsyncs", 1, true},
	"Innodb_log_writes":                {"log_writes", 1, true},
	"Innodb_log_waits":                 {"log_waits", 1, true},
	"Innodb_buffer_pool_pages_flushed": {"pages_flushed", 1, true},
	"Innodb_buffer_pool_wait_free":     {"buffer_pool_wait_free", 1, true},
	"Innodb_row_lock_waits":            {"row_lock_waits", 1, true},
	"Innodb_row_lock_time":             {"row_lock_wait_s", 0.001, true},
	"Innodb_data_pending_fsyncs":       {"pending_fsyncs", 1, false},
	"Innodb_os_log_pending_fsyncs":     {"log_pending_fsyncs", 1, false},
	"Innodb_checkpoint_age":            {"checkpoint_age_bytes", 1, false},
	"Innodb_history_list_length":       {"history_length", 1, false},
	"Threads_running":                  {"threads_running", 1, false},
}

// SignalReader implements engine.Signaler with one SHOW GLOBAL STATUS a second, filtered
// to the variables of statusSignals: InnoDB's fsyncs (from 10.8 on the redo log's are
// counted with the data files'), its redo-log writes and waits for log buffer space, pages flushed,
// waits for a free buffer and for row locks (counters), the fsyncs pending, the
// checkpoint age, the purge backlog and the threads running (gauges). performance_schema's
// waits would say more, but it is off by default and costs the server to turn on.
func (Engine) SignalReader(ctx context.Context, db *sql.DB) (func(context.Context) ([]engine.Signal, error), error) {
	names := make([]string, 0, len(statusSignals))
	for n := range statusSignals {
		names = append(names, "'"+n+"'")
	}
	q := "SHOW GLOBAL STATUS WHERE Variable_name IN (" + strings.Join(names, ", ") + ")"
	return func(ctx context.Context) ([]engine.Signal, error) {
		var out []engine.Signal
		err := nameValues(ctx, db, q, func(name, value string) {
			s, ok := statusSignals[name]
			if !ok {
				return
			}
			if f, err := strconv.ParseFloat(value, 64); err == nil {
				out = append(out, engine.Signal{Name: s.name, Value: f * s.scale, Counter: s.counter})
			}
		})
		return out, err
	}, nil
}
