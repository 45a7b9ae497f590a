package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/engine/enginetest"
	"github.com/dblat/dblat/internal/engine/postgres"
	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
)

// TestSignalReader: the reader gives the sessions' waits as gauges and the checkpointer's
// counters as counters, and a CHECKPOINT shows as one more checkpoint once the checkpointer
// has reported it.
func TestSignalReader(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	ctx := context.Background()
	db, err := postgres.Engine{}.Open(ctx, dsn, engine.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	read, err := postgres.Engine{}.SignalReader(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	byName := func() map[string]engine.Signal { return enginetest.Signals(t, ctx, read) }
	first := byName()
	for name, counter := range map[string]bool{"waiting_io": false, "waiting_wal": false, "waiting_lock": false,
		"autovacuum": false, "checkpointing": false, "checkpoints": true, "checkpoint_write_s": true, "buffers_checkpoint": true} {
		s, ok := first[name]
		if !ok {
			t.Errorf("no signal %s in %v", name, first)
			continue
		}
		if s.Counter != counter || s.Value < 0 {
			t.Errorf("%s: %+v, want counter %v and a value ≥ 0", name, s, counter)
		}
	}
	if _, err := db.ExecContext(ctx, "CHECKPOINT"); err != nil {
		t.Fatal(err)
	}
	// The checkpointer reports its counters just after it tells CHECKPOINT it is done.
	deadline := time.Now().Add(30 * time.Second)
	for byName()["checkpoints"].Value <= first["checkpoints"].Value {
		if time.Now().After(deadline) {
			t.Fatalf("checkpoints still %v 30 s after a CHECKPOINT", first["checkpoints"].Value)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
