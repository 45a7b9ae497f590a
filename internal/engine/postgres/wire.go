package postgres

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/wire"
)

// WireProtocol implements engine.WireProtocol: PostgreSQL's frontend/backend protocol 3.x
// (protocol.html in the PostgreSQL documentation), decoded from the bytes a proxy forwards.
func (Engine) WireProtocol() wire.Protocol { return pgWire{} }

type pgWire struct{}

func (pgWire) Name() string { return "PostgreSQL" }

func (pgWire) Lexicon() wire.Lexicon { return wire.Lexicon{DollarQuotes: true, NestedComments: true} }

// Startup codes of the untyped first messages (protocol.html, "Message Formats"). pgproto3
// exports the protocol versions but not the request codes.
const (
	sslRequestCode    = 80877103 // 1234 << 16 | 5679
	gssEncRequestCode = 80877104 // 1234 << 16 | 5680
	cancelRequestCode = 80877102 // 1234 << 16 | 5678
)

// Limits of what the decoder accepts or keeps.
const (
	// maxStartup is the server's limit on a startup packet (MAX_STARTUP_PACKET_LENGTH).
	maxStartup = 10000
	// maxMessage is the server's limit on a message (PQ_LARGE_MESSAGE_LIMIT, MaxAllocSize - 1).
	maxMessage = 1<<30 - 1
	// keepText is how much of a Query or Parse the decoder keeps: statements longer than
	// 1 MiB are normalised from their first MiB.
	keepText = 1 << 20
	// keepSmall is how much of a message the decoder keeps when it needs a few fields of it
	// (Execute, Close, CommandComplete, ErrorResponse).
	keepSmall = 64 << 10
	// maxParamText bounds the rendered text of one parameter value.
	maxParamText = 64 << 10
)

// Sniff recognises a PostgreSQL client's first message: a startup packet (protocol 3.0 or
// 3.2), an SSLRequest, a GSSENCRequest or a CancelRequest. The server never speaks first.
func (pgWire) Sniff(client, server []byte) wire.Verdict {
	if len(client) < 8 {
		if len(server) > 0 {
			return wire.No
		}
		return wire.NeedMore
	}
	n := binary.BigEndian.Uint32(client)
	if n < 8 || n > maxStartup {
		return wire.No
	}
	switch binary.BigEndian.Uint32(client[4:]) {
	case pgproto3.ProtocolVersion30, pgproto3.ProtocolVersion32:
		return wire.Yes
	case sslRequestCode, gssEncRequestCode:
		if n == 8 {
			return wire.Yes
		}
	case cancelRequestCode:
		if n == 16 {
			return wire.Yes
		}
	}
	return wire.No
}

// NewDecoder returns a decoder for one connection; it declines TLS (see Intercept).
func (pgWire) NewDecoder(sink wire.Sink) wire.Decoder {
	d := &pgDecoder{sink: sink, startup: true}
	d.cfr.d, d.sfr.d = d, d
	return d
}

// pgDecoder follows one connection. It frames both directions itself (wire.Framer) so
// that a message that arrives whole in one chunk is read in place; pgproto3 decodes the
// startup packet and the server messages whose fields it needs (ReadyForQuery,
// CommandComplete, ErrorResponse), whose Decode methods do not allocate in steady state.
// The client's Query, Parse, Bind and Execute are read by hand: pgproto3 decodes them into
// new strings and slices per message, which on a proxy would be allocations per statement.
type pgDecoder struct {
	sink    wire.Sink
	ev      wire.Event
	stopped bool
	cf, sf  wire.Framer
	cfr     pgClient
	sfr     pgServer

	startup      bool // the client's next message is an untyped startup packet
	tlsWait      byte // 'S' or 'G': a forwarded SSLRequest or GSSENCRequest awaits the server's one byte
	declined     bool // the proxy answered a TLS request with N
	afterDecline bool // the client sent something after that
	startupRFQ   bool // the next ReadyForQuery ends the startup: it answers no request
	cancel       bool // a CancelRequest connection

	stmts    map[string]*pgStmt
	unnamedS pgStmt
	portals  map[string]*pgPortal
	unnamedP pgPortal
	unknown  pgStmt // a statement name that no Parse defined

	// describes are the statements a Describe asked the server about, in order, with the
	// Sync segment each was sent in: the server's ParameterDescription gives their
	// parameter types, which clients (pgx) leave unspecified in Parse but use for binary
	// parameters. A segment that fails gets no more answers up to its ReadyForQuery.
	describes []pgDescribe
	cseg      int // segments the client ended (Sync, Query, FunctionCall)
	sseg      int // segments the server ended (ReadyForQuery)

	end    wire.End
	failed bool
	rfq    pgproto3.ReadyForQuery
	cc     pgproto3.CommandComplete
	answer [1]byte
	fn     []byte
}

