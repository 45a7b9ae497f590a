package postgres

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// QueryArgs returns the leading argument that makes pgx send a statement with the given
// protocol, as pgbench's -M option does: "prepared" a named statement per connection,
// parsed once (pgx's statement cache); "simple" the simple query protocol; "extended" an
// unnamed Parse/Bind/Execute in one flight (pgbench -M extended; pgx's DescribeExec would
// cost a second round trip). pgx's stdlib passes a leading QueryExecMode argument through
// database/sql to pgx.Conn.
func (Engine) QueryArgs(protocol string) ([]any, error) {
	switch protocol {
	case "prepared":
		return []any{pgx.QueryExecModeCacheStatement}, nil
	case "simple":
		return []any{pgx.QueryExecModeSimpleProtocol}, nil
	case "extended":
		return []any{pgx.QueryExecModeExec}, nil
	}
	return nil, fmt.Errorf("postgres: no query protocol %q (prepared, simple or extended)", protocol)
}

// QueryRowRaw runs a single-row query straight on the pgx connection beneath conn, outside
// any transaction, skipping database/sql's per-query bookkeeping (about 20 % of the client's
// CPU per select-only transaction here). args may begin with a QueryArgs mode.
func (Engine) QueryRowRaw(ctx context.Context, conn *sql.Conn, query string, args []any, dest ...any) error {
	return conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("postgres: not a pgx connection: %T", dc)
		}
		return c.Conn().QueryRow(ctx, query, args...).Scan(dest...)
	})
}
