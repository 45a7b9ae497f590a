package simple

import (
	"context"
	"database/sql"
	"fmt"
)

// ping runs "SELECT 1" (" FROM RDB$DATABASE" on Firebird, Dialect.Dual): the cheapest
// statement the server answers, so its transactions per second are the floor of what a
// statement costs at a given latency. It runs alone on conn, or in a read-only transaction
// where the engine's autocommit is unsafe (TxOnly).
func (t *terminal) ping(ctx context.Context, conn *sql.Conn) error {
	var one int64
	err := t.single(ctx, conn, func(tx *sql.Tx) error {
		return t.w.ping.queryRow(ctx, conn, tx, nil, &one)
	})
	if err == nil && one != 1 {
		return fmt.Errorf("simple ping: SELECT 1 returned %d", one)
	}
	return err
}