type pgDescribe struct {
	seg  int
	stmt *pgStmt
}

type pgStmt struct {
	text []byte
	end  wire.End // the statement only ends a transaction (wire.TxControl)
	oids []uint32
}

type pgPortal struct {
	stmt     *pgStmt
	executed bool
	buf      []byte // rendered parameter values
	params   []wire.Param
	offs     [][2]int // params[i].Text = buf[offs[i][0]:offs[i][1]] once buf stops growing
	hidden   bool
}

type pgClient struct{ d *pgDecoder }
type pgServer struct{ d *pgDecoder }

// errf makes a decoding error (the decoder's EvCannotFollow reason).
func errf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// emit reports the event d.ev holds as one of kind k.
func (d *pgDecoder) emit(k wire.EventKind) { wire.Send(d.sink, &d.ev, k) }

// fail reports, once, that the decoder cannot follow the connection.
func (d *pgDecoder) fail(reason string) { wire.Stop(d.sink, &d.ev, &d.stopped, "PostgreSQL", reason) }

// Intercept implements wire.Interceptor: an SSLRequest or GSSENCRequest is answered 'N' by
// the proxy itself and not forwarded, so that a client that prefers encryption (libpq's
// default sslmode=prefer) goes on in clear. A client that requires it closes the
// connection; Close then says so.
func (d *pgDecoder) Intercept(from wire.Direction, b []byte) wire.Intercept {
	if from != wire.Client || !d.startup || d.stopped || d.cf.Partial() || len(b) != 8 ||
		binary.BigEndian.Uint32(b) != 8 {
		return wire.Intercept{}
	}
	switch binary.BigEndian.Uint32(b[4:]) {
	case sslRequestCode, gssEncRequestCode:
		d.declined = true
		d.answer[0] = 'N'
		return wire.Intercept{Action: wire.Answer, Bytes: d.answer[:]}
	}
	return wire.Intercept{}
}

// ClientData implements wire.Decoder.
func (d *pgDecoder) ClientData(b []byte, _ int64) {
	if d.stopped {
		return
	}
	if d.declined && !d.afterDecline {
		d.afterDecline = true
		d.ev.Reason = "the proxy declined TLS (answered N to the client's request); the client went on in clear"
		d.emit(wire.EvNote)
	}
	if d.tlsWait != 0 {
		d.fail("the client sent data before the server answered its TLS request")
		return
	}
	if err := d.cf.Feed(b, &d.cfr); err != nil {
		d.fail(err.Error())
	}
}

// ServerData implements wire.Decoder.
func (d *pgDecoder) ServerData(b []byte, _ int64) {
	if d.stopped || len(b) == 0 {
		return
	}
	if d.tlsWait != 0 {
		// The server answers a forwarded SSLRequest or GSSENCRequest with one byte.
		switch b[0] {
		case 'N':
			d.tlsWait = 0
			d.startup = true
			b = b[1:]
		case 'S', 'G':
			d.fail("the client and the server switched to TLS or GSSAPI encryption, which cannot be followed; connect with " +
				"sslmode=disable to be observed (dblat proxy declines TLS for a client that merely prefers it)")
			return
		case 'E':
			d.tlsWait = 0 // an old server's ErrorResponse: framed below
		default:
			d.fail("answer " + msgType(b[0]) + " to a TLS request")
			return
		}
	}
	if err := d.sf.Feed(b, &d.sfr); err != nil {
		d.fail(err.Error())
	}
}

