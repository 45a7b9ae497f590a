package cli_test

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dblat/dblat/internal/capture/capturetest"
	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
	"github.com/dblat/dblat/internal/observe"
)

// TestObservePcap: pgbench -N recorded by tcpdump, read by `dblat observe --pcap`: the
// observation file (source pcap, the network RTT of the handshakes, no value), the table,
// a stored run that results show describes as a capture's, predict --rtt adding to the
// capture's own RTT and saying so, and --record writing values and saying it does.
func TestObservePcap(t *testing.T) {
	capturetest.Need(t, pgtest.Required(), "pgbench", "tcpdump")
	dsn := pgtest.NewDatabase(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	host, port, _ := strings.Cut(u.Host, ":")
	db := strings.TrimPrefix(u.Path, "/")
	tool(t, "pgbench", "-i", "-q", "-s", "1", "-h", host, "-p", port, "-U", "dblat", db)
	stop := capturetest.Tcpdump(t, "lo", "tcp port "+port)
	out := tool(t, "pgbench", "-n", "-N", "-c", "2", "-t", "40", "-h", host, "-p", port, "-U", "dblat", db)
	if !strings.Contains(out, "processed: 80") {
		t.Fatalf("pgbench:\n%s", out)
	}
	pcap := stop(u.Host)

	e := newEnv(t)
	obsFile, recFile := filepath.Join(e.dir, "app.json"), filepath.Join(e.dir, "app.sql")
	code, stdout, stderr := e.run("observe", "--pcap", pcap, "--port", port, "-o", obsFile, "--record", recFile)
	if code != 0 {
		t.Fatalf("dblat observe: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "transactions (PostgreSQL)") || !strings.Contains(stdout, "network RTT already in these times") {
		t.Errorf("the table:\n%s", stdout)
	}
	if !strings.Contains(stderr, "WITH their literal and parameter values") || !strings.Contains(stderr, "with their values") {
		t.Errorf("--record does not say it wrote values:\n%s", stderr)
	}
	o, err := observe.ReadFile(obsFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Shapes) == 0 || o.Shapes[0].Count != 80 || o.Shapes[0].RoundTripsMax != 5 {
		t.Errorf("shapes: %+v", o.Shapes)
	}
	if o.Source != "pcap" || o.Network == nil || o.Network.Handshakes < 2 || o.Capture == nil || o.Upstream != u.Host {
		t.Errorf("observation: source %q, network %+v, capture %+v, upstream %s", o.Source, o.Network, o.Capture, o.Upstream)
	}
	raw, _ := os.ReadFile(obsFile)
	if regexp.MustCompile(`aid = \d`).Match(raw) {
		t.Errorf("the observation holds values:\n%s", raw)
	}
	if fi, err := os.Stat(recFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the recording: %v, want mode 0600", err)
	}
	id := regexp.MustCompile(`stored as run (\d+)`).FindStringSubmatch(stderr)
	if id == nil {
		t.Fatalf("not stored:\n%s", stderr)
	}
	if out := e.must("results", "show", id[1]); !strings.Contains(out, "observed through a packet capture") {
		t.Errorf("results show:\n%s", out)
	}
	out = e.must("predict", "--observed", id[1], "--rtt", "5ms")
	if !strings.Contains(out, "the capture's times already hold a network RTT of") || !strings.Contains(out, "the prediction adds 5ms to it") {
		t.Errorf("predict does not say what it adds to:\n%s", out)
	}
	var f observe.Forecast
	if err := json.Unmarshal([]byte(e.must("predict", "--observed", obsFile, "--rtt", "5ms", "--format", "json")), &f); err != nil {
		t.Fatal(err)
	}
	// 5 round trips each: 25 ms more per transaction than observed, and more only where the
	// observation found a serial section (a lock the clients queue for, whose holding time
	// grows with the RTT), which a busy machine's slow round trips can make it find.
	s := f.Shapes[0]
	if s.RoundTrips != 5 || s.AddedMs < 24.99 || (!s.Serial && s.AddedMs > 25.01) || f.NetworkRTTNs != o.Network.RTTNs {
		t.Errorf("forecast: %+v, network %d", s, f.NetworkRTTNs)
	}
	// A second reading of the same capture, stored: results diff reads two observed runs.
	_, _, stderr2 := e.run("observe", "--pcap", pcap, "--port", port)
	if id2 := regexp.MustCompile(`stored as run (\d+)`).FindStringSubmatch(stderr2); id2 == nil {
		t.Errorf("the second reading was not stored:\n%s", stderr2)
	} else if out := e.must("results", "diff", id[1], id2[1]); !strings.Contains(out, "round trips per transaction") {
		t.Errorf("results diff of two observations:\n%s", out)
	}
	e.fails(2, []string{"--pcap", "--interface"}, "observe", "-o", obsFile)
	e.fails(2, []string{"not a pcap or pcapng file"}, "observe", "--pcap", obsFile)
	e.fails(2, []string{"no such network interface"}, "observe", "--interface", "nosuch0", "--duration", "1s")
}
