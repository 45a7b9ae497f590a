package replay

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/dblat/dblat/internal/engine/mariadb"
	"github.com/dblat/dblat/internal/wire"
)

// MySQL's capability flags and commands the replay uses (include/mysql_com.h; MariaDB's
// extended capabilities in the upper 32 bits).
const (
	myLongPassword     = 1 << 0 // CLIENT_MYSQL in MariaDB: clear in a MariaDB server's greeting
	myConnectWithDB    = 1 << 3
	myCompress         = 1 << 5
	myProtocol41       = 1 << 9
	mySSL              = 1 << 11
	mySecureConnection = 1 << 15
	myPluginAuth       = 1 << 19
	myConnectAttrs     = 1 << 20
	myPluginAuthLenenc = 1 << 21
	myZstd             = 1 << 26

	myComStmtExecute      = 0x17
	myComStmtSendLongData = 0x18
	myComStmtClose        = 0x19
	myComStmtReset        = 0x1a
	myComStmtFetch        = 0x1c
	myComStmtBulkExecute  = 0xfa
)

// decAnswers reads a protocol's answers through the engine's wire decoder (its
// Event.Reply): one outcome per request (MySQL: rows affected and returned, or the error
// number; Firebird: success or error), the ids the server gives (MySQL's statement ids,
// Firebird's statement and transaction handles), and the commits. For MySQL it rewrites
// the statement ids of the client's messages from the captured server's to the target's;
// Firebird's handles are not rewritten, and a handle the target gives otherwise than the
// captured server is told (onMismatch).
type decAnswers struct {
	dec   wire.Decoder
	mysql bool
	// onMismatch, when set, is told of a Firebird handle the target gave otherwise.
	onMismatch func(captured, got uint32)
	started    bool
	n          int
	outs       [][]outcome
	stmts      []bool // per request sent and not answered: it ran a statement
	cur        bool
	commits    int
	onCommit   func(k int)
	// ids are the statement ids the server gave per request (by number since the start),
	// recorded on the capture's side; capIDs are the capture's, given to the replay's
	// side, and idMap maps them to the target's as its answers come.
	ids    map[int]uint32
	capIDs map[int]uint32
	idMap  map[uint32]uint32
	// The client's packets being rewritten: the bytes left of the current packet, and a
	// packet header split across writes.
	left int
	hdr  []byte
}

func newDecAnswers(proto wire.Protocol, resumed bool, onCommit func(int)) *decAnswers {
	a := &decAnswers{onCommit: onCommit, ids: map[int]uint32{}, idMap: map[uint32]uint32{}, mysql: proto.Name() == protoMySQL}
	if r, ok := proto.(wire.Resumer); ok && resumed {
		a.dec = r.ResumeScanner().Decoder(a)
	} else {
		a.dec = proto.NewDecoder(a)
	}
	return a
}

func (a *decAnswers) client(b []byte) { a.dec.ClientData(b, 0) }
func (a *decAnswers) server(b []byte) { a.dec.ServerData(b, 0) }
func (a *decAnswers) start()          { a.started = true }
func (a *decAnswers) completed() int  { return a.n }

func (a *decAnswers) take() [][]outcome {
	o := a.outs
	a.outs = nil
	return o
}

// Event implements wire.Sink.
func (a *decAnswers) Event(e *wire.Event) {
	switch e.Kind {
	case wire.EvStatement:
		a.cur = true
	case wire.EvSent:
		a.stmts = append(a.stmts, a.cur)
		a.cur = false
	case wire.EvCompleted:
		ran := false
		if len(a.stmts) > 0 {
			ran, a.stmts = a.stmts[0], a.stmts[1:]
		}
		if !a.started {
			return
		}
		k := a.n
		a.n++
		r := e.Reply
		o := outcome{Tag: "ok", Rows: r.Returned}
		switch {
		case e.Failed:
			o = outcome{Err: "error " + r.Code}
			if r.Code == "" {
				o.Err = "error"
			}
		case r.HasStmtID:
			a.ids[k] = r.StmtID
			if c, ok := a.capIDs[k]; ok {
				a.idMap[c] = r.StmtID
				if c != r.StmtID && !a.mysql && a.onMismatch != nil {
					a.onMismatch(c, r.StmtID)
				}
			}
			if a.mysql {
				o.Tag = "prepared"
			}
		case ran && a.mysql:
			o.Tag = "affected " + strconv.FormatInt(r.Affected, 10) + ", returned " + strconv.FormatInt(r.Returned, 10)
		}
		a.outs = append(a.outs, []outcome{o})
		if e.Status == wire.StatusIdle && ran && !e.Failed && e.End != wire.EndRollback {
			if a.onCommit != nil {
				a.onCommit(a.commits)
			}
			a.commits++
		}
	}
}

