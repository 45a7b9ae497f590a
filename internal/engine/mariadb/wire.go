package mariadb

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/sqllex"
	"github.com/dblat/dblat/internal/wire"
)

// WireProtocol implements engine.WireProtocol: the MySQL client/server protocol as MariaDB
// and MySQL speak it (MariaDB's "Client/Server Protocol" pages, MySQL's
// include/mysql_com.h), decoded from the bytes a proxy forwards.
//
// The constants are written out here rather than taken from go-mysql-org/go-mysql: about
// thirty numbers do not justify a module whose dependencies (a parser, logging, errors
// packages) dblat would otherwise not carry, and go-sql-driver/mysql keeps its own
// unexported.
func (Engine) WireProtocol() wire.Protocol { return myWire{} }

var _ engine.WireProtocol = Engine{}

type myWire struct{}

func (myWire) Name() string { return "MySQL/MariaDB" }

// Lexicon: MySQL's default sql_mode ("..." strings, backslash escapes; not ANSI_QUOTES or
// NO_BACKSLASH_ESCAPES), # comments and `identifiers`.
func (myWire) Lexicon() wire.Lexicon {
	return wire.Lexicon{DoubleQuotedStrings: true, BackslashEscapes: true, HashComments: true, Backticks: true}
}

// Capability flags (mysql_com.h CLIENT_*, MariaDB's MARIADB_CLIENT_* in the upper 32 bits).
const (
	capLongPassword     = 1 << 0 // MariaDB calls it CLIENT_MYSQL: clear in a MariaDB server's greeting
	capCompress         = 1 << 5
	capProtocol41       = 1 << 9
	capSSL              = 1 << 11
	capTransactions     = 1 << 13
	capMultiStatements  = 1 << 16
	capDeprecateEOF     = 1 << 24
	capOptionalMetadata = 1 << 25
	capZstd             = 1 << 26
	capQueryAttributes  = 1 << 27
	capMariaDBProgress  = 1 << 32
	capMariaDBCacheMeta = 1 << 36
)

// Server status flags of OK and EOF packets (SERVER_STATUS_*, SERVER_MORE_RESULTS_EXISTS).
const (
	statusInTrans      = 0x0001
	statusMoreResults  = 0x0008
	statusCursorExists = 0x0040
)

// Commands (enum_server_command; COM_STMT_BULK_EXECUTE is MariaDB's).
const (
	comQuit             = 0x01
	comInitDB           = 0x02
	comQuery            = 0x03
	comFieldList        = 0x04
	comStatistics       = 0x09
	comProcessInfo      = 0x0a
	comChangeUser       = 0x11
	comBinlogDump       = 0x12
	comTableDump        = 0x13
	comRegisterSlave    = 0x15
	comStmtPrepare      = 0x16
	comStmtExecute      = 0x17
	comStmtSendLongData = 0x18
	comStmtClose        = 0x19
	comStmtReset        = 0x1a
	comSetOption        = 0x1b
	comStmtFetch        = 0x1c
	comBinlogDumpGTID   = 0x1e
	comResetConnection  = 0x1f
	comStmtBulkExecute  = 0xfa
	comMulti            = 0xfe
)

// Limits.
const (
	// maxPacket is the largest payload of one packet; a longer one continues in the next.
	maxPacket = 1<<24 - 1
	// keepText is how much of a command the decoder keeps (statements longer than 1 MiB
	// are normalised from their first MiB); keepServer how much of a server packet, enough
	// for an OK, EOF, ERR, PREPARE_OK or column count; keepGreeting for the greeting.
	keepText     = 1 << 20
	keepServer   = 64
	keepGreeting = 1024
	// maxParamText bounds the rendered text of one parameter value.
	maxParamText = 64 << 10
)

// Sniff recognises a MySQL server's greeting (protocol version 10, or an ERR packet such
// as "Too many connections"): the server speaks first.
func (myWire) Sniff(client, server []byte) wire.Verdict {
	if len(server) == 0 {
		if len(client) > 0 {
			return wire.No
		}
		return wire.NeedMore
	}
	if len(server) < 5 {
		return wire.NeedMore
	}
	n := int(server[0]) | int(server[1])<<8 | int(server[2])<<16
	if server[3] != 0 || n < 2 || n > keepGreeting {
		return wire.No
	}
	switch server[4] {
	case 10, 0xff:
		return wire.Yes
	}
	return wire.No
}

// NewDecoder returns a decoder for one connection; it declines TLS (see Intercept).
func (myWire) NewDecoder(sink wire.Sink) wire.Decoder {
	d := &myDecoder{sink: sink}
	d.cfr.d, d.sfr.d = d, d
	return d
}

// Phases of a connection.
const (
	phGreeting  = iota // the server's greeting is next
	phHandshake        // the client's handshake response is next
	phAuth             // authentication until the server's OK or ERR
	phCommand          // commands
)

// What the server's next packet is, for the command being answered.
const (
	rsFirst      = iota // the first packet of a (next) result
	rsColumns           // column definitions
	rsColumnsEOF        // the EOF after them (without CLIENT_DEPRECATE_EOF)
	rsRows              // rows up to an EOF, OK or ERR
	rsPrepParams        // PREPARE_OK's parameter definitions, then their EOF
	rsPrepParamsEOF
	rsPrepCols // PREPARE_OK's column definitions, then their EOF
	rsPrepColsEOF
	rsFieldList // COM_FIELD_LIST: column definitions up to EOF
	rsOne       // COM_STATISTICS: one packet of text
	rsInfile    // LOCAL INFILE: the client uploads, then the server's OK or ERR
	rsAuth      // COM_CHANGE_USER: authentication up to OK or ERR
)

type myCmd struct {
	code byte
	stmt *myStmt  // COM_STMT_PREPARE: the statement being prepared
	end  wire.End // the transaction control its statements perform
}

type myStmt struct {
	text    []byte
	end     wire.End
	nparams int
	types   []byte // 2 bytes per parameter, from the last execute that sent them
	long    []bool // parameters whose value came as long data
}

