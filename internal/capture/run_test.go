package capture

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/observe"
)

// TestRunFileOneObservationPerServer: Run reads a capture file of two servers into one
// session each, the first server's writing the file it was given and the other's a file
// named after it (PerServer), and tells its Observer as it goes.
func TestRunFileOneObservationPerServer(t *testing.T) {
	s := newSynth(t, layers.LinkTypeEthernet)
	for i, srv := range []string{"10.0.0.9:5432", "10.0.0.10:5432"} {
		c := pgStartup(t, s.conn(fmt.Sprintf("10.0.0.2:%d", 40000+i), srv, time.Duration(i)*time.Millisecond).handshake(time.Millisecond, time.Millisecond))
		pgTx(t, c, 0, time.Millisecond, time.Millisecond, time.Millisecond)
		c.fin(time.Millisecond)
	}
	dir := t.TempDir()
	pcap := filepath.Join(dir, "app.pcap")
	if err := os.WriteFile(pcap, s.file(false, s.sorted()), 0o600); err != nil {
		t.Fatal(err)
	}
	var started int
	var seen []int
	res, err := Run(context.Background(), RunConfig{File: pcap,
		Session: observe.SessionConfig{File: filepath.Join(dir, "app.json"), Config: observe.Config{Protocols: engine.WireProtocols()}},
		Observer: Observer{
			Started: func(*Follower) { started++ },
			Session: func(_ netip.AddrPort, _ *observe.Session, n int) { seen = append(seen, n) },
		}})
	if err != nil {
		t.Fatal(err)
	}
	if started != 1 || !slices.Equal(seen, []int{0, 1}) || res.File.Packets == 0 {
		t.Fatalf("started %d, sessions %v, file %+v", started, seen, res.File)
	}
	obs := observations(t, res.Follower)
	if len(obs) != 2 {
		t.Fatalf("%d observations", len(obs))
	}
	for _, name := range []string{"app.json", "app-10.0.0.10_5432.json"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("no %s: %v", name, err)
		}
	}
	if _, err := Run(context.Background(), RunConfig{File: filepath.Join(dir, "none.pcap")}); err == nil {
		t.Error("a file that is not there is an error")
	}
	if _, err := Run(context.Background(), RunConfig{}); err == nil {
		t.Error("neither a file nor an interface is an error")
	}
}

func TestResolveServer(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string // "" for an error
	}{
		{"10.0.0.9:5432", "10.0.0.9:5432"},
		{"[::ffff:10.0.0.9]:5432", "10.0.0.9:5432"},
		{"localhost:5432", "127.0.0.1:5432"},
		{"localhost:0", ""},
		{"localhost:x", ""},
		{"localhost", ""},
	} {
		aps, err := ResolveServer(c.in)
		switch {
		case c.want == "" && err == nil:
			t.Errorf("ResolveServer(%q) = %v, want an error", c.in, aps)
		case c.want != "" && (err != nil || !slices.Contains(aps, netip.MustParseAddrPort(c.want))):
			t.Errorf("ResolveServer(%q) = %v, %v; want %s among them", c.in, aps, err, c.want)
		}
	}
	if got := PerServer("", netip.MustParseAddrPort("10.0.0.9:5432")); got != "" {
		t.Errorf("PerServer of no file = %q", got)
	}
	if got := PerServer("out/app.json", netip.MustParseAddrPort("[::1]:5432")); got != "out/app-__1_5432.json" {
		t.Errorf("PerServer = %q", got)
	}
}
