package capture

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/dblat/dblat/internal/engine"
	_ "github.com/dblat/dblat/internal/engine/all"
	"github.com/dblat/dblat/internal/observe"
	"github.com/dblat/dblat/internal/wire"
)

// enc encodes PostgreSQL messages.
func enc(t testing.TB, ms ...interface{ Encode([]byte) ([]byte, error) }) []byte {
	var b []byte
	for _, m := range ms {
		var err error
		if b, err = m.Encode(b); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// pgStartup captures a PostgreSQL connection's startup, in clear.
func pgStartup(t testing.TB, c *synthConn) *synthConn {
	c.send(0, 100*time.Microsecond, enc(t, &pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30,
		Parameters: map[string]string{"user": "app", "database": "app"}}))
	return c.send(1, 200*time.Microsecond, enc(t, &pgproto3.AuthenticationOk{},
		&pgproto3.ParameterStatus{Name: "server_version", Value: "17.0"}, &pgproto3.BackendKeyData{ProcessID: 1, SecretKey: []byte{0, 0, 0, 2}},
		&pgproto3.ReadyForQuery{TxStatus: 'I'}))
}

// pgTx captures one transaction of three round trips (BEGIN, UPDATE, COMMIT), the server
// taking server to answer each and the client client between them; then the client waits
// gap.
func pgTx(t testing.TB, c *synthConn, i int, server, client, gap time.Duration) {
	for k, q := range []string{"BEGIN", fmt.Sprintf("UPDATE t SET v = v + 1 WHERE id = %d", i), "COMMIT"} {
		d := client
		if k == 0 {
			d = gap
		}
		c.send(0, d, enc(t, &pgproto3.Query{String: q}))
		st := byte('T')
		if k == 2 {
			st = 'I'
		}
		c.send(1, server, enc(t, &pgproto3.CommandComplete{CommandTag: []byte(strings.Fields(q)[0])}, &pgproto3.ReadyForQuery{TxStatus: st}))
	}
}

const pgShape = "BEGIN; UPDATE t SET v = v + ? WHERE id = ?; COMMIT"

// sessionConfig follows every engine's protocol, as dblat observe does by default.
func sessionConfig(netip.AddrPort) *observe.SessionConfig {
	return &observe.SessionConfig{Config: observe.Config{Protocols: engine.WireProtocols()}}
}

// observations stops every Session of f and returns their observations by server.
func observations(t testing.TB, f *Follower) map[string]*observe.Observation {
	t.Helper()
	out := map[string]*observe.Observation{}
	for _, s := range f.Sessions() {
		snap, err := s.Stop()
		if err != nil {
			t.Fatal(err)
		}
		out[snap.Observation.Upstream] = snap.Observation
	}
	return out
}

// TestLinkTypesAndFormats: one conversation, captured on each link type tcpdump writes on
// Linux, as pcap and pcapng, over IPv4 and IPv6, is observed the same: its transactions, 3
// round trips each, the server and client time the packets show, and the network RTT of
// its handshake split as the capture point saw it.
func TestLinkTypesAndFormats(t *testing.T) {
	for _, link := range []layers.LinkType{layers.LinkTypeEthernet, layers.LinkTypeLinuxSLL, layers.LinkTypeLinuxSLL2} {
		for _, ng := range []bool{false, true} {
			for _, v6 := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/ng=%v/v6=%v", link, ng, v6), func(t *testing.T) {
					s := newSynth(t, link)
					client, server := "10.0.0.2:40000", "10.0.0.9:5432"
					if v6 {
						client, server = "[fd00::2]:40000", "[fd00::9]:5432"
					}
					// Captured on the database's side: 0.05 ms to the server and back, 2 ms
					// to the application.
					c := pgStartup(t, s.conn(client, server, 0).handshake(50*time.Microsecond, 2*time.Millisecond))
					for i := range 10 {
						pgTx(t, c, i, time.Millisecond, 3*time.Millisecond, 10*time.Millisecond)
					}
					c.fin(time.Millisecond)
					f := readCapture(t, s.file(ng, s.sorted()), Config{Source: observe.SourcePcap, Session: sessionConfig})
					obs := observations(t, f)
					o := obs[netip.MustParseAddrPort(server).String()]
					if o == nil || len(obs) != 1 {
						t.Fatalf("observations %v", obs)
					}
					if o.Source != "pcap" || o.Transactions != 10 || len(o.Shapes) != 1 || o.Shapes[0].Shape != pgShape || o.Shapes[0].RoundTripsMax != 3 {
						t.Fatalf("observed %+v", o)
					}
					sh := o.Shapes[0]
					if !near(sh.ServerMsMean, 3) || !near(sh.ClientMsMean, 6) || !near(sh.LatencyMsMean, 9) || !near(sh.BetweenMsMean, 10) {
						t.Errorf("times: server %.3f client %.3f in tx %.3f between %.3f ms, want 3, 6, 9, 10", sh.ServerMsMean, sh.ClientMsMean, sh.LatencyMsMean, sh.BetweenMsMean)
					}
					n := o.Network
					if n == nil || n.Handshakes != 1 || n.ServerSideNs != 50_000 || n.ClientSideNs != 2_000_000 || n.RTTNs != 2_050_000 {
						t.Errorf("network %+v, want 1 handshake, 0.05 ms + 2 ms", n)
					}
					if o.Capture == nil || o.Capture.MidStream != 0 || o.Capture.Gaps != 0 || o.Started.Year() != 2026 {
						t.Errorf("capture %+v, started %v", o.Capture, o.Started)
					}
				})
			}
		}
	}
}

