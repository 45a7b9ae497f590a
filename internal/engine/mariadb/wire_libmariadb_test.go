package mariadb_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/engine/mariadb/mariadbtest"
	"github.com/dblat/dblat/internal/wire"
	"github.com/dblat/dblat/internal/wire/wiretest"
)

// libmariadbModes are the ways the C client (mariadbtest.StmtClient) runs its SELECTs, with
// the round trips of its transactions of BEGIN, 14 SELECTs and COMMIT: the first of a
// connection, which the statement's prepare joins, and the others. The cursor's rows take
// a COM_STMT_FETCH each; execute-direct sends the prepare with each execute.
var libmariadbModes = []struct {
	name        string
	args        []string
	first, rest int64
}{
	{"prepared", nil, 17, 16},
	{"unbuffered", []string{"-U"}, 17, 16},
	{"cursor", []string{"-C"}, 31, 30},
	{"direct", []string{"-X"}, 16, 16},
	{"text", []string{"-T"}, 16, 16},
}

const libmariadbTxs, libmariadbSelects = 5, 14

// libmariadbShape is the shape of the C client's transactions.
func libmariadbShape() string {
	return "BEGIN; " + strings.Repeat("SELECT id, v, n FROM stmt_t WHERE id = ?; ", libmariadbSelects) + "COMMIT"
}

// TestWireLibmariadb follows a C client on libmariadb (MariaDB Connector/C), which
// negotiates MARIADB_CLIENT_CACHE_METADATA without CLIENT_DEPRECATE_EOF: from the second
// execute on, a result's column count says its metadata is skipped, and the EOF that would
// end the definitions still comes. In each of the client's modes every transaction is
// followed with its round trips, and the prepared SELECTs' parameter values are read.
func TestWireLibmariadb(t *testing.T) {
	bin := mariadbtest.StmtClient(t)
	for _, m := range libmariadbModes {
		t.Run(m.name, func(t *testing.T) {
			p, _, db := wireProxy(t)
			srv := mariadbtest.Server(t)
			mariadbtest.RunStmtClient(t, bin, "127.0.0.1", srv.Port, db, "-S")
			args := append([]string{"-c", "1", "-t", strconv.Itoa(libmariadbTxs), "-s", strconv.Itoa(libmariadbSelects)}, m.args...)
			if n := mariadbtest.RunStmtClient(t, bin, "127.0.0.1", p.Port(), db, args...); n != libmariadbTxs {
				t.Fatalf("the client committed %d transactions, want %d", n, libmariadbTxs)
			}
			p.WaitEnded(t, 1, 30*time.Second)
			c := p.Conns()[0]
			if s := c.Stopped(); s != "" {
				t.Fatalf("cannot follow: %s", s)
			}
			checkTxs(t, c.Txs(), libmariadbWant(m.first, m.rest))
			var ids []string
			for _, e := range c.Events() {
				if e.Kind == wire.EvStatement && strings.HasPrefix(string(e.Text), "SELECT id, v, n FROM stmt_t WHERE id = ") {
					if m.name == "text" {
						continue // the id is a literal
					}
					if e.ParamsHidden || len(e.Params) != 1 || e.Params[0].Null {
						t.Fatalf("parameters of %q: %+v (hidden %v)", e.Text, e.Params, e.ParamsHidden)
					}
					ids = append(ids, string(e.Params[0].Text))
				}
			}
			if m.name != "text" && len(ids) != libmariadbTxs*libmariadbSelects {
				t.Errorf("%d SELECTs with their parameter, want %d", len(ids), libmariadbTxs*libmariadbSelects)
			}
			for _, id := range ids {
				if n, err := strconv.Atoi(id); err != nil || n < 1 || n > 100 {
					t.Fatalf("parameter %q, want an id of 1 to 100", id)
				}
			}
			if m.name != "text" && m.name != "unbuffered" {
				saveCapture(t, c, "libmariadb-"+m.name)
			}
		})
	}
}

// libmariadbWant renders the transactions TestWireLibmariadb expects.
func libmariadbWant(first, rest int64) []string {
	var want []string
	for i := range libmariadbTxs {
		rt := rest
		if i == 0 {
			rt = first
		}
		want = append(want, fmt.Sprintf("%s|%d stmts|%d rt|commit|errors=0", libmariadbShape(), libmariadbSelects+2, rt))
	}
	return want
}

