package engine_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dblat/dblat/internal/engine"
	_ "github.com/dblat/dblat/internal/engine/all"
	"github.com/dblat/dblat/internal/wire"
	"github.com/dblat/dblat/internal/wire/wiretest"
)

// TestWireProtocolsSniff offers every engine's wire protocol to captured connections of
// each engine: the one that speaks it takes the connection and follows it to the end;
// traffic of none of them is counted in bytes only, with one line that says so.
func TestWireProtocolsSniff(t *testing.T) {
	ps := engine.WireProtocols()
	var names []string
	for _, p := range ps {
		names = append(names, p.Name())
	}
	if !slices.Equal(names, []string{"Firebird", "MySQL/MariaDB", "PostgreSQL"}) {
		t.Fatalf("protocols %q", names)
	}
	for dir, want := range map[string]string{"firebird": "Firebird", "mariadb": "MySQL/MariaDB", "postgres": "PostgreSQL"} {
		files, _ := filepath.Glob(filepath.Join(dir, "testdata", "wire", "*.cap"))
		if len(files) == 0 {
			t.Fatalf("no captures in %s/testdata/wire", dir)
		}
		for _, f := range files {
			c, err := wiretest.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			tr := wire.NewTracker(wire.TrackerConfig{Protocols: ps})
			for _, ch := range c {
				if ch.Dir == wire.Client {
					tr.Intercept(wire.Client, ch.Data)
					tr.ClientData(ch.Data, ch.At)
				} else {
					tr.Intercept(wire.Server, ch.Data)
					tr.ServerData(ch.Data, ch.At)
				}
			}
			tr.Close(0)
			if tr.Protocol() != want || tr.Stopped() != "" || tr.Transactions() == 0 {
				t.Errorf("%s: protocol %q (stopped %q), %d transactions", f, tr.Protocol(), tr.Stopped(), tr.Transactions())
			}
		}
	}
	for name, first := range map[string][]byte{
		"HTTP": []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
		"TLS":  {0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03},
	} {
		tr := wire.NewTracker(wire.TrackerConfig{Protocols: ps})
		tr.ClientData(first, 1)
		tr.ServerData([]byte("reply"), 2)
		if s := tr.Stopped(); s == "" || tr.Protocol() != "" || tr.Counts().RoundTrips != 1 {
			t.Errorf("%s: stopped %q, protocol %q, %+v", name, s, tr.Protocol(), tr.Counts())
		} else if name == "TLS" && !strings.Contains(s, "TLS from its first byte") {
			t.Errorf("TLS: %q", s)
		}
	}
}
