package postgres

import (
	"fmt"
	"strconv"

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
	}
}