// myDecoder follows one connection. Packets are framed by wire.Framer; each command the
// client sends is a request and its answer (one or more results) the response.
type myDecoder struct {
	sink    wire.Sink
	ev      wire.Event
	stopped bool
	cf, sf  wire.Framer
	cfr     myClient
	sfr     myServer

	phase      int
	caps       uint64 // the client's capabilities (what is in effect)
	serverCaps uint64
	declined   bool // the proxy cleared CLIENT_SSL in the greeting
	rewrite    []byte
	cCont      bool // the next client packet continues a 16 MiB one
	sCont      bool
	uploading  bool // the client sends a LOCAL INFILE's contents
	eofUnknown bool // resumed: whether result sets end with EOF packets is not known yet

	cmds    []myCmd // commands sent and not answered, oldest first
	rs      int     // the oldest command's response state
	left    int     // definitions left in rsColumns, rsPrepParams, rsPrepCols
	pcols   int     // PREPARE_OK's column count, for after its parameters
	pparams int     // and its parameter count
	failed  bool
	answer  wire.Reply // of the oldest command, so far
	stmts   map[uint32]*myStmt
	last    *myStmt // the last statement prepared (MariaDB's statement id 0xffffffff), from when it is sent
	free    []*myStmt
	spans   []wire.Span
	params  []wire.Param
	pbuf    []byte
	offs    [][2]int
	tmp     []byte
}

type myClient struct{ d *myDecoder }
type myServer struct{ d *myDecoder }

// emit reports the event d.ev holds as one of kind k.
func (d *myDecoder) emit(k wire.EventKind) { wire.Send(d.sink, &d.ev, k) }

// fail reports, once, that the decoder cannot follow the connection.
func (d *myDecoder) fail(reason string) {
	wire.Stop(d.sink, &d.ev, &d.stopped, "MySQL/MariaDB", reason)
}

func errf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// Intercept implements wire.Interceptor: the CLIENT_SSL capability is cleared in the
// server's greeting, so that a client that would use TLS when the server offers it goes
// on in clear. A client that requires TLS gives up; Close then says so.
func (d *myDecoder) Intercept(from wire.Direction, b []byte) wire.Intercept {
	if from != wire.Server || d.phase != phGreeting || d.stopped || d.sf.Partial() || len(b) < 5 || b[3] != 0 || b[4] != 10 {
		return wire.Intercept{}
	}
	n := int(b[0]) | int(b[1])<<8 | int(b[2])<<16
	if len(b) < 4+n {
		return wire.Intercept{} // the greeting is split: leave it
	}
	off, ok := greetingCapsOffset(b[4 : 4+n])
	if !ok || b[4+off+1]&(capSSL>>8) == 0 {
		return wire.Intercept{}
	}
	d.rewrite = append(d.rewrite[:0], b...)
	d.rewrite[4+off+1] &^= capSSL >> 8
	d.declined = true
	return wire.Intercept{Action: wire.Replace, Bytes: d.rewrite}
}

// greetingCapsOffset returns the offset of the lower capability flags in a greeting's
// payload: after the protocol version, the NUL-terminated server version, the connection
// id (4), the first 8 bytes of auth data and a filler byte.
func greetingCapsOffset(p []byte) (int, bool) {
	for i := 1; i < len(p); i++ {
		if p[i] == 0 {
			off := i + 1 + 4 + 8 + 1
			return off, off+2 <= len(p)
		}
	}
	return 0, false
}

// ClientData implements wire.Decoder.
func (d *myDecoder) ClientData(b []byte, _ int64) {
	if d.stopped {
		return
	}
	if err := d.cf.Feed(b, &d.cfr); err != nil {
		d.fail(err.Error())
	}
}

// ServerData implements wire.Decoder.
func (d *myDecoder) ServerData(b []byte, _ int64) {
	if d.stopped {
		return
	}
	if err := d.sf.Feed(b, &d.sfr); err != nil {
		d.fail(err.Error())
	}
}

// Close implements wire.Decoder.
func (d *myDecoder) Close(int64) {
	switch {
	case d.stopped:
	case d.declined && d.phase == phHandshake:
		d.fail("the client closed the connection when the proxy declined TLS: it requires TLS (--ssl, " +
			"ssl-mode=REQUIRED or stricter, tls=true); connect without requiring TLS to be observed")
	case d.cf.Partial() || d.sf.Partial():
		d.fail("the connection ended inside a packet")
	}
}

func (c *myClient) HeaderLen() int { return 4 }

func (c *myClient) Body(h []byte) (int, int, error) {
	n := int(h[0]) | int(h[1])<<8 | int(h[2])<<16
	if c.d.cCont || c.d.uploading {
		return n, 0, nil
	}
	return n, keepText, nil
}

func (s *myServer) HeaderLen() int { return 4 }

func (s *myServer) Body(h []byte) (int, int, error) {
	n := int(h[0]) | int(h[1])<<8 | int(h[2])<<16
	if s.d.sCont {
		return n, 0, nil
	}
	if s.d.phase == phGreeting {
		return n, keepGreeting, nil
	}
	return n, keepServer, nil
}

// Message handles a client packet.
func (c *myClient) Message(h, p []byte) error {
	d := c.d
	n := int(h[0]) | int(h[1])<<8 | int(h[2])<<16
	if d.cCont {
		d.cCont = n == maxPacket
		return nil
	}
	d.cCont = n == maxPacket
	if d.uploading {
		if n == 0 {
			d.uploading = false // the end of the file
		}
		return nil
	}
	switch d.phase {
	case phGreeting:
		return errf("the client spoke before the server's greeting")
	case phHandshake:
		return d.handshake(p)
	case phAuth:
		return nil // authentication data: the server's OK or ERR ends the phase
	}
	if len(d.cmds) > 0 && d.rs == rsAuth {
		return nil // COM_CHANGE_USER's authentication data
	}
	if h[3] != 0 {
		return errf("a command with sequence id %d, not 0", h[3])
	}
	if len(p) == 0 {
		return errf("an empty command packet")
	}
	return d.command(p)
}

