// Package enginetest is the conformance suite every engine package runs against its own
// real managed test server (pgtest, mariadbtest, fbtest), so that the part of the engine
// seam whose contract is the same for every product is held to one test instead of a copy
// per engine: Open (the dialer and its context, a redacted DSN), Classify on errors
// provoked on the server (a duplicate key, a deadlock and a snapshot's write conflict
// where the engine has them, a canceled lock wait, a connection whose socket closed),
// Inspect's read-back of the settings the server was started with, and the engine's wire
// decoder (WireProtocol) on the traffic it recorded in its testdata/wire.
//
// What only one product does (its error codes, its statistics, its decoder's shapes)
// stays in that engine's own tests; batchtest is the sibling suite of Batcher. Package
// enginetest is imported only by tests; it knows no engine by name: what differs between
// engines is said by each engine's Expect.
package enginetest

import (
	"context"
	"database/sql"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/managed"
	"github.com/dblat/dblat/internal/wire"
	"github.com/dblat/dblat/internal/wire/wiretest"
)

// Server is an engine's managed test server as its test helper package gives it.
type Server struct {
	// Instance returns the running server, starting it on first use; it skips or fails t
	// when the server's binaries are missing, as the helpers do.
	Instance func(t testing.TB) *managed.Instance
	// NewDatabase returns the DSN of a new empty database on the server, dropped when t
	// ends.
	NewDatabase func(t testing.TB) string
}

// Expect is what differs between engines in the suite.
type Expect struct {
	// Deadlocks is set where the server finds two transactions waiting for each other's
	// row locks and fails one of them within seconds (PostgreSQL after deadlock_timeout,
	// InnoDB at once), so that Classify can be shown the error.
	Deadlocks bool
	// SnapshotConflicts is set where a transaction at Dialect.SnapshotIsolation that writes
	// a row another transaction changed and committed since its snapshot fails (first
	// updater wins) rather than overwriting the change.
	SnapshotConflicts bool
	// ReadBack maps a setting the test server is started with that Inspect reports under
	// other names or values to what it reports instead, read-back name → value
	// ("skip-log-bin" → {"log_bin": "OFF"}). Every other setting must read back under its
	// own name or one of its Comparison.Aliases, with the same value (engine.SameSetting).
	ReadBack map[string]map[string]string
}

// Run runs the suite on e, a registered engine, with its test server srv. The wire checks
// come first and need no server: they read the captures in testdata/wire/*.cap of the
// calling package (its tests' working directory), which an engine with a WireProtocol
// must have.
func Run(t *testing.T, e engine.Engine, srv Server, want Expect) {
	t.Helper()
	t.Run("wire", func(t *testing.T) { checkWire(t, e) })
	t.Run("open", func(t *testing.T) { checkOpen(t, e, srv.NewDatabase(t)) })
	t.Run("classify", func(t *testing.T) { checkClassify(t, e, srv.NewDatabase(t), want) })
	t.Run("settings", func(t *testing.T) { checkSettings(t, e, srv.Instance(t), srv.NewDatabase(t), want) })
}

// checkWire replays every capture through the engine's decoder: the protocol's Sniff
// takes the capture's opening bytes, and the decoder passes wiretest.CheckRobust
// (followed to the end in any chunking; cuts, garbage and random damage reported, never a
// panic).
func checkWire(t *testing.T, e engine.Engine) {
	w := engine.Caps(e).WireProtocol
	if w == nil {
		t.Skipf("%s has no wire decoder (engine.WireProtocol)", e.Name())
	}
	p := w.WireProtocol()
	files, _ := filepath.Glob(filepath.Join("testdata", "wire", "*.cap"))
	if len(files) == 0 {
		t.Fatal("no captures in testdata/wire: run the engine's wire tests with -wire.capture")
	}
	for _, f := range files {
		c, err := wiretest.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(strings.TrimSuffix(filepath.Base(f), ".cap"), func(t *testing.T) {
			if v := sniff(p, c); v != wire.Yes {
				t.Errorf("%s's Sniff does not take the capture's opening bytes (verdict %d)", p.Name(), v)
			}
			wiretest.CheckRobust(t, p, c)
		})
	}
}

// sniffBytes is how much of each side's opening a protocol is shown at most, as the
// Protocol contract says ("up to a few kilobytes").
const sniffBytes = 4 << 10

// sniff shows p the capture's opening bytes chunk by chunk until it decides.
func sniff(p wire.Protocol, c wiretest.Capture) wire.Verdict {
	var client, server []byte
	for _, ch := range c {
		if ch.Dir == wire.Client {
			client = append(client, ch.Data...)
		} else {
			server = append(server, ch.Data...)
		}
		if v := p.Sniff(client[:min(len(client), sniffBytes)], server[:min(len(server), sniffBytes)]); v != wire.NeedMore {
			return v
		}
	}
	return wire.NeedMore
}

