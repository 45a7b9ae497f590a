package firebird

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/wire"
)

// WireProtocol implements engine.WireProtocol: Firebird's remote protocol (operations and
// their XDR fields as src/remote/protocol.h and protocol.cpp define them; messages as
// src/remote/parser.cpp parses their BLR), decoded from the bytes a proxy forwards.
//
// The protocol has no framing: every operation the client sends must be decoded to find
// the next, and the rows of a fetch, and the parameters of an execute, are laid out by the
// statement's message format, given as BLR. The decoder follows protocols 10 to 19 with the
// generic (XDR) architecture, and reports that it cannot follow wire encryption (op_crypt:
// connect with wire_crypt=false, or run the server with WireCrypt = Disabled), wire
// compression, the batch operations of protocol 16+, arrays (op_get_slice, op_put_slice),
// BLR requests (op_compile and its family) and inline blobs (protocol 19).
//
// Deferred operations (ptype_lazy_send: fbclient and the Go driver send op_free_statement,
// and op_allocate_statement before op_prepare_statement, without waiting) are answered in
// order like any other; the round trips are counted as they happen on the wire.
func (Engine) WireProtocol() wire.Protocol { return fbWire{} }

var _ engine.WireProtocol = Engine{}

type fbWire struct{}

func (fbWire) Name() string { return "Firebird" }

// Lexicon: Firebird 3's q'...' literals; "..." are identifiers in dialect 3.
func (fbWire) Lexicon() wire.Lexicon { return wire.Lexicon{QQuotes: true} }

// Operations (protocol.h, enum P_OP).
const (
	opConnect            = 1
	opExit               = 2
	opAccept             = 3
	opReject             = 4
	opDisconnect         = 6
	opResponse           = 9
	opAttach             = 19
	opCreate             = 20
	opDetach             = 21
	opTransaction        = 29
	opCommit             = 30
	opRollback           = 31
	opPrepare            = 32
	opReconnect          = 33
	opCreateBlob         = 34
	opOpenBlob           = 35
	opGetSegment         = 36
	opPutSegment         = 37
	opCancelBlob         = 38
	opCloseBlob          = 39
	opInfoDatabase       = 40
	opInfoRequest        = 41
	opInfoTransaction    = 42
	opInfoBlob           = 43
	opBatchSegments      = 44
	opQueEvents          = 48
	opCancelEvents       = 49
	opCommitRetaining    = 50
	opEvent              = 52
	opConnectRequest     = 53
	opDDL                = 55
	opOpenBlob2          = 56
	opCreateBlob2        = 57
	opSeekBlob           = 61
	opAllocateStatement  = 62
	opExecute            = 63
	opExecImmediate      = 64
	opFetch              = 65
	opFetchResponse      = 66
	opFreeStatement      = 67
	opPrepareStatement   = 68
	opSetCursor          = 69
	opInfoSQL            = 70
	opDummy              = 71
	opExecImmediate2     = 75
	opExecute2           = 76
	opSQLResponse        = 78
	opDropDatabase       = 81
	opServiceAttach      = 82
	opServiceDetach      = 83
	opServiceInfo        = 84
	opServiceStart       = 85
	opRollbackRetaining  = 86
	opUpdateAccountInfo  = 87
	opAuthenticateUser   = 88
	opTrustedAuth        = 90
	opCancel             = 91
	opContAuth           = 92
	opPing               = 93
	opAcceptData         = 94
	opAbortAuxConnection = 95
	opCrypt              = 96
	opCryptKeyCallback   = 97
	opCondAccept         = 98
	opInfoBatch          = 111
	opFetchScroll        = 112
	opInfoCursor         = 113
)

// Protocol details.
const (
	archGeneric       = 1     // arch_generic: messages in XDR (the only architecture clients ask for)
	ptypeMask         = 0xff  // p_acpt_type's protocol type
	ptypeLazySend     = 5     // deferred packets
	pflagCompress     = 0x100 // wire compression
	protocolMask      = 0x7fff
	protocolPacked    = 13 // messages carry a null bitmap and only non-null values
	protocolTimeout   = 16 // op_execute carries a statement timeout
	protocolFetchScr  = 18 // op_execute carries cursor flags
	protocolInlineBlb = 19 // op_execute carries an inline blob size
	dsqlDrop          = 2  // op_free_statement's option that releases the handle
	invalidObject     = 0xffff
	// maxBuffered bounds the bytes of one operation the decoder assembles across chunks:
	// Firebird's largest messages (a 64 KiB record, a 64 KiB statement in 3.0, a blob
	// segment) are far below it; a statement of Firebird 4+ (up to 10 MiB) fits too.
	maxBuffered = 16 << 20
	// maxParamText bounds the rendered text of one parameter value.
	maxParamText = 64 << 10
)

// Sniff recognises a client's op_connect (CONNECT_VERSION2 or 3); the server never speaks
// first.
func (fbWire) Sniff(client, server []byte) wire.Verdict {
	if len(client) < 16 {
		if len(server) > 0 {
			return wire.No
		}
		return wire.NeedMore
	}
	if binary.BigEndian.Uint32(client) != opConnect {
		return wire.No
	}
	if v := binary.BigEndian.Uint32(client[8:]); v != 2 && v != 3 {
		return wire.No
	}
	return wire.Yes
}

// NewDecoder returns a decoder for one connection.
func (fbWire) NewDecoder(sink wire.Sink) wire.Decoder { return &fbDecoder{sink: sink} }

