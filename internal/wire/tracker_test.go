package wire

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// toy is a line protocol for testing the Tracker apart from any real protocol. The client
// sends lines "Q <sql>" (a request running one statement), "P <sql>" (a request preparing
// one), "N" (a request with no statement) and "TLS?" (answered "no" by the interceptor); the
// server answers each request with a line "<status>[ commit|rollback][ err]", status one of
// I, T, E, U (unknown).
type toy struct{}

func (toy) Name() string     { return "toy" }
func (toy) Lexicon() Lexicon { return pgLex }
func (toy) Sniff(client, server []byte) Verdict {
	switch {
	case len(server) > 0 && len(client) == 0:
		return No
	case len(client) < 2:
		return NeedMore
	case bytes.HasPrefix(client, []byte("Q ")) || bytes.HasPrefix(client, []byte("P ")) ||
		bytes.HasPrefix(client, []byte("N\n")) || bytes.HasPrefix(client, []byte("TLS?")):
		return Yes
	}
	return No
}
func (toy) NewDecoder(s Sink) Decoder { return &toyDecoder{sink: s} }

type toyDecoder struct {
	sink Sink
	ev   Event
}

func (d *toyDecoder) Intercept(from Direction, b []byte) Intercept {
	if from == Client && string(b) == "TLS?" {
		return Intercept{Action: Answer, Bytes: []byte("no")}
	}
	return Intercept{}
}

func (d *toyDecoder) emit(k EventKind, text string) {
	d.ev = Event{Kind: k, Text: []byte(text)}
	d.sink.Event(&d.ev)
}

func (d *toyDecoder) ClientData(b []byte, _ int64) {
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		switch {
		case strings.HasPrefix(l, "Q "):
			d.ev = Event{Kind: EvStatement, Text: []byte(l[2:]), End: TxControl([]byte(l[2:]), pgLex)}
			d.sink.Event(&d.ev)
			d.emit(EvSent, "")
		case strings.HasPrefix(l, "P "):
			d.emit(EvPrepare, l[2:])
			d.emit(EvSent, "")
		case l == "N":
			d.emit(EvSent, "")
		case l == "BAD":
			d.ev = Event{Kind: EvCannotFollow, Reason: "bad line"}
			d.sink.Event(&d.ev)
		case l == "PANIC":
			panic("a toy decoder's bug")
		}
	}
}

func (d *toyDecoder) ServerData(b []byte, _ int64) {
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		e := Event{Kind: EvCompleted}
		switch f[0] {
		case "I":
			e.Status = StatusIdle
		case "T":
			e.Status = StatusInTx
		case "E":
			e.Status = StatusFailed
		case "U":
			e.Status = StatusUnknown
		default:
			continue // a partial answer
		}
		for _, w := range f[1:] {
			switch w {
			case "commit":
				e.End = EndCommit
			case "rollback":
				e.End = EndRollback
			case "err":
				e.Failed = true
			}
		}
		d.sink.Event(&e)
	}
}

func (d *toyDecoder) Close(int64) {}

// script feeds a tracker: each step is a direction, a time and the chunk.
type step struct {
	d  Direction
	at int64
	b  string
}

func run(t *testing.T, steps []step) (*Tracker, []Tx) {
	t.Helper()
	var txs []Tx
	tr := NewTracker(TrackerConfig{Protocols: []Protocol{toy{}}, OnTx: func(tx *Tx) {
		c := *tx
		sh := *tx.Shape
		c.Shape = &sh
		txs = append(txs, c)
	}})
	end := int64(0)
	for _, s := range steps {
		if s.d == Client {
			tr.ClientData([]byte(s.b), s.at)
		} else {
			tr.ServerData([]byte(s.b), s.at)
		}
		end = s.at
	}
	tr.Close(end + 1)
	return tr, txs
}