// Close implements wire.Decoder.
func (d *pgDecoder) Close(int64) {
	switch {
	case d.stopped:
	case d.declined && !d.afterDecline:
		d.fail("the client closed the connection when the proxy declined TLS: it requires TLS (sslmode=require " +
			"or stricter); connect with sslmode=prefer or sslmode=disable to be observed")
	case d.cf.Partial() || d.sf.Partial() || d.tlsWait != 0:
		d.fail("the connection ended inside a message")
	}
}

func (c *pgClient) HeaderLen() int {
	if c.d.startup {
		return 4
	}
	return 5
}

func (c *pgClient) Body(h []byte) (int, int, error) {
	if c.d.startup {
		n := int(binary.BigEndian.Uint32(h))
		if n < 8 || n > maxStartup {
			return 0, 0, errf("a startup packet of %d bytes", n)
		}
		return n - 4, n - 4, nil
	}
	n, err := msgLen(h, "client")
	if err != nil {
		return 0, 0, err
	}
	switch h[0] {
	case 'Q', 'P', 'B':
		return n, keepText, nil
	case 'E', 'C', 'S', 'X', 'F', 'f', 'D':
		return n, keepSmall, nil
	case 'H', 'd', 'c', 'p':
		return n, 0, nil
	}
	return 0, 0, errf("unknown client message type %s", msgType(h[0]))
}

func (s *pgServer) HeaderLen() int { return 5 }

func (s *pgServer) Body(h []byte) (int, int, error) {
	n, err := msgLen(h, "server")
	if err != nil {
		return 0, 0, err
	}
	switch h[0] {
	case 'Z':
		return n, 1, nil
	case 'C', 'E', 't':
		return n, keepSmall, nil
	case 'R', 'K', 'S', 'T', 'D', 'N', 'A', 'I', '1', '2', '3', 'n', 's', 'G', 'H', 'W', 'd', 'c', 'V', 'v':
		return n, 0, nil
	}
	return 0, 0, errf("unknown server message type %s", msgType(h[0]))
}

func msgLen(h []byte, side string) (int, error) {
	n := int64(binary.BigEndian.Uint32(h[1:]))
	if n < 4 || n > maxMessage {
		return 0, errf("a %s message of type %s and length %d", side, msgType(h[0]), n)
	}
	return int(n - 4), nil
}

// msgType names a message type byte: 'Q', or 0xff when it is not printable.
func msgType(b byte) string {
	if b > ' ' && b < 0x7f {
		return fmt.Sprintf("%q", b)
	}
	return fmt.Sprintf("0x%02x", b)
}

// Message handles a client message.
func (c *pgClient) Message(h, body []byte) error {
	d := c.d
	if d.startup {
		return d.startupMessage(body)
	}
	switch h[0] {
	case 'Q':
		d.query(cstring(body))
	case 'P':
		return d.parse(body)
	case 'B':
		return d.bind(body)
	case 'E':
		name, _, ok := cut(body)
		if !ok {
			return errf("a malformed Execute")
		}
		p := d.portal(name, false)
		if p == nil || p.executed {
			return nil // a portal run again after PortalSuspended, or never bound
		}
		p.executed = true
		if wire.Blank(p.stmt.text, pgWire{}.Lexicon()) {
			return nil // an empty query: EmptyQueryResponse, no statement
		}
		d.ev.Text, d.ev.End = p.stmt.text, p.stmt.end
		d.ev.Params = p.params
		d.ev.ParamsHidden = p.hidden
		d.emit(wire.EvStatement)
	case 'S':
		d.cseg++
		d.emit(wire.EvSent)
	case 'D':
		if len(body) >= 2 && body[0] == 'S' {
			name, _, ok := cut(body[1:])
			if !ok {
				return errf("a malformed Describe")
			}
			st := &d.unnamedS
			if len(name) > 0 {
				if st = d.stmts[string(name)]; st == nil {
					return nil
				}
			}
			if len(d.describes) < 1024 {
				d.describes = append(d.describes, pgDescribe{d.cseg, st})
			}
		}
	case 'C':
		if len(body) < 2 {
			return errf("a malformed Close")
		}
		name, _, ok := cut(body[1:])
		if !ok {
			return errf("a malformed Close")
		}
		if body[0] == 'S' && len(name) > 0 {
			delete(d.stmts, string(name))
		} else if body[0] == 'P' && len(name) > 0 {
			delete(d.portals, string(name))
		}
	case 'F':
		// A fast-path function call (FunctionCall): one request, answered by
		// FunctionCallResponse and ReadyForQuery.
		if len(body) < 4 {
			return errf("a malformed FunctionCall")
		}
		d.fn = strconv.AppendUint(append(d.fn[:0], "FUNCTION CALL fn_"...), uint64(binary.BigEndian.Uint32(body)), 10)
		d.ev.Text = d.fn
		d.emit(wire.EvStatement)
		d.cseg++
		d.emit(wire.EvSent)
	}
	return nil
}

