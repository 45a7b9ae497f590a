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
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
	"github.com/dblat/dblat/internal/latency"
	"github.com/dblat/dblat/internal/observe"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// need skips a test whose tool is missing (fails it under DBLAT_REQUIRE_SERVERS=1).
func need(t testing.TB, tools ...string) {
	t.Helper()
	for _, name := range tools {
		if _, err := exec.LookPath(name); err != nil {
			if pgtest.Required() {
				t.Fatalf("%s is not installed (scripts/setup.sh installs it)", name)
			}
			t.Skipf("skipping: %s is not installed", name)
		}
	}
	if os.Geteuid() != 0 && slicesContains(tools, "tcpdump") {
		t.Skip("skipping: tcpdump on lo needs root")
	}
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// tcpdump records iface's packets of filter into a file until stop is called with the
// server's address, which returns the file once tcpdump has written every packet before
// the call.
func tcpdump(t testing.TB, iface, filter string) (stop func(server string) string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), iface+".pcap")
	cmd := exec.Command("tcpdump", "-i", iface, "-s", "0", "-B", "32768", "-U", "-Z", "root", "-w", path, filter)
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := false
	t.Cleanup(func() {
		if !done {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	// tcpdump says it listens once its socket is open.
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(stderr.String(), "listening on") {
		if time.Now().After(deadline) {
			t.Fatalf("tcpdump did not start: %s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return func(server string) string {
		// A marker: a connection opened and closed now. tcpdump writes packets in the
		// order it reads them (-U: each as it comes), so once the server's FIN of the
		// marker is in the file, so is everything before it.
		c, err := net.Dial("tcp", server)
		if err != nil {
			t.Fatal(err)
		}
		marker := uint16(c.LocalAddr().(*net.TCPAddr).Port)
		c.Close()
		deadline := time.Now().Add(60 * time.Second)
		for !hasFIN(path, marker) {
			if time.Now().After(deadline) {
				t.Fatalf("tcpdump did not write the marker connection's end within a minute: %s", stderr.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
		_ = cmd.Process.Signal(syscall.SIGINT)
		_ = cmd.Wait()
		done = true
		return path
	}
}

// hasFIN reports whether a pcap file being written holds a FIN to port.
func hasFIN(path string, port uint16) bool {
	pkts, link := readPackets(nil, path)
	for _, p := range pkts {
		pk := gopacket.NewPacket(p.data, link, gopacket.NoCopy)
		if tcp, ok := pk.Layer(layers.LayerTypeTCP).(*layers.TCP); ok && tcp.FIN && uint16(tcp.DstPort) == port {
			return true
		}
	}
	return false
}

// lockedBuffer is a bytes.Buffer safe for a process's writes and the test's reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

var processedRe = regexp.MustCompile(`number of transactions actually processed: (\d+)`)

// pgbench runs pgbench and returns how many transactions it processed.
func pgbench(t testing.TB, args ...string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "pgbench", args...)
	cmd.Env = append(os.Environ(), "PGCONNECT_TIMEOUT=10", "PGOPTIONS=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("pgbench %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	m := processedRe.FindSubmatch(out)
	if m == nil {
		if args[0] == "-i" {
			return 0
		}
		t.Fatalf("pgbench said no count:\n%s", out)
	}
	n, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return n
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
	need(t, "pgbench", "tcpdump")
	dsn := pgtest.NewDatabase(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	host, port, _ := strings.Cut(u.Host, ":")
	db := strings.TrimPrefix(u.Path, "/")
	pgbench(t, "-i", "-q", "-s", "1", "-h", host, "-p", port, "-U", "dblat", db)

	sess := observe.NewSession(observe.SessionConfig{Config: observe.Config{Protocols: engine.WireProtocols(), Upstream: u.Host}})
	link, err := sess.Listen(context.Background(), "127.0.0.1:0", latency.Config{})
	if err != nil {
		t.Fatal(err)
	}
	stopLo := tcpdump(t, "lo", "tcp port "+port)
	stopAny := tcpdump(t, "any", "tcp port "+port)
	_, lport, _ := strings.Cut(link.Addr(), ":")
	processed := pgbench(t, "-n", "-N", "-c", "4", "-j", "2", "-T", "2", "-h", "127.0.0.1", "-p", lport, "-U", "dblat", db)
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
	pkts, link0 := readPackets(t, loFile)
	cut := pkts[len(pkts)*3/10:]
	o := observations(t, readCapture(t, writePackets(t, link0, cut), cfg))[u.Host]
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
	var kept []capturedPacket
	for _, p := range pkts {
		if rng.IntN(200) != 0 {
			kept = append(kept, p)
		}
	}
	o = observations(t, readCapture(t, writePackets(t, link0, kept), cfg))[u.Host]
	if got := shapeOf(o, pgbenchShape); got == nil || got.Count >= want.Count || got.RoundTripsMax != 5 || o.Capture.Gaps == 0 || o.Capture.Resumed == 0 {
		t.Errorf("packets removed: %+v, capture %+v", got, o.Capture)
	}
	for _, s := range o.Shapes {
		if shapeOf(proxied, s.Shape) == nil {
			t.Errorf("packets removed: a shape the application never ran: %q", s.Shape)
		}
	}
}

type capturedPacket struct {
	ci   gopacket.CaptureInfo
	data []byte
}

// readPackets reads a pcap file whole (as far as it is written: with t nil, a file that
// cannot be read yet holds nothing).
func readPackets(t testing.TB, path string) ([]capturedPacket, layers.LinkType) {
	fh, err := os.Open(path)
	if err != nil {
		if t == nil {
			return nil, 0
		}
		t.Fatal(err)
	}
	defer fh.Close()
	r, err := pcapgo.NewReader(fh)
	if err != nil {
		if t == nil {
			return nil, 0
		}
		t.Fatal(err)
	}
	var out []capturedPacket
	for {
		data, ci, err := r.ReadPacketData()
		if err != nil {
			break
		}
		out = append(out, capturedPacket{ci, data})
	}
	return out, r.LinkType()
}

// writePackets writes packets as a pcap file.
func writePackets(t testing.TB, link layers.LinkType, ps []capturedPacket) []byte {
	t.Helper()
	var b bytes.Buffer
	w := pcapgo.NewWriterNanos(&b)
	if err := w.WriteFileHeader(262144, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if err := w.WritePacket(p.ci, p.data); err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()
}