func TestTrackerAutocommit(t *testing.T) {
	_, txs := run(t, []step{
		{Client, 0, "Q SELECT 1\n"}, {Server, 100, "I\n"},
		{Client, 1000, "Q SELECT 2\n"}, {Server, 1100, "partial"}, {Server, 1150, "I\n"},
	})
	if len(txs) != 2 {
		t.Fatalf("transactions: %d, want 2", len(txs))
	}
	a, b := txs[0], txs[1]
	if a.RoundTrips != 1 || a.ServerNs != 100 || a.ClientNs != 0 || a.HasGap || a.Statements != 1 ||
		a.Outcome != Autocommit || a.Shape.Text != "SELECT ?" || a.BytesUp != 11 || a.BytesDown != 2 {
		t.Errorf("first: %+v", a)
	}
	if b.RoundTrips != 1 || b.ServerNs != 150 || !b.HasGap || b.GapNs != 900 || b.Start != 1000 || b.End != 1150 ||
		b.BytesDown != 9 {
		t.Errorf("second: %+v", b)
	}
	if a.Shape.Hash != b.Shape.Hash {
		t.Errorf("SELECT 1 and SELECT 2 have different shapes")
	}
}

func TestTrackerExplicitTransaction(t *testing.T) {
	tr, txs := run(t, []step{
		{Client, 0, "Q BEGIN\n"}, {Server, 10, "T\n"},
		{Client, 30, "Q UPDATE t SET a = 5 WHERE id = 7\n"}, {Server, 50, "T\n"},
		{Client, 80, "Q COMMIT\n"}, {Server, 90, "I commit\n"},
	})
	if len(txs) != 1 {
		t.Fatalf("transactions: %d", len(txs))
	}
	x := txs[0]
	if x.RoundTrips != 3 || x.Statements != 3 || x.ServerNs != 10+20+10 || x.ClientNs != 20+30 ||
		x.Outcome != Committed || x.Shape.Text != "BEGIN; UPDATE t SET a = ? WHERE id = ?; COMMIT" {
		t.Errorf("tx: %+v %q", x, x.Shape.Text)
	}
	if c := tr.Counts(); c.RoundTrips != 3 || c.ServerNs != 40 || c.ClientNs != 50 {
		t.Errorf("connection counts: %+v", c)
	}
}

func TestTrackerPipeline(t *testing.T) {
	_, txs := run(t, []step{
		{Client, 0, "Q SELECT 1\nQ SELECT 2\nQ BEGIN\nQ SELECT 3\nQ COMMIT\n"},
		{Server, 10, "I\nI\n"}, {Server, 20, "T\nT\nI commit\n"},
	})
	if len(txs) != 3 {
		t.Fatalf("transactions: %d, want 3", len(txs))
	}
	for i, want := range []int{1, 1, 3} {
		if txs[i].Statements != want || txs[i].RoundTrips != 1 {
			t.Errorf("tx %d: %d statements, %d round trips; want %d, 1", i, txs[i].Statements, txs[i].RoundTrips, want)
		}
	}
}

func TestTrackerFailedTransaction(t *testing.T) {
	_, txs := run(t, []step{
		{Client, 0, "Q BEGIN\n"}, {Server, 1, "T\n"},
		{Client, 2, "Q SELECT 1/0\n"}, {Server, 3, "E err\n"},
		{Client, 4, "Q SELECT 1\n"}, {Server, 5, "E err\n"},
		{Client, 6, "Q COMMIT\n"}, {Server, 7, "I rollback\n"},
	})
	if len(txs) != 1 || !txs[0].Failed || txs[0].Errors != 2 || txs[0].Outcome != RolledBack || txs[0].Statements != 4 {
		t.Fatalf("txs: %+v", txs)
	}
}

func TestTrackerPrepareJoinsNextTransaction(t *testing.T) {
	_, txs := run(t, []step{
		{Client, 0, "P SELECT $1\n"}, {Server, 10, "I\n"},
		{Client, 15, "Q SELECT $1\n"}, {Server, 25, "I\n"},
		// A statement-less request between a prepare and the statement breaks the run.
		{Client, 100, "P SELECT $2\n"}, {Server, 110, "I\n"},
		{Client, 120, "N\n"}, {Server, 130, "I\n"},
		{Client, 140, "Q SELECT $2\n"}, {Server, 150, "U\n"},
	})
	if len(txs) != 2 {
		t.Fatalf("transactions: %d", len(txs))
	}
	if x := txs[0]; x.RoundTrips != 2 || x.Statements != 1 || x.ClientNs != 5 || x.ServerNs != 20 || x.Start != 0 {
		t.Errorf("prepare and execute: %+v", x)
	}
	if x := txs[1]; x.RoundTrips != 1 || x.Start != 140 || x.GapNs != 140-25 {
		t.Errorf("after a ping: %+v", x)
	}
}