// handshake reads the client's handshake response.
func (d *myDecoder) handshake(p []byte) error {
	if len(p) < 4 {
		return errf("a handshake response of %d bytes", len(p))
	}
	caps := uint64(binary.LittleEndian.Uint32(p))
	if caps&capProtocol41 == 0 {
		return errf("a pre-4.1 handshake response (CLIENT_PROTOCOL_41 not set)")
	}
	if len(p) >= 32 && d.serverCaps&capLongPassword == 0 {
		caps |= uint64(binary.LittleEndian.Uint32(p[28:32])) << 32
	}
	if caps&capSSL != 0 && len(p) == 32 {
		// An SSLRequest: the TLS handshake follows.
		return errf("the client switched to TLS; connect without TLS (ssl-mode=DISABLED, tls=false) to be observed")
	}
	// What is in effect is what both sides declare: a client may set a capability the
	// server did not offer (a MySQL 8 client's CLIENT_QUERY_ATTRIBUTES and
	// CLIENT_OPTIONAL_RESULTSET_METADATA against MariaDB), and the server then neither
	// expects nor sends what it would add.
	caps &= d.serverCaps
	if caps&(capCompress|capZstd) != 0 {
		return errf("the client asked for the compressed protocol; connect without compression to be observed")
	}
	d.caps = caps
	d.phase = phAuth
	return nil
}

// command handles a command packet (p[0] is the command).
func (d *myDecoder) command(p []byte) error {
	code := p[0]
	switch code {
	case comQuit:
		return nil
	case comQuery:
		text, ok := d.queryText(p[1:])
		if !ok {
			return errf("a malformed COM_QUERY (query attributes)")
		}
		end := wire.EndNone
		lex := myWire{}.Lexicon()
		for rest := text; ; {
			var st []byte
			st, rest = wire.NextStatement(rest, lex)
			if st == nil {
				break
			}
			e := txControl(st, lex)
			if e != wire.EndNone {
				end = e
			}
			d.ev.Text, d.ev.End = st, e
			d.emit(wire.EvStatement)
		}
		d.send(myCmd{code: code, end: end})
	case comStmtPrepare:
		s := d.newStmt()
		s.text = append(s.text[:0], p[1:]...)
		lex := myWire{}.Lexicon()
		s.end = txControl(s.text, lex)
		// Until PREPARE_OK tells, the parameters are the text's markers, and the statement
		// is the last prepared: an execute pipelined behind the prepare (statement id -1,
		// libmariadb's mariadb_stmt_execute_direct) is read before the answer comes.
		d.spans = wire.Spans(d.spans[:0], s.text, lex)
		s.nparams = 0
		for _, sp := range d.spans {
			if sp.Kind == wire.SpanParam && s.text[sp.Start] == '?' {
				s.nparams++
			}
		}
		s.types, s.long = s.types[:0], s.long[:0]
		d.last = s
		d.ev.Text = s.text
		d.emit(wire.EvPrepare)
		d.send(myCmd{code: code, stmt: s})
	case comStmtExecute, comStmtBulkExecute:
		if len(p) < 5 {
			return errf("a malformed COM_STMT_EXECUTE")
		}
		id := binary.LittleEndian.Uint32(p[1:])
		s := d.stmt(id)
		end := wire.EndNone
		if s == nil || len(s.text) == 0 {
			d.tmp = strconv.AppendUint(append(d.tmp[:0], "EXECUTE stmt_"...), uint64(id), 10)
			d.ev.Text = d.tmp
			d.ev.ParamsHidden = true
		} else {
			d.ev.Text, end = s.text, s.end
			d.ev.End = s.end
			if code == comStmtExecute {
				d.ev.Params, d.ev.ParamsHidden = d.executeParams(s, p[5:])
			} else {
				d.ev.ParamsHidden = s.nparams > 0 // bulk parameters: not rendered
			}
		}
		d.emit(wire.EvStatement)
		d.send(myCmd{code: code, end: end})
	case comStmtSendLongData:
		if len(p) >= 7 {
			if s := d.stmt(binary.LittleEndian.Uint32(p[1:])); s != nil {
				if i := int(binary.LittleEndian.Uint16(p[5:])); i < s.nparams {
					if len(s.long) < s.nparams { // long data before the first execute
						s.long = append(s.long, make([]bool, s.nparams-len(s.long))...)
					}
					s.long[i] = true
				}
			}
		}
	case comStmtClose:
		if len(p) >= 5 {
			id := binary.LittleEndian.Uint32(p[1:])
			if s := d.stmts[id]; s != nil {
				delete(d.stmts, id)
				if d.last == s {
					d.last = nil
				}
				d.free = append(d.free, s)
			}
		}
	case comStmtReset:
		if len(p) >= 5 {
			if s := d.stmt(binary.LittleEndian.Uint32(p[1:])); s != nil {
				clear(s.long)
			}
		}
		// A reset readies a statement for its next execute, as a prepare does: while no
		// transaction is open it belongs to the transaction that execute starts.
		// mysql-connector-python's prepared cursor sends COM_STMT_PREPARE, COM_STMT_RESET
		// and COM_STMT_EXECUTE, each a round trip, for the first statement of every
		// transaction; without this the reset ended the run of preparing requests and the
		// prepare's round trip, with the reset's, fell between transactions.
		d.emit(wire.EvPrepare)
		d.send(myCmd{code: code})
	case comResetConnection, comChangeUser:
		clear(d.stmts)
		d.last = nil
		d.send(myCmd{code: code})
	case comBinlogDump, comBinlogDumpGTID, comRegisterSlave, comTableDump:
		return errf("a replication command (0x%02x)", code)
	case comMulti:
		return errf("MariaDB's COM_MULTI")
	case comInitDB, comFieldList, comStatistics, comProcessInfo, comStmtFetch, comSetOption,
		0x05, 0x06, 0x07, 0x08, 0x0c, 0x0d, 0x0e: // CREATE_DB, DROP_DB, REFRESH, SHUTDOWN, PROCESS_KILL, DEBUG, PING
		d.send(myCmd{code: code})
	default:
		return errf("unknown command 0x%02x", code)
	}
	return nil
}