func near(got, want float64) bool { return got > want*0.999-1e-6 && got < want*1.001+1e-6 }

// TestTimestampsWithoutHandshake: a connection already open when the capture started has
// no handshake to time; its TCP timestamps give the RTT, and PostgreSQL is followed from its
// first ReadyForQuery outside a transaction: the transaction in flight at the start is not
// counted.
func TestTimestampsWithoutHandshake(t *testing.T) {
	s := newSynth(t, layers.LinkTypeEthernet)
	c := s.conn("10.0.0.2:40000", "10.0.0.9:5432", 0)
	c.ts = true
	pgStartup(t, c.handshake(time.Millisecond, time.Millisecond))
	for i := range 6 {
		pgTx(t, c, i, time.Millisecond, 2*time.Millisecond, 5*time.Millisecond)
	}
	c.fin(time.Millisecond)
	ps := s.sorted()
	// Start the capture inside the third transaction: after its BEGIN's answer.
	cut := 3 /* handshake */ + 2 /* startup */ + 2*6 + 2
	f := readCapture(t, s.file(false, ps[cut:]), Config{Source: observe.SourcePcap, Session: sessionConfig})
	o := observations(t, f)["10.0.0.9:5432"]
	if o == nil {
		t.Fatal("nothing observed")
	}
	if o.Transactions != 3 || o.Shapes[0].Shape != pgShape || o.Shapes[0].RoundTripsMax != 3 || o.Abandoned != 0 {
		t.Errorf("%d transactions (abandoned %d), shapes %+v: want the last 3, whole", o.Transactions, o.Abandoned, o.Shapes)
	}
	if c := o.Capture; c.MidStream != 1 || c.Resumed != 1 {
		t.Errorf("capture %+v: want 1 mid-stream connection, resumed", c)
	}
	// The server answers each request 1 ms after the capture saw it, and so does the client
	// its FIN: the timestamps' smallest waits.
	if n := o.Network; n == nil || n.Handshakes != 0 || n.TimestampConns != 1 || n.ServerSideNs != 1_000_000 || n.ClientSideNs != 1_000_000 {
		t.Errorf("network %+v: want the timestamps' 1 ms and 1 ms", n)
	}
}

