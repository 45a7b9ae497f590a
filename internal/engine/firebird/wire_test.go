package firebird_test

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/engine/firebird"
	"github.com/dblat/dblat/internal/engine/firebird/fbtest"
	"github.com/dblat/dblat/internal/wire"
	"github.com/dblat/dblat/internal/wire/wiretest"
)

// writeCaptures rewrites testdata/wire/*.cap from the tests with real clients; the
// decoder's server-free tests, fuzz target and benchmarks read them.
var writeCaptures = flag.Bool("wire.capture", false, "rewrite testdata/wire/*.cap from real client runs")

var fbProto = firebird.Engine{}.WireProtocol()

// wireProxy starts a tee proxy in front of the shared Super server and returns it with the
// test database's DSN through the proxy, with wire encryption off unless crypt.
func wireProxy(t *testing.T, crypt bool) (*wiretest.Proxy, string) {
	t.Helper()
	dsn := fbtest.NewDatabase(t, "Super")
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	p := wiretest.StartProxy(t, u.Host, fbProto)
	u.Host = p.Addr()
	if !crypt {
		q := u.Query()
		q.Set("wire_crypt", "false")
		u.RawQuery = q.Encode()
	}
	return p, u.String()
}

func saveCapture(t *testing.T, c *wiretest.Conn, name string) {
	t.Helper()
	if !*writeCaptures {
		return
	}
	path := filepath.Join("testdata", "wire", name+".cap")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := c.Capture().WriteFile(path); err != nil {
		t.Fatal(err)
	}
}

func txLines(txs []wire.Tx) []string {
	var out []string
	for _, x := range txs {
		out = append(out, fmt.Sprintf("%s|%d stmts|%d rt|%s|errors=%d", x.Shape.Text, x.Statements, x.RoundTrips, x.Outcome, x.Errors))
	}
	return out
}

