package postgres_test

import (
	"testing"

	"github.com/dblat/dblat/internal/engine/batchtest"
	"github.com/dblat/dblat/internal/engine/postgres"
	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
)

// TestBatch holds the engine to the engine.Batcher contract. PostgreSQL pipelines BEGIN, both batches and COMMIT: 2 round trips.
func TestBatch(t *testing.T) {
	batchtest.Run(t, postgres.Engine{}, pgtest.NewDatabase(t), batchtest.Expect{
		IsolationQuery: "SELECT current_setting('transaction_isolation')",
		ReadCommitted:  "read committed",
		RoundTrips:     2,
	})
}
