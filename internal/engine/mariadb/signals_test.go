package mariadb_test

import (
	"context"
	"testing"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/engine/enginetest"
	"github.com/dblat/dblat/internal/engine/mariadb"
	"github.com/dblat/dblat/internal/engine/mariadb/mariadbtest"
)

// TestSignalReader: the reader gives InnoDB's fsyncs as counters and the threads running
// as a gauge, and a committed write adds fsyncs (innodb_flush_log_at_trx_commit is 1 on
// dblat's managed servers, as by default, and the redo log's fsyncs count among the data
// files' from 10.8 on, or apart before).
func TestSignalReader(t *testing.T) {
	db := open(t, mariadbtest.NewDatabase(t), engine.OpenOptions{})
	ctx := context.Background()
	read, err := mariadb.Engine{}.SignalReader(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	byName := func() map[string]engine.Signal { return enginetest.Signals(t, ctx, read) }
	first := byName()
	for name, counter := range map[string]bool{"data_fsyncs": true, "log_writes": true, "row_lock_waits": true, "threads_running": false} {
		s, ok := first[name]
		if !ok {
			t.Errorf("no signal %s in %v", name, first)
			continue
		}
		if s.Counter != counter || s.Value < 0 {
			t.Errorf("%s: %+v, want counter %v and a value ≥ 0", name, s, counter)
		}
	}
	if first["threads_running"].Value < 1 {
		t.Errorf("threads_running %v: the reading session itself runs", first["threads_running"].Value)
	}
	for _, q := range []string{"CREATE TABLE sig_t (i int) ENGINE=InnoDB", "INSERT INTO sig_t VALUES (1)"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	var flush int
	if err := db.QueryRowContext(ctx, "SELECT @@innodb_flush_log_at_trx_commit").Scan(&flush); err != nil {
		t.Fatal(err)
	}
	then := byName()
	fsyncs := func(m map[string]engine.Signal) float64 { return m["data_fsyncs"].Value + m["log_fsyncs"].Value }
	if flush == 1 && fsyncs(then) <= fsyncs(first) {
		t.Errorf("fsyncs %v after a commit, %v before", fsyncs(then), fsyncs(first))
	}
}
