package observe

import "fmt"

// Thresholds of the split-request diagnosis.
const (
	// diagMinMs and diagMinShare: a shape's split pauses are worth a line when they take
	// at least 1 ms a transaction and 5 % of its time.
	diagMinMs    = 1.0
	diagMinShare = 0.05
	// nagleMinMs and nagleMaxMs bound the pauses that are a delayed ACK's: Linux delays
	// an ACK by 40 ms at least, Windows by up to 200 ms (a little more for a busy machine).
	nagleMinMs = 30.0
	nagleMaxMs = 250.0
)

// nagleAdvice is what the split-request lines say about pauses of a delayed ACK's length.
const nagleAdvice = "the signature of Nagle's algorithm (the client's next write waits until its previous one is " +
	"acknowledged) meeting a delayed ACK (40 ms on Linux): set TCP_NODELAY on the client's socket, or have it write " +
	"each request, and a request the server does not answer together with the next, in one write"

// DiagnoseShape says, one line each, where a shape's time that neither the server nor the
// client's work between round trips explains went: requests that reached the proxy in
// several writes with pauses between them while the server had not answered
// (Shape.ClientSplitMsMean), and answers likewise (ServerSplitMsMean). Pauses of a delayed
// ACK's length are named as Nagle's algorithm meeting a delayed ACK, with the fix. It
// returns nil when such pauses take too little of the transaction to matter.
func DiagnoseShape(s *Shape) []string {
	var out []string
	if s.ClientSplitsMean > 0 && s.ClientSplitMsMean >= diagMinMs && s.ClientSplitMsMean >= diagMinShare*s.LatencyMsMean {
		pause := s.ClientSplitMsMean / s.ClientSplitsMean
		line := fmt.Sprintf("%.1f ms of its %.1f ms in a transaction went in pauses inside the client's requests "+
			"(%.2f a transaction, %.1f ms each: a request reached the proxy in several writes and the server had not answered)",
			s.ClientSplitMsMean, s.LatencyMsMean, s.ClientSplitsMean, pause)
		if pause >= nagleMinMs && pause <= nagleMaxMs {
			line += ": " + nagleAdvice
		} else {
			line += ": the client paused between the writes of a request (its own work, or a busy machine)"
		}
		out = append(out, line)
	}
	if s.ServerSplitsMean > 0 && s.ServerSplitMsMean >= diagMinMs && s.ServerSplitMsMean >= diagMinShare*s.LatencyMsMean {
		pause := s.ServerSplitMsMean / s.ServerSplitsMean
		if pause >= nagleMinMs && pause <= nagleMaxMs {
			out = append(out, fmt.Sprintf("%.1f ms of its server time went in pauses inside the server's answers (%.2f a "+
				"transaction, %.1f ms each): a server that writes an answer in several writes without TCP_NODELAY meets "+
				"the client's delayed ACK", s.ServerSplitMsMean, s.ServerSplitsMean, pause))
		}
	}
	return out
}

// DiagnoseBetween says, in a line, how much of the time between transactions went in
// pauses inside requests that no transaction claimed (Observation.BetweenSplitMsMean), or
// nil when that is too little to matter.
func DiagnoseBetween(o *Observation) []string {
	ms := o.BetweenSplitMsMean
	if ms < diagMinMs || ms < diagMinShare*o.BetweenMsMean {
		return nil
	}
	splits := float64(o.Totals.ClientSplits-o.InTransactions.ClientSplits) / float64(max(1, o.Transactions))
	line := fmt.Sprintf("%.1f ms a transaction between transactions went in pauses inside the client's requests "+
		"(%.2f a transaction)", ms, splits)
	if splits > 0 {
		if pause := ms / splits; pause >= nagleMinMs && pause <= nagleMaxMs {
			line += ": " + nagleAdvice
		}
	}
	return []string{line}
}
