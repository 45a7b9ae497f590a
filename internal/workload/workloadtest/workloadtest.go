// Package workloadtest holds what the tests of the workload packages share: stopping the
// managed test servers, and metering test connections as a run's dialer does. It is for
// tests only.
package workloadtest

import (
	"context"
	"database/sql"
	"net"
	"os"
	"testing"

	"github.com/dblat/dblat/internal/engine/firebird/fbtest"
	"github.com/dblat/dblat/internal/engine/mariadb/mariadbtest"
	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
	"github.com/dblat/dblat/internal/runner"
)

// Main runs the tests of m, stops the shared test servers of all three engines (each
// started on first use), and exits with the tests' code. Call it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	pgtest.Shutdown()
	mariadbtest.Shutdown()
	fbtest.Shutdown()
	os.Exit(code)
}

// MeterDial is an engine.OpenOptions.Dial that meters the connections dialled with a
// runner.Slot in their context, as the CLI's dialer does (internal/cli/dial.go), with no
// latency added.
func MeterDial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return runner.Metered(ctx, c), nil
}

// MeteredConn dials a new connection of db, which must have been opened with MeterDial,
// and returns it with its meter. The connection is closed when t ends.
func MeteredConn(t testing.TB, db *sql.DB) (*sql.Conn, runner.Meter) {
	t.Helper()
	ctx, slot := runner.WithSlot(context.Background())
	db.SetMaxIdleConns(0) // drop idle connections: the next one is dialled for this slot
	db.SetMaxIdleConns(2)
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if slot.Meter == nil {
		t.Fatal("the connection was not dialled through the metering dialer")
	}
	return c, slot.Meter
}
