package observe_test

import (
	"bytes"
	"encoding/binary"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dblat/dblat/internal/engine"
	_ "github.com/dblat/dblat/internal/engine/all"
	"github.com/dblat/dblat/internal/latency"
	"github.com/dblat/dblat/internal/observe"
	"github.com/dblat/dblat/internal/wire"
	"github.com/dblat/dblat/internal/wire/wiretest"
	"github.com/dblat/dblat/internal/workload/script"
)

// captures are the engines' captured real-client conversations.
func captures(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob("../engine/*/testdata/wire/*.cap")
	if err != nil || len(paths) < 8 {
		t.Fatalf("captures: %v, %v", paths, err)
	}
	return paths
}

// feed replays a capture into one connection of obs, as the proxy shows it chunks, and
// returns what the connection's observer asked the proxy to change.
func feed(obs latency.Observer, c wiretest.Capture) []latency.Alter {
	co := obs.Open()
	var alters []latency.Alter
	for _, ch := range c {
		if a := co.Data(ch.Dir == wire.Client, ch.Data, ch.At); a.Replace != nil || a.Answer != nil {
			alters = append(alters, a)
		}
	}
	if len(c) > 0 {
		co.Close(c[len(c)-1].At + 1)
	}
	return alters
}

// TestObserverCaptures: fed a captured conversation, the Observer counts the transactions
// and shapes a Tracker counts, changes nothing, and records a script that parses.
func TestObserverCaptures(t *testing.T) {
	for _, path := range captures(t) {
		t.Run(filepath.Base(filepath.Dir(filepath.Dir(filepath.Dir(path))))+"/"+filepath.Base(path), func(t *testing.T) {
			c, err := wiretest.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var agg wire.Aggregate
			tr := wire.NewTracker(wire.TrackerConfig{Protocols: engine.WireProtocols()})
			c.Replay(tr)
			tr.Flush(&agg)
			want := agg.Conns()
			obs := observe.New(observe.Config{Protocols: engine.WireProtocols(), Record: true})
			if alters := feed(obs, c); len(alters) > 0 {
				t.Errorf("the observer changed %d chunks of a captured conversation", len(alters))
			}
			o := obs.Snapshot()
			if o.Transactions != want.Transactions || o.Statements != want.Statements || len(o.Shapes) != len(agg.Shapes()) {
				t.Errorf("observed %d transactions, %d statements, %d shapes; the tracker %d, %d, %d",
					o.Transactions, o.Statements, len(o.Shapes), want.Transactions, want.Statements, len(agg.Shapes()))
			}
			if o.Protocol == "" || o.Connections != 1 || o.Totals != want.Totals {
				t.Errorf("protocol %q, %d connections, totals %+v (tracker %+v)", o.Protocol, o.Connections, o.Totals, want.Totals)
			}
			var b bytes.Buffer
			if _, err := obs.Recorder().Script(&b, observe.ScriptInfo{}); err != nil {
				if o.Transactions > 0 && !strings.Contains(err.Error(), "not replayed") {
					t.Errorf("recording: %v", err)
				}
				return
			}
			if _, err := script.Parse(filepath.Base(path)+".sql", b.Bytes()); err != nil {
				t.Errorf("the recording does not parse: %v\n%s", err, b.String())
			}
		})
	}
}

// TestObserverDeclinesTLS: a PostgreSQL client's SSLRequest is answered N by the observer,
// and the decline is noted once.
func TestObserverDeclinesTLS(t *testing.T) {
	var notes []string
	obs := observe.New(observe.Config{Protocols: engine.WireProtocols(), OnNote: func(n string, cannot bool) {
		if !cannot {
			notes = append(notes, n)
		}
	}})
	req := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, 8), 80877103)
	for range 2 {
		co := obs.Open()
		a := co.Data(true, req, 1)
		if string(a.Answer) != "N" || a.Replace != nil {
			t.Fatalf("SSLRequest: %+v, want the answer N", a)
		}
		// The client goes on in clear: a startup message.
		startup := []byte("\x00\x00\x00\x00\x00\x03\x00\x00user\x00u\x00\x00")
		binary.BigEndian.PutUint32(startup, uint32(len(startup)))
		if a := co.Data(true, startup, 2); a.Answer != nil || a.Replace != nil {
			t.Errorf("startup changed: %+v", a)
		}
		co.Close(3)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "declined TLS") {
		t.Errorf("notes %q, want the decline once", notes)
	}
}

// TestObserverUnknown: traffic of no known protocol is counted and said so, once.
func TestObserverUnknown(t *testing.T) {
	var lines []string
	obs := observe.New(observe.Config{Protocols: engine.WireProtocols(), OnNote: func(n string, cannot bool) {
		if cannot {
			lines = append(lines, n)
		}
	}})
	for range 3 {
		co := obs.Open()
		for i := range int64(5) {
			co.Data(true, []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), 10*i)
			co.Data(false, []byte("HTTP/1.1 200 OK\r\n\r\n"), 10*i+5)
		}
		co.Close(100)
	}
	o := obs.Snapshot()
	if len(lines) != 1 || !strings.Contains(lines[0], "counting bytes and round trips only") {
		t.Errorf("lines %q, want one", lines)
	}
	if o.Unfollowed.Connections != 3 || o.Unfollowed.RoundTrips != 15 || o.Transactions != 0 {
		t.Errorf("unfollowed %+v, transactions %d", o.Unfollowed, o.Transactions)
	}
	var b strings.Builder
	if err := o.WriteText(&b); err != nil || !strings.Contains(b.String(), "3 connections forwarded without being followed") {
		t.Errorf("text %v:\n%s", err, b.String())
	}
}