// What the server owes for a client operation.
const (
	wantResponse = iota // op_response (or, for the handshake, op_accept & co., op_cont_auth)
	wantFetch           // op_fetch_response packets up to one without a message, or op_response
	wantSQL             // op_sql_response, then op_response
)

type fbExpect struct {
	op   int32
	want int
	stmt *fbStmt // the statement the operation concerns
	tx   uint16  // the transaction it concerns
	end  wire.End
	exec bool // it runs a statement (the transaction then has work)
	sqlr bool // its op_sql_response has arrived
}

type fbStmt struct {
	handle uint16
	text   []byte
	end    wire.End
	in     []fbItem // the input message format, from op_execute's BLR
	out    []fbItem // the output message format, from op_fetch's BLR
}

// fbItem is one item of a message format: a value or its null indicator.
type fbItem struct {
	blr   byte
	scale int8
	len   int // text, varying, cstring: the declared length
}

// fbDecoder follows one connection.
type fbDecoder struct {
	sink    wire.Sink
	ev      wire.Event
	stopped bool
	cbuf    []byte // a client operation split across chunks
	sbuf    []byte

	connected bool // op_connect seen
	accepted  bool // op_accept & co. seen
	version   int
	lazy      bool

	expect    []fbExpect
	stmts     map[uint16]*fbStmt
	allocated *fbStmt   // the statement the last op_allocate_statement makes (lazy prepare: handle 0xffff)
	free      []*fbStmt // dropped statements, for reuse
	immOut    []fbItem  // the output format of op_execute2 and op_exec_immediate2 (statement -1)
	txs       map[uint16]bool
	fmtTmp    []fbItem
	fmtTmp2   []fbItem
	params    []wire.Param
	pbuf      []byte
	offs      [][2]int
	tmp       []byte
}

// errShort reports that an operation continues in a later chunk.
var errShort = errors.New("short")

func errf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// emit reports the event d.ev holds as one of kind k.
func (d *fbDecoder) emit(k wire.EventKind) { wire.Send(d.sink, &d.ev, k) }

// fail reports, once, that the decoder cannot follow the connection.
func (d *fbDecoder) fail(reason string) { wire.Stop(d.sink, &d.ev, &d.stopped, "Firebird", reason) }

// ClientData implements wire.Decoder.
func (d *fbDecoder) ClientData(b []byte, _ int64) { d.feed(&d.cbuf, b, d.clientOp) }

// ServerData implements wire.Decoder.
func (d *fbDecoder) ServerData(b []byte, _ int64) { d.feed(&d.sbuf, b, d.serverOp) }

// Close implements wire.Decoder.
func (d *fbDecoder) Close(int64) {
	if !d.stopped && (len(d.cbuf) > 0 || len(d.sbuf) > 0) {
		d.fail("the connection ended inside an operation")
	}
}

// feed decodes the operations in b, after what buf holds of one that began earlier. An
// operation that arrives whole is decoded in place; an incomplete one is kept in buf and
// decoded again, from its start, when more bytes arrive. A parse function changes no
// state before it has all of its operation's bytes.
func (d *fbDecoder) feed(buf *[]byte, b []byte, op func([]byte) (int, error)) {
	if d.stopped {
		return
	}
	data := b
	if len(*buf) > 0 {
		*buf = append(*buf, b...)
		data = *buf
	}
	off := 0
	for off < len(data) && !d.stopped {
		n, err := op(data[off:])
		if err == errShort {
			break
		}
		if err != nil {
			d.fail(err.Error())
			return
		}
		off += n
	}
	rest := data[off:]
	if len(rest) > maxBuffered {
		d.fail(fmt.Sprintf("an operation of more than %d MiB", maxBuffered>>20))
		return
	}
	if len(*buf) > 0 {
		*buf = (*buf)[:copy(*buf, rest)]
	} else {
		*buf = append((*buf)[:0], rest...)
	}
}

// xdr reads XDR fields; reading past the end sets short.
type xdr struct {
	b     []byte
	i     int
	short bool
}

func (x *xdr) int32() int32 {
	if x.i+4 > len(x.b) {
		x.short = true
		x.i = len(x.b)
		return 0
	}
	v := int32(binary.BigEndian.Uint32(x.b[x.i:]))
	x.i += 4
	return v
}

func (x *xdr) handle() uint16 { return uint16(x.int32()) }

// opaque reads n bytes and their padding to 4.
func (x *xdr) opaque(n int) []byte {
	end := x.i + (n+3)&^3
	if n < 0 || end > len(x.b) || end < x.i {
		x.short = true
		x.i = len(x.b)
		return nil
	}
	v := x.b[x.i : x.i+n]
	x.i = end
	return v
}

// cstring reads a counted string: its length (a 16-bit length sign-extended by old
// peers is fixed up, as protocol.cpp's fixupLength does) and its bytes.
func (x *xdr) cstring() ([]byte, error) {
	l := uint32(x.int32())
	if l>>16 == 0xffff {
		l &= 0xffff
	}
	if l > maxBuffered {
		return nil, errf("a counted string of %d bytes", l)
	}
	return x.opaque(int(l)), nil
}

// done returns how many bytes the operation took, errShort when it is incomplete.
func (x *xdr) done() (int, error) {
	if x.short {
		return 0, errShort
	}
	return x.i, nil
}