// TestTrackerTrailingCommit: a COMMIT with nothing to end right after a transaction ended
// belongs to it (a driver committing again as it closes a statement); one after another
// request does not.
func TestTrackerTrailingCommit(t *testing.T) {
	_, txs := run(t, []step{
		{Client, 0, "Q INSERT INTO t VALUES (1)\nQ COMMIT\n"}, {Server, 10, "T\nI commit\n"},
		{Client, 20, "Q COMMIT\n"}, {Server, 30, "I commit\n"},
		{Client, 40, "Q SELECT 1\n"}, {Server, 50, "I\n"},
		{Client, 60, "N\n"}, {Server, 70, "I\n"},
		{Client, 80, "Q ROLLBACK\n"}, {Server, 90, "I\n"},
		{Client, 100, "Q ROLLBACK\n"}, {Server, 110, "I err\n"}, // no transaction
		{Client, 120, "Q BEGIN\n"}, {Server, 130, "T\n"}, {Client, 140, "Q COMMIT\n"}, {Server, 150, "I commit\n"},
	})
	var got []string
	for _, x := range txs {
		got = append(got, fmt.Sprintf("%s|%d|%d|%d", x.Shape.Text, x.RoundTrips, x.End, x.Statements))
	}
	// The ROLLBACK after the SELECT (and a ping) belongs to it too.
	want := []string{"INSERT INTO t VALUES (?); COMMIT; COMMIT|2|30|3", "SELECT ?; ROLLBACK|3|90|2", "BEGIN; COMMIT|2|150|2"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestTrackerUnrecognisedAndCannotFollow(t *testing.T) {
	tr, txs := run(t, []step{{Client, 0, "HELLO"}, {Server, 5, "WORLD"}})
	if len(txs) != 0 || !strings.Contains(tr.Stopped(), "not toy traffic") || tr.Counts().RoundTrips != 1 {
		t.Fatalf("stopped %q, counts %+v", tr.Stopped(), tr.Counts())
	}
	tr, txs = run(t, []step{
		{Client, 0, "Q BEGIN\n"}, {Server, 1, "T\n"}, {Client, 2, "BAD\n"}, {Server, 3, "I\n"},
		{Client, 4, "Q SELECT 1\n"}, {Server, 5, "I\n"},
	})
	var a Aggregate
	tr.Close(6)
	tr.Flush(&a)
	c := a.Conns()
	if len(txs) != 0 || tr.Stopped() != "bad line" || c.Abandoned != 1 || c.CannotFollow["bad line"] != 1 ||
		c.Totals.RoundTrips != 3 || c.Connections != 1 || c.Protocols["toy"] != 1 {
		t.Fatalf("txs %v, conns %+v", txs, c)
	}
}

func TestTrackerSniffAtIntercept(t *testing.T) {
	tr := NewTracker(TrackerConfig{Protocols: []Protocol{toy{}}})
	if ic := tr.Intercept(Client, []byte("TLS?")); ic.Action != Answer || string(ic.Bytes) != "no" {
		t.Fatalf("first chunk: %+v", ic)
	}
	if tr.Protocol() != "toy" {
		t.Fatalf("protocol %q", tr.Protocol())
	}
	tr.ClientData([]byte("Q SELECT 1\n"), 1)
	tr.ServerData([]byte("I\n"), 2)
	tr.Close(3)
	if tr.Transactions() != 1 {
		t.Fatalf("transactions %d", tr.Transactions())
	}
}

func TestAggregate(t *testing.T) {
	var a Aggregate
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tr := NewTracker(TrackerConfig{Protocols: []Protocol{toy{}}})
			at := int64(0)
			for i := range 50 {
				at += 100
				tr.ClientData([]byte("Q BEGIN\n"), at)
				tr.ServerData([]byte("T\n"), at+10)
				// Transactions with 2 or 3 round trips, g-dependent.
				if i%2 == 0 || g%2 == 0 {
					tr.ClientData([]byte("Q SELECT 7\n"), at+20)
					tr.ServerData([]byte("T\n"), at+30)
				}
				tr.ClientData([]byte("Q COMMIT\n"), at+40)
				tr.ServerData([]byte("I commit\n"), at+50)
				if i%10 == 0 {
					tr.Flush(&a)
				}
			}
			tr.Close(at + 60)
			tr.Flush(&a)
		}()
	}
	wg.Wait()
	c := a.Conns()
	if c.Connections != 8 || c.Transactions != 400 {
		t.Fatalf("conns %+v", c)
	}
	s := a.Shapes()
	if len(s) != 2 {
		t.Fatalf("shapes: %+v", s)
	}
	// 4 goroutines of 50 with the SELECT, 4 of 25: 300 and 100.
	top := s[0]
	if top.Count != 300 || top.RoundTripsP50 != 3 || top.RoundTripsMax != 3 || top.RoundTripsMean != 3 ||
		top.StatementsMean != 3 || top.Commits != 300 || top.Text != "BEGIN; SELECT ?; COMMIT" ||
		top.ServerMsMean != 30e-6 || top.ClientMsMean != 20e-6 {
		t.Errorf("top shape: %+v", top)
	}
	if s[1].Count != 100 || s[1].RoundTripsMean != 2 || s[1].BetweenMsMean <= 0 {
		t.Errorf("second shape: %+v", s[1])
	}
}