// TestWireLibmariadbCaptures replays the C client's captures without a server: the
// decoder follows them to the end with the transactions and round trips the live test saw.
func TestWireLibmariadbCaptures(t *testing.T) {
	for _, m := range libmariadbModes {
		path := filepath.Join("testdata", "wire", "libmariadb-"+m.name+".cap")
		if m.name == "text" || m.name == "unbuffered" {
			continue
		}
		t.Run(m.name, func(t *testing.T) {
			c, err := wiretest.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var txs []wire.Tx
			tr := wire.NewTracker(wire.TrackerConfig{Protocols: []wire.Protocol{myProto}, OnTx: func(x *wire.Tx) {
				y, sh := *x, *x.Shape
				y.Shape = &sh
				txs = append(txs, y)
			}})
			c.Replay(tr)
			if s := tr.Stopped(); s != "" {
				t.Fatalf("cannot follow: %s", s)
			}
			checkTxs(t, txs, libmariadbWant(m.first, m.rest))
			// Skipped metadata: a column count of 3 followed by a metadata byte of 0.
			if m.name == "prepared" && !slices.ContainsFunc(c, func(ch wiretest.Chunk) bool {
				return ch.Dir == wire.Server && strings.Contains(string(ch.Data), "\x02\x00\x00\x01\x03\x00")
			}) {
				t.Error("the capture has no result with skipped metadata")
			}
		})
	}
}

// myPkt frames a MySQL packet.
func myPkt(seq byte, p ...byte) []byte {
	return append([]byte{byte(len(p)), byte(len(p) >> 8), byte(len(p) >> 16), seq}, p...)
}

// Capabilities of a MySQL 8 client (libmysqlclient 8.4, as mysql-connector-python's C
// extension negotiates them): CLIENT_MYSQL (long password), PROTOCOL_41, TRANSACTIONS,
// SECURE_CONNECTION, MULTI_RESULTS, PS_MULTI_RESULTS, PLUGIN_AUTH, DEPRECATE_EOF,
// OPTIONAL_RESULTSET_METADATA and QUERY_ATTRIBUTES.
const mysql8Caps = 1 | 1<<9 | 1<<13 | 1<<15 | 1<<17 | 1<<18 | 1<<19 | 1<<24 | 1<<25 | 1<<27

// mysqlGreeting returns a protocol 10 greeting of a server with capabilities caps.
func mysqlGreeting(version string, caps uint32) []byte {
	p := append([]byte{10}, version...)
	p = append(p, 0, 7, 0, 0, 0) // connection id
	p = append(p, "abcdefgh"...) // auth data, part 1
	p = append(p, 0, byte(caps), byte(caps>>8), 45, 2, 0, byte(caps>>16), byte(caps>>24), 21)
	p = append(p, make([]byte, 10)...)   // reserved
	p = append(p, "ijklmnopqrst\x00"...) // auth data, part 2
	p = append(p, "caching_sha2_password\x00"...)
	return myPkt(0, p...)
}

// handshakeResponse returns a client's handshake response with capabilities caps.
func handshakeResponse(caps uint32) []byte {
	p := []byte{byte(caps), byte(caps >> 8), byte(caps >> 16), byte(caps >> 24), 0, 0, 0, 1, 45}
	p = append(p, make([]byte, 23)...)
	p = append(p, "u\x00\x00"...) // user, empty auth response
	return myPkt(1, p...)
}

// conversation turns chunks of alternating directions, the first from first, into a
// capture, a millisecond apart from at on.
func conversation(at int64, first wire.Direction, chunks ...[]byte) wiretest.Capture {
	var c wiretest.Capture
	dir := first
	for i, b := range chunks {
		c = append(c, wiretest.Chunk{Dir: dir, At: at + int64(i+1)*1e6, Data: b})
		dir = 1 - dir
	}
	return c
}