// rewrite returns the client's bytes with the statement ids of its prepared-statement
// commands mapped to the target's (b itself when none is).
func (a *decAnswers) rewrite(b []byte) []byte {
	if !a.mysql {
		return b
	}
	var out []byte
	for i := 0; i < len(b); {
		if a.left > 0 {
			n := min(a.left, len(b)-i)
			a.left -= n
			i += n
			continue
		}
		need := 4 - len(a.hdr)
		if len(b)-i < need {
			a.hdr = append(a.hdr, b[i:]...)
			break
		}
		hdr := append(a.hdr, b[i:i+need]...)
		a.hdr = nil
		i += need
		n := int(hdr[0]) | int(hdr[1])<<8 | int(hdr[2])<<16
		seq := hdr[3]
		a.left = n
		if seq != 0 || n < 5 || len(b)-i < 5 {
			continue
		}
		switch b[i] {
		case myComStmtExecute, myComStmtSendLongData, myComStmtClose, myComStmtReset, myComStmtFetch, myComStmtBulkExecute:
			id := binary.LittleEndian.Uint32(b[i+1:])
			if to, ok := a.idMap[id]; ok && to != id {
				if out == nil {
					out = bytes.Clone(b)
				}
				binary.LittleEndian.PutUint32(out[i+1:], to)
			}
		}
	}
	if out == nil {
		return b
	}
	return out
}

// myHandshake is what a captured MySQL client asked for in its handshake response.
type myHandshake struct {
	caps    uint64
	charset byte
}

// myCaptured reads the captured client's handshake response from its start-up chunks
// (after the server's greeting, which tells whether the upper capabilities follow).
func myCaptured(c *Conn) (myHandshake, bool) {
	var cli, srv []byte
	for _, ch := range c.Chunks {
		if ch.ToServer {
			cli = append(cli, ch.Data...)
			if len(cli) >= 4 {
				break
			}
		} else if len(cli) == 0 {
			srv = append(srv, ch.Data...)
		}
	}
	g, err := parseGreeting(payloadOf(srv))
	p := payloadOf(cli)
	if err != nil || len(p) < 32 {
		return myHandshake{}, false
	}
	h := myHandshake{caps: uint64(binary.LittleEndian.Uint32(p)), charset: p[8]}
	if g.caps&myLongPassword == 0 {
		h.caps |= uint64(binary.LittleEndian.Uint32(p[28:32])) << 32
	}
	return h, true
}

// payloadOf returns the first packet's payload in b (nil when it is not whole).
func payloadOf(b []byte) []byte {
	if len(b) < 4 {
		return nil
	}
	n := int(b[0]) | int(b[1])<<8 | int(b[2])<<16
	if len(b) < 4+n {
		return nil
	}
	return b[4 : 4+n]
}

// myGreeting is what the replay needs of a server's greeting (HandshakeV10).
type myGreeting struct {
	caps     uint64
	charset  byte
	scramble []byte
	plugin   string
}

func parseGreeting(p []byte) (myGreeting, error) {
	var g myGreeting
	if len(p) == 0 {
		return g, errors.New("no greeting")
	}
	if p[0] == 0xff {
		return g, errors.New("the server refused the connection: " + myErrText(p))
	}
	if p[0] != 10 {
		return g, fmt.Errorf("a greeting of protocol %d", p[0])
	}
	end := bytes.IndexByte(p[1:], 0)
	if end < 0 || len(p) < 1+end+1+4+8+1+2 {
		return g, errors.New("a short greeting")
	}
	r := p[1+end+1+4:]
	g.scramble = append(g.scramble, r[:8]...)
	r = r[9:]
	g.caps = uint64(binary.LittleEndian.Uint16(r))
	r = r[2:]
	if len(r) < 16 {
		return g, nil
	}
	g.charset = r[0]
	g.caps |= uint64(binary.LittleEndian.Uint16(r[3:])) << 16
	authLen := int(r[5])
	if g.caps&myLongPassword == 0 {
		g.caps |= uint64(binary.LittleEndian.Uint32(r[12:16])) << 32
	}
	r = r[16:]
	if n := max(13, authLen-8); len(r) >= n {
		g.scramble = append(g.scramble, bytes.TrimRight(r[:n], "\x00")...)
		r = r[n:]
	}
	if i := bytes.IndexByte(r, 0); i >= 0 {
		g.plugin = string(r[:i])
	} else {
		g.plugin = string(r)
	}
	return g, nil
}

// myErrText renders an ERR packet's number and message.
func myErrText(p []byte) string {
	if len(p) < 3 {
		return "an ERR packet"
	}
	code := binary.LittleEndian.Uint16(p[1:])
	msg := p[3:]
	if len(msg) > 6 && msg[0] == '#' {
		msg = msg[6:]
	}
	return fmt.Sprintf("error %d: %s", code, msg)
}