// txControl is wire.TxControl, looking into MariaDB's compound statements (BEGIN NOT
// ATOMIC stmt; ... END, dblat's batches), whose last COMMIT or ROLLBACK ends the
// transaction.
func txControl(stmt []byte, lex wire.Lexicon) wire.End {
	if !bytes.EqualFold(wire.FirstWord(stmt, lex), []byte("BEGIN")) {
		return wire.TxControl(stmt, lex)
	}
	rest := atomicBody(stmt, lex)
	if rest == nil {
		return wire.EndNone
	}
	end := wire.EndNone
	for {
		var st []byte
		st, rest = wire.NextStatement(rest, lex)
		if st == nil {
			return end
		}
		if bytes.EqualFold(wire.FirstWord(st, lex), []byte("END")) {
			continue // the compound statement's END
		}
		if e := wire.TxControl(st, lex); e != wire.EndNone {
			end = e
		}
	}
}

// atomicBody returns what follows a compound statement's BEGIN [NOT] ATOMIC, or nil when
// stmt (which begins with BEGIN) is not one.
func atomicBody(stmt []byte, lex wire.Lexicon) []byte {
	l := sqllex.New(stmt, lex)
	words := 0
	for t := l.Next(); t.Kind != sqllex.EOF; t = l.Next() {
		if t.Kind.Blank() {
			continue
		}
		if t.Kind != sqllex.Word {
			return nil
		}
		w := stmt[t.Start:t.End]
		switch {
		case words == 0: // BEGIN
		case bytes.EqualFold(w, []byte("ATOMIC")):
			return stmt[t.End:]
		case words == 1 && bytes.EqualFold(w, []byte("NOT")):
		default:
			return nil
		}
		words++
	}
	return nil
}

// send reports a request and queues its command for the server's answer.
func (d *myDecoder) send(c myCmd) {
	if len(d.cmds) == 0 {
		d.startResponse(c.code)
	}
	d.cmds = append(d.cmds, c)
	d.emit(wire.EvSent)
}

func (d *myDecoder) startResponse(code byte) {
	d.failed = false
	d.answer = wire.Reply{Known: true}
	switch code {
	case comFieldList:
		d.rs = rsFieldList
	case comStatistics:
		d.rs = rsOne
	case comChangeUser:
		d.rs = rsAuth
	case comStmtFetch:
		d.rs = rsRows // a cursor's rows, without a column count or definitions
	default:
		d.rs = rsFirst
	}
}

func (d *myDecoder) newStmt() *myStmt {
	if n := len(d.free); n > 0 {
		s := d.free[n-1]
		d.free = d.free[:n-1]
		return s
	}
	return &myStmt{}
}

// stmt returns the prepared statement id, or the last one prepared for 0xffffffff.
func (d *myDecoder) stmt(id uint32) *myStmt {
	if id == math.MaxUint32 {
		return d.last
	}
	return d.stmts[id]
}

// queryText returns a COM_QUERY's text, after the query attributes a client sends with
// CLIENT_QUERY_ATTRIBUTES (MySQL 8.0.23+: a parameter count, a set count, then, for a
// count above 0, a null bitmap, a types-bound flag, types and names, and values).
func (d *myDecoder) queryText(p []byte) ([]byte, bool) {
	if d.caps&capQueryAttributes == 0 {
		return p, true
	}
	n, p, ok := lenenc(p)
	if !ok {
		return nil, false
	}
	if _, p, ok = lenenc(p); !ok {
		return nil, false
	}
	if n == 0 {
		return p, true
	}
	if n > 1<<16 {
		return nil, false
	}
	nb := int(n+7) / 8
	if len(p) < nb+1 {
		return nil, false
	}
	nulls, bound := p[:nb], p[nb]
	p = p[nb+1:]
	if bound != 1 {
		return nil, false
	}
	types := make([]uint16, 0, 8)
	for range n {
		if len(p) < 2 {
			return nil, false
		}
		types = append(types, binary.LittleEndian.Uint16(p))
		var l uint64
		if l, p, ok = lenenc(p[2:]); !ok || l > uint64(len(p)) {
			return nil, false
		}
		p = p[l:]
	}
	for i, t := range types {
		if nulls[i/8]&(1<<(i%8)) != 0 {
			continue
		}
		var ok bool
		if _, p, ok = skipValue(p, byte(t)); !ok {
			return nil, false
		}
	}
	return p, true
}

// executeParams renders a COM_STMT_EXECUTE's parameter values (p: after the statement id):
// flags (1), iteration count (4), then, for a statement with parameters, a null bitmap, a
// types-bound flag, the types (2 bytes each, sent again or remembered from the last time)
// and the values in the binary protocol's encodings.
func (d *myDecoder) executeParams(s *myStmt, p []byte) ([]wire.Param, bool) {
	if len(p) < 5 {
		return nil, s.nparams > 0
	}
	flags := p[0]
	p = p[5:]
	n := s.nparams
	attrs := d.caps&capQueryAttributes != 0
	if attrs && (n > 0 || flags&0x08 != 0) { // PARAMETER_COUNT_AVAILABLE
		c, rest, ok := lenenc(p)
		if !ok || c > 1<<16 {
			return nil, true
		}
		n, p = int(c), rest
	}
	if n == 0 {
		return nil, false
	}
	nb := (n + 7) / 8
	if len(p) < nb+1 {
		return nil, true
	}
	nulls, bound := p[:nb], p[nb]
	p = p[nb+1:]
	if bound == 1 {
		s.types = s.types[:0]
		for range n {
			if len(p) < 2 {
				return nil, true
			}
			s.types = append(s.types, p[0], p[1])
			p = p[2:]
			if attrs {
				l, rest, ok := lenenc(p)
				if !ok || l > uint64(len(rest)) {
					return nil, true
				}
				p = rest[l:]
			}
		}
	}
	if len(s.types) < 2*n {
		return nil, true // types never seen
	}
	if len(s.long) < n {
		s.long = append(s.long, make([]bool, n-len(s.long))...)
	}
	d.params, d.pbuf, d.offs = d.params[:0], d.pbuf[:0], d.offs[:0]
	hidden := false
	for i := range n {
		switch {
		case s.long[i]: // sent as long data, whatever the null bitmap says (libmariadb sets it)
			hidden = true
			d.params = append(d.params, wire.Param{})
			d.offs = append(d.offs, [2]int{len(d.pbuf), len(d.pbuf)})
			continue
		case nulls[i/8]&(1<<(i%8)) != 0:
			d.params = append(d.params, wire.Param{Null: true})
			d.offs = append(d.offs, [2]int{})
			continue
		}
		v, rest, ok := skipValue(p, s.types[2*i])
		if !ok {
			hidden = true
			break
		}
		p = rest
		start := len(d.pbuf)
		d.pbuf = renderValue(d.pbuf, s.types[2*i], s.types[2*i+1]&0x80 != 0, v)
		d.params = append(d.params, wire.Param{})
		d.offs = append(d.offs, [2]int{start, len(d.pbuf)})
	}
	for i, o := range d.offs {
		if !d.params[i].Null {
			d.params[i].Text = d.pbuf[o[0]:o[1]]
		}
	}
	clear(s.long)
	return d.params, hidden
}