// TestWireMySQL8 follows what a MySQL 8 client negotiates. Against a MySQL 8 server that
// offers them all: query attributes before each COM_QUERY's text and in COM_STMT_EXECUTE
// (with PARAMETER_COUNT_AVAILABLE), a PREPARE_OK and a result without metadata
// (resultset_metadata=NONE), OK packets with a 0xFE header for EOF. Against MariaDB, which
// offers neither query attributes nor optional metadata: the client sets them anyway, and
// sends plain commands.
func TestWireMySQL8(t *testing.T) {
	ok, okInTx := []byte{0, 0, 0, 2, 0, 0, 0}, []byte{0, 0, 0, 3, 0, 0, 0}
	eofInTx := []byte{0xfe, 0, 0, 3, 0, 0, 0} // an OK with a 0xFE header
	colDef := []byte{3, 'd', 'e', 'f', 0, 0, 0, 1, 'v', 0, 0x0c, 0x2d, 0, 0x50, 0, 0, 0, 0xfd, 0, 0, 0, 0}
	withAttrs := func(text string) []byte { // COM_QUERY with no attributes: counts 0 and 1
		return append([]byte{0x03, 0, 1}, text...)
	}
	t.Run("mysql", func(t *testing.T) {
		// BEGIN with one attribute (a BIGINT named a).
		begin := append([]byte{0x03, 1, 1, 0, 1, 8, 0, 1, 'a', 9, 0, 0, 0, 0, 0, 0, 0}, "BEGIN"...)
		prepare := append([]byte{0x16}, "SELECT v FROM t WHERE id = ?"...)
		// PREPARE_OK: id 1, 1 column, 1 parameter, no metadata follows.
		prepOK := []byte{0, 1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0}
		// COM_STMT_EXECUTE: id 1, no cursor, 1 iteration, 1 parameter (with its name) of 42.
		exec := []byte{0x17, 1, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 8, 0, 0, 42, 0, 0, 0, 0, 0, 0, 0}
		// A binary result without metadata: column count 1, metadata follows 0, one row.
		result := slices.Concat(myPkt(1, 1, 0), myPkt(2, 0, 0, 2, 'h', 'i'), myPkt(3, eofInTx...))
		// A text result with metadata: column count 1, metadata follows 1.
		text := slices.Concat(myPkt(1, 1, 1), myPkt(2, colDef...), myPkt(3, 1, '1'), myPkt(4, eofInTx...))
		c := conversation(0, wire.Server, mysqlGreeting("8.0.36", mysql8Caps|1<<3|1<<16|1<<21), handshakeResponse(mysql8Caps), myPkt(2, ok...),
			myPkt(0, begin...), myPkt(1, okInTx...),
			myPkt(0, prepare...), myPkt(1, prepOK...),
			myPkt(0, exec...), result,
			myPkt(0, withAttrs("SELECT 1")...), text,
			myPkt(0, withAttrs("COMMIT")...), myPkt(1, ok...))
		checkMySQL8(t, c, "BEGIN; SELECT v FROM t WHERE id = ?; SELECT ?; COMMIT|4 stmts|5 rt|commit|errors=0", "42")
	})
	t.Run("mariadb", func(t *testing.T) {
		// MariaDB 10.11's greeting, from a capture: no query attributes, no optional
		// metadata, CLIENT_DEPRECATE_EOF.
		real, err := wiretest.ReadFile(filepath.Join("testdata", "wire", "libmariadb-prepared.cap"))
		if err != nil {
			t.Fatal(err)
		}
		greeting := real[0].Data
		prepare := append([]byte{0x16}, "SELECT v FROM t WHERE id = ?"...)
		// PREPARE_OK: id 1, 1 column, 1 parameter, their definitions without EOFs.
		prepOK := slices.Concat(myPkt(1, 0, 1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0), myPkt(2, colDef...), myPkt(3, colDef...))
		exec := []byte{0x17, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 8, 0, 42, 0, 0, 0, 0, 0, 0, 0}
		result := slices.Concat(myPkt(1, 1), myPkt(2, colDef...), myPkt(3, 0, 0, 2, 'h', 'i'), myPkt(4, eofInTx...))
		c := conversation(0, wire.Server, greeting, handshakeResponse(mysql8Caps), myPkt(2, ok...),
			myPkt(0, append([]byte{0x03}, "BEGIN"...)...), myPkt(1, okInTx...),
			myPkt(0, prepare...), prepOK,
			myPkt(0, exec...), result,
			myPkt(0, append([]byte{0x03}, "COMMIT"...)...), myPkt(1, ok...))
		checkMySQL8(t, c, "BEGIN; SELECT v FROM t WHERE id = ?; COMMIT|3 stmts|4 rt|commit|errors=0", "42")
	})
}

