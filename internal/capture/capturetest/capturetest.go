// Package capturetest records real clients' traffic with tcpdump for the capture tests, and
// reads and rewrites capture files (a capture cut short, with packets removed). It sits
// beside package capture, whose tests and package cli's use it; it knows no database.
package capturetest

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// Need skips a test whose tool is missing, or fails it when required is true (make test's
// DBLAT_REQUIRE_SERVERS=1); tcpdump on a live interface also needs root.
func Need(t testing.TB, required bool, tools ...string) {
	t.Helper()
	for _, name := range tools {
		if _, err := exec.LookPath(name); err != nil {
			if required {
				t.Fatalf("%s is not installed (scripts/setup.sh installs it)", name)
			}
			t.Skipf("skipping: %s is not installed", name)
		}
		if name == "tcpdump" && os.Geteuid() != 0 {
			t.Skip("skipping: tcpdump needs root to capture")
		}
	}
}

// Tcpdump records iface's packets of filter into a file until stop is called with the
// server's address, which returns the file once tcpdump has written every packet before
// the call.
func Tcpdump(t testing.TB, iface, filter string) (stop func(server string) string) {
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
		// order it reads them (-U: each as it comes), so once the marker's end (its FIN,
		// or a RST where the server had spoken first) is in the file, so is everything
		// before it.
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

// hasFIN reports whether a pcap file being written holds the end of port's connection.
func hasFIN(path string, port uint16) bool {
	pkts, link := ReadPackets(nil, path)
	for _, p := range pkts {
		pk := gopacket.NewPacket(p.Data, link, gopacket.NoCopy)
		if tcp, ok := pk.Layer(layers.LayerTypeTCP).(*layers.TCP); ok && (tcp.FIN || tcp.RST) && (uint16(tcp.DstPort) == port || uint16(tcp.SrcPort) == port) {
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

// Packet is one captured packet.
type Packet struct {
	CI   gopacket.CaptureInfo
	Data []byte
}

// ReadPackets reads a pcap file whole (as far as it is written: with t nil, a file that
// cannot be read yet holds nothing).
func ReadPackets(t testing.TB, path string) ([]Packet, layers.LinkType) {
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
	var out []Packet
	for {
		data, ci, err := r.ReadPacketData()
		if err != nil {
			break
		}
		out = append(out, Packet{ci, data})
	}
	return out, r.LinkType()
}

// WritePackets writes packets as a pcap file.
func WritePackets(t testing.TB, link layers.LinkType, ps []Packet) []byte {
	t.Helper()
	var b bytes.Buffer
	w := pcapgo.NewWriterNanos(&b)
	if err := w.WriteFileHeader(262144, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if err := w.WritePacket(p.CI, p.Data); err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()
}