// clientOp decodes one operation the client sent.
func (d *fbDecoder) clientOp(b []byte) (int, error) {
	x := &xdr{b: b}
	op := x.int32()
	if x.short {
		return 0, errShort
	}
	if !d.connected && op != opConnect {
		return 0, errf("the first operation is %d, not op_connect", op)
	}
	spec, ok := clientOps[op]
	switch {
	case !ok:
		return 0, errf("operation %d is not decoded (batches, arrays, BLR requests and replication are not)", op)
	case spec.refuse != "":
		return 0, errf("%s", spec.refuse)
	case spec.read != nil:
		return spec.read(d, x, op)
	}
	if err := x.skip(spec.fields); err != nil {
		return 0, err
	}
	n, err := x.done()
	if err != nil || spec.unanswered {
		return n, err
	}
	e := fbExpect{op: op}
	if spec.then != nil {
		spec.then(d, &e)
	}
	d.send(e)
	return n, nil
}

// clientOpSpec says how the decoder follows one client operation: either read, which
// decodes it whole (the operations that carry statements, transactions and rows), or its
// fields (the rest, whose content does not matter: skipped), then what it does (then) and
// whether the server answers it; refuse is why such an operation stops the following.
type clientOpSpec struct {
	// fields are the operation's fields after the opcode: 'i' a 32-bit word, 's' a
	// counted string.
	fields     string
	unanswered bool
	then       func(d *fbDecoder, e *fbExpect)
	read       func(d *fbDecoder, x *xdr, op int32) (int, error)
	refuse     string
}

// clientOps are the client operations the decoder follows, by opcode (protocol.cpp's
// xdr_protocol for their layouts).
var clientOps = map[int32]clientOpSpec{
	opConnect:           {read: (*fbDecoder).connect},
	opAttach:            {fields: "iss"},
	opCreate:            {fields: "iss"},
	opServiceAttach:     {fields: "iss"},
	opDetach:            {fields: "i"},
	opServiceDetach:     {fields: "i"},
	opDropDatabase:      {fields: "i"},
	opCloseBlob:         {fields: "i"},
	opCancelBlob:        {fields: "i"},
	opPrepare:           {fields: "i"},
	opTransaction:       {fields: "is", then: func(d *fbDecoder, _ *fbExpect) { d.statementText("START TRANSACTION", wire.EndNone) }},
	opReconnect:         {fields: "is"},
	opCommit:            {read: endTransaction("COMMIT", wire.EndCommit)},
	opCommitRetaining:   {read: endTransaction("COMMIT RETAINING", wire.EndCommit)},
	opRollback:          {read: endTransaction("ROLLBACK", wire.EndRollback)},
	opRollbackRetaining: {read: endTransaction("ROLLBACK RETAINING", wire.EndRollback)},
	opAllocateStatement: {fields: "i", then: func(d *fbDecoder, e *fbExpect) {
		e.stmt = d.newStmt(invalidObject)
		d.allocated = e.stmt
		d.emit(wire.EvPrepare)
	}},
	opFreeStatement:    {read: (*fbDecoder).freeStatement},
	opPrepareStatement: {read: (*fbDecoder).prepareStatement},
	opExecImmediate:    {read: (*fbDecoder).prepareStatement},
	opExecute:          {read: (*fbDecoder).execute},
	opExecute2:         {read: (*fbDecoder).execute},
	opExecImmediate2:   {read: func(d *fbDecoder, x *xdr, _ int32) (int, error) { return d.execImmediate2(x) }},
	opFetch:            {read: (*fbDecoder).fetch},
	opFetchScroll:      {read: (*fbDecoder).fetch},
	// Describing a statement prepares its execution.
	opInfoSQL:           {fields: "iisi", then: func(d *fbDecoder, _ *fbExpect) { d.emit(wire.EvPrepare) }},
	opInfoDatabase:      {fields: "iisi"},
	opInfoTransaction:   {fields: "iisi"},
	opInfoBlob:          {fields: "iisi"},
	opInfoRequest:       {fields: "iisi"},
	opInfoBatch:         {fields: "iisi"},
	opInfoCursor:        {fields: "iisi"},
	opServiceInfo:       {fields: "iissi"},
	opServiceStart:      {fields: "iis"},
	opOpenBlob:          {fields: "iii"},
	opCreateBlob:        {fields: "iii"},
	opOpenBlob2:         {fields: "siii"},
	opCreateBlob2:       {fields: "siii"},
	opGetSegment:        {fields: "iis"},
	opPutSegment:        {fields: "iis"},
	opBatchSegments:     {fields: "iis"},
	opSeekBlob:          {fields: "iii"},
	opSetCursor:         {fields: "isi"},
	opQueEvents:         {fields: "isiii"},
	opCancelEvents:      {fields: "ii"},
	opConnectRequest:    {fields: "iii"},
	opDDL:               {fields: "iis"},
	opUpdateAccountInfo: {fields: "is"},
	opAuthenticateUser:  {fields: "issi"},
	opTrustedAuth:       {fields: "s"},
	opContAuth:          {fields: "ssss"},
	opPing:              {},
	opCancel:            {fields: "i", unanswered: true}, // answered by the operation it cancels
	opDisconnect:        {unanswered: true},
	opExit:              {unanswered: true},
	opDummy:             {unanswered: true},
	opCrypt: {refuse: "the client turned on wire encryption (op_crypt); connect with wire_crypt=false " +
		"or run the server with WireCrypt = Disabled to be observed"},
	opCryptKeyCallback: {refuse: "a database encryption key callback (op_crypt_key_callback)"},
}

// skip reads the fields of layout: 'i' a 32-bit word, 's' a counted string.
func (x *xdr) skip(layout string) error {
	for _, f := range layout {
		if f == 's' {
			if _, err := x.cstring(); err != nil {
				return err
			}
			continue
		}
		x.int32()
	}
	return nil
}

