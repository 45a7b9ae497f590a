package report

import (
	"fmt"
	"time"

	"github.com/dblat/dblat/internal/analysis"
	"github.com/dblat/dblat/internal/observe"
	"github.com/dblat/dblat/internal/replay"
	"github.com/dblat/dblat/internal/words"
)

// replayShapes is how many shapes a replay's comparison shows.
const replayShapes = 8

// writeReplayed writes, for the observation of a replay (dblat replay), the replay set
// against its capture: per shape the transactions, round trips, server time, response
// time and throughput of each; at an added RTT the replay's measurement beside what dblat
// predict's model gives from the capture; and the divergences.
func writeReplayed(ew *analysis.TextWriter, o *Observed) {
	res := o.Replay
	if res == nil {
		return
	}
	how := "at the capture's pace"
	switch {
	case res.Fast:
		how = "as fast as the target answered"
	case res.Speed != 1 || res.ThinkScale != 1:
		how = fmt.Sprintf("at speed %g, pauses × %g", res.Speed, res.ThinkScale)
	}
	if res.OrderCommits {
		how += ", in the capture's commit order"
	}
	rtt := "with no added RTT"
	if res.RTTNs > 0 {
		rtt = "at +" + msText2(time.Duration(res.RTTNs)) + " RTT"
	}
	ew.Printf("Replayed from a capture %s, %s: %d of %s, %s transactions (the capture's: %s), %.2f s (the capture's: %.2f s), %s.\n",
		rtt, how, res.Sessions-res.NotReplayed, words.Count(res.Sessions, "session"),
		fmtNum(float64(res.Transactions)), fmtNum(float64(res.CaptureTransactions)), res.DurationS, res.CaptureDurationS,
		words.Count(int(res.Divergences), "divergence"))
	rows := [][]string{
		{"shape", "transactions", "", "round trips", "", "server ms", "", "response ms", "", "TPS", ""},
		{"", "capture", "replay", "capture", "replay", "capture", "replay", "capture", "replay", "capture", "replay"},
	}
	for i, s := range res.Shapes {
		if i == replayShapes {
			ew.Printf("  (%d more shapes)\n", len(res.Shapes)-i)
			break
		}
		c := s.Capture
		if c == nil {
			c = &replay.ShapeFigures{}
		}
		rows = append(rows, []string{observe.ShortLabel(i, s.Shape), fmt.Sprint(c.Count), fmt.Sprint(s.Count),
			fmt.Sprintf("%.2f", c.RoundTripsMean), fmt.Sprintf("%.2f", s.RoundTripsMean), msNumber(c.ServerMsMean), msNumber(s.ServerMsMean),
			msNumber(c.LatencyMsMean), msNumber(s.LatencyMsMean), meanText(c.TPS), meanText(s.TPS)})
	}
	writeAligned(ew, "  ", rows, func(col int) bool { return col > 0 })
	if p := res.Predicted; p != nil {
		ew.Printf("  At +%s the replay measured %s a transaction and %s TPS; dblat predict's model, from the capture, gives %s and %s TPS for %s (%+.1f %%).\n",
			msText2(time.Duration(p.RTTNs)), msValue(res.LatencyMsMean), meanText(res.TPS), msValue(p.LatencyMs), meanText(p.TPS),
			words.Count(p.Clients, "client"), p.LatencyErrorPct)
	}
	for i, d := range res.DivergedStatements {
		if i == 5 {
			ew.Printf("  … and %d more statements that diverged\n", len(res.DivergedStatements)-i)
			break
		}
		ew.Printf("  %d × %s: captured %s, replayed %s\n", d.Count, cut(d.Statement, 80), d.Example.Captured, d.Example.Replayed)
	}
	ew.Printf("\n")
}

// writeReplays writes, when the report holds two replays or more, one line per replay,
// side by side: its added RTT, how it was replayed, transactions and duration, throughput,
// mean response time and round trips, the model's response time at its RTT, and its
// divergences (dblat results diff compares two of them figure by figure, with intervals
// where replays were repeated).
func writeReplays(ew *analysis.TextWriter, obs []Observed) {
	n := 0
	for i := range obs {
		if obs[i].Replay != nil {
			n++
		}
	}
	if n < 2 {
		return
	}
	ew.Printf("\nReplays side by side (dblat results diff A B compares two)\n")
	rows := [][]string{{"run", "added RTT", "transactions", "duration s", "TPS", "response ms", "round trips", "model ms", "divergences"}}
	for i := range obs {
		o := &obs[i]
		res := o.Replay
		if res == nil {
			continue
		}
		model := "–"
		if p := res.Predicted; p != nil {
			model = msNumber(p.LatencyMs)
		}
		rows = append(rows, []string{fmt.Sprint(o.Run), rttColumn(time.Duration(res.RTTNs)), fmtNum(float64(res.Transactions)),
			fmt.Sprintf("%.2f", res.DurationS), meanText(res.TPS), msNumber(res.LatencyMsMean), fmt.Sprintf("%.2f", o.RoundTrips),
			model, fmt.Sprint(res.Divergences)})
	}
	writeAligned(ew, "  ", rows, func(col int) bool { return col > 0 })
}