// MySQL column types (enum_field_types).
const (
	typeDecimal    = 0
	typeTiny       = 1
	typeShort      = 2
	typeLong       = 3
	typeFloat      = 4
	typeDouble     = 5
	typeNull       = 6
	typeTimestamp  = 7
	typeLongLong   = 8
	typeInt24      = 9
	typeDate       = 10
	typeTime       = 11
	typeDateTime   = 12
	typeYear       = 13
	typeNewDate    = 14
	typeVarchar    = 15
	typeBit        = 16
	typeJSON       = 245
	typeNewDecimal = 246
	typeGeometry   = 255
)

// skipValue cuts one binary-protocol value of type t off p.
func skipValue(p []byte, t byte) (v, rest []byte, ok bool) {
	size := 0
	switch t {
	case typeNull:
		return nil, p, true
	case typeTiny:
		size = 1
	case typeShort, typeYear:
		size = 2
	case typeLong, typeInt24, typeFloat:
		size = 4
	case typeLongLong, typeDouble:
		size = 8
	case typeDate, typeDateTime, typeTimestamp, typeTime, typeNewDate:
		if len(p) < 1 {
			return nil, nil, false
		}
		size = 1 + int(p[0])
	case typeDecimal, typeVarchar, typeBit, typeJSON, typeNewDecimal, 247, 248, 249, 250, 251, 252, 253, 254, typeGeometry:
		l, r, ok := lenenc(p)
		if !ok || l > uint64(len(r)) {
			return nil, nil, false
		}
		return r[:l], r[l:], true
	default:
		return nil, nil, false
	}
	if len(p) < size {
		return nil, nil, false
	}
	return p[:size], p[size:], true
}

// renderValue appends the text of a binary-protocol value.
func renderValue(dst []byte, t byte, unsigned bool, v []byte) []byte {
	if len(v) > maxParamText {
		v = v[:maxParamText]
	}
	switch t {
	case typeTiny:
		if unsigned {
			return strconv.AppendUint(dst, uint64(v[0]), 10)
		}
		return strconv.AppendInt(dst, int64(int8(v[0])), 10)
	case typeShort, typeYear:
		if unsigned {
			return strconv.AppendUint(dst, uint64(binary.LittleEndian.Uint16(v)), 10)
		}
		return strconv.AppendInt(dst, int64(int16(binary.LittleEndian.Uint16(v))), 10)
	case typeLong, typeInt24:
		if unsigned {
			return strconv.AppendUint(dst, uint64(binary.LittleEndian.Uint32(v)), 10)
		}
		return strconv.AppendInt(dst, int64(int32(binary.LittleEndian.Uint32(v))), 10)
	case typeLongLong:
		if unsigned {
			return strconv.AppendUint(dst, binary.LittleEndian.Uint64(v), 10)
		}
		return strconv.AppendInt(dst, int64(binary.LittleEndian.Uint64(v)), 10)
	case typeFloat:
		return strconv.AppendFloat(dst, float64(math.Float32frombits(binary.LittleEndian.Uint32(v))), 'g', -1, 32)
	case typeDouble:
		return strconv.AppendFloat(dst, math.Float64frombits(binary.LittleEndian.Uint64(v)), 'g', -1, 64)
	case typeDate, typeDateTime, typeTimestamp, typeNewDate:
		return appendDateTime(dst, t, v[1:])
	case typeTime:
		return appendTimeValue(dst, v[1:])
	}
	// Strings and binary strings: as sent when printable, 0x and hex otherwise (drivers
	// send []byte as a string type).
	for _, c := range v {
		if c < ' ' && c != '\t' && c != '\n' && c != '\r' || c == 0x7f {
			return hex.AppendEncode(append(dst, "0x"...), v)
		}
	}
	return append(dst, v...)
}

// appendDateTime renders DATE, DATETIME and TIMESTAMP: year (2), month, day, [hour,
// minute, second, [microseconds (4)]].
func appendDateTime(dst []byte, t byte, v []byte) []byte {
	if len(v) < 4 {
		if t == typeDate {
			return append(dst, "0000-00-00"...)
		}
		return append(dst, "0000-00-00 00:00:00"...)
	}
	dst = pad(dst, int(binary.LittleEndian.Uint16(v)), 4)
	dst = pad(append(dst, '-'), int(v[2]), 2)
	dst = pad(append(dst, '-'), int(v[3]), 2)
	if t == typeDate {
		return dst
	}
	if len(v) < 7 {
		return append(dst, " 00:00:00"...)
	}
	dst = pad(append(dst, ' '), int(v[4]), 2)
	dst = pad(append(dst, ':'), int(v[5]), 2)
	dst = pad(append(dst, ':'), int(v[6]), 2)
	if len(v) >= 11 {
		dst = pad(append(dst, '.'), int(binary.LittleEndian.Uint32(v[7:])), 6)
	}
	return dst
}

// appendTimeValue renders TIME: negative (1), days (4), hour, minute, second,
// [microseconds (4)].
func appendTimeValue(dst []byte, v []byte) []byte {
	if len(v) < 8 {
		return append(dst, "00:00:00"...)
	}
	if v[0] == 1 {
		dst = append(dst, '-')
	}
	dst = pad(dst, int(binary.LittleEndian.Uint32(v[1:]))*24+int(v[5]), 2)
	dst = pad(append(dst, ':'), int(v[6]), 2)
	dst = pad(append(dst, ':'), int(v[7]), 2)
	if len(v) >= 12 {
		dst = pad(append(dst, '.'), int(binary.LittleEndian.Uint32(v[8:])), 6)
	}
	return dst
}