// connect decodes op_connect: the operation, the connect version, the client's
// architecture, the file, the protocols offered and the user identification.
func (d *fbDecoder) connect(x *xdr, _ int32) (int, error) {
	if err := x.skip("iiis"); err != nil {
		return 0, err
	}
	n := x.int32()
	if n < 0 || n > 64 {
		return 0, errf("op_connect offers %d protocols", n)
	}
	if err := x.skip("s"); err != nil { // user identification
		return 0, err
	}
	for range 5 * n {
		x.int32()
	}
	l, err := x.done()
	if err != nil {
		return 0, err
	}
	d.connected = true
	d.send(fbExpect{op: opConnect})
	return l, nil
}

// endTransaction returns the reader of an operation that ends a transaction (op_commit,
// op_rollback and their retaining forms): its handle, shown as the statement text.
func endTransaction(text string, end wire.End) func(d *fbDecoder, x *xdr, op int32) (int, error) {
	return func(d *fbDecoder, x *xdr, op int32) (int, error) {
		e := fbExpect{op: op, tx: x.handle(), end: end}
		n, err := x.done()
		if err != nil {
			return 0, err
		}
		d.statementText(text, end)
		d.send(e)
		return n, nil
	}
}

// freeStatement decodes op_free_statement: with DSQL_drop the statement's handle is free.
func (d *fbDecoder) freeStatement(x *xdr, op int32) (int, error) {
	h := x.handle()
	opt := x.int32()
	n, err := x.done()
	if err != nil {
		return 0, err
	}
	if opt&dsqlDrop != 0 {
		if s := d.stmt(h); s != nil && d.stmts[s.handle] == s {
			delete(d.stmts, s.handle)
			if d.allocated == s {
				d.allocated = nil
			}
			d.free = append(d.free, s)
		}
	}
	d.send(fbExpect{op: op})
	return n, nil
}

// prepareStatement decodes op_prepare_statement (the text a later op_execute runs) and
// op_exec_immediate (a statement run at once): transaction, statement, dialect, text,
// items, buffer length.
func (d *fbDecoder) prepareStatement(x *xdr, op int32) (int, error) {
	tx := x.handle()
	h := x.handle()
	x.int32() // dialect
	text, err := x.cstring()
	if err != nil {
		return 0, err
	}
	if err := x.skip("si"); err != nil { // items, buffer length
		return 0, err
	}
	n, err := x.done()
	if err != nil {
		return 0, err
	}
	e := fbExpect{op: op, tx: tx}
	if op == opPrepareStatement {
		s := d.stmt(h)
		if s == nil {
			s = d.newStmt(h)
		}
		s.text = append(s.text[:0], text...)
		s.end = wire.TxControl(s.text, fbWire{}.Lexicon())
		d.ev.Text = s.text
		d.emit(wire.EvPrepare)
	} else {
		e.exec, e.end = true, wire.TxControl(text, fbWire{}.Lexicon())
		d.statement(text, nil, false, e.end)
	}
	d.send(e)
	return n, nil
}

// fetch decodes op_fetch and op_fetch_scroll: statement, output BLR (empty: the last
// one), message number, message count, and the scroll's direction and offset.
func (d *fbDecoder) fetch(x *xdr, op int32) (int, error) {
	h := x.handle()
	blr, err := x.cstring()
	if err != nil {
		return 0, err
	}
	_ = x.skip("ii") // message number, messages
	if op == opFetchScroll {
		_ = x.skip("ii")
	}
	n, err := x.done()
	if err != nil {
		return 0, err
	}
	s := d.stmt(h)
	if s == nil {
		return 0, errf("op_fetch on statement %d, which the decoder did not see prepared", h)
	}
	if len(blr) > 0 {
		f, err := parseBLR(d.fmtTmp[:0], blr)
		d.fmtTmp = f
		if err != nil {
			return 0, err
		}
		s.out = append(s.out[:0], f...)
	}
	d.send(fbExpect{op: op, want: wantFetch, stmt: s})
	return n, nil
}

// execute decodes op_execute and op_execute2: statement, transaction, the input BLR (empty:
// the statement's last), message number, message count, the message, for op_execute2 the
// output BLR and message number, then the fields later protocols added.
func (d *fbDecoder) execute(x *xdr, op int32) (int, error) {
	h := x.handle()
	tx := x.handle()
	blr, err := x.cstring()
	if err != nil {
		return 0, err
	}
	x.int32() // message number
	messages := x.int32()
	if x.short {
		return 0, errShort
	}
	s := d.stmt(h)
	if s == nil {
		return 0, errf("op_execute of statement %d, which the decoder did not see prepared", h)
	}
	in := s.in
	if len(blr) > 0 {
		if d.fmtTmp, err = parseBLR(d.fmtTmp[:0], blr); err != nil {
			return 0, err
		}
		in = d.fmtTmp
	}
	hidden := false
	var params []wire.Param
	if messages != 0 {
		if len(in) == 0 {
			return 0, errf("op_execute with a message but no format")
		}
		if params, err = d.message(x, in, true); err != nil {
			return 0, err
		}
	}
	if op == opExecute2 {
		out, err := x.cstring()
		if err != nil {
			return 0, err
		}
		x.int32() // output message number
		if x.short {
			return 0, errShort
		}
		if d.fmtTmp2, err = parseBLR(d.fmtTmp2[:0], out); err != nil {
			return 0, err
		}
	}
	d.trailers(x)
	n, err := x.done()
	if err != nil {
		return 0, err
	}
	if len(blr) > 0 {
		s.in = append(s.in[:0], d.fmtTmp...)
	}
	e := fbExpect{op: op, tx: tx, stmt: s, exec: true, end: s.end}
	if op == opExecute2 {
		d.immOut = append(d.immOut[:0], d.fmtTmp2...)
		e.want = wantSQL
	}
	d.statement(s.text, params, hidden, s.end)
	d.send(e)
	return n, nil
}