// TestGapsNeverMakeATransaction: a capture that lost a packet of either side, anywhere in a
// connection, never shows a transaction that did not run as it ran: every one it counts has
// the shape and the 3 round trips of those the application ran, at most as many as ran;
// the gap is counted and PostgreSQL is followed again from its next ReadyForQuery idle.
func TestGapsNeverMakeATransaction(t *testing.T) {
	s := newSynth(t, layers.LinkTypeEthernet)
	c := pgStartup(t, s.conn("10.0.0.2:40000", "10.0.0.9:5432", 0).handshake(time.Millisecond, time.Millisecond))
	const txs = 8
	for i := range txs {
		pgTx(t, c, i, time.Millisecond, 2*time.Millisecond, 5*time.Millisecond)
	}
	c.fin(time.Millisecond)
	ps := s.sorted()
	for drop := 3; drop < len(ps)-3; drop++ {
		kept := append(append([]packet(nil), ps[:drop]...), ps[drop+1:]...)
		f := readCapture(t, s.file(false, kept), Config{Source: observe.SourcePcap, Session: sessionConfig})
		o := observations(t, f)["10.0.0.9:5432"]
		if o.Transactions > txs || o.Transactions < txs-2 {
			t.Errorf("packet %d dropped: %d transactions, want %d or 1-2 fewer", drop, o.Transactions, txs)
		}
		for _, sh := range o.Shapes {
			if sh.Shape != pgShape || sh.RoundTripsMax != 3 || sh.RoundTripsP50 != 3 {
				t.Errorf("packet %d dropped: a transaction %q of %d round trips", drop, sh.Shape, sh.RoundTripsMax)
			}
		}
		if len(ps[drop].data) > 66 && o.Capture.Gaps == 0 { // 66: the headers without payload
			t.Errorf("packet %d dropped (%d bytes): no gap counted", drop, len(ps[drop].data))
		}
	}
}

// TestRetransmittedAndReordered: segments captured twice and out of order are counted and
// put back in place: every transaction is seen whole.
func TestRetransmittedAndReordered(t *testing.T) {
	s := newSynth(t, layers.LinkTypeEthernet)
	c := pgStartup(t, s.conn("10.0.0.2:40000", "10.0.0.9:5432", 0).handshake(time.Millisecond, time.Millisecond))
	// A long statement spans several segments, which the capture reorders.
	long := "SELECT '" + strings.Repeat("x", 4000) + "'"
	for i := range 5 {
		c.send(0, 5*time.Millisecond, enc(t, &pgproto3.Query{String: long}))
		c.send(1, time.Millisecond, enc(t, &pgproto3.CommandComplete{CommandTag: []byte("SELECT 1")}, &pgproto3.ReadyForQuery{TxStatus: 'I'}))
		pgTx(t, c, i, time.Millisecond, time.Millisecond, time.Millisecond)
	}
	c.fin(time.Millisecond)
	ps := s.sorted()
	var edited []packet
	for i, p := range ps {
		edited = append(edited, p)
		if i%7 == 3 {
			edited = append(edited, p) // a retransmission
		}
	}
	// Swap the first two segments of each long statement (4000 bytes: 3 segments).
	swapped := 0
	for i := 0; i+1 < len(edited); i++ {
		if len(edited[i].data) > 1400 && len(edited[i+1].data) > 1400 && !bytesEqual(edited[i].data, edited[i+1].data) {
			edited[i], edited[i+1] = edited[i+1], edited[i]
			swapped++
			i += 2
		}
	}
	f := readCapture(t, s.file(false, edited), Config{Source: observe.SourcePcap, Session: sessionConfig})
	o := observations(t, f)["10.0.0.9:5432"]
	if o.Transactions != 10 || len(o.Shapes) != 2 || o.Capture.Gaps != 0 {
		t.Fatalf("%d transactions of %d shapes, %d gaps; want 10 of 2, none", o.Transactions, len(o.Shapes), o.Capture.Gaps)
	}
	if o.Capture.Retransmitted == 0 || o.Capture.OutOfOrder == 0 || swapped == 0 {
		t.Errorf("capture %+v: want retransmissions and segments out of order (%d swapped)", o.Capture, swapped)
	}
}

