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