func pad(dst []byte, n, width int) []byte {
	s := len(dst)
	dst = strconv.AppendInt(dst, int64(n), 10)
	for len(dst)-s < width {
		dst = append(dst[:s+1], dst[s:]...)
		dst[s] = '0'
	}
	return dst
}

// lenenc reads a length-encoded integer.
func lenenc(p []byte) (uint64, []byte, bool) {
	if len(p) == 0 {
		return 0, nil, false
	}
	switch c := p[0]; {
	case c < 0xfb:
		return uint64(c), p[1:], true
	case c == 0xfc && len(p) >= 3:
		return uint64(binary.LittleEndian.Uint16(p[1:])), p[3:], true
	case c == 0xfd && len(p) >= 4:
		return uint64(p[1]) | uint64(p[2])<<8 | uint64(p[3])<<16, p[4:], true
	case c == 0xfe && len(p) >= 9:
		return binary.LittleEndian.Uint64(p[1:]), p[9:], true
	}
	return 0, nil, false
}

// Message handles a server packet.
func (s *myServer) Message(h, p []byte) error {
	d := s.d
	n := int(h[0]) | int(h[1])<<8 | int(h[2])<<16
	if d.sCont {
		d.sCont = n == maxPacket
		return nil
	}
	d.sCont = n == maxPacket
	switch d.phase {
	case phGreeting:
		return d.greeting(h[3], p)
	case phHandshake:
		return errf("the server sent a packet before the client's handshake response")
	case phAuth:
		if len(p) > 0 {
			switch p[0] {
			case 0x00:
				d.phase = phCommand
			case 0xff:
				d.ev.Reason = "the server refused the login"
				d.emit(wire.EvNote)
			}
		}
		return nil
	}
	if len(d.cmds) == 0 {
		if len(p) > 0 && p[0] == 0xff {
			return nil // an error before the server closes the connection (killed, timed out)
		}
		return errf("a server packet (0x%02x) that answers no command", firstByte(p))
	}
	if len(p) == 0 {
		return errf("an empty server packet")
	}
	return d.response(n, p)
}

func firstByte(p []byte) byte {
	if len(p) == 0 {
		return 0
	}
	return p[0]
}

// greeting reads the server's initial handshake.
func (d *myDecoder) greeting(seq byte, p []byte) error {
	if seq != 0 || len(p) == 0 {
		return errf("a greeting with sequence id %d", seq)
	}
	if p[0] == 0xff {
		d.ev.Reason = "the server refused the connection before its greeting"
		d.emit(wire.EvNote)
		d.phase = phHandshake
		return nil
	}
	if p[0] != 10 {
		return errf("a greeting of protocol version %d, not 10", p[0])
	}
	off, ok := greetingCapsOffset(p)
	if !ok {
		return errf("a greeting of %d bytes", len(p))
	}
	caps := uint64(binary.LittleEndian.Uint16(p[off:]))
	if len(p) >= off+2+1+2+2 {
		caps |= uint64(binary.LittleEndian.Uint16(p[off+5:])) << 16
	}
	// MariaDB's extended capabilities: the last 4 of the 10 reserved bytes after the auth
	// data length, when the server clears CLIENT_MYSQL.
	if e := off + 2 + 1 + 2 + 2 + 1 + 6; caps&capLongPassword == 0 && len(p) >= e+4 {
		caps |= uint64(binary.LittleEndian.Uint32(p[e:])) << 32
	}
	d.serverCaps = caps
	d.phase = phHandshake
	if d.declined {
		d.ev.Reason = "the proxy declined TLS (cleared CLIENT_SSL in the server's greeting)"
		d.emit(wire.EvNote)
	}
	return nil
}

// response handles a packet of the answer to the oldest command.
func (d *myDecoder) response(n int, p []byte) error {
	return responseStates[d.rs](d, n, p)
}

// responseStates read a server packet in each state of a response (rs…): what the packet
// may be there, and which state comes next.
var responseStates = [...]func(d *myDecoder, n int, p []byte) error{
	rsFirst:         (*myDecoder).firstPacket,
	rsInfile:        (*myDecoder).firstPacket,
	rsColumns:       (*myDecoder).columnDef,
	rsColumnsEOF:    (*myDecoder).columnsEOF,
	rsRows:          (*myDecoder).row,
	rsPrepParams:    (*myDecoder).prepareDef,
	rsPrepParamsEOF: (*myDecoder).prepareDef,
	rsPrepCols:      (*myDecoder).prepareDef,
	rsPrepColsEOF:   (*myDecoder).prepareDef,
	rsFieldList:     (*myDecoder).fieldList,
	rsOne:           func(d *myDecoder, _ int, _ []byte) error { d.complete(wire.StatusUnknown); return nil },
	rsAuth:          (*myDecoder).authAnswer,
}

// deprecateEOF reports whether OK packets replace the EOFs (CLIENT_DEPRECATE_EOF).
func (d *myDecoder) deprecateEOF() bool { return d.caps&capDeprecateEOF != 0 }

// isEOF reports whether the packet p of length n is an EOF packet.
func isEOF(n int, p []byte) bool { return p[0] == 0xfe && n < 9 }