func exec(t *testing.T, db interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, query string, args ...any) {
	t.Helper()
	if _, err := db.ExecContext(context.Background(), query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// TestWireEncrypted: the driver encrypts the wire by default, and the managed server
// lets it; the decoder says it cannot follow, and why.
func TestWireEncrypted(t *testing.T) {
	p, dsn := wireProxy(t, true)
	db, err := firebird.Engine{}.Open(context.Background(), dsn, engine.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	p.WaitEnded(t, 1, 30*time.Second)
	if s := p.Conns()[0].Stopped(); !strings.Contains(s, "wire encryption") || !strings.Contains(s, "wire_crypt=false") {
		t.Fatalf("stopped %q", s)
	}
}

// TestWireGoDriver follows nakagami/firebirdsql: statements in its autocommit mode (each
// one prepared, run and committed with COMMIT RETAINING), explicit transactions, a failed
// statement, parameters decoded from the input message.
func TestWireGoDriver(t *testing.T) {
	p, dsn := wireProxy(t, false)
	ctx := context.Background()
	db, err := firebird.Engine{}.Open(ctx, dsn, engine.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	exec(t, db, "CREATE TABLE ft (id INTEGER PRIMARY KEY, v VARCHAR(20), n NUMERIC(10,2), ts TIMESTAMP, d DATE, ok BOOLEAN, big BIGINT, f DOUBLE PRECISION)")
	exec(t, db, "INSERT INTO ft VALUES (?, ?, ?, ?, ?, ?, ?, ?)", 1, "it's", "12.50", time.Date(2024, 2, 29, 12, 30, 0, 500000000, time.UTC),
		time.Date(1999, 12, 31, 0, 0, 0, 0, time.UTC), true, int64(-7), 2.5)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	exec(t, tx, "UPDATE ft SET v = ? WHERE id = ?", "w", 1)
	var v string
	if err := tx.QueryRowContext(ctx, "SELECT v FROM ft WHERE id = ?", 1).Scan(&v); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	tx, err = db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO ft (id) VALUES (1)"); err == nil {
		t.Fatal("a duplicate key did not fail")
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	db.Close()
	p.WaitEnded(t, 1, 30*time.Second)
	c := p.Conns()[0]
	if s := c.Stopped(); s != "" {
		t.Fatalf("cannot follow: %s", s)
	}
	got := txLines(c.Txs())
	// When the pool closes the connection, the driver rolls back every transaction it
	// ever began (it never forgets one): one of those rollbacks, on the transaction it
	// keeps for its autocommit mode, may succeed right after the last transaction and so
	// be part of it. The map it keeps them in decides.
	if n := len(got); n > 0 {
		got[n-1] = strings.Replace(got[n-1], "ROLLBACK; ROLLBACK|4 stmts|5 rt", "ROLLBACK|3 stmts|4 rt", 1)
	}
	want := []string{
		// The driver commits its autocommit transaction (COMMIT RETAINING) after the
		// statement and again when it closes it; it describes the statement's parameters
		// (op_info_sql) before it runs it, and asks for the rows affected after.
		"START TRANSACTION; CREATE TABLE ft (id INTEGER PRIMARY KEY, v VARCHAR(?), n NUMERIC(?, ?), ts TIMESTAMP, d DATE, ok BOOLEAN, big BIGINT, f DOUBLE PRECISION); COMMIT RETAINING; COMMIT RETAINING|4 stmts|6 rt|commit|errors=0",
		"INSERT INTO ft VALUES (?, ?, ?, ?, ?, ?, ?, ?); COMMIT RETAINING; COMMIT RETAINING|3 stmts|6 rt|commit|errors=0",
		// op_transaction, 4 round trips per statement (allocate and prepare deferred into
		// one, describe, execute, rows affected or fetch), op_commit.
		"START TRANSACTION; UPDATE ft SET v = ? WHERE id = ?; SELECT v FROM ft WHERE id = ?; COMMIT|4 stmts|10 rt|commit|errors=0",
		"START TRANSACTION; INSERT INTO ft (id) VALUES (?); ROLLBACK|3 stmts|4 rt|rollback|errors=1",
	}
	if !slices.Equal(got, want) {
		t.Errorf("transactions:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var params []string
	for _, e := range c.Events() {
		if e.Kind == wire.EvStatement && strings.HasPrefix(string(e.Text), "INSERT INTO ft VALUES") {
			for _, p := range e.Params {
				params = append(params, string(p.Text))
			}
		}
	}
	if want := []string{"1", "it's", "12.50", "2024-02-29 12:30:00.5", "1999-12-31", "true", "-7", "2.5"}; !slices.Equal(params, want) {
		t.Errorf("parameters %q, want %q", params, want)
	}
	saveCapture(t, c, "go-driver")
}

// TestWireTransactionLoop records the capture the benchmark uses: a closed loop of small
// explicit transactions.
func TestWireTransactionLoop(t *testing.T) {
	p, dsn := wireProxy(t, false)
	ctx := context.Background()
	db, err := firebird.Engine{}.Open(ctx, dsn, engine.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	exec(t, db, "CREATE TABLE acc (id INTEGER PRIMARY KEY, bal BIGINT)")
	exec(t, db, "INSERT INTO acc SELECT 1, 0 FROM RDB$DATABASE")
	for i := range 20 {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		exec(t, tx, "UPDATE acc SET bal = bal + ? WHERE id = ?", i, 1)
		var bal int64
		if err := tx.QueryRowContext(ctx, "SELECT bal FROM acc WHERE id = ?", 1).Scan(&bal); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	p.WaitEnded(t, 1, 30*time.Second)
	c := p.Conns()[0]
	if s := c.Stopped(); s != "" {
		t.Fatalf("cannot follow: %s", s)
	}
	var loop wire.ShapeSummary
	for _, s := range p.Agg.Shapes() {
		if s.Text == "START TRANSACTION; UPDATE acc SET bal = bal + ? WHERE id = ?; SELECT bal FROM acc WHERE id = ?; COMMIT" {
			loop = s
		}
	}
	// The last may have the driver's closing ROLLBACK added (see TestWireGoDriver).
	if loop.Count < 19 || loop.Commits != loop.Count || loop.StatementsMean != 4 || loop.RoundTripsMax != 10 {
		t.Errorf("loop: %+v", loop)
	}
	saveCapture(t, c, "loop")
}

// FuzzWireDecoder feeds mangled captures to the decoder; its seeds are the captures. The
// inputs are tens of KiB: fuzz with -fuzzminimizetime 0x, or the fuzzer spends its time
// minimising each new one.
func FuzzWireDecoder(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "wire", "*.cap"))
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) { wiretest.FuzzReplay(t, fbProto, data) })
}

// BenchmarkWireDecoder measures the decoder (with its Tracker) per round trip on a captured
// transaction loop.
func BenchmarkWireDecoder(b *testing.B) {
	c, err := wiretest.ReadFile(filepath.Join("testdata", "wire", "loop.cap"))
	if err != nil {
		b.Fatal(err)
	}
	wiretest.BenchReplay(b, fbProto, c, loopStart(c))
}

// loopStart returns the index of the client chunk that starts the loop's first
// transaction: the first op_transaction after the table's rows are in.
func loopStart(c wiretest.Capture) int {
	seen := false
	for i, ch := range c {
		if ch.Dir != wire.Client {
			continue
		}
		if strings.Contains(string(ch.Data), "INSERT INTO acc") {
			seen = true
		}
		if seen && len(ch.Data) >= 4 && ch.Data[3] == 29 && ch.Data[0] == 0 { // op_transaction
			return i
		}
	}
	return 0
}
