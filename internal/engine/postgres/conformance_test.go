package postgres_test

import (
	"testing"

	"github.com/dblat/dblat/internal/engine/enginetest"
	"github.com/dblat/dblat/internal/engine/postgres"
	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
)

// TestConformance runs the suite every engine passes on the shared test server:
// PostgreSQL finds deadlocks after deadlock_timeout (1 s), and REPEATABLE READ fails a
// write to a row changed since the snapshot (40001).
func TestConformance(t *testing.T) {
	enginetest.Run(t, postgres.Engine{}, enginetest.Server{Instance: pgtest.Server, NewDatabase: pgtest.NewDatabase},
		enginetest.Expect{Deadlocks: true, SnapshotConflicts: true})
}