// firstPacket reads the first packet of a result (or the answer after a LOCAL INFILE
// upload): an OK, ERR or EOF that ends it (unless more results follow), a PREPARE_OK, the
// request for a local file, or a result set's column count.
func (d *myDecoder) firstPacket(n int, p []byte) error {
	c := d.cmds[0]
	switch {
	case p[0] == 0x00 && c.code == comStmtPrepare && d.rs == rsFirst:
		return d.prepareOK(p)
	case p[0] == 0x00 && n >= 7:
		if rows, _, ok := lenenc(p[1:]); ok {
			d.answer.Affected += int64(rows)
		}
		d.endResult(okStatus(p, d.caps))
	case p[0] == 0xff:
		return d.errPacket(p)
	case isEOF(n, p):
		d.endResult(eofStatus(p, d.caps))
	case p[0] == 0xfb && c.code == comQuery && d.rs == rsFirst:
		d.rs = rsInfile
		d.uploading = true
	case d.rs == rsInfile:
		return errf("a packet (0x%02x) after a LOCAL INFILE upload", p[0])
	default:
		cols, rest, ok := lenenc(p)
		if !ok || cols == 0 || cols > 1<<16 {
			return errf("a result set's column count packet (0x%02x)", p[0])
		}
		if d.caps&(capMariaDBCacheMeta|capOptionalMetadata) != 0 && len(rest) > 0 && rest[0] == 0 {
			// Metadata skipped (MariaDB: the client has it from an earlier execute; MySQL:
			// resultset_metadata=NONE): no definitions, but the EOF that would end them
			// still comes without CLIENT_DEPRECATE_EOF.
			d.rs = d.afterColumns()
			return nil
		}
		d.left = int(cols)
		d.rs = rsColumns
	}
	return nil
}

// endResult ends a result with its status: the response completes, unless more results
// follow (SERVER_MORE_RESULTS_EXISTS).
func (d *myDecoder) endResult(st wire.Status, more bool) {
	if more {
		d.rs = rsFirst
		return
	}
	d.complete(st)
}

// afterColumns is the state after a result set's column definitions: its rows, or the EOF
// that ends the definitions without CLIENT_DEPRECATE_EOF.
func (d *myDecoder) afterColumns() int {
	if d.deprecateEOF() {
		return rsRows
	}
	return rsColumnsEOF
}

// prepareOK reads COM_STMT_PREPARE's PREPARE_OK: the statement's id, its column and
// parameter counts, whose definitions follow (none with optional metadata off).
func (d *myDecoder) prepareOK(p []byte) error {
	if len(p) < 9 {
		return errf("a PREPARE_OK of %d bytes", len(p))
	}
	id := binary.LittleEndian.Uint32(p[1:])
	d.answer.StmtID, d.answer.HasStmtID = id, true
	cols, params := int(binary.LittleEndian.Uint16(p[5:])), int(binary.LittleEndian.Uint16(p[7:]))
	st := d.cmds[0].stmt
	st.nparams = params
	if d.caps&capOptionalMetadata != 0 && len(p) >= 13 && p[12] == 0 {
		cols, params = 0, 0 // no definitions follow
	}
	if d.stmts == nil {
		d.stmts = map[uint32]*myStmt{}
	}
	if old := d.stmts[id]; old != nil && old != st {
		if d.last == old {
			d.last = nil
		}
		d.free = append(d.free, old)
	}
	d.stmts[id] = st
	d.cmds[0].stmt = nil
	d.pcols, d.pparams = cols, params
	d.left = params
	d.rs = rsPrepParams
	return d.prepareNext(d.deprecateEOF())
}

// columnDef counts a result set's column definition.
func (d *myDecoder) columnDef(int, []byte) error {
	if d.left--; d.left == 0 {
		d.rs = d.afterColumns()
	}
	return nil
}

// columnsEOF reads the EOF after a result set's column definitions: the rows follow, or
// (a cursor) COM_STMT_FETCH asks for them.
func (d *myDecoder) columnsEOF(n int, p []byte) error {
	eof := isEOF(n, p)
	if d.eofUnknown {
		// A resumed connection's first result set tells: an EOF after the column
		// definitions, or (CLIENT_DEPRECATE_EOF) a row or the OK that ends them.
		d.eofUnknown = false
		if !eof || n != 5 {
			d.caps |= capDeprecateEOF
			d.rs = rsRows
			return d.row(n, p)
		}
	}
	if !eof || len(p) < 5 {
		return errf("a packet (0x%02x) where the EOF after the column definitions belongs", p[0])
	}
	st := binary.LittleEndian.Uint16(p[3:])
	if d.caps&capProtocol41 != 0 && st&statusCursorExists != 0 {
		d.complete(statusOf(st)) // a cursor: COM_STMT_FETCH asks for the rows
		return nil
	}
	d.rs = rsRows
	return nil
}

// row reads a row, or the EOF, OK or ERR that ends the rows.
func (d *myDecoder) row(n int, p []byte) error {
	deprecate := d.deprecateEOF()
	switch {
	case p[0] == 0xff:
		return d.errPacket(p)
	case p[0] == 0xfe && (isEOF(n, p) || deprecate && n < maxPacket):
		if deprecate {
			d.endResult(okStatus(p, d.caps))
		} else {
			d.endResult(eofStatus(p, d.caps))
		}
	default:
		d.answer.Returned++
	}
	return nil
}

// prepareDef reads PREPARE_OK's parameter and column definitions and the EOFs after them.
func (d *myDecoder) prepareDef(n int, p []byte) error {
	if p[0] == 0xff {
		return d.errPacket(p)
	}
	switch d.rs {
	case rsPrepParams, rsPrepCols:
		d.left--
	case rsPrepParamsEOF:
		if !isEOF(n, p) {
			return errf("a packet (0x%02x) where the EOF after the parameter definitions belongs", p[0])
		}
		d.rs, d.left = rsPrepCols, d.pcols
	case rsPrepColsEOF:
		if !isEOF(n, p) {
			return errf("a packet (0x%02x) where the EOF after the column definitions belongs", p[0])
		}
		d.complete(wire.StatusUnknown)
		return nil
	}
	return d.prepareNext(d.deprecateEOF())
}

// fieldList reads COM_FIELD_LIST's column definitions up to their EOF.
func (d *myDecoder) fieldList(n int, p []byte) error {
	switch {
	case p[0] == 0xff:
		return d.errPacket(p)
	case isEOF(n, p):
		d.complete(wire.StatusUnknown)
	}
	return nil
}

// authAnswer reads COM_CHANGE_USER's authentication exchange up to its OK or ERR.
func (d *myDecoder) authAnswer(_ int, p []byte) error {
	switch p[0] {
	case 0x00:
		st, _ := okStatus(p, d.caps)
		d.complete(st)
	case 0xff:
		return d.errPacket(p)
	}
	return nil
}