// execImmediate2 decodes op_exec_immediate2: input BLR, message number, message count, the
// message, output BLR and message number, [inline blob size], then op_exec_immediate's
// fields.
func (d *fbDecoder) execImmediate2(x *xdr) (int, error) {
	blr, err := x.cstring()
	if err != nil {
		return 0, err
	}
	x.int32()
	messages := x.int32()
	if x.short {
		return 0, errShort
	}
	if d.fmtTmp, err = parseBLR(d.fmtTmp[:0], blr); err != nil && len(blr) > 0 {
		return 0, err
	}
	var params []wire.Param
	if messages != 0 {
		if params, err = d.message(x, d.fmtTmp, true); err != nil {
			return 0, err
		}
	}
	out, err := x.cstring()
	if err != nil {
		return 0, err
	}
	x.int32()
	if d.version >= protocolInlineBlb {
		x.int32()
	}
	tx := x.handle()
	x.int32() // statement
	x.int32() // dialect
	text, err := x.cstring()
	if err != nil {
		return 0, err
	}
	if err := x.skip("s"); err != nil {
		return 0, err
	}
	x.int32()
	if x.short {
		return 0, errShort
	}
	if d.fmtTmp2, err = parseBLR(d.fmtTmp2[:0], out); err != nil && len(out) > 0 {
		return 0, err
	}
	n, err := x.done()
	if err != nil {
		return 0, err
	}
	d.immOut = append(d.immOut[:0], d.fmtTmp2...)
	end := wire.TxControl(text, fbWire{}.Lexicon())
	d.statement(text, params, false, end)
	d.send(fbExpect{op: opExecImmediate2, tx: tx, want: wantSQL, exec: true, end: end})
	return n, nil
}

// trailers reads the fields protocols 16, 18 and 19 added to op_execute.
func (d *fbDecoder) trailers(x *xdr) {
	if d.version >= protocolTimeout {
		x.int32()
	}
	if d.version >= protocolFetchScr {
		x.int32()
	}
	if d.version >= protocolInlineBlb {
		x.int32()
	}
}

// statementText reports a transaction operation as the statement it performs.
func (d *fbDecoder) statementText(s string, end wire.End) {
	d.tmp = append(d.tmp[:0], s...)
	d.statement(d.tmp, nil, false, end)
}

func (d *fbDecoder) statement(text []byte, params []wire.Param, hidden bool, end wire.End) {
	if wire.Blank(text, fbWire{}.Lexicon()) {
		return // an empty statement: the server refuses it
	}
	d.ev.Text, d.ev.Params, d.ev.ParamsHidden, d.ev.End = text, params, hidden, end
	d.emit(wire.EvStatement)
}

// send reports a request and queues what the server owes for it.
func (d *fbDecoder) send(e fbExpect) {
	d.expect = append(d.expect, e)
	d.emit(wire.EvSent)
}

func (d *fbDecoder) newStmt(h uint16) *fbStmt {
	var s *fbStmt
	if n := len(d.free); n > 0 {
		s, d.free = d.free[n-1], d.free[:n-1]
		s.handle, s.end = h, wire.EndNone
		s.text, s.in, s.out = s.text[:0], s.in[:0], s.out[:0]
	} else {
		s = &fbStmt{handle: h}
	}
	if h != invalidObject {
		if d.stmts == nil {
			d.stmts = map[uint16]*fbStmt{}
		}
		d.stmts[h] = s
	}
	return s
}

// stmt returns the statement with handle h; 0xffff is the one the last
// op_allocate_statement makes (a deferred allocation's handle is not known yet).
func (d *fbDecoder) stmt(h uint16) *fbStmt {
	if h == invalidObject {
		return d.allocated
	}
	return d.stmts[h]
}

// serverOp decodes one operation the server sent.
func (d *fbDecoder) serverOp(b []byte) (int, error) {
	x := &xdr{b: b}
	op := x.int32()
	if x.short {
		return 0, errShort
	}
	read, ok := serverOps[op]
	if !ok {
		return 0, errf("server operation %d is not decoded", op)
	}
	return read(d, x, op)
}

// serverOps read the server operations the decoder follows, by opcode: each decodes the
// operation after its opcode and returns its length.
var serverOps = map[int32]func(d *fbDecoder, x *xdr, op int32) (int, error){
	opDummy:         func(_ *fbDecoder, x *xdr, _ int32) (int, error) { return x.done() },
	opAccept:        (*fbDecoder).accept,
	opAcceptData:    (*fbDecoder).accept,
	opCondAccept:    (*fbDecoder).accept,
	opReject:        (*fbDecoder).reject,
	opContAuth:      func(d *fbDecoder, x *xdr, _ int32) (int, error) { return d.answer(x, "ssss", false) },
	opResponse:      (*fbDecoder).response,
	opFetchResponse: (*fbDecoder).fetchResponse,
	opSQLResponse:   (*fbDecoder).sqlResponse,
	opEvent: func(_ *fbDecoder, x *xdr, _ int32) (int, error) {
		if err := x.skip("isiii"); err != nil {
			return 0, err
		}
		return x.done()
	},
	opCryptKeyCallback: func(*fbDecoder, *xdr, int32) (int, error) {
		return 0, errf("a database encryption key callback (op_crypt_key_callback)")
	},
}