// startupMessage handles an untyped first message.
func (d *pgDecoder) startupMessage(body []byte) error {
	switch code := binary.BigEndian.Uint32(body); code {
	case sslRequestCode:
		d.tlsWait = 'S'
	case gssEncRequestCode:
		d.tlsWait = 'G'
	case cancelRequestCode:
		d.cancel = true
		d.ev.Reason = "a cancel request"
		d.emit(wire.EvNote)
	case pgproto3.ProtocolVersion30, pgproto3.ProtocolVersion32:
		var sm pgproto3.StartupMessage
		if err := sm.Decode(body); err != nil {
			return err
		}
		if sm.Parameters["replication"] != "" && sm.Parameters["replication"] != "false" {
			return errf("a replication connection")
		}
		d.startup = false
		d.startupRFQ = true
	default:
		return errf("unknown startup code %d (protocol %d.%d)", code, code>>16, code&0xffff)
	}
	return nil
}

// query reports the statements of a simple Query and the request.
func (d *pgDecoder) query(text []byte) {
	if i := bytes.IndexByte(text, ';'); i < 0 || len(bytes.TrimRight(text[i+1:], " \t\r\n")) == 0 {
		// One statement (the common case): no need to lex it here as well.
		if !wire.Blank(text, pgWire{}.Lexicon()) {
			d.ev.Text, d.ev.End = text, wire.TxControl(text, pgWire{}.Lexicon())
			d.emit(wire.EvStatement)
		}
		d.cseg++
		d.emit(wire.EvSent)
		return
	}
	lex := pgWire{}.Lexicon()
	for rest := text; ; {
		var st []byte
		st, rest = wire.NextStatement(rest, lex)
		if st == nil {
			break
		}
		d.ev.Text, d.ev.End = st, wire.TxControl(st, lex)
		d.emit(wire.EvStatement)
	}
	d.cseg++
	d.emit(wire.EvSent)
}

// parse stores a Parse's statement and reports the preparation.
func (d *pgDecoder) parse(body []byte) error {
	name, rest, ok := cut(body)
	if !ok {
		return errf("a malformed Parse")
	}
	text, rest, ok := cut(rest)
	if !ok {
		text, rest = rest, nil // longer than keepText: the text's first MiB
	}
	st := &d.unnamedS
	if len(name) > 0 {
		if d.stmts == nil {
			d.stmts = map[string]*pgStmt{}
		}
		if st = d.stmts[string(name)]; st == nil {
			st = &pgStmt{}
			d.stmts[string(name)] = st
		}
	}
	st.text = append(st.text[:0], text...)
	st.end = wire.TxControl(st.text, pgWire{}.Lexicon())
	st.oids = st.oids[:0]
	if len(rest) >= 2 {
		n := int(binary.BigEndian.Uint16(rest))
		rest = rest[2:]
		for i := 0; i < n && len(rest) >= 4; i++ {
			st.oids = append(st.oids, binary.BigEndian.Uint32(rest))
			rest = rest[4:]
		}
	}
	d.ev.Text = st.text
	d.emit(wire.EvPrepare)
	return nil
}

// portal returns the named portal, making it when make is set.
func (d *pgDecoder) portal(name []byte, make bool) *pgPortal {
	if len(name) == 0 {
		if d.unnamedP.stmt == nil && !make {
			return nil
		}
		return &d.unnamedP
	}
	p := d.portals[string(name)]
	if p == nil && make {
		if d.portals == nil {
			d.portals = map[string]*pgPortal{}
		}
		p = &pgPortal{}
		d.portals[string(name)] = p
	}
	return p
}