// nativePassword is mysql_native_password's answer to a scramble:
// SHA1(password) XOR SHA1(scramble + SHA1(SHA1(password))).
func nativePassword(scramble []byte, password string) []byte {
	if password == "" {
		return nil
	}
	h1 := sha1.Sum([]byte(password))
	h2 := sha1.Sum(h1[:])
	h := sha1.New()
	h.Write(scramble[:min(20, len(scramble))])
	h.Write(h2[:])
	out := h.Sum(nil)
	for i := range out {
		out[i] ^= h1[i]
	}
	return out
}

// myConnect opens a MySQL/MariaDB session on the target: the target's DSN says who
// connects to which database with what password; the session asks for the capabilities
// the captured client asked for (less TLS, compression and connection attributes) and its
// character set, and authenticates with mysql_native_password (as the server asks, when it
// switches to it). It returns the connection, ready for the first replayed command.
func myConnect(ctx context.Context, dsn string, hs myHandshake, dial func(context.Context, string, string) (net.Conn, error)) (net.Conn, error) {
	cfg, err := mariadb.ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	conn, err := dial(ctx, "tcp", cfg.Addr)
	if err != nil {
		return nil, err
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	fail := func(err error) (net.Conn, error) {
		conn.Close()
		return nil, err
	}
	p, seq, err := readPacket(conn)
	if err != nil {
		return fail(fmt.Errorf("the server's greeting: %w", err))
	}
	g, err := parseGreeting(p)
	if err != nil {
		return fail(err)
	}
	caps := hs.caps | myProtocol41 | mySecureConnection | myPluginAuth
	caps &^= mySSL | myCompress | myZstd | myConnectAttrs | myPluginAuthLenenc | myConnectWithDB
	if cfg.DBName != "" {
		caps |= myConnectWithDB
	}
	caps &= g.caps
	charset := hs.charset
	if charset == 0 {
		charset = g.charset
	}
	auth := nativePassword(g.scramble, cfg.Passwd)
	b := binary.LittleEndian.AppendUint32(nil, uint32(caps))
	b = binary.LittleEndian.AppendUint32(b, 1<<24)
	b = append(b, charset)
	b = append(b, make([]byte, 19)...)
	if g.caps&myLongPassword == 0 {
		b = binary.LittleEndian.AppendUint32(b, uint32(caps>>32))
	} else {
		b = append(b, 0, 0, 0, 0)
	}
	b = append(append(b, cfg.User...), 0)
	b = append(append(b, byte(len(auth))), auth...)
	if caps&myConnectWithDB != 0 {
		b = append(append(b, cfg.DBName...), 0)
	}
	b = append(append(b, "mysql_native_password"...), 0)
	if err := writePacket(conn, seq+1, b); err != nil {
		return fail(err)
	}
	for {
		p, seq, err = readPacket(conn)
		if err != nil {
			return fail(fmt.Errorf("authentication: %w", err))
		}
		switch {
		case len(p) > 0 && p[0] == 0x00:
			_ = conn.SetDeadline(time.Time{})
			return conn, nil
		case len(p) > 0 && p[0] == 0xff:
			return fail(errors.New("authentication: " + myErrText(p)))
		case len(p) > 0 && p[0] == 0xfe:
			i := bytes.IndexByte(p[1:], 0)
			if i < 0 {
				return fail(errors.New("authentication: a malformed switch request"))
			}
			plugin, data := string(p[1:1+i]), bytes.TrimRight(p[2+i:], "\x00")
			if plugin != "mysql_native_password" {
				return fail(fmt.Errorf("authentication: the server asks for %s; dblat replay authenticates with mysql_native_password", plugin))
			}
			if err := writePacket(conn, seq+1, nativePassword(data, cfg.Passwd)); err != nil {
				return fail(err)
			}
		default:
			return fail(errors.New("authentication: the server asks for more than mysql_native_password gives (caching_sha2_password's full authentication needs TLS): give the user a mysql_native_password"))
		}
	}
}

func readPacket(c net.Conn) ([]byte, byte, error) {
	var h [4]byte
	if _, err := io.ReadFull(c, h[:]); err != nil {
		return nil, 0, err
	}
	n := int(h[0]) | int(h[1])<<8 | int(h[2])<<16
	p := make([]byte, n)
	if _, err := io.ReadFull(c, p); err != nil {
		return nil, 0, err
	}
	return p, h[3], nil
}

func writePacket(c net.Conn, seq byte, p []byte) error {
	b := make([]byte, 4, 4+len(p))
	b[0], b[1], b[2], b[3] = byte(len(p)), byte(len(p)>>8), byte(len(p)>>16), seq
	_, err := c.Write(append(b, p...))
	return err
}
