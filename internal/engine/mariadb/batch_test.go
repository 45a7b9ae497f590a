package mariadb_test

import (
	"testing"

	"github.com/dblat/dblat/internal/engine/batchtest"
	"github.com/dblat/dblat/internal/engine/mariadb"
	"github.com/dblat/dblat/internal/engine/mariadb/mariadbtest"
)

// TestBatch holds the engine to the engine.Batcher contract. MariaDB sends each batch as one BEGIN NOT ATOMIC block: 2 round trips.
func TestBatch(t *testing.T) {
	batchtest.Run(t, mariadb.Engine{}, mariadbtest.NewDatabase(t), batchtest.Expect{
		IsolationQuery: "SELECT trx_isolation_level FROM information_schema.innodb_trx WHERE trx_mysql_thread_id = CONNECTION_ID()",
		ReadCommitted:  "READ COMMITTED",
		RoundTrips:     2,
	})
}
