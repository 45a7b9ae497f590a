package capture

import (
	"bytes"
	"context"
	"math/rand/v2"
	"net"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/capture/capturetest"
	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/engine/firebird/fbtest"
	"github.com/dblat/dblat/internal/engine/mariadb/mariadbtest"
	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
	"github.com/dblat/dblat/internal/latency"
	"github.com/dblat/dblat/internal/observe"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Shutdown()
	mariadbtest.Shutdown()
	fbtest.Shutdown()
	os.Exit(code)
}

// pgbenchShape is pgbench -N's transaction.
const pgbenchShape = "BEGIN; UPDATE pgbench_accounts SET abalance = abalance + ? WHERE aid = ?; SELECT abalance FROM pgbench_accounts WHERE aid = ?; INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP); END"

// shapeOf returns an observation's shape of that text.
func shapeOf(o *observe.Observation, text string) *observe.Shape {
	for i := range o.Shapes {
		if o.Shapes[i].Shape == text {
			return &o.Shapes[i]
		}
	}
	return nil
}

// TestPgbenchCaptureAndProxy: pgbench -N (simple protocol, 4 clients) through the proxy
// observing at RTT 0, while tcpdump captures the proxy's connections to the server on lo
// (as Ethernet) and on any (Linux cooked v2): the captures show the transactions the proxy
// saw, pgbench's count, at 5 round trips each, in the same shapes. The capture then
// started mid-run, and one with packets removed, show no transaction that did not run as
// it ran, and say what they skipped.
func TestPgbenchCaptureAndProxy(t *testing.T) {
	capturetest.Need(t, pgtest.Required(), "pgbench", "tcpdump")
	dsn := pgtest.NewDatabase(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	host, port, _ := strings.Cut(u.Host, ":")
	db := strings.TrimPrefix(u.Path, "/")
	pgtest.Pgbench(t, "-i", "-q", "-s", "1", "-h", host, "-p", port, "-U", "dblat", db)

	sess := observe.NewSession(observe.SessionConfig{Config: observe.Config{Protocols: engine.WireProtocols(), Upstream: u.Host}})
	link, err := sess.Listen(context.Background(), "127.0.0.1:0", latency.Config{})
	if err != nil {
		t.Fatal(err)
	}
	stopLo := capturetest.Tcpdump(t, "lo", "tcp port "+port)
	stopAny := capturetest.Tcpdump(t, "any", "tcp port "+port)
	_, lport, _ := strings.Cut(link.Addr(), ":")
	processed := pgtest.Pgbench(t, "-n", "-N", "-c", "4", "-j", "2", "-T", "2", "-h", "127.0.0.1", "-p", lport, "-U", "dblat", db)
	snap, err := sess.Stop()
	if err != nil {
		t.Fatal(err)
	}
	proxied := snap.Observation
	loFile, anyFile := stopLo(u.Host), stopAny(u.Host)

	server := netip.MustParseAddrPort(u.Host)
	cfg := Config{Source: observe.SourcePcap, Session: sessionConfig, Servers: []netip.AddrPort{server}}
	want := shapeOf(proxied, pgbenchShape)
	if want == nil || want.Count != processed || want.RoundTripsMax != 5 {
		t.Fatalf("the proxy saw %+v, pgbench processed %d", want, processed)
	}
	for _, file := range []string{loFile, anyFile} {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		o := observations(t, readCapture(t, raw, cfg))[u.Host]
		if o == nil {
			t.Fatalf("%s: nothing observed", file)
		}
		got := shapeOf(o, pgbenchShape)
		if got == nil || got.Count != want.Count || got.RoundTripsMax != 5 || got.RoundTripsP50 != 5 || len(o.Shapes) != len(proxied.Shapes) ||
			o.Transactions != proxied.Transactions || o.Abandoned != 0 {
			t.Errorf("%s: %d transactions in %d shapes (pgbench's: %+v), the proxy %d in %d (%+v)", filepath.Base(file),
				o.Transactions, len(o.Shapes), got, proxied.Transactions, len(proxied.Shapes), want)
		}
		// 5: pgbench's connections, then the markers that end the captures.
		if o.Network == nil || o.Network.Handshakes < 5 || o.Capture.Gaps != 0 || o.Capture.MidStream != 0 {
			t.Errorf("%s: network %+v, capture %+v", filepath.Base(file), o.Network, o.Capture)
		}
	}

	// The capture started mid-run: the first 30 % of its packets gone.
	pkts, link0 := capturetest.ReadPackets(t, loFile)
	cut := pkts[len(pkts)*3/10:]
	o := observations(t, readCapture(t, capturetest.WritePackets(t, link0, cut), cfg))[u.Host]
	got := shapeOf(o, pgbenchShape)
	if got == nil || got.RoundTripsMax != 5 || got.RoundTripsP50 != 5 || len(o.Shapes) != 1 || got.Count >= want.Count || got.Count < want.Count/2 {
		t.Errorf("mid-run: %d transactions in %d shapes (%+v), of %d", o.Transactions, len(o.Shapes), got, want.Count)
	}
	if o.Capture.MidStream != 4 || o.Capture.Resumed != 4 {
		t.Errorf("mid-run: capture %+v, want 4 connections already open, all resumed", o.Capture)
	}
	var text bytes.Buffer
	_ = o.WriteText(&text)
	if !strings.Contains(text.String(), "4 connections already open when the capture started") {
		t.Errorf("mid-run: the table does not say what was skipped:\n%s", text.String())
	}

	// Packets removed: 1 in 200, seeded.
	rng := rand.New(rand.NewPCG(37, 1))
	var kept []capturetest.Packet
	for _, p := range pkts {
		if rng.IntN(200) != 0 {
			kept = append(kept, p)
		}
	}
	o = observations(t, readCapture(t, capturetest.WritePackets(t, link0, kept), cfg))[u.Host]
	if got := shapeOf(o, pgbenchShape); got == nil || got.Count >= want.Count || got.RoundTripsMax != 5 || o.Capture.Gaps == 0 || o.Capture.Resumed == 0 {
		t.Errorf("packets removed: %+v, capture %+v", got, o.Capture)
	}
	for _, s := range o.Shapes {
		if shapeOf(proxied, s.Shape) == nil {
			t.Errorf("packets removed: a shape the application never ran: %q", s.Shape)
		}
	}
}

// TestLiveLoopback: a live capture on lo (AF_PACKET, as root) follows pgbench -S's
// transactions, each packet once though lo shows every packet as it leaves and as it
// arrives, and reports the kernel's drop count.
func TestLiveLoopback(t *testing.T) {
	capturetest.Need(t, pgtest.Required(), "pgbench")
	if os.Geteuid() != 0 {
		t.Skip("skipping: a live capture needs root or CAP_NET_RAW")
	}
	dsn := pgtest.NewDatabase(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	host, port, _ := strings.Cut(u.Host, ":")
	db := strings.TrimPrefix(u.Path, "/")
	pgtest.Pgbench(t, "-i", "-q", "-s", "1", "-h", host, "-p", port, "-U", "dblat", db)
	f := New(Config{Source: observe.SourceInterface, Session: sessionConfig, Servers: []netip.AddrPort{netip.MustParseAddrPort(u.Host)}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		drops int64
		err   error
	}
	done := make(chan result, 1)
	go func() {
		d, err := Live(ctx, "lo", f)
		done <- result{d, err}
	}()
	// The socket is open once Live has set up its filter; pgbench's first packets must
	// not come before: wait for a connection of our own to be seen.
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", u.Host)
		if err == nil {
			c.Close()
		}
		time.Sleep(50 * time.Millisecond)
		if all, other := f.Packets(); all-other > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the live capture saw nothing on lo")
		}
	}
	processed := pgtest.Pgbench(t, "-n", "-S", "-c", "2", "-j", "2", "-T", "1", "-h", host, "-p", port, "-U", "dblat", db)
	var sess *observe.Session
	for time.Now().Before(deadline.Add(30 * time.Second)) {
		if ss := f.Sessions(); len(ss) == 1 && ss[0].Transactions() >= processed {
			sess = ss[0]
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if sess == nil {
		t.Fatalf("the live capture did not see pgbench's %d transactions", processed)
	}
	snap, err := sess.Stop()
	if err != nil {
		t.Fatal(err)
	}
	o := snap.Observation
	s := shapeOf(o, "SELECT abalance FROM pgbench_accounts WHERE aid = ?")
	if s == nil || s.Count != processed || s.RoundTripsMax != 1 || o.Source != "interface" || o.Capture.Retransmitted != 0 {
		t.Errorf("live: %+v of %d processed; capture %+v", s, processed, o.Capture)
	}
	if o.Capture.KernelDrops == nil || *o.Capture.KernelDrops != r.drops {
		t.Errorf("kernel drops %v, Live said %d", o.Capture.KernelDrops, r.drops)
	}
}

// TestMysqlslapCapture: mysqlslap's transactions (BEGIN, SET, UPDATE, SELECT, COMMIT from
// 4 clients), recorded by tcpdump, are observed whole; the capture cut to start mid-run is
// followed from each connection's next OK packet outside a transaction, and shows no
// transaction that did not run as it ran.
func TestMysqlslapCapture(t *testing.T) {
	capturetest.Need(t, mariadbtest.Required(), "mysqlslap", "mariadb", "tcpdump")
	mariadbtest.SkipIfMissing(t)
	srv := mariadbtest.Server(t)
	dsn := mariadbtest.NewDatabase(t)
	du, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	db := strings.TrimPrefix(du.Path, "/")
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(srv.Port))
	port := strconv.Itoa(srv.Port)
	run := func(name string, args ...string) string {
		out, err := exec.Command(name, append(append(mariadbtest.ToolArgs(t), "-h127.0.0.1", "-P"+port, "-udblat"), args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, out)
		}
		return string(out)
	}
	run("mariadb", db, "-e", "CREATE TABLE acc (id INT PRIMARY KEY, v INT) ENGINE=InnoDB; INSERT INTO acc SELECT seq, 0 FROM seq_1_to_1000")
	stop := capturetest.Tcpdump(t, "lo", "tcp port "+port)
	const txs = 400
	run("mysqlslap", "--create-schema="+db, "--concurrency=4", "--iterations=1", "--number-of-queries="+strconv.Itoa(5*txs),
		"--delimiter=;", "--query=BEGIN;SET @id=FLOOR(1+RAND()*1000);UPDATE acc SET v=v+1 WHERE id=@id;SELECT v FROM acc WHERE id=@id;COMMIT")
	file := stop(addr)
	const shape = "BEGIN; SET @id=FLOOR(?+RAND()*?); UPDATE acc SET v=v+? WHERE id=@id; SELECT v FROM acc WHERE id=@id; COMMIT"
	cfg := Config{Source: observe.SourcePcap, Session: sessionConfig, Servers: []netip.AddrPort{netip.MustParseAddrPort(addr)}}
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	o := observations(t, readCapture(t, raw, cfg))[addr]
	if s := shapeOf(o, shape); s == nil || s.Count != txs || s.RoundTripsMax != 5 || o.Protocol != "MySQL/MariaDB" {
		t.Fatalf("observed %+v in %q, want %d of 5 round trips", o.Shapes, o.Protocol, txs)
	}
	pkts, link := capturetest.ReadPackets(t, file)
	o = observations(t, readCapture(t, capturetest.WritePackets(t, link, pkts[len(pkts)*4/10:]), cfg))[addr]
	s := shapeOf(o, shape)
	if s == nil || len(o.Shapes) != 1 || s.RoundTripsMax != 5 || s.RoundTripsP50 != 5 || s.Count >= txs || s.Count < txs/3 {
		t.Errorf("mid-run: %+v; capture %+v", o.Shapes, o.Capture)
	}
	// mysqlslap's clients still running after the cut are resumed — all 4 as a rule, but on
	// a busy machine one may have run its share before the cut; its own connection, idle
	// until it quits, may be open too.
	if c := o.Capture; c.Resumed < 1 || c.Resumed > 4 || c.MidStream < c.Resumed || c.MidStream > 5 {
		t.Errorf("mid-run: capture %+v, want up to the 4 clients already open, resumed", o.Capture)
	}
}