// bind binds a statement to a portal and renders its parameter values.
func (d *pgDecoder) bind(body []byte) error {
	pname, rest, ok := cut(body)
	if !ok {
		return errf("a malformed Bind")
	}
	sname, rest, ok := cut(rest)
	if !ok {
		return errf("a malformed Bind")
	}
	p := d.portal(pname, true)
	st := &d.unnamedS
	if len(sname) > 0 {
		if st = d.stmts[string(sname)]; st == nil {
			// Prepared before the proxy saw the connection, or by a Parse it lost.
			d.unknown.text = append(append(d.unknown.text[:0], "EXECUTE "...), sname...)
			d.unknown.end = wire.EndNone
			st = &d.unknown
		}
	}
	p.stmt, p.executed, p.hidden = st, false, false
	p.buf, p.params, p.offs = p.buf[:0], p.params[:0], p.offs[:0]
	// Parameter format codes: none (all text), one (for all) or one per parameter.
	if len(rest) < 2 {
		p.hidden = true
		return nil // cut at keepText
	}
	nf := int(binary.BigEndian.Uint16(rest))
	if len(rest) < 2+2*nf+2 {
		p.hidden = true
		return nil
	}
	formats := rest[2 : 2+2*nf]
	rest = rest[2+2*nf:]
	np := int(binary.BigEndian.Uint16(rest))
	rest = rest[2:]
	for i := range np {
		if len(rest) < 4 {
			p.hidden = true
			break
		}
		l := int32(binary.BigEndian.Uint32(rest))
		rest = rest[4:]
		if l < 0 {
			p.params = append(p.params, wire.Param{Null: true})
			p.offs = append(p.offs, [2]int{})
			continue
		}
		if int(l) > len(rest) {
			p.hidden = true // cut at keepText
			break
		}
		v := rest[:l]
		rest = rest[l:]
		format := uint16(0)
		switch {
		case nf == 1:
			format = binary.BigEndian.Uint16(formats)
		case i < nf:
			format = binary.BigEndian.Uint16(formats[2*i:])
		}
		oid := uint32(0)
		if i < len(st.oids) {
			oid = st.oids[i]
		}
		start := len(p.buf)
		p.buf = renderParam(p.buf, oid, format, v)
		p.params = append(p.params, wire.Param{})
		p.offs = append(p.offs, [2]int{start, len(p.buf)})
	}
	for i, o := range p.offs {
		if !p.params[i].Null {
			p.params[i].Text = p.buf[o[0]:o[1]]
		}
	}
	return nil
}

// Message handles a server message.
func (s *pgServer) Message(h, body []byte) error {
	d := s.d
	switch h[0] {
	case 'Z':
		if err := d.rfq.Decode(body); err != nil {
			return err
		}
		var st wire.Status
		switch d.rfq.TxStatus {
		case 'I':
			st = wire.StatusIdle
		case 'T':
			st = wire.StatusInTx
		case 'E':
			st = wire.StatusFailed
		default:
			return errf("ReadyForQuery with status %q", d.rfq.TxStatus)
		}
		if d.startupRFQ {
			d.startupRFQ = false
			d.end, d.failed = wire.EndNone, false
			return nil
		}
		d.dropDescribes(d.sseg + 1)
		d.sseg++
		d.ev.Status, d.ev.End, d.ev.Failed = st, d.end, d.failed
		d.end, d.failed = wire.EndNone, false
		d.emit(wire.EvCompleted)
	case 'C':
		if err := d.cc.Decode(body); err != nil {
			if len(body) < keepSmall { // a tag cut at keepSmall is no transaction command
				return err
			}
			return nil
		}
		switch {
		case bytes.Equal(d.cc.CommandTag, []byte("COMMIT")):
			d.end = wire.EndCommit
		case bytes.Equal(d.cc.CommandTag, []byte("ROLLBACK")):
			d.end = wire.EndRollback
		}
	case 'E':
		d.failed = true
		d.dropDescribes(d.sseg + 1) // the rest of the segment is skipped
	case 't':
		d.dropDescribes(d.sseg)
		if len(d.describes) == 0 || d.describes[0].seg != d.sseg || len(body) < 2 {
			return nil
		}
		st := d.describes[0].stmt
		d.describes = d.describes[1:]
		n := int(binary.BigEndian.Uint16(body))
		if len(body) != 2+4*n {
			return nil
		}
		st.oids = st.oids[:0]
		for i := range n {
			st.oids = append(st.oids, binary.BigEndian.Uint32(body[2+4*i:]))
		}
	}
	return nil
}

