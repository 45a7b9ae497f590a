package postgres_test

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/dblat/dblat/internal/engine/postgres"
	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
	"github.com/dblat/dblat/internal/wire"
	"github.com/dblat/dblat/internal/wire/wiretest"
)

// writeCaptures rewrites testdata/wire/*.cap from the tests with real clients; the
// decoder's server-free tests, fuzz target and benchmarks read them.
var writeCaptures = flag.Bool("wire.capture", false, "rewrite testdata/wire/*.cap from real client runs")

var pgProto = postgres.Engine{}.WireProtocol()

// wireProxy starts a tee proxy in front of the shared server and returns it with the test
// database's name.
func wireProxy(t *testing.T) (*wiretest.Proxy, string, string) {
	t.Helper()
	dsn := pgtest.NewDatabase(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	p := wiretest.StartProxy(t, u.Host, pgProto)
	return p, u.Host, strings.TrimPrefix(u.Path, "/")
}

// runTool runs a client program and fails the test with its output if it fails (unless
// mayFail).
func runTool(t *testing.T, mayFail bool, stdin string, name string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		if pgtest.Required() {
			t.Fatalf("%s is not installed", name)
		}
		t.Skipf("skipping: %s is not installed", name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(append(os.Environ(), "PGCONNECT_TIMEOUT=10", "PGOPTIONS="), pgtest.ClientEnv(t)...)
	out, err := cmd.CombinedOutput()
	if err != nil && !mayFail {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// saveCapture writes a connection's capture to testdata/wire/name.cap under -wire.capture.
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

// shapeWith returns the shape whose text starts with prefix.
func shapeWith(t *testing.T, shapes []wire.ShapeSummary, prefix string) wire.ShapeSummary {
	t.Helper()
	for _, s := range shapes {
		if strings.HasPrefix(s.Text, prefix) {
			return s
		}
	}
	var texts []string
	for _, s := range shapes {
		texts = append(texts, fmt.Sprintf("%d× %s", s.Count, s.Text))
	}
	t.Fatalf("no shape starts with %q; shapes:\n%s", prefix, strings.Join(texts, "\n"))
	return wire.ShapeSummary{}
}

const psqlScript = `CREATE TABLE wt (id int PRIMARY KEY, v text, n numeric);
INSERT INTO wt VALUES (1, 'a', 1.5);
BEGIN;
UPDATE wt SET v = 'b' WHERE id = 1;
SELECT * FROM wt WHERE id IN (1, 2, 3);
COMMIT;
BEGIN;
SELECT 1/0;
SELECT 1;
ROLLBACK;
\copy wt from stdin
2	x	2.5
3	y	3.5
\.
SELECT count(*) FROM wt;
`

// TestWirePsql follows psql's simple protocol: autocommit statements, an explicit
// transaction, a failed one, COPY FROM STDIN, and a query string of several statements;
// psql prefers TLS, which the proxy declines.
func TestWirePsql(t *testing.T) {
	p, _, db := wireProxy(t)
	dsn := fmt.Sprintf("postgres://dblat@%s/%s", p.Addr(), db) // sslmode=prefer
	runTool(t, false, psqlScript, "psql", "-X", "-q", "-d", dsn, "-f", "-")
	runTool(t, false, "", "psql", "-X", "-q", "-d", dsn, "-c", "BEGIN; INSERT INTO wt VALUES (9, 'z', 0); COMMIT")
	p.WaitEnded(t, 2, 30*time.Second)
	conns := p.Conns()
	c := conns[0]
	if c.Stopped() != "" {
		t.Fatalf("cannot follow: %s", c.Stopped())
	}
	if n := c.Notes(); len(n) == 0 || !strings.Contains(n[0], "declined TLS") {
		t.Errorf("notes %q, want the TLS decline", n)
	}
	txs := c.Txs()
	var got []string
	for _, x := range txs {
		got = append(got, fmt.Sprintf("%s|%d stmts|%d rt|%s|failed=%v|errors=%d", x.Shape.Text, x.Statements, x.RoundTrips,
			x.Outcome, x.Failed, x.Errors))
	}
	want := []string{
		"CREATE TABLE wt (id int PRIMARY KEY, v text, n numeric)|1 stmts|1 rt|autocommit|failed=false|errors=0",
		"INSERT INTO wt VALUES (?, ?, ?)|1 stmts|1 rt|autocommit|failed=false|errors=0",
		"BEGIN; UPDATE wt SET v = ? WHERE id = ?; SELECT * FROM wt WHERE id IN (...); COMMIT|4 stmts|4 rt|commit|failed=false|errors=0",
		"BEGIN; SELECT ?/?; SELECT ?; ROLLBACK|4 stmts|4 rt|rollback|failed=true|errors=2",
		"COPY wt FROM STDIN|1 stmts|2 rt|autocommit|failed=false|errors=0",
		"SELECT count(*) FROM wt|1 stmts|1 rt|autocommit|failed=false|errors=0",
	}
	// pgx's CopyFrom writes the COPY data from a goroutine of its own without waiting for
	// CopyInResponse, and CopyDone after it: how those writes and the server's answers
	// interleave depends on scheduling, and on a loaded machine the proxy once saw three
	// turns instead of two.
	copyFrom := slices.Index(want, `copy "px" ("id", "v") from stdin binary|1|2|autocommit|false`)
	if copyFrom >= 0 && copyFrom < len(got) && got[copyFrom] == `copy "px" ("id", "v") from stdin binary|1|3|autocommit|false` {
		got[copyFrom] = want[copyFrom]
	}
	if !slices.Equal(got, want) {
		t.Errorf("transactions:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if x := conns[1].Txs(); len(x) != 1 || x[0].Statements != 3 || x[0].RoundTrips != 1 || x[0].Outcome != wire.Committed {
		t.Errorf("one query of three statements: %+v", x)
	}
	saveCapture(t, c, "psql")
}

// TestWireRequiresTLS: a client that requires TLS gives up when the proxy declines it,
// and the decoder says so.
func TestWireRequiresTLS(t *testing.T) {
	p, _, db := wireProxy(t)
	out := runTool(t, true, "", "psql", "-X", "-d", fmt.Sprintf("postgres://dblat@%s/%s?sslmode=require", p.Addr(), db), "-c", "SELECT 1")
	p.WaitEnded(t, 1, 30*time.Second)
	if s := p.Conns()[0].Stopped(); !strings.Contains(s, "requires TLS") {
		t.Fatalf("stopped %q (psql said %s)", s, out)
	}
}

// pgbenchRun initialises pgbench's tables directly and runs pgbench through the proxy.
func pgbenchRun(t *testing.T, script string, args ...string) (*wiretest.Proxy, []wire.ShapeSummary) {
	t.Helper()
	p, host, db := wireProxy(t)
	h, port, _ := strings.Cut(host, ":")
	runTool(t, false, "", "pgbench", "-i", "-q", "-s", "1", "-h", h, "-p", port, "-U", "dblat", db)
	_, pport, _ := strings.Cut(p.Addr(), ":")
	all := append([]string{"-n", "-c", "1", "-j", "1", "-h", h, "-p", pport, "-U", "dblat"}, args...)
	if script != "" {
		f := filepath.Join(t.TempDir(), "script.sql")
		if err := os.WriteFile(f, []byte(script), 0o644); err != nil {
			t.Fatal(err)
		}
		all = append(all, "-f", f)
	}
	runTool(t, false, "", "pgbench", append(all, db)...)
	conns := len(p.Conns())
	p.WaitEnded(t, conns, 30*time.Second)
	for _, c := range p.Conns() {
		if s := c.Stopped(); s != "" {
			t.Fatalf("cannot follow: %s", s)
		}
	}
	return p, p.Agg.Shapes()
}

// benchConn returns pgbench's benchmark connection: the one with the most transactions.
func benchConn(p *wiretest.Proxy) *wiretest.Conn {
	var best *wiretest.Conn
	for _, c := range p.Conns() {
		if best == nil || len(c.Txs()) > len(best.Txs()) {
			best = c
		}
	}
	return best
}

// TestWirePgbench: pgbench's tpcb-like transaction takes 7 round trips in every query
// mode, select-only 1, and a pipeline of four statements 1; the shape groups them whatever
// the literals (simple mode) or parameters.
func TestWirePgbench(t *testing.T) {
	const tpcb = "BEGIN; UPDATE pgbench_accounts SET abalance = abalance + ? WHERE aid = ?"
	for _, mode := range []string{"simple", "extended", "prepared"} {
		t.Run("tpcb-"+mode, func(t *testing.T) {
			p, shapes := pgbenchRun(t, "", "-M", mode, "-t", "20")
			s := shapeWith(t, shapes, tpcb)
			// pgbench 15 prepares each statement on its first use with PQprepare, a round
			// trip of its own: the first transaction of -M prepared takes 7 more.
			wantMax := int64(7)
			if mode == "prepared" {
				wantMax = 14
			}
			if s.Count != 20 || s.RoundTripsP50 != 7 || s.RoundTripsMax != wantMax || s.StatementsMean != 7 || s.Commits != 20 {
				t.Errorf("tpcb-like in %s mode: %+v", mode, s)
			}
			saveCapture(t, benchConn(p), "pgbench-"+mode)
		})
	}
	// The first of them also prepares its statement: 2 round trips.
	t.Run("select-only", func(t *testing.T) {
		_, shapes := pgbenchRun(t, "", "-S", "-M", "prepared", "-t", "30")
		s := shapeWith(t, shapes, "SELECT abalance FROM pgbench_accounts WHERE aid = ?")
		if s.Count != 30 || s.RoundTripsP50 != 1 || s.RoundTripsMax != 2 || s.Autocommits != 30 {
			t.Errorf("select-only: %+v", s)
		}
	})
	t.Run("pipeline", func(t *testing.T) {
		script := `\set aid random(1, 100000 * :scale)
\startpipeline
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
END;
\endpipeline
`
		p, shapes := pgbenchRun(t, script, "-M", "extended", "-t", "15")
		s := shapeWith(t, shapes, "BEGIN; UPDATE pgbench_accounts SET abalance = abalance + ?")
		if s.Count != 15 || s.RoundTripsMax != 1 || s.StatementsMean != 4 || s.Commits != 15 {
			t.Errorf("pipeline: %+v", s)
		}
		saveCapture(t, benchConn(p), "pgbench-pipeline")
	})
}

// TestWirePgx follows pgx's query modes, a batch, parameters in binary format, a failed
// transaction and COPY in both directions.
func TestWirePgx(t *testing.T) {
	p, _, db := wireProxy(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, fmt.Sprintf("postgres://dblat@%s/%s?sslmode=disable&passfile=%s", p.Addr(), db, postgres.PassFile(pgtest.Server(t))))
	if err != nil {
		t.Fatal(err)
	}
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := conn.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	exec("CREATE TABLE px (id int PRIMARY KEY, v text)")
	for i, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeExec,
		pgx.QueryExecModeCacheStatement, pgx.QueryExecModeCacheStatement} {
		exec("INSERT INTO px VALUES ($1, $2)", mode, i+1, "v")
	}
	r := conn.QueryRow(ctx, "SELECT $1::int4, $2::text, $3::numeric, $4::timestamptz, $5::uuid, $6::bool, $7::int8, $8::float8, $9::date, $10::bytea",
		pgx.QueryExecModeCacheStatement, 42, "txt", "123.4500", time.Date(2024, 2, 29, 12, 30, 0, 500000000, time.UTC),
		"6ba7b810-9dad-11d1-80b4-00c04fd430c8", true, int64(-7), 2.5, time.Date(1999, 12, 31, 0, 0, 0, 0, time.UTC), []byte{1, 0xab})
	var a, b, c, d, e, f, g, h, i, j any
	if err := r.Scan(&a, &b, &c, &d, &e, &f, &g, &h, &i, &j); err != nil {
		t.Fatal(err)
	}
	batch := &pgx.Batch{}
	batch.Queue("UPDATE px SET v = $1 WHERE id = $2", "w", 1)
	batch.Queue("SELECT count(*) FROM px")
	batch.Queue("DELETE FROM px WHERE id = $1", 4)
	if err := conn.SendBatch(ctx, batch).Close(); err != nil {
		t.Fatal(err)
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "SELECT 1/0"); err == nil {
		t.Fatal("1/0 did not fail")
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	n, err := conn.CopyFrom(ctx, pgx.Identifier{"px"}, []string{"id", "v"}, pgx.CopyFromRows([][]any{{10, "a"}, {11, "b"}}))
	if err != nil || n != 2 {
		t.Fatalf("copy from: %d, %v", n, err)
	}
	if _, err := conn.PgConn().CopyTo(ctx, discard{}, "COPY px TO STDOUT"); err != nil {
		t.Fatal(err)
	}
	if err := conn.Close(ctx); err != nil {
		t.Fatal(err)
	}
	p.WaitEnded(t, 1, 30*time.Second)
	cn := p.Conns()[0]
	if s := cn.Stopped(); s != "" {
		t.Fatalf("cannot follow: %s", s)
	}
	var got []string
	for _, x := range cn.Txs() {
		got = append(got, fmt.Sprintf("%s|%d|%d|%s|%v", x.Shape.Text, x.Statements, x.RoundTrips, x.Outcome, x.Failed))
	}
	sel := "SELECT ?::int4, ?::text, ?::numeric, ?::timestamptz, ?::uuid, ?::bool, ?::int8, ?::float8, ?::date, ?::bytea"
	want := []string{
		"CREATE TABLE px (id int PRIMARY KEY, v text)|1|1|autocommit|false",
		"INSERT INTO px VALUES (?, ?)|1|1|autocommit|false", // simple: values inlined by pgx
		"INSERT INTO px VALUES (?, ?)|1|1|autocommit|false", // exec: Parse, Bind, Execute, Sync
		"INSERT INTO px VALUES (?, ?)|1|2|autocommit|false", // cache: Parse, Describe first
		"INSERT INTO px VALUES (?, ?)|1|1|autocommit|false", // cache: prepared already
		sel + "|1|2|autocommit|false",                       // prepared first: the parameters go in binary
		// The batch: pgx prepares what it has not cached, then runs all three behind one
		// Sync, in one implicit transaction.
		"UPDATE px SET v = ? WHERE id = ?; SELECT count(*) FROM px; DELETE FROM px WHERE id = ?|3|2|autocommit|false",
		"begin; SELECT ?/?; rollback|3|3|rollback|true",
		`copy "px" ("id", "v") from stdin binary|1|2|autocommit|false`,
		"COPY px TO STDOUT|1|1|autocommit|false",
	}
	// pgx's CopyFrom writes the COPY data from a goroutine of its own without waiting for
	// CopyInResponse, and CopyDone after it: how those writes and the server's answers
	// interleave depends on scheduling, and on a loaded machine the proxy once saw three
	// turns instead of two.
	copyFrom := slices.Index(want, `copy "px" ("id", "v") from stdin binary|1|2|autocommit|false`)
	if copyFrom >= 0 && copyFrom < len(got) && got[copyFrom] == `copy "px" ("id", "v") from stdin binary|1|3|autocommit|false` {
		got[copyFrom] = want[copyFrom]
	}
	if !slices.Equal(got, want) {
		t.Errorf("transactions:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var params []string
	for _, e := range cn.Events() {
		if e.Kind == wire.EvStatement && strings.HasPrefix(string(e.Text), "SELECT $1::int4") {
			for _, p := range e.Params {
				params = append(params, string(p.Text))
			}
		}
	}
	wantParams := []string{"42", "txt", "123.4500", "2024-02-29 12:30:00.5+00", "6ba7b810-9dad-11d1-80b4-00c04fd430c8",
		"t", "-7", "2.5", "1999-12-31", `\x01ab`}
	if !slices.Equal(params, wantParams) {
		t.Errorf("binary parameters rendered %q, want %q", params, wantParams)
	}
	saveCapture(t, cn, "pgx")
}

type discard struct{}

func (discard) Write(b []byte) (int, error) { return len(b), nil }

// TestWirePgbenchCaptures replays the pgbench captures through a Tracker, without a server: each
// is 20 transactions of pgbench's 7 statements. (The checks every decoder passes on every
// capture are TestConformance's.)
func TestWirePgbenchCaptures(t *testing.T) {
	for _, name := range []string{"pgbench-simple", "pgbench-extended", "pgbench-prepared"} {
		t.Run(name, func(t *testing.T) {
			c, err := wiretest.ReadFile(filepath.Join("testdata", "wire", name+".cap"))
			if err != nil {
				t.Fatal(err)
			}
			var a wire.Aggregate
			tr := wire.NewTracker(wire.TrackerConfig{Protocols: []wire.Protocol{pgProto}})
			c.Replay(tr)
			tr.Flush(&a)
			s := a.Shapes()
			if len(s) != 1 || s[0].Count != 20 || s[0].RoundTripsP50 != 7 || s[0].StatementsMean != 7 {
				t.Errorf("replayed: %+v", s)
			}
		})
	}
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
	f.Fuzz(func(t *testing.T, data []byte) { wiretest.FuzzReplay(t, pgProto, data) })
}

// BenchmarkWireDecoder measures the decoder (with its Tracker) per round trip on captured
// pgbench traffic.
func BenchmarkWireDecoder(b *testing.B) {
	for _, name := range []string{"pgbench-simple", "pgbench-extended", "pgbench-prepared", "pgbench-pipeline"} {
		b.Run(name, func(b *testing.B) {
			c, err := wiretest.ReadFile(filepath.Join("testdata", "wire", name+".cap"))
			if err != nil {
				b.Fatal(err)
			}
			wiretest.BenchReplay(b, pgProto, c, startupEnd(c))
		})
	}
}

// startupEnd returns the index of the first client chunk after the server's first
// ReadyForQuery: where the transactions begin.
func startupEnd(c wiretest.Capture) int {
	for i, ch := range c {
		if ch.Dir == wire.Server && strings.Contains(string(ch.Data), "Z\x00\x00\x00\x05I") {
			for j := i + 1; j < len(c); j++ {
				if c[j].Dir == wire.Client {
					return j
				}
			}
		}
	}
	return 0
}
