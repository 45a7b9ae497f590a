// Package workloadtest holds what the tests of the workload packages share: stopping the
// managed test servers, and metering test connections as a run's dialer does. It is for
// tests only.
package workloadtest

import (
	"context"
	"database/sql"
	"github.com/dblat/dblat/internal/latency"
	"net"
	"os"
	"testing"

	"github.com/dblat/dblat/internal/engine/firebird/fbtest"
	"github.com/dblat/dblat/internal/engine/mariadb/mariadbtest"
	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
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
// latency.MeterSlot in their context, as a run's dialer does (execution's link set), with no
// latency added.
func MeterDial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return latency.MeterInto(ctx, c), nil
}

// MeteredConn dials a new connection of db, which must have been opened with MeterDial,
// and returns it with its meter. The connection is closed when t ends.
func MeteredConn(t testing.TB, db *sql.DB) (*sql.Conn, *latency.MeteredConn) {
	t.Helper()
	ctx, slot := latency.WithMeterSlot(context.Background())
	db.SetMaxIdleConns(0) // drop idle connections: the next one is dialled for this slot
	db.SetMaxIdleConns(2)
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if slot.Conn == nil {
		t.Fatal("the connection was not dialled through the metering dialer")
	}
	return c, slot.Conn
}