// dropDescribes forgets the Describes of segments before seg.
func (d *pgDecoder) dropDescribes(seg int) {
	i := 0
	for i < len(d.describes) && d.describes[i].seg < seg {
		i++
	}
	if i == len(d.describes) {
		d.describes = d.describes[:0]
	} else if i > 0 {
		d.describes = append(d.describes[:0], d.describes[i:]...)
	}
}

// cut splits a NUL-terminated string off b.
func cut(b []byte) (s, rest []byte, ok bool) {
	i := bytes.IndexByte(b, 0)
	if i < 0 {
		return nil, nil, false
	}
	return b[:i], b[i+1:], true
}

// cstring returns b up to its terminating NUL, or all of b when it was cut before it.
func cstring(b []byte) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return b[:i]
	}
	return b
}

// Type OIDs of the binary formats renderParam decodes (pg_type.dat).
const (
	oidBool        = 16
	oidBytea       = 17
	oidName        = 19
	oidInt8        = 20
	oidInt2        = 21
	oidInt4        = 23
	oidText        = 25
	oidOID         = 26
	oidJSON        = 114
	oidFloat4      = 700
	oidFloat8      = 701
	oidBPChar      = 1042
	oidVarchar     = 1043
	oidDate        = 1082
	oidTimestamp   = 1114
	oidTimestampTZ = 1184
	oidNumeric     = 1700
	oidUUID        = 2950
	oidJSONB       = 3802
)

// pgEpoch is PostgreSQL's epoch for binary dates and timestamps, 2000-01-01 UTC.
var pgEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// renderParam appends the text of one parameter value: a text-format value as sent, a
// binary value of a common type decoded, anything else as \x and hex.
func renderParam(dst []byte, oid uint32, format uint16, v []byte) []byte {
	if len(v) > maxParamText {
		v = v[:maxParamText]
	}
	if format == 0 {
		return append(dst, v...)
	}
	switch {
	case oid == oidBool && len(v) == 1:
		if v[0] != 0 {
			return append(dst, 't')
		}
		return append(dst, 'f')
	case oid == oidInt2 && len(v) == 2:
		return strconv.AppendInt(dst, int64(int16(binary.BigEndian.Uint16(v))), 10)
	case oid == oidInt4 && len(v) == 4:
		return strconv.AppendInt(dst, int64(int32(binary.BigEndian.Uint32(v))), 10)
	case oid == oidOID && len(v) == 4:
		return strconv.AppendUint(dst, uint64(binary.BigEndian.Uint32(v)), 10)
	case oid == oidInt8 && len(v) == 8:
		return strconv.AppendInt(dst, int64(binary.BigEndian.Uint64(v)), 10)
	case oid == oidFloat4 && len(v) == 4:
		return strconv.AppendFloat(dst, float64(math.Float32frombits(binary.BigEndian.Uint32(v))), 'g', -1, 32)
	case oid == oidFloat8 && len(v) == 8:
		return strconv.AppendFloat(dst, math.Float64frombits(binary.BigEndian.Uint64(v)), 'g', -1, 64)
	case oid == oidText || oid == oidVarchar || oid == oidBPChar || oid == oidName || oid == oidJSON:
		return append(dst, v...)
	case oid == oidJSONB && len(v) > 0 && v[0] == 1:
		return append(dst, v[1:]...)
	case oid == oidUUID && len(v) == 16:
		for i, g := range [...]int{4, 2, 2, 2, 6} {
			if i > 0 {
				dst = append(dst, '-')
			}
			dst = hex.AppendEncode(dst, v[:g])
			v = v[g:]
		}
		return dst
	case oid == oidDate && len(v) == 4:
		days := int32(binary.BigEndian.Uint32(v))
		switch days {
		case math.MaxInt32:
			return append(dst, "infinity"...)
		case math.MinInt32:
			return append(dst, "-infinity"...)
		}
		return pgEpoch.AddDate(0, 0, int(days)).AppendFormat(dst, "2006-01-02")
	case (oid == oidTimestamp || oid == oidTimestampTZ) && len(v) == 8:
		us := int64(binary.BigEndian.Uint64(v))
		switch us {
		case math.MaxInt64:
			return append(dst, "infinity"...)
		case math.MinInt64:
			return append(dst, "-infinity"...)
		}
		t := pgEpoch.Add(time.Duration(us%1e6) * time.Microsecond).Add(time.Duration(us/1e6) * time.Second)
		dst = t.AppendFormat(dst, "2006-01-02 15:04:05.999999")
		if oid == oidTimestampTZ {
			dst = append(dst, "+00"...)
		}
		return dst
	case oid == oidNumeric:
		if out, ok := appendNumeric(dst, v); ok {
			return out
		}
	}
	return hex.AppendEncode(append(dst, `\x`...), v)
}