// prepareNext moves through PREPARE_OK's parameter and column definitions, each part
// followed by an EOF without CLIENT_DEPRECATE_EOF when it has any, and completes the
// response after the last.
func (d *myDecoder) prepareNext(deprecate bool) error {
	for {
		switch d.rs {
		case rsPrepParams:
			if d.left > 0 {
				return nil
			}
			if d.pparams > 0 && !deprecate {
				d.rs = rsPrepParamsEOF
				return nil
			}
			d.rs, d.left = rsPrepCols, d.pcols
		case rsPrepCols:
			if d.left > 0 {
				return nil
			}
			if d.pcols > 0 && !deprecate {
				d.rs = rsPrepColsEOF
				return nil
			}
			d.complete(wire.StatusUnknown)
			return nil
		default:
			return nil
		}
	}
}

// errPacket handles an ERR packet: a progress report (MariaDB, code 0xffff) goes on; any
// other ends the response, a deadlock having rolled the transaction back.
func (d *myDecoder) errPacket(p []byte) error {
	if len(p) < 3 {
		return errf("an ERR packet of %d bytes", len(p))
	}
	code := binary.LittleEndian.Uint16(p[1:])
	if code == 0xffff && d.caps&capMariaDBProgress != 0 {
		return nil
	}
	d.failed = true
	d.answer.Code = strconv.FormatUint(uint64(code), 10)
	st := wire.StatusUnknown
	if code == erLockDeadlock { // InnoDB rolled the transaction back
		st = wire.StatusIdle
	}
	d.complete(st)
	return nil
}

// complete ends the response to the oldest command.
func (d *myDecoder) complete(st wire.Status) {
	c := d.cmds[0]
	if c.stmt != nil { // a failed prepare: statement id -1 names none until the next
		if d.last == c.stmt {
			d.last = nil
		}
		d.free = append(d.free, c.stmt)
	}
	copy(d.cmds, d.cmds[1:])
	d.cmds = d.cmds[:len(d.cmds)-1]
	d.ev.Status, d.ev.End, d.ev.Failed, d.ev.Reply = st, c.end, d.failed, d.answer
	if d.failed {
		d.ev.End = wire.EndNone
	}
	d.failed = false
	d.answer = wire.Reply{Known: true}
	d.emit(wire.EvCompleted)
	if len(d.cmds) > 0 {
		d.startResponse(d.cmds[0].code)
	}
}

// okStatus reads an OK packet's status flags: header, affected rows and last insert id
// (length-encoded), then status (2) with CLIENT_PROTOCOL_41 or CLIENT_TRANSACTIONS.
func okStatus(p []byte, caps uint64) (wire.Status, bool) {
	_, r, ok := lenenc(p[1:])
	if ok {
		_, r, ok = lenenc(r)
	}
	if !ok || len(r) < 2 || caps&(capProtocol41|capTransactions) == 0 {
		return wire.StatusUnknown, false
	}
	st := binary.LittleEndian.Uint16(r)
	return statusOf(st), st&statusMoreResults != 0
}

// eofStatus reads an EOF packet's status flags: header, warnings (2), status (2).
func eofStatus(p []byte, caps uint64) (wire.Status, bool) {
	if len(p) < 5 || caps&capProtocol41 == 0 {
		return wire.StatusUnknown, false
	}
	st := binary.LittleEndian.Uint16(p[3:])
	return statusOf(st), st&statusMoreResults != 0
}

func statusOf(st uint16) wire.Status {
	if st&statusInTrans != 0 {
		return wire.StatusInTx
	}
	return wire.StatusIdle
}

// ResumeScanner implements wire.Resumer: a connection whose start was not seen is followed
// from the end of a server chunk whose packets, read from its start, end exactly with an OK
// packet (or an EOF packet) whose status flags say that no transaction is open and no
// result follows: the server has answered the last command and waits for the next, which
// the client sends as a packet of sequence id 0. The capabilities the handshake would have
// told are assumed to be those of the 4.1 protocol with transactions, and whether result
// sets end with an EOF packet (no CLIENT_DEPRECATE_EOF) is learned from the server's
// packets on the way where they show it, else from the first result set after the point
// (what follows its column definitions). Statements prepared before are not known: their executions are
// reported as EXECUTE stmt_N, without their values.
func (myWire) ResumeScanner() wire.ResumeScanner { return &myResume{} }

// myResume finds a MySQL resume point.
type myResume struct {
	eof, okFE bool // seen: a 5-byte EOF packet (no CLIENT_DEPRECATE_EOF); an OK packet with the 0xfe header
}

// resumeCaps are the capabilities a resumed decoder takes as in effect.
const resumeCaps = capProtocol41 | capTransactions | capMultiStatements

func (r *myResume) Chunk(from wire.Direction, b []byte) bool {
	if from != wire.Server {
		return false
	}
	var last []byte
	for len(b) > 0 {
		if len(b) < 4 {
			return false
		}
		n := int(b[0]) | int(b[1])<<8 | int(b[2])<<16
		if len(b) < 4+n || n == 0 {
			return false // the chunk does not start at a packet, or ends inside one
		}
		last, b = b[4:4+n], b[4+n:]
		if last[0] == 0xfe && n == 5 {
			r.eof = true
		} else if last[0] == 0xfe && n >= 7 && n < maxPacket {
			r.okFE = true
		}
	}
	var st wire.Status
	var more bool
	switch {
	case last == nil:
		return false
	case last[0] == 0x00 && len(last) >= 7:
		st, more = okStatus(last, resumeCaps)
	case last[0] == 0xfe && len(last) == 5:
		st, more = eofStatus(last, resumeCaps)
	case last[0] == 0xfe && len(last) >= 7:
		st, more = okStatus(last, resumeCaps)
	default:
		return false
	}
	return st == wire.StatusIdle && !more
}

// Decoder implements wire.ResumeScanner.
func (r *myResume) Decoder(sink wire.Sink) wire.Decoder {
	d := &myDecoder{sink: sink, phase: phCommand, caps: resumeCaps}
	switch {
	case r.okFE:
		d.caps |= capDeprecateEOF
	case !r.eof:
		d.eofUnknown = true
	}
	d.serverCaps = d.caps
	d.cfr.d, d.sfr.d = d, d
	return d
}