// connKey is the context key of the slot a dial records its connection in.
type connKey struct{}

// slot receives the connection dialled for the context it is in.
type slot struct {
	mu   sync.Mutex
	conn net.Conn
}

// dial is the suite's OpenOptions.Dial: a TCP or Unix dial that records the connection
// in the context's slot, when it has one.
func dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	if s, ok := ctx.Value(connKey{}).(*slot); ok {
		s.mu.Lock()
		s.conn = c
		s.mu.Unlock()
	}
	return c, nil
}

// open opens dsn with the suite's dialer and closes the pool when t ends (before the
// helper drops the database).
func open(t *testing.T, e engine.Engine, dsn string) *sql.DB {
	t.Helper()
	db, err := e.Open(context.Background(), dsn, engine.OpenOptions{Dial: dial})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// newConn returns a new connection of db (not an idle one) and the socket beneath it,
// which the driver dialled through OpenOptions.Dial with the context given to db.Conn.
func newConn(t *testing.T, db *sql.DB) (*sql.Conn, net.Conn) {
	t.Helper()
	db.SetMaxIdleConns(0) // closes the idle connections, so that Conn dials
	db.SetMaxIdleConns(2)
	s := &slot{}
	conn, err := db.Conn(context.WithValue(context.Background(), connKey{}, s))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil {
		t.Fatal("the connection was not made by OpenOptions.Dial with the context given to (*sql.DB).Conn")
	}
	return conn, s.conn
}

// checkOpen: Open answers through the given dialer, with the context of the Conn call that
// makes a connection; a query in a transaction works (Dialect.Dual); Redact hides the
// DSN's password.
func checkOpen(t *testing.T, e engine.Engine, dsn string) {
	ctx := context.Background()
	db := open(t, e, dsn)
	conn, _ := newConn(t, db)
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT 1"+e.Dialect().Dual).Scan(&n); err != nil || n != 1 {
		t.Errorf("SELECT 1: %d, %v", n, err)
	}
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok && pw != "" && strings.Contains(e.Redact(dsn), pw) {
			t.Errorf("Redact leaves the password in %s", e.Redact(dsn))
		}
	}
}

// checkSettings: Inspect reads back a version, the size of a database with a table, and
// every setting the server was started with (under its name, an alias, or as
// Expect.ReadBack says) with the value it was started with; Stats reads some counters.
func checkSettings(t *testing.T, e engine.Engine, inst *managed.Instance, dsn string, want Expect) {
	ctx := context.Background()
	db := open(t, e, dsn)
	tx, err := db.BeginTx(ctx, nil)
	if err == nil {
		if _, err = tx.ExecContext(ctx, "CREATE TABLE es (id integer NOT NULL PRIMARY KEY)"); err == nil {
			err = tx.Commit()
		} else {
			_ = tx.Rollback()
		}
	}
	if err != nil {
		t.Fatalf("create a table to measure: %v", err)
	}
	info, err := e.Inspect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if info.Version == "" || info.DatabaseBytes <= 0 {
		t.Errorf("version %q, database size %d", info.Version, info.DatabaseBytes)
	}
	if len(inst.Settings) == 0 {
		t.Error("the test server is started with no settings: nothing to read back")
	}
	var cmp engine.Comparison
	if c := engine.Caps(e).Comparer; c != nil {
		cmp = c.Comparison()
	}
	for name, asked := range inst.Settings {
		if rb, ok := want.ReadBack[name]; ok {
			for k, v := range rb {
				if got, ok := engine.LookupSetting(info.Settings, k); !ok || got != v {
					t.Errorf("%s=%s: %s read back as %q (found %v), want %q", name, asked, k, got, ok, v)
				}
			}
			continue
		}
		got, ok := engine.LookupSetting(info.Settings, name)
		for _, alias := range cmp.Aliases[strings.ToLower(name)] {
			if !ok {
				got, ok = engine.LookupSetting(info.Settings, alias)
			}
		}
		if !ok {
			t.Errorf("%s=%s is not among the %d settings read back", name, asked, len(info.Settings))
			continue
		}
		if same, comparable := engine.SameSetting(asked, got, cmp.Canonical); !same {
			t.Errorf("%s=%s read back as %q (comparable: %v)", name, asked, got, comparable)
		}
	}
	st, err := e.Stats(ctx, db)
	if err != nil || len(st) == 0 {
		t.Errorf("Stats: %d counters, %v", len(st), err)
	}
}

// Signals returns what read (an engine.Signaler's SignalReader) gives now, by name; an
// error fails t.
func Signals(t testing.TB, ctx context.Context, read func(context.Context) ([]engine.Signal, error)) map[string]engine.Signal {
	t.Helper()
	sigs, err := read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m := make(map[string]engine.Signal, len(sigs))
	for _, s := range sigs {
		m[s.Name] = s
	}
	return m
}
