package postgres

import (
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/dblat/dblat/internal/engine"
)

// dialect is PostgreSQL's SQL spelling.
func dialect() engine.Dialect {
	return engine.Dialect{
		Placeholder:       func(n int) string { return "$" + strconv.Itoa(n) },
		ForUpdate:         " FOR UPDATE",
		SupportsReturning: true,
		LimitOne:          func(q string) string { return q + " LIMIT 1" },
		Decimal:           func(p, s int) string { return fmt.Sprintf("numeric(%d,%d)", p, s) },
		Timestamp:         "timestamp",
		Varchar:           func(n int) string { return fmt.Sprintf("varchar(%d)", n) },
		Char:              func(n int) string { return fmt.Sprintf("char(%d)", n) },
		// READ COMMITTED: an UPDATE that finds its row changed by a concurrent committed
		// transaction re-reads the new version and goes on (EvalPlanQual) instead of failing
		// with 40001 as REPEATABLE READ would.
		LockingIsolation: sql.LevelReadCommitted,
		// REPEATABLE READ is snapshot isolation; read-only transactions never abort under it.
		SnapshotIsolation: sql.LevelRepeatableRead,
		DropTable:         func(t string) string { return "DROP TABLE IF EXISTS " + t },
		Analyze: func(t string, cols []string) string {
			if len(cols) == 0 {
				return "ANALYZE " + t
			}
			return "ANALYZE " + t + " (" + strings.Join(cols, ", ") + ")"
		},
		// 1000 rows keeps the widest TPC-C table (customer, 21 columns) at 21,000 bind
		// parameters, below the protocol's limit of 65,535.
		MaxInsertRows: 1000,
		Blob:          "bytea",
		Concat:        func(e ...string) string { return "(" + strings.Join(e, " || ") + ")" },
		// PL/pgSQL procedures (PostgreSQL 11+) may COMMIT when CALLed outside a
		// transaction block.
		ProcedureLanguage: "plpgsql",
	}
}