// answer reads an answer of layout (see xdr.skip) that completes the oldest operation
// waiting for one.
func (d *fbDecoder) answer(x *xdr, layout string, failed bool) (int, error) {
	if err := x.skip(layout); err != nil {
		return 0, err
	}
	n, err := x.done()
	if err != nil {
		return 0, err
	}
	return n, d.complete(failed, 0)
}

// accept decodes op_accept, op_accept_data and op_cond_accept: the protocol version,
// architecture and type the server chose, and for the last two the authentication data.
func (d *fbDecoder) accept(x *xdr, op int32) (int, error) {
	v := int(uint16(x.int32())) & protocolMask
	arch := x.int32()
	ptype := x.int32()
	if op != opAccept {
		if err := x.skip("ssis"); err != nil {
			return 0, err
		}
	}
	n, err := x.done()
	if err != nil {
		return 0, err
	}
	switch {
	case arch != archGeneric:
		return 0, errf("the server accepted architecture %d: messages in its own memory layout", arch)
	case ptype&pflagCompress != 0:
		return 0, errf("the server accepted wire compression; connect without it (wire_compress=false, WireCompression = false) to be observed")
	case v < 10 || v > protocolInlineBlb:
		return 0, errf("protocol version %d", v)
	}
	d.version, d.lazy, d.accepted = v, ptype&ptypeMask == ptypeLazySend, true
	return n, d.complete(false, 0)
}

// reject decodes op_reject, which ends the connection.
func (d *fbDecoder) reject(x *xdr, _ int32) (int, error) {
	n, err := x.done()
	if err != nil {
		return 0, err
	}
	d.ev.Reason = "the server rejected the connection (op_reject)"
	d.emit(wire.EvNote)
	return n, d.complete(true, 0)
}

// response decodes op_response: the object it names (a new handle), the blob id, the data
// and the status vector, whose error fails the operation it answers.
func (d *fbDecoder) response(x *xdr, _ int32) (int, error) {
	obj := x.handle()
	if err := x.skip("iis"); err != nil { // blob id, data
		return 0, err
	}
	failed, err := statusVector(x)
	if err != nil {
		return 0, err
	}
	n, err := x.done()
	if err != nil {
		return 0, err
	}
	return n, d.complete(failed, obj)
}

// fetchResponse decodes op_fetch_response: a row of the cursor op_fetch reads, or (no
// message) the end of the batch, which answers the op_fetch.
func (d *fbDecoder) fetchResponse(x *xdr, _ int32) (int, error) {
	x.int32() // status: 100 at the end of the cursor
	messages := x.int32()
	if x.short {
		return 0, errShort
	}
	if len(d.expect) == 0 || d.expect[0].want != wantFetch {
		return 0, errf("op_fetch_response that answers no op_fetch")
	}
	if messages != 0 {
		if _, err := d.message(x, d.expect[0].stmt.out, false); err != nil {
			return 0, err
		}
	}
	n, err := x.done()
	if err != nil {
		return 0, err
	}
	if messages == 0 {
		return n, d.complete(false, 0)
	}
	return n, nil
}

// sqlResponse decodes op_sql_response: the row op_execute2 returns, before its op_response.
func (d *fbDecoder) sqlResponse(x *xdr, _ int32) (int, error) {
	messages := x.int32()
	if x.short {
		return 0, errShort
	}
	if len(d.expect) == 0 || d.expect[0].want != wantSQL {
		return 0, errf("op_sql_response that answers no op_execute2")
	}
	if messages != 0 {
		if _, err := d.message(x, d.immOut, false); err != nil {
			return 0, err
		}
	}
	n, err := x.done()
	if err != nil {
		return 0, err
	}
	d.expect[0].sqlr = true
	return n, nil
}

// statusVector reads a status vector: pairs of an argument type and its value, a string
// for isc_arg_string (2), isc_arg_interpreted (5) and isc_arg_sql_state (19), a number for
// the others, up to isc_arg_end (0). It reports an error when the first code is a non-zero
// isc_arg_gds (1): a warning alone is success.
func statusVector(x *xdr) (bool, error) {
	failed := false
	for i := 0; ; i++ {
		arg := x.int32()
		if x.short || arg == 0 {
			return failed, nil
		}
		if i > 1<<12 {
			return false, errf("a status vector of more than %d items", 1<<12)
		}
		switch arg {
		case 2, 5, 19:
			if _, err := x.cstring(); err != nil {
				return false, err
			}
		default:
			v := x.int32()
			if i == 0 && arg == 1 && v != 0 {
				failed = true
			}
		}
	}
}