func bytesEqual(a, b []byte) bool { return string(a) == string(b) }

// TestTLSIsCountedNotFollowed: a client that switches to TLS (the server answered S) is
// counted and not followed, in one line: a capture cannot decline TLS.
func TestTLSIsCountedNotFollowed(t *testing.T) {
	s := newSynth(t, layers.LinkTypeEthernet)
	c := s.conn("10.0.0.2:40000", "10.0.0.9:5432", 0).handshake(time.Millisecond, time.Millisecond)
	c.send(0, time.Millisecond, []byte{0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f}) // SSLRequest
	c.send(1, time.Millisecond, []byte{'S'})
	c.send(0, time.Millisecond, []byte{0x16, 0x03, 0x01, 0x00, 0x05, 1, 2, 3, 4, 5}) // a TLS record
	c.send(1, time.Millisecond, []byte{0x16, 0x03, 0x03, 0x00, 0x02, 1, 2})
	c.fin(time.Millisecond)
	clear := pgStartup(t, s.conn("10.0.0.2:40001", "10.0.0.9:5432", 0).handshake(time.Millisecond, time.Millisecond))
	pgTx(t, clear, 1, time.Millisecond, time.Millisecond, time.Millisecond)
	clear.fin(time.Millisecond)
	var notes []string
	cfg := func(a netip.AddrPort) *observe.SessionConfig {
		sc := sessionConfig(a)
		sc.OnNote = func(n string, cannot bool) { notes = append(notes, n) }
		return sc
	}
	f := readCapture(t, s.file(false, s.sorted()), Config{Source: observe.SourcePcap, Session: cfg})
	o := observations(t, f)["10.0.0.9:5432"]
	if o.Transactions != 1 || o.Unfollowed.Connections != 1 || len(o.CannotFollow) != 1 || len(notes) != 1 || !strings.Contains(notes[0], "TLS") {
		t.Errorf("%d transactions, unfollowed %+v, cannot follow %v, notes %q", o.Transactions, o.Unfollowed, o.CannotFollow, notes)
	}
}

// TestSeveralServers: a capture of two databases gives one observation each; Servers picks
// one, and a server on another port is followed when Ports names it.
func TestSeveralServers(t *testing.T) {
	s := newSynth(t, layers.LinkTypeEthernet)
	for i, srv := range []string{"10.0.0.9:5432", "10.0.0.10:5432", "10.0.0.11:6000"} {
		c := pgStartup(t, s.conn(fmt.Sprintf("10.0.0.2:%d", 40000+i), srv, time.Duration(i)*time.Millisecond).handshake(time.Millisecond, time.Millisecond))
		for k := range i + 1 {
			pgTx(t, c, k, time.Millisecond, time.Millisecond, time.Millisecond)
		}
		c.fin(time.Millisecond)
	}
	file := s.file(false, s.sorted())
	obs := observations(t, readCapture(t, file, Config{Source: observe.SourcePcap, Session: sessionConfig}))
	if len(obs) != 2 || obs["10.0.0.9:5432"].Transactions != 1 || obs["10.0.0.10:5432"].Transactions != 2 {
		t.Errorf("default ports: %d observations", len(obs))
	}
	obs = observations(t, readCapture(t, file, Config{Source: observe.SourcePcap, Session: sessionConfig,
		Servers: []netip.AddrPort{netip.MustParseAddrPort("10.0.0.11:6000")}}))
	if len(obs) != 1 || obs["10.0.0.11:6000"].Transactions != 3 {
		t.Errorf("--server 10.0.0.11:6000: %v", obs)
	}
	obs = observations(t, readCapture(t, file, Config{Source: observe.SourcePcap, Session: sessionConfig, Ports: []uint16{6000}}))
	if len(obs) != 1 || obs["10.0.0.11:6000"] == nil {
		t.Errorf("--port 6000: %v", obs)
	}
}

