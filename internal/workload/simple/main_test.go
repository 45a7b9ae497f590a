package simple_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/engine/firebird"
	"github.com/dblat/dblat/internal/engine/firebird/fbtest"
	"github.com/dblat/dblat/internal/engine/mariadb"
	"github.com/dblat/dblat/internal/engine/mariadb/mariadbtest"
	"github.com/dblat/dblat/internal/engine/postgres"
	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
	"github.com/dblat/dblat/internal/workload"
	"github.com/dblat/dblat/internal/workload/workloadtest"
)

// TestMain stops the managed servers the tests started, of all three engines.
func TestMain(m *testing.M) { workloadtest.Main(m) }

// pgProtocols gives PostgreSQL the QueryProtocols capability, as the postgres engine is to
// implement it: pgx's per-query QueryExecMode argument (pgx v5 stdlib passes it through
// database/sql to pgx.Conn.Query and Exec, which read leading QueryExecMode arguments as
// options). Tests use postgres.Engine itself once it has the method.
type pgProtocols struct{ postgres.Engine }

func (pgProtocols) QueryArgs(protocol string) ([]any, error) {
	switch protocol {
	case "prepared":
		// A named statement per SQL text and connection, parsed on first use (pgx's
		// statement cache): pgbench -M prepared.
		return []any{pgx.QueryExecModeCacheStatement}, nil
	case "simple":
		return []any{pgx.QueryExecModeSimpleProtocol}, nil
	case "extended":
		// Parse (unnamed), Bind, Describe, Execute, Sync in one flight: pgbench -M extended
		// (PQsendQueryParams). QueryExecModeDescribeExec would add a round trip.
		return []any{pgx.QueryExecModeExec}, nil
	}
	return nil, fmt.Errorf("no query protocol %q", protocol)
}

// pgRaw adds the RowQuerier capability, as the postgres engine is to implement it.
type pgRaw struct{ pgProtocols }

func (pgRaw) QueryRowRaw(ctx context.Context, conn *sql.Conn, query string, args []any, dest ...any) error {
	return conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("postgres: not a pgx connection: %T", dc)
		}
		return c.Conn().QueryRow(ctx, query, args...).Scan(dest...)
	})
}

// pgStmt is PostgreSQL without a driver-side "prepared" protocol: the workload prepares
// through database/sql, as on the other engines.
type pgStmt struct{ pgProtocols }

func (p pgStmt) QueryArgs(protocol string) ([]any, error) {
	if protocol == "prepared" {
		return nil, fmt.Errorf("no driver-side prepared protocol")
	}
	return p.pgProtocols.QueryArgs(protocol)
}

// fbTxOnly gives Firebird the TxOnly capability, as the firebird engine is to implement it.
type fbTxOnly struct{ firebird.Engine }

func (fbTxOnly) TxOnly() bool { return true }

// engines are the engines under test, with the capabilities this package expects them to
// have (wrapped until the engine packages implement them).
func engines() []engine.Engine {
	var pg engine.Engine = postgres.Engine{}
	protocols, raw := engine.Caps(pg).QueryProtocols != nil, engine.Caps(pg).RowQuerier != nil
	switch {
	case !protocols:
		pg = pgRaw{}
	case !raw:
		pg = pgRaw{} // raw needs the protocols' leading arguments: both come together
	}
	var fb engine.Engine = firebird.Engine{}
	if engine.Caps(fb).TxOnly == nil {
		fb = fbTxOnly{}
	}
	return []engine.Engine{pg, mariadb.Engine{}, fb}
}

// newDSN makes a fresh database for t on the shared test server of e.
func newDSN(t testing.TB, e engine.Engine) string {
	t.Helper()
	switch e.Name() {
	case "postgres":
		return pgtest.NewDatabase(t)
	case "mariadb":
		return mariadbtest.NewDatabase(t)
	case "firebird":
		return fbtest.NewDatabase(t, "Super")
	}
	t.Fatalf("no test server for %s", e.Name())
	return ""
}

// open opens dsn through e with the metering dialer; the pool is closed when t ends.
func open(t testing.TB, e engine.Engine, dsn string) workload.Target {
	t.Helper()
	db, err := e.Open(context.Background(), dsn, engine.OpenOptions{Dial: workloadtest.MeterDial})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return workload.Target{Engine: e, DB: db}
}

func queryInt(t testing.TB, db *sql.DB, q string) int64 {
	t.Helper()
	var n sql.NullInt64
	tx, err := db.BeginTx(context.Background(), &sql.TxOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Commit() }()
	if err := tx.QueryRow(q).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n.Int64
}
