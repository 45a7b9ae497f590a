package mariadb_test

import (
	"bytes"
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

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/engine/mariadb"
	"github.com/dblat/dblat/internal/engine/mariadb/mariadbtest"
	"github.com/dblat/dblat/internal/wire"
	"github.com/dblat/dblat/internal/wire/wiretest"
)

// writeCaptures rewrites testdata/wire/*.cap from the tests with real clients; the
// decoder's server-free tests, fuzz target and benchmarks read them.
var writeCaptures = flag.Bool("wire.capture", false, "rewrite testdata/wire/*.cap from real client runs")

var myProto = mariadb.Engine{}.WireProtocol()

// wireProxy starts a tee proxy in front of the shared server and returns it with the test
// database's DSN through the proxy and its name.
func wireProxy(t *testing.T) (*wiretest.Proxy, string, string) {
	t.Helper()
	dsn := mariadbtest.NewDatabase(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	p := wiretest.StartProxy(t, u.Host, myProto)
	u.Host = p.Addr()
	return p, u.String(), strings.TrimPrefix(u.Path, "/")
}

func runTool(t *testing.T, stdin string, name string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		if mariadbtest.Required() {
			t.Fatalf("%s is not installed", name)
		}
		t.Skipf("skipping: %s is not installed", name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
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

// txLines renders transactions for comparison.
func txLines(txs []wire.Tx) []string {
	var out []string
	for _, x := range txs {
		out = append(out, fmt.Sprintf("%s|%d stmts|%d rt|%s|errors=%d", x.Shape.Text, x.Statements, x.RoundTrips, x.Outcome, x.Errors))
	}
	return out
}

func checkTxs(t *testing.T, got []wire.Tx, want []string) {
	t.Helper()
	if g := txLines(got); !slices.Equal(g, want) {
		t.Errorf("transactions:\n%s\nwant:\n%s", strings.Join(g, "\n"), strings.Join(want, "\n"))
	}
}

const cliScript = `CREATE TABLE wt (id INT PRIMARY KEY, v VARCHAR(10), n DECIMAL(10,2)) ENGINE=InnoDB;
INSERT INTO wt VALUES (1, 'a', 1.5);
START TRANSACTION;
UPDATE wt SET v = 'b' WHERE id = 1;
SELECT * FROM wt WHERE id IN (1, 2, 3);
COMMIT;
START TRANSACTION;
INSERT INTO wt VALUES (1, 'dup', 0);
SELECT 1;
ROLLBACK;
DELIMITER //
CREATE PROCEDURE p() BEGIN SELECT 1; SELECT 2; END//
DELIMITER ;
CALL p();
SELECT COUNT(*) FROM wt;
`

// TestWireCLI follows the mariadb client: autocommit statements, a committed and a rolled
// back transaction with a failed statement, and a procedure that returns two results.
func TestWireCLI(t *testing.T) {
	p, _, db := wireProxy(t)
	_, port, _ := strings.Cut(p.Addr(), ":")
	runTool(t, cliScript, "mariadb", append(mariadbtest.ToolArgs(t), "--force", "-h", "127.0.0.1", "-P", port, "-u", "dblat", db)...)
	p.WaitEnded(t, 1, 30*time.Second)
	c := p.Conns()[0]
	if s := c.Stopped(); s != "" {
		t.Fatalf("cannot follow: %s", s)
	}
	txs := c.Txs()
	// The client's own first query, if any, comes before the script's.
	for len(txs) > 0 && !strings.HasPrefix(txs[0].Shape.Text, "CREATE TABLE") {
		txs = txs[1:]
	}
	checkTxs(t, txs, []string{
		"CREATE TABLE wt (id INT PRIMARY KEY, v VARCHAR(?), n DECIMAL(?, ?)) ENGINE=InnoDB|1 stmts|1 rt|autocommit|errors=0",
		"INSERT INTO wt VALUES (?, ?, ?)|1 stmts|1 rt|autocommit|errors=0",
		"START TRANSACTION; UPDATE wt SET v = ? WHERE id = ?; SELECT * FROM wt WHERE id IN (...); COMMIT|4 stmts|4 rt|commit|errors=0",
		"START TRANSACTION; INSERT INTO wt VALUES (?, ?, ?); SELECT ?; ROLLBACK|4 stmts|4 rt|rollback|errors=1",
		"CREATE PROCEDURE p() BEGIN SELECT ?; SELECT ?; END|1 stmts|1 rt|autocommit|errors=0",
		"CALL p()|1 stmts|1 rt|autocommit|errors=0",
		"SELECT COUNT(*) FROM wt|1 stmts|1 rt|autocommit|errors=0",
	})
	saveCapture(t, c, "mariadb-cli")
}

// TestWireMysqlslap: mysqlslap's statements are autocommit transactions of one round trip.
func TestWireMysqlslap(t *testing.T) {
	p, dsn, db := wireProxy(t)
	direct := open(t, strings.Replace(dsn, p.Addr(), hostOf(t), 1), engine.OpenOptions{})
	mustExec(t, direct, "CREATE TABLE ws (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(10))")
	_, port, _ := strings.Cut(p.Addr(), ":")
	runTool(t, "", "mysqlslap", append(mariadbtest.ToolArgs(t), "-h", "127.0.0.1", "-P", port, "-u", "dblat", "--concurrency=1",
		"--iterations=1", "--number-of-queries=20", "--create-schema="+db, "--no-drop", "--delimiter=;",
		"--query=INSERT INTO ws (v) VALUES ('x');SELECT COUNT(*) FROM ws WHERE v = 'x'")...)
	n := len(p.Conns())
	p.WaitEnded(t, n, 30*time.Second)
	shapes := p.Agg.Shapes()
	var ins, sel wire.ShapeSummary
	for _, s := range shapes {
		switch s.Text {
		case "INSERT INTO ws (v) VALUES (?)":
			ins = s
		case "SELECT COUNT(*) FROM ws WHERE v = ?":
			sel = s
		}
	}
	if ins.Count+sel.Count != 20 || ins.Count < 9 || ins.RoundTripsMax != 1 || sel.RoundTripsMax != 1 || ins.Autocommits != ins.Count {
		t.Errorf("insert %+v\nselect %+v\nall %+v", ins, sel, shapes)
	}
	for _, c := range p.Conns() {
		if s := c.Stopped(); s != "" {
			t.Errorf("cannot follow: %s", s)
		}
		if len(c.Txs()) >= 10 {
			saveCapture(t, c, "mysqlslap")
		}
	}
}

// hostOf returns the shared server's host:port.
func hostOf(t *testing.T) string {
	t.Helper()
	return fmt.Sprintf("127.0.0.1:%d", mariadbtest.Server(t).Port)
}

// TestWireGoDriver follows go-sql-driver/mysql: server-side prepared statements (prepare,
// execute, close: 2 round trips, the prepare joining the transaction), parameters in the
// binary protocol, interpolated statements, several statements in one COM_QUERY, a failed
// statement in a transaction, LOAD DATA LOCAL INFILE (dblat's loader) and MariaDB's
// compound statements (dblat's Batcher).
func TestWireGoDriver(t *testing.T) {
	p, dsn, _ := wireProxy(t)
	ctx := context.Background()
	db := open(t, mariadbtest.WithParam(dsn, "multiStatements=true"), engine.OpenOptions{})
	db.SetMaxOpenConns(1)
	mustExec(t, db, "CREATE TABLE gt (id INT PRIMARY KEY, v VARCHAR(20), f DOUBLE, ts DATETIME(6), b BLOB, n INT, ok BOOL)")
	mustExec(t, db, "INSERT INTO gt VALUES (?, ?, ?, ?, ?, ?, ?)", 1, "it's", 2.5, time.Date(2024, 2, 29, 12, 30, 0, 500000000, time.UTC),
		[]byte{1, 2}, nil, true)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, tx, "UPDATE gt SET v = ? WHERE id = ?", "w", 1)
	mustExec(t, tx, "SELECT 1")
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, "INSERT INTO gt (id) VALUES (2); UPDATE gt SET n = 7 WHERE id = 2")
	tx, err = db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO gt (id) VALUES (1)"); err == nil {
		t.Fatal("a duplicate key did not fail")
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if _, err := (mariadb.Engine{}).CopyRows(ctx, db, "gt", []string{"id", "v"}, rows(10, 3)); err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	btx, err := mariadb.Engine{}.BeginBatch(ctx, conn, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := btx.Send(ctx, &engine.BatchStmt{SQL: "UPDATE gt SET n = ? WHERE id = ?", Args: []any{8, 10}},
		&engine.BatchStmt{SQL: "SELECT n FROM gt WHERE id = ?", Args: []any{10}, Columns: 1}); err != nil {
		t.Fatal(err)
	}
	if err := btx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	db.Close()
	p.WaitEnded(t, 1, 30*time.Second)
	c := p.Conns()[0]
	if s := c.Stopped(); s != "" {
		t.Fatalf("cannot follow: %s", s)
	}
	checkTxs(t, c.Txs(), []string{
		"CREATE TABLE gt (id INT PRIMARY KEY, v VARCHAR(?), f DOUBLE, ts DATETIME(?), b BLOB, n INT, ok BOOL)|1 stmts|1 rt|autocommit|errors=0",
		"INSERT INTO gt VALUES (?, ?, ?, ?, ?, ?, ?)|1 stmts|2 rt|autocommit|errors=0",
		"START TRANSACTION; UPDATE gt SET v = ? WHERE id = ?; SELECT ?; COMMIT|4 stmts|5 rt|commit|errors=0",
		"INSERT INTO gt (id) VALUES (?); UPDATE gt SET n = ? WHERE id = ?|2 stmts|1 rt|autocommit|errors=0",
		"START TRANSACTION; INSERT INTO gt (id) VALUES (?); ROLLBACK|3 stmts|3 rt|rollback|errors=1",
		// LOAD DATA LOCAL INFILE: the server asks for the file, the client sends it.
		"START TRANSACTION; LOAD DATA LOCAL INFILE ? INTO TABLE `gt` CHARACTER SET utf8mb4 (`id`, `v`); SELECT @@warning_count; COMMIT|4 stmts|5 rt|commit|errors=0",
		// Two batches, each one compound statement: 2 round trips.
		"BEGIN NOT ATOMIC START TRANSACTION; UPDATE gt SET n = ? WHERE id = ?; SELECT ROW_COUNT() AS dblat_row_count; SELECT n FROM gt WHERE id = ?; END; BEGIN NOT ATOMIC COMMIT; END|2 stmts|2 rt|commit|errors=0",
	})
	var params []string
	for _, e := range c.Events() {
		if e.Kind == wire.EvStatement && strings.HasPrefix(string(e.Text), "INSERT INTO gt VALUES") {
			for _, p := range e.Params {
				if p.Null {
					params = append(params, "NULL")
				} else {
					params = append(params, string(p.Text))
				}
			}
		}
	}
	if want := []string{"1", "it's", "2.5", "2024-02-29 12:30:00.5", "0x0102", "NULL", "1"}; !slices.Equal(params, want) {
		t.Errorf("parameters %q, want %q", params, want)
	}
	saveCapture(t, c, "go-driver")
}

// rows returns a CopyRows source of n rows starting at id from.
func rows(from, n int) func([]any) bool {
	i := 0
	return func(row []any) bool {
		if i == n {
			return false
		}
		row[0], row[1] = from+i, fmt.Sprintf("r%d", i)
		i++
		return true
	}
}

// TestWireTransactionLoop records the captures the benchmark and the fuzz target use: a
// closed loop of small transactions, with server-side prepared statements and with
// interpolated parameters.
func TestWireTransactionLoop(t *testing.T) {
	for _, mode := range []string{"prepared", "interpolated"} {
		t.Run(mode, func(t *testing.T) {
			p, dsn, _ := wireProxy(t)
			if mode == "interpolated" {
				dsn = mariadbtest.WithParam(dsn, "interpolateParams=true")
			}
			ctx := context.Background()
			db := open(t, dsn, engine.OpenOptions{})
			db.SetMaxOpenConns(1)
			mustExec(t, db, "CREATE TABLE acc (id INT PRIMARY KEY, bal BIGINT)")
			for i := range 10 {
				mustExec(t, db, "INSERT INTO acc VALUES (?, 0)", i)
			}
			for i := range 20 {
				tx, err := db.BeginTx(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				mustExec(t, tx, "UPDATE acc SET bal = bal + ? WHERE id = ?", i, i%10)
				var bal int64
				if err := tx.QueryRowContext(ctx, "SELECT bal FROM acc WHERE id = ?", i%10).Scan(&bal); err != nil {
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
			var a wire.Aggregate
			tr := wire.NewTracker(wire.TrackerConfig{Protocols: []wire.Protocol{myProto}})
			c.Capture().Replay(tr)
			tr.Flush(&a)
			var loop wire.ShapeSummary
			for _, s := range a.Shapes() {
				if strings.HasPrefix(s.Text, "START TRANSACTION; UPDATE acc") {
					loop = s
				}
			}
			// START TRANSACTION, UPDATE, SELECT, COMMIT: 4 round trips, 2 more with the
			// statements prepared on the server each time.
			want := int64(4)
			if mode == "prepared" {
				want = 6
			}
			if loop.Count != 20 || loop.RoundTripsMax != want || loop.RoundTripsP50 != want || loop.Commits != 20 {
				t.Errorf("loop: %+v", loop)
			}
			saveCapture(t, c, "loop-"+mode)
		})
	}
}

// TestWireDeclineTLS: a greeting that offers TLS is rewritten without CLIENT_SSL; a client
// that then gives up is reported as one that requires TLS.
func TestWireDeclineTLS(t *testing.T) {
	c, err := wiretest.ReadFile(filepath.Join("testdata", "wire", "mariadb-cli.cap"))
	if err != nil {
		t.Fatal(err)
	}
	greeting := append([]byte(nil), c[0].Data...)
	// The capability flags follow the version string, the connection id, 8 bytes of auth
	// data and a filler byte.
	off := 4 + 1 + strings.IndexByte(string(greeting[5:]), 0) + 1 + 4 + 8 + 1
	greeting[off+1] |= 0x08 // CLIENT_SSL
	var rec wiretest.Recorder
	d := myProto.NewDecoder(&rec)
	ic := d.(wire.Interceptor).Intercept(wire.Server, greeting)
	if ic.Action != wire.Replace || len(ic.Bytes) != len(greeting) || ic.Bytes[off+1]&0x08 != 0 {
		t.Fatalf("intercept: %+v", ic)
	}
	d.ServerData(ic.Bytes, 1)
	d.Close(2)
	if r := rec.CannotFollow(); !strings.Contains(r, "requires TLS") {
		t.Fatalf("cannot follow %q; events %+v", r, rec.Events)
	}
}

// TestWireCursor follows a prepared statement run with a read-only cursor (the server
// answers COM_STMT_EXECUTE with the column definitions only, COM_STMT_FETCH with rows), on
// a handshake taken from a capture: no client here opens cursors.
func TestWireCursor(t *testing.T) {
	c, err := wiretest.ReadFile(filepath.Join("testdata", "wire", "loop-prepared.cap"))
	if err != nil {
		t.Fatal(err)
	}
	// The handshake: up to the server's first OK after the client's handshake response.
	k := 2
	for k < len(c) && !(c[k].Dir == wire.Server && len(c[k].Data) > 4 && c[k].Data[4] == 0) {
		k++
	}
	hs := c[:k+1]
	caps := uint32(hs[1].Data[4]) | uint32(hs[1].Data[5])<<8 | uint32(hs[1].Data[6])<<16 | uint32(hs[1].Data[7])<<24
	deprecate := caps&(1<<24) != 0
	pkt := func(seq byte, p ...byte) []byte {
		return append([]byte{byte(len(p)), byte(len(p) >> 8), byte(len(p) >> 16), seq}, p...)
	}
	colDef := []byte{3, 'd', 'e', 'f', 0, 0, 0, 1, 'x', 0, 0x0c, 0x3f, 0, 1, 0, 0, 0, 8, 0x81, 0, 0, 0, 0}
	eof := func(seq byte, status byte) []byte {
		if deprecate {
			return pkt(seq, 0xfe, 0, 0, status, 0, 0, 0)
		}
		return pkt(seq, 0xfe, 0, 0, status, 0)
	}
	const inTrans, cursorExists, lastRowSent = 0x01, 0x40, 0x80
	var server, client [][]byte
	// COM_STMT_PREPARE "SELECT 1": PREPARE_OK (id 7, 1 column, 0 parameters), its column.
	client = append(client, pkt(0, append([]byte{0x16}, "SELECT 1"...)...))
	prep := [][]byte{pkt(1, 0, 7, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0), pkt(2, colDef...)}
	if !deprecate {
		prep = append(prep, eof(3, 0))
	}
	server = append(server, bytes.Join(prep, nil))
	// COM_STMT_EXECUTE with CURSOR_TYPE_READ_ONLY: the column count, definition, and an
	// EOF that says a cursor exists.
	client = append(client, pkt(0, 0x17, 7, 0, 0, 0, 1, 1, 0, 0, 0))
	server = append(server, bytes.Join([][]byte{pkt(1, 1), pkt(2, colDef...), eof(3, cursorExists|inTrans)}, nil))
	// COM_STMT_FETCH of 10 rows: two binary rows, then the end.
	client = append(client, pkt(0, 0x1c, 7, 0, 0, 0, 10, 0, 0, 0))
	server = append(server, bytes.Join([][]byte{pkt(1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0), pkt(2, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0),
		eof(3, lastRowSent|inTrans)}, nil))
	// COMMIT.
	client = append(client, pkt(0, append([]byte{0x03}, "COMMIT"...)...))
	server = append(server, pkt(1, 0, 0, 0, 2, 0, 0, 0))
	capture := append(wiretest.Capture(nil), hs...)
	for i := range client {
		capture = append(capture, wiretest.Chunk{Dir: wire.Client, Data: client[i]}, wiretest.Chunk{Dir: wire.Server, Data: server[i]})
	}
	rec := wiretest.Decode(t, myProto, capture, "cursor")
	if r := rec.CannotFollow(); r != "" {
		t.Fatalf("cannot follow: %s", r)
	}
	var statuses []wire.Status
	for _, e := range rec.Events {
		if e.Kind == wire.EvCompleted {
			statuses = append(statuses, e.Status)
		}
	}
	// The handshake's own requests come first; the last four are ours.
	want := []wire.Status{wire.StatusUnknown, wire.StatusInTx, wire.StatusInTx, wire.StatusIdle}
	if len(statuses) < 4 || !slices.Equal(statuses[len(statuses)-4:], want) {
		t.Fatalf("statuses %v, want %v at the end", statuses, want)
	}
	wiretest.CheckRobust(t, myProto, capture)
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
	f.Fuzz(func(t *testing.T, data []byte) { wiretest.FuzzReplay(t, myProto, data) })
}

// BenchmarkWireDecoder measures the decoder (with its Tracker) per round trip on captured
// transaction loops.
func BenchmarkWireDecoder(b *testing.B) {
	for _, name := range []string{"loop-prepared", "loop-interpolated"} {
		b.Run(name, func(b *testing.B) {
			c, err := wiretest.ReadFile(filepath.Join("testdata", "wire", name+".cap"))
			if err != nil {
				b.Fatal(err)
			}
			wiretest.BenchReplay(b, myProto, c, loopStart(c))
		})
	}
}

// loopStart returns the index of the client chunk that starts the loop's first
// transaction.
func loopStart(c wiretest.Capture) int {
	for i, ch := range c {
		if ch.Dir == wire.Client && strings.Contains(string(ch.Data), "START TRANSACTION") {
			return i
		}
	}
	return 0
}
