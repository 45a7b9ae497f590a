package report

import (
	"fmt"
	"time"

	"github.com/dblat/dblat/internal/observe"
	"github.com/dblat/dblat/internal/replay"
	"github.com/dblat/dblat/internal/words"
)

// replayShapes is how many shapes a replay's comparison shows.
const replayShapes = 8

// replayView is a replay set against its capture, in words and table cells, for the text
// and the page alike.
type replayView struct {
	// Line says how it was replayed and what came of it; Head and Rows are the per-shape
	// table (capture and replay side by side); Predicted the measurement beside the model
	// at the replay's RTT ("" with none added); Diverged a line per statement that diverged.
	Line      string
	Head      []string
	Rows      [][]string
	Predicted string
	Diverged  []string
}

// newReplayView describes o's replay; nil when o is no replay's.
func newReplayView(o *Observed) *replayView {
	res := o.Replay
	if res == nil {
		return nil
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
	v := &replayView{
		Line: fmt.Sprintf("Replayed from a capture %s, %s: %d of %s, %s transactions (the capture's: %s), %.2f s (the capture's: %.2f s), %s.",
			rtt, how, res.Sessions-res.NotReplayed, words.Count(res.Sessions, "session"),
			fmtNum(float64(res.Transactions)), fmtNum(float64(res.CaptureTransactions)), res.DurationS, res.CaptureDurationS,
			words.Count(int(res.Divergences), "divergence")),
		Head: []string{"shape", "transactions", "", "round trips", "", "server ms", "", "response ms", "", "TPS", ""},
	}
	v.Rows = append(v.Rows, []string{"", "capture", "replay", "capture", "replay", "capture", "replay", "capture", "replay", "capture", "replay"})
	for i, s := range res.Shapes {
		if i == replayShapes {
			break
		}
		c := s.Capture
		if c == nil {
			c = &replay.ShapeFigures{}
		}
		v.Rows = append(v.Rows, []string{observe.ShortLabel(i, s.Shape), fmt.Sprint(c.Count), fmt.Sprint(s.Count),
			fmt.Sprintf("%.2f", c.RoundTripsMean), fmt.Sprintf("%.2f", s.RoundTripsMean), msNumber(c.ServerMsMean), msNumber(s.ServerMsMean),
			msNumber(c.LatencyMsMean), msNumber(s.LatencyMsMean), meanText(c.TPS), meanText(s.TPS)})
	}
	if n := len(res.Shapes) - replayShapes; n > 0 {
		v.Rows = append(v.Rows, []string{fmt.Sprintf("(%d more shapes)", n)})
	}
	if p := res.Predicted; p != nil {
		v.Predicted = fmt.Sprintf("At +%s the replay measured %s a transaction and %s TPS; dblat predict's model, from the capture, gives %s and %s TPS for %s (%+.1f %%).",
			msText2(time.Duration(p.RTTNs)), msValue(res.LatencyMsMean), meanText(res.TPS), msValue(p.LatencyMs), meanText(p.TPS),
			words.Count(p.Clients, "client"), p.LatencyErrorPct)
	}
	for i, d := range res.DivergedStatements {
		if i == 5 {
			v.Diverged = append(v.Diverged, fmt.Sprintf("… and %d more statements that diverged", len(res.DivergedStatements)-i))
			break
		}
		v.Diverged = append(v.Diverged, fmt.Sprintf("%d × %s: captured %s, replayed %s", d.Count, cut(d.Statement, 80), d.Example.Captured, d.Example.Replayed))
	}
	return v
}

// writeReplayed writes, for the observation of a replay (dblat replay), the replay set
// against its capture: per shape the transactions, round trips, server time, response
// time and throughput of each; at an added RTT the replay's measurement beside what dblat
// predict's model gives from the capture; and the divergences.
func writeReplayed(ew *words.Writer, o *Observed) {
	v := newReplayView(o)
	if v == nil {
		return
	}
	ew.Printf("%s\n", v.Line)
	writeAligned(ew, "  ", append([][]string{v.Head}, v.Rows...), func(col int) bool { return col > 0 })
	if v.Predicted != "" {
		ew.Printf("  %s\n", v.Predicted)
	}
	for _, d := range v.Diverged {
		ew.Printf("  %s\n", d)
	}
	ew.Printf("\n")
}

// writeReplays writes, when the report holds two replays or more, one line per replay,
// side by side: its added RTT, how it was replayed, transactions and duration, throughput,
// mean response time and round trips, the model's response time at its RTT, and its
// divergences (dblat results diff compares two of them figure by figure, with intervals
// where replays were repeated).
func writeReplays(ew *words.Writer, obs []Observed) {
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