// TestTrackerSurvivesADecoderPanic: a decoder's panic stops the following of its connection
// with a note, as a decoding failure does, and reaches neither the caller (the proxy, whose
// other connections it would take down) nor the transactions counted before it.
func TestTrackerSurvivesADecoderPanic(t *testing.T) {
	var txs int
	tr := NewTracker(TrackerConfig{Protocols: []Protocol{toy{}}, OnTx: func(*Tx) { txs++ }})
	tr.ClientData([]byte("Q SELECT 1\n"), 1)
	tr.ServerData([]byte("I\n"), 2)
	tr.ClientData([]byte("PANIC\n"), 3)
	tr.ServerData([]byte("I\n"), 4)
	tr.ClientData([]byte("Q SELECT 2\n"), 5)
	tr.Close(6)
	if !strings.Contains(tr.Stopped(), "the toy decoder failed (a toy decoder's bug)") {
		t.Errorf("stopped: %q", tr.Stopped())
	}
	if txs != 1 || tr.Transactions() != 1 {
		t.Errorf("%d transactions reported, %d counted; want the one before the panic", txs, tr.Transactions())
	}
}

// TestTrackerSplits: a flight whose second client chunk came SplitPause or more after its
// first (the server had not answered) counts a client split and its pause, outside server
// and client time; chunks closer together do not; an answer in two chunks that far apart
// counts a server split, inside server time.
func TestTrackerSplits(t *testing.T) {
	const ms = 1_000_000
	tr, txs := run(t, []step{
		// A request held back 40 ms behind the one before it, as Nagle holds a write until
		// the delayed ACK of the previous one.
		{Client, 0, "Q BEGIN\n"}, {Client, 40 * ms, "Q SELECT 1\n"}, {Server, 41 * ms, "T\nT\n"},
		// Two writes 1 ms apart: no split.
		{Client, 42 * ms, "Q UPDATE t SET a = 1\n"}, {Client, 43 * ms, "Q SELECT 2\n"}, {Server, 44 * ms, "T\n"},
		// An answer in two parts 45 ms apart.
		{Server, 89 * ms, "T\n"},
		{Client, 90 * ms, "Q COMMIT\n"}, {Server, 91 * ms, "I commit\n"},
	})
	if len(txs) != 1 {
		t.Fatalf("transactions: %d", len(txs))
	}
	x := txs[0]
	if x.ClientSplits != 1 || x.ClientSplitNs != 40*ms || x.ServerSplits != 1 || x.ServerSplitNs != 45*ms {
		t.Errorf("splits: %+v", x.Counts)
	}
	// The time in the transaction is server time, client time, the client's split and the
	// 1 ms between two writes too close to count.
	if got := x.ServerNs + x.ClientNs + x.ClientSplitNs + 1*ms; got != x.End-x.Start {
		t.Errorf("server %d + client %d + split %d + 1 ms = %d, want the transaction's %d", x.ServerNs, x.ClientNs, x.ClientSplitNs, got, x.End-x.Start)
	}
	if c := tr.Counts(); c.ClientSplits != 1 || c.ServerSplits != 1 {
		t.Errorf("connection counts: %+v", c)
	}
	var a Aggregate
	tr.Flush(&a)
	if s := a.Shapes(); len(s) != 1 || s[0].ClientSplitsMean != 1 || s[0].ClientSplitMsMean != 40 || s[0].ServerSplitMsMean != 45 {
		t.Errorf("aggregate: %+v", s)
	}
}