// appendNumeric renders a binary numeric: ndigits, weight, sign and dscale (int16 each),
// then ndigits base-10000 digits, the first weighted 10000^weight.
func appendNumeric(dst, v []byte) ([]byte, bool) {
	if len(v) < 8 {
		return dst, false
	}
	n := int(binary.BigEndian.Uint16(v))
	weight := int(int16(binary.BigEndian.Uint16(v[2:])))
	sign := binary.BigEndian.Uint16(v[4:])
	dscale := int(binary.BigEndian.Uint16(v[6:]))
	if len(v) != 8+2*n || dscale > 1000 || weight > 1000 || weight < -1000 {
		return dst, false
	}
	switch sign {
	case 0xC000:
		return append(dst, "NaN"...), true
	case 0xD000:
		return append(dst, "Infinity"...), true
	case 0xF000:
		return append(dst, "-Infinity"...), true
	case 0x4000:
		dst = append(dst, '-')
	case 0:
	default:
		return dst, false
	}
	digit := func(i int) int { // base-10000 digit at position i (0 = the first sent)
		if i < 0 || i >= n {
			return 0
		}
		return int(binary.BigEndian.Uint16(v[8+2*i:]))
	}
	if weight < 0 {
		dst = append(dst, '0')
	} else {
		for i := 0; i <= weight; i++ {
			d := digit(i)
			if i == 0 {
				dst = strconv.AppendInt(dst, int64(d), 10)
			} else {
				dst = append(dst, byte('0'+d/1000), byte('0'+d/100%10), byte('0'+d/10%10), byte('0'+d%10))
			}
		}
	}
	if dscale > 0 {
		dst = append(dst, '.')
		for i, written := weight+1, 0; written < dscale; i++ {
			d := digit(i)
			for _, c := range [4]byte{byte('0' + d/1000), byte('0' + d/100%10), byte('0' + d/10%10), byte('0' + d%10)} {
				if written < dscale {
					dst = append(dst, c)
					written++
				}
			}
		}
	}
	return dst, true
}

var _ engine.WireProtocol = Engine{}

// ResumeScanner implements wire.Resumer: a connection whose start was not seen is followed
// from the first ReadyForQuery with status idle that ends a server chunk. The server sends
// ReadyForQuery last, when it has answered everything the client sent and waits for more
// (the client's next message starts a request), and status I says that no transaction is
// open.
func (pgWire) ResumeScanner() wire.ResumeScanner { return &pgResume{} }

// Decoder implements wire.ResumeScanner: a decoder past the startup, with no prepared
// statement known (one executed by name is reported as EXECUTE and its name).
func (*pgResume) Decoder(sink wire.Sink) wire.Decoder {
	d := &pgDecoder{sink: sink}
	d.cfr.d, d.sfr.d = d, d
	return d
}

// pgResume finds a ReadyForQuery 'I' at the end of a server chunk.
type pgResume struct{}

// rfqIdle is ReadyForQuery with status idle: 'Z', length 5, 'I'.
var rfqIdle = []byte{'Z', 0, 0, 0, 5, 'I'}

func (*pgResume) Chunk(from wire.Direction, b []byte) bool {
	return from == wire.Server && bytes.HasSuffix(b, rfqIdle)
}