// checkMySQL8 decodes c and checks its one transaction and the SELECT's parameter.
func checkMySQL8(t *testing.T, c wiretest.Capture, wantTx, wantParam string) {
	t.Helper()
	rec := wiretest.Decode(t, myProto, c, t.Name())
	if r := rec.CannotFollow(); r != "" {
		t.Fatalf("cannot follow: %s", r)
	}
	var txs []wire.Tx
	tr := wire.NewTracker(wire.TrackerConfig{Protocols: []wire.Protocol{myProto}, OnTx: func(x *wire.Tx) {
		y, sh := *x, *x.Shape
		y.Shape = &sh
		txs = append(txs, y)
	}})
	c.Replay(tr)
	checkTxs(t, txs, []string{wantTx})
	var params []string
	for _, e := range rec.Events {
		if e.Kind == wire.EvStatement && strings.HasPrefix(string(e.Text), "SELECT v") {
			for _, p := range e.Params {
				params = append(params, string(p.Text))
			}
		}
	}
	if !slices.Equal(params, []string{wantParam}) {
		t.Errorf("parameters %q, want %q", params, wantParam)
	}
	wiretest.CheckRobust(t, myProto, c)
}

// TestWireLongData: COM_STMT_SEND_LONG_DATA before a statement's first execute (as
// libmariadb's mysql_stmt_send_long_data sends it), and an execute whose null bitmap marks
// the long-data parameter (libmariadb sets that bit): the value is hidden, not NULL, on
// libmariadb's handshake from a capture.
func TestWireLongData(t *testing.T) {
	real, err := wiretest.ReadFile(filepath.Join("testdata", "wire", "libmariadb-prepared.cap"))
	if err != nil {
		t.Fatal(err)
	}
	if len(real) < 3 || real[1].Dir != wire.Client || real[2].Dir != wire.Server {
		t.Fatal("the capture does not start with a greeting, a handshake response and an answer")
	}
	colDef := []byte{3, 'd', 'e', 'f', 0, 0, 0, 1, '?', 0, 0x0c, 0x3f, 0, 0, 0, 0, 0, 0xfc, 0x80, 0, 0, 0, 0}
	eof := []byte{0xfe, 0, 0, 3, 0}
	prepare := append([]byte{0x16}, "INSERT INTO t VALUES (?, ?)"...)
	// PREPARE_OK: id 1, no columns, 2 parameters, their definitions and an EOF.
	prepOK := slices.Concat(myPkt(1, 0, 1, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0), myPkt(2, colDef...), myPkt(3, colDef...), myPkt(4, eof...))
	long := slices.Concat(myPkt(0, append([]byte{0x18, 1, 0, 0, 0, 1, 0}, "long"...)...), myPkt(0, append([]byte{0x18, 1, 0, 0, 0, 1, 0}, "data"...)...))
	// COM_STMT_EXECUTE: null bitmap 0b10, types LONG and BLOB, the LONG's value 9.
	exec := myPkt(0, 0x17, 1, 0, 0, 0, 0, 1, 0, 0, 0, 2, 1, 3, 0, 0xfc, 0, 9, 0, 0, 0)
	c := append(wiretest.Capture(nil), real[:3]...)
	c = append(c, conversation(real[2].At, wire.Client,
		myPkt(0, append([]byte{0x03}, "BEGIN"...)...), myPkt(1, 0, 0, 0, 3, 0, 0, 0),
		myPkt(0, prepare...), prepOK,
		slices.Concat(long, exec), myPkt(1, 0, 1, 0, 3, 0, 0, 0),
		myPkt(0, append([]byte{0x03}, "COMMIT"...)...), myPkt(1, 0, 0, 0, 2, 0, 0, 0))...)
	rec := wiretest.Decode(t, myProto, c, "long data")
	if r := rec.CannotFollow(); r != "" {
		t.Fatalf("cannot follow: %s", r)
	}
	var got []string
	for _, e := range rec.Events {
		if e.Kind == wire.EvStatement && strings.HasPrefix(string(e.Text), "INSERT") {
			got = append(got, fmt.Sprintf("hidden=%v", e.ParamsHidden))
			for _, p := range e.Params {
				got = append(got, fmt.Sprintf("null=%v %q", p.Null, p.Text))
			}
		}
	}
	if want := []string{"hidden=true", `null=false "9"`, `null=false ""`}; !slices.Equal(got, want) {
		t.Errorf("the INSERT's parameters: %q, want %q", got, want)
	}
	wiretest.CheckRobust(t, myProto, c)
}
