package firebird_test

import (
	"testing"

	"github.com/dblat/dblat/internal/engine/batchtest"
	"github.com/dblat/dblat/internal/engine/firebird"
	"github.com/dblat/dblat/internal/engine/firebird/fbtest"
)

// TestBatch holds the engine to the engine.Batcher contract. Firebird: begin 1, each EXECUTE BLOCK 3 (prepare, execute, fetch), commit 1: 8 round trips.
func TestBatch(t *testing.T) {
	batchtest.Run(t, firebird.Engine{}, fbtest.NewDatabase(t, "Super"), batchtest.Expect{
		IsolationQuery: "SELECT RDB$GET_CONTEXT('SYSTEM', 'ISOLATION_LEVEL') FROM RDB$DATABASE",
		ReadCommitted:  "READ COMMITTED",
		RoundTrips:     8,
	})
}
