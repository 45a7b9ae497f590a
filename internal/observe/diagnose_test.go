package observe

import (
	"strings"
	"testing"
)

// TestDiagnose: pauses of a delayed ACK's length inside requests are named as Nagle's
// algorithm with the fix; shorter ones as the client's own pauses; too little time says
// nothing; the time between transactions is diagnosed alike.
func TestDiagnose(t *testing.T) {
	// mysql-connector-python's prepared cursor as observed: 2 splits of 44 ms a transaction.
	nagle := Shape{LatencyMsMean: 92.2, ClientSplitsMean: 1.98, ClientSplitMsMean: 87}
	d := DiagnoseShape(&nagle)
	if len(d) != 1 || !strings.Contains(d[0], "Nagle") || !strings.Contains(d[0], "TCP_NODELAY") || !strings.Contains(d[0], "87.0 ms of its 92.2 ms") {
		t.Errorf("Nagle: %q", d)
	}
	busy := Shape{LatencyMsMean: 30, ClientSplitsMean: 1, ClientSplitMsMean: 12}
	if d := DiagnoseShape(&busy); len(d) != 1 || strings.Contains(d[0], "Nagle") || !strings.Contains(d[0], "paused") {
		t.Errorf("12 ms pauses: %q", d)
	}
	small := Shape{LatencyMsMean: 500, ClientSplitsMean: 0.1, ClientSplitMsMean: 4}
	if d := DiagnoseShape(&small); d != nil {
		t.Errorf("4 ms of 500: %q", d)
	}
	server := Shape{LatencyMsMean: 50, ServerSplitsMean: 1, ServerSplitMsMean: 41}
	if d := DiagnoseShape(&server); len(d) != 1 || !strings.Contains(d[0], "server's answers") {
		t.Errorf("server: %q", d)
	}
	o := &Observation{Transactions: 100, BetweenMsMean: 46, BetweenSplitMsMean: 44}
	o.Totals.ClientSplits = 100
	if d := DiagnoseBetween(o); len(d) != 1 || !strings.Contains(d[0], "between transactions") || !strings.Contains(d[0], "Nagle") {
		t.Errorf("between: %q", d)
	}
	o.BetweenSplitMsMean = 0.5
	if d := DiagnoseBetween(o); d != nil {
		t.Errorf("0.5 ms between: %q", d)
	}
}

// TestFirstUseNote: a shape whose extra round trips came at most once per connection (pgx
// preparing on first use: 4 round trips, the first transaction of each of 4 connections 6)
// gets predict's note; one whose extra round trips came more often does not.
func TestFirstUseNote(t *testing.T) {
	o := &Observation{Transactions: 160, Connections: 4, Clients: 4, TPS: 100, WindowNs: 1.6e9,
		Shapes: []Shape{{Shape: "BEGIN; SELECT ?; COMMIT", Count: 160, RoundTripsP50: 4, RoundTripsMax: 6,
			RoundTripsMean: 4 + 8.0/160, LatencyMsMean: 1, StatementsMean: 3}}}
	has := func(o *Observation) bool {
		f, err := Predict(o, 20e6, 4)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Contains(strings.Join(f.Notes, "\n"), "first use")
	}
	if !has(o) {
		t.Error("no first-use note for 8 extra round trips over 4 connections")
	}
	o.Shapes[0].RoundTripsMean = 4.5
	if has(o) {
		t.Error("a first-use note for 80 extra round trips over 4 connections")
	}
}