// TestWatchOnly: a capture's trackers never ask a decoder to change bytes.
func TestWatchOnly(t *testing.T) {
	var pg wire.Protocol
	for _, p := range engine.WireProtocols() {
		if p.Name() == "PostgreSQL" {
			pg = p
		}
	}
	tr := wire.NewTracker(wire.TrackerConfig{Protocols: []wire.Protocol{pg}, WatchOnly: true})
	if ic := tr.Intercept(wire.Client, []byte{0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f}); ic.Action != wire.Forward {
		t.Errorf("a watch-only tracker intercepted an SSLRequest: %+v", ic)
	}
}

// myPacket frames a MySQL packet.
func myPacket(seq byte, payload ...byte) []byte {
	n := len(payload)
	return append([]byte{byte(n), byte(n >> 8), byte(n >> 16), seq}, payload...)
}

// TestMySQLResumedBeforeAnyResultSet: a MySQL connection already open when the capture
// started is followed from the OK that ends a transaction, before any result set showed
// whether the connection ends them with EOF packets: the first one after the point tells,
// with EOF packets (a client without CLIENT_DEPRECATE_EOF) and without.
func TestMySQLResumedBeforeAnyResultSet(t *testing.T) {
	for _, deprecate := range []bool{false, true} {
		t.Run(fmt.Sprintf("deprecate_eof=%v", deprecate), func(t *testing.T) {
			s := newSynth(t, layers.LinkTypeEthernet)
			c := s.conn("10.0.0.2:40000", "10.0.0.9:3306", 0).handshake(time.Millisecond, time.Millisecond)
			ok := func(status byte) []byte { return myPacket(1, 0, 0, 0, status, 0, 0, 0) } // affected 0, insert id 0, status, warnings
			query := func(q string) []byte { return myPacket(0, append([]byte{3}, q...)...) }
			for i := range 5 {
				c.send(0, 5*time.Millisecond, query("BEGIN"))
				c.send(1, time.Millisecond, ok(0x03)) // in a transaction, autocommit
				c.send(0, time.Millisecond, query(fmt.Sprintf("SELECT v FROM acc WHERE id = %d", i)))
				res := append(myPacket(1, 1), myPacket(2, 3, 'd', 'e', 'f')...) // 1 column; its definition
				seq := byte(3)
				if !deprecate {
					res = append(res, myPacket(seq, 0xfe, 0, 0, 0x03, 0)...) // EOF after the definitions
					seq++
				}
				res = append(res, myPacket(seq, 1, '7')...) // a row
				seq++
				if deprecate {
					res = append(res, myPacket(seq, 0xfe, 0, 0, 0x03, 0, 0, 0)...) // OK with the EOF header
				} else {
					res = append(res, myPacket(seq, 0xfe, 0, 0, 0x03, 0)...)
				}
				c.send(1, time.Millisecond, res)
				c.send(0, time.Millisecond, query("COMMIT"))
				c.send(1, time.Millisecond, ok(0x02)) // autocommit, no transaction
			}
			c.fin(time.Millisecond)
			ps := s.sorted()
			// Start at the first transaction's COMMIT: the last packet of its first
			// handshake-less chunk the scanner sees is that OK.
			cut := 3 + 4
			f := readCapture(t, s.file(false, ps[cut:]), Config{Source: observe.SourcePcap, Session: sessionConfig})
			o := observations(t, f)["10.0.0.9:3306"]
			if o == nil || o.Transactions != 4 || len(o.Shapes) != 1 || o.Shapes[0].RoundTripsMax != 3 || o.Capture.Resumed != 1 || len(o.CannotFollow) != 0 {
				t.Errorf("observed %+v, capture %+v, cannot follow %v", o.Shapes, o.Capture, o.CannotFollow)
			}
		})
	}
}
