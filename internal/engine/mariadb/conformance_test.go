package mariadb_test

import (
	"testing"

	"github.com/dblat/dblat/internal/engine/enginetest"
	"github.com/dblat/dblat/internal/engine/mariadb"
	"github.com/dblat/dblat/internal/engine/mariadb/mariadbtest"
)

// TestConformance runs the suite every engine passes on the shared test server. InnoDB
// finds deadlocks at once; at REPEATABLE READ it lets a write to a row changed since the
// snapshot go through (innodb_snapshot_isolation is off before MariaDB 11.6), so there is
// no snapshot conflict to classify. skip-log-bin is an option, shown as log_bin.
func TestConformance(t *testing.T) {
	enginetest.Run(t, mariadb.Engine{}, enginetest.Server{Instance: mariadbtest.Server, NewDatabase: mariadbtest.NewDatabase},
		enginetest.Expect{Deadlocks: true, ReadBack: map[string]map[string]string{"skip-log-bin": {"log_bin": "OFF"}}})
}