// complete applies the answer to the oldest operation: a terminal answer ends it and
// reports the transaction status after it.
func (d *fbDecoder) complete(failed bool, obj uint16) error {
	if len(d.expect) == 0 {
		return errf("an answer to no operation")
	}
	e := d.expect[0]
	if e.want == wantSQL && !e.sqlr && !failed {
		return errf("op_response before op_sql_response")
	}
	copy(d.expect, d.expect[1:])
	d.expect = d.expect[:len(d.expect)-1]
	if !failed {
		switch e.op {
		case opTransaction:
			d.tx()[obj] = true
		case opCommit, opRollback:
			delete(d.txs, e.tx)
		case opCommitRetaining, opRollbackRetaining:
			if _, ok := d.txs[e.tx]; ok {
				d.txs[e.tx] = false
			}
		case opAllocateStatement:
			if s := e.stmt; s != nil {
				s.handle = obj
				if d.stmts == nil {
					d.stmts = map[uint16]*fbStmt{}
				}
				d.stmts[obj] = s
			}
		case opDetach, opDropDatabase:
			clear(d.txs)
			clear(d.stmts)
		case opExecute, opExecute2, opExecImmediate, opExecImmediate2:
			switch e.end {
			case wire.EndCommit, wire.EndRollback:
				delete(d.txs, e.tx) // COMMIT or ROLLBACK as a statement
			default:
				if e.op == opExecImmediate && obj != 0 && obj != e.tx {
					d.tx()[obj] = true // SET TRANSACTION: a new transaction
				} else if _, ok := d.txs[e.tx]; ok || e.tx != 0 {
					d.tx()[e.tx] = true
				}
			}
		}
	}
	st := wire.StatusUnknown
	if d.accepted && e.op != opConnect {
		st = wire.StatusIdle
		for _, dirty := range d.txs {
			if dirty {
				st = wire.StatusInTx
				break
			}
		}
	}
	d.ev.Status, d.ev.Failed = st, failed
	d.ev.Reply = wire.Reply{Known: true}
	if !failed && obj != 0 && (e.op == opAllocateStatement || e.op == opTransaction) {
		// The handle the server gave (a replay compares it with the capture's).
		d.ev.Reply.StmtID, d.ev.Reply.HasStmtID = uint32(obj), true
	}
	if !failed {
		d.ev.End = e.end
	}
	d.emit(wire.EvCompleted)
	return nil
}

func (d *fbDecoder) tx() map[uint16]bool {
	if d.txs == nil {
		d.txs = map[uint16]bool{}
	}
	return d.txs
}

// BLR codes of message items (blr.h).
const (
	blrText       = 14
	blrText2      = 15
	blrShort      = 7
	blrLong       = 8
	blrQuad       = 9
	blrFloat      = 10
	blrDFloat     = 11
	blrSQLDate    = 12
	blrSQLTime    = 13
	blrInt64      = 16
	blrBlob2      = 17
	blrBool       = 23
	blrDec64      = 24
	blrDec128     = 25
	blrInt128     = 26
	blrDouble     = 27
	blrSQLTimeTZ  = 28
	blrTimestampT = 29
	blrExTimeTZ   = 30
	blrExTsTZ     = 31
	blrTimestamp  = 35
	blrVarying    = 37
	blrVarying2   = 38
	blrCstring    = 40
	blrCstring2   = 41
)

// parseBLR appends to f the items of a message's BLR: blr_version4 or 5, blr_begin,
// blr_message, the message number, the item count (2 bytes, little-endian), the items
// (parser.cpp's parse_descriptor), blr_end, blr_eoc.
func parseBLR(f []fbItem, blr []byte) ([]fbItem, error) {
	if len(blr) < 6 || blr[0] != 4 && blr[0] != 5 || blr[1] != 2 || blr[2] != 4 {
		return f, errf("a message BLR that does not start blr_version, blr_begin, blr_message")
	}
	n := int(blr[4]) | int(blr[5])<<8
	p := blr[6:]
	need := func(k int) bool { return len(p) >= k }
	for range n {
		if !need(1) {
			return f, errf("a message BLR cut short")
		}
		it := fbItem{blr: p[0]}
		p = p[1:]
		switch it.blr {
		case blrText, blrVarying, blrCstring:
			if !need(2) {
				return f, errf("a message BLR cut short")
			}
			it.len = int(binary.LittleEndian.Uint16(p))
			p = p[2:]
		case blrText2, blrVarying2, blrCstring2:
			if !need(4) {
				return f, errf("a message BLR cut short")
			}
			it.len = int(binary.LittleEndian.Uint16(p[2:]))
			p = p[4:]
		case blrShort, blrLong, blrQuad, blrInt64, blrInt128:
			if !need(1) {
				return f, errf("a message BLR cut short")
			}
			it.scale = int8(p[0])
			p = p[1:]
		case blrBlob2:
			if !need(4) {
				return f, errf("a message BLR cut short")
			}
			p = p[4:]
		case blrFloat, blrDouble, blrDFloat, blrSQLDate, blrSQLTime, blrTimestamp, blrBool, blrDec64, blrDec128,
			blrSQLTimeTZ, blrTimestampT, blrExTimeTZ, blrExTsTZ:
		default:
			return f, errf("BLR type %d in a message", it.blr)
		}
		f = append(f, it)
	}
	return f, nil
}

// message reads a message of format f: with protocol 13 and later a null bitmap over the
// values (the even items; the odd ones are their null indicators), then each non-null
// value; before 13 every item. With render it returns the values as parameters.
func (d *fbDecoder) message(x *xdr, f []fbItem, render bool) ([]wire.Param, error) {
	if render {
		d.params, d.pbuf, d.offs = d.params[:0], d.pbuf[:0], d.offs[:0]
	}
	if d.version < protocolPacked {
		for i, it := range f {
			v, err := datum(x, it)
			if err != nil {
				return nil, err
			}
			if x.short {
				return nil, errShort
			}
			if render && i%2 == 0 {
				d.addParam(it, v, false)
			}
		}
	} else {
		nulls := x.opaque((len(f)/2 + 7) / 8)
		if x.short {
			return nil, errShort
		}
		for i := 0; i < len(f); i += 2 {
			if nulls[i/16]&(1<<(i/2%8)) != 0 {
				if render {
					d.addParam(f[i], nil, true)
				}
				continue
			}
			v, err := datum(x, f[i])
			if err != nil {
				return nil, err
			}
			if x.short {
				return nil, errShort
			}
			if render {
				d.addParam(f[i], v, false)
			}
		}
	}
	if x.short {
		return nil, errShort
	}
	if !render {
		return nil, nil
	}
	for i, o := range d.offs {
		if !d.params[i].Null {
			d.params[i].Text = d.pbuf[o[0]:o[1]]
		}
	}
	return d.params, nil
}

func (d *fbDecoder) addParam(it fbItem, v []byte, null bool) {
	if null {
		d.params = append(d.params, wire.Param{Null: true})
		d.offs = append(d.offs, [2]int{})
		return
	}
	start := len(d.pbuf)
	d.pbuf = renderDatum(d.pbuf, it, v)
	d.params = append(d.params, wire.Param{})
	d.offs = append(d.offs, [2]int{start, len(d.pbuf)})
}

// datum reads one value in XDR (remote/xdr.cpp's xdr_datum): text padded to 4, varying and
// cstring a 4-byte length and the bytes padded, 4 or 8 or 16 bytes for numbers, dates and
// times (a zone adds 4 to each time or timestamp part with time zone, an offset 4 more).
func datum(x *xdr, it fbItem) ([]byte, error) {
	switch it.blr {
	case blrText, blrText2:
		return x.opaque(it.len), nil
	case blrVarying, blrVarying2, blrCstring, blrCstring2:
		n := int(uint16(x.int32()))
		if it.blr == blrVarying || it.blr == blrVarying2 {
			n = min(n, it.len)
		}
		return x.opaque(n), nil
	case blrShort, blrLong, blrSQLDate, blrSQLTime, blrFloat, blrBool:
		return x.opaque(4), nil
	case blrQuad, blrInt64, blrDouble, blrDFloat, blrTimestamp, blrDec64, blrBlob2, blrSQLTimeTZ:
		return x.opaque(8), nil
	case blrExTimeTZ, blrTimestampT:
		return x.opaque(12), nil
	case blrInt128, blrDec128, blrExTsTZ:
		return x.opaque(16), nil
	}
	return nil, errf("BLR type %d in a message", it.blr)
}

// Firebird's dates count days from 1858-11-17 (the Modified Julian Day's epoch); times
// count 1/10000 s from midnight.
var fbEpoch = time.Date(1858, 11, 17, 0, 0, 0, 0, time.UTC)

// renderDatum appends the text of a value.
func renderDatum(dst []byte, it fbItem, v []byte) []byte {
	if len(v) > maxParamText {
		v = v[:maxParamText]
	}
	size := 0 // the bytes the value's rendering reads
	switch it.blr {
	case blrShort, blrLong, blrFloat, blrBool, blrSQLDate, blrSQLTime:
		size = 4
	case blrInt64, blrDouble, blrDFloat, blrTimestamp:
		size = 8
	}
	if len(v) < size {
		return hex.AppendEncode(append(dst, "0x"...), v)
	}
	switch it.blr {
	case blrText, blrText2, blrVarying, blrVarying2, blrCstring, blrCstring2:
		return append(dst, v...)
	case blrShort, blrLong:
		return appendScaled(dst, int64(int32(binary.BigEndian.Uint32(v))), it.scale)
	case blrInt64:
		return appendScaled(dst, int64(binary.BigEndian.Uint64(v)), it.scale)
	case blrFloat:
		return strconv.AppendFloat(dst, float64(math.Float32frombits(binary.BigEndian.Uint32(v))), 'g', -1, 32)
	case blrDouble, blrDFloat:
		return strconv.AppendFloat(dst, math.Float64frombits(binary.BigEndian.Uint64(v)), 'g', -1, 64)
	case blrBool:
		if v[0] != 0 {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case blrSQLDate:
		return fbEpoch.AddDate(0, 0, int(int32(binary.BigEndian.Uint32(v)))).AppendFormat(dst, "2006-01-02")
	case blrSQLTime:
		return appendFBTime(dst, binary.BigEndian.Uint32(v))
	case blrTimestamp:
		dst = fbEpoch.AddDate(0, 0, int(int32(binary.BigEndian.Uint32(v)))).AppendFormat(dst, "2006-01-02")
		return appendFBTime(append(dst, ' '), binary.BigEndian.Uint32(v[4:]))
	}
	return hex.AppendEncode(append(dst, "0x"...), v)
}

// appendFBTime renders a time of day in 1/10000 s.
func appendFBTime(dst []byte, t uint32) []byte {
	d := time.Duration(t%(24*3600*10000)) * 100 * time.Microsecond
	return time.Time{}.Add(d).AppendFormat(dst, "15:04:05.9999")
}

// appendScaled renders an integer with a decimal scale (NUMERIC and DECIMAL: value ×
// 10^scale).
func appendScaled(dst []byte, v int64, scale int8) []byte {
	if scale >= 0 {
		dst = strconv.AppendInt(dst, v, 10)
		for range scale {
			dst = append(dst, '0')
		}
		return dst
	}
	u := uint64(v)
	if v < 0 {
		dst = append(dst, '-')
		u = -u
	}
	start := len(dst)
	dst = strconv.AppendUint(dst, u, 10)
	frac := int(-scale)
	for len(dst)-start <= frac { // at least one digit before the point
		dst = append(dst[:start+1], dst[start:]...)
		dst[start] = '0'
	}
	dst = append(dst, 0)
	point := len(dst) - 1 - frac
	copy(dst[point+1:], dst[point:len(dst)-1])
	dst[point] = '.'
	return dst
}
