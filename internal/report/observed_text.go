package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/dblat/dblat/internal/observe"
	"github.com/dblat/dblat/internal/words"
)

// writeObservedSummary writes one observation as the one-screen summary opens with it:
// its title and question, the verdict, the predictions at ObservedRTTs (throughput, mean
// response time and the Top shapes'), what would help and the caveats, one line each
// where they fit.
func writeObservedSummary(ew *words.Writer, o *Observed) {
	ew.Printf("%s\n", o.Title)
	for _, l := range wrap(o.Question, summaryWidth) {
		ew.Printf("%s\n", l)
	}
	ew.Printf("\n")
	writeReplayed(ew, o)
	writeWrapped(ew, "  ", "  ", o.Verdict)
	ew.Printf("\n")
	writePredictionRows(ew, o, false)
	writeObservedAdvice(ew, o, false)
}

// writePredictionRows writes the prediction table: added RTTs across; throughput, the mean
// response time and each Top shape's (all shapes with all) down.
func writePredictionRows(ew *words.Writer, o *Observed, all bool) {
	head := []string{"Predicted at added RTT"}
	for _, p := range o.Predictions {
		head = append(head, rttColumn(time.Duration(p.RTTNs)))
	}
	tps := []string{"  throughput (TPS)"}
	mean := []string{"  mean response time (ms)"}
	for _, p := range o.Predictions {
		tps = append(tps, boundMark(o.UpperBound, o.LowerBound)+meanText(p.TPS))
		mean = append(mean, msNumber(p.LatencyMs))
	}
	rows := [][]string{head, tps, mean}
	shapes := o.Ranked[:o.Top]
	if all {
		shapes = o.Ranked
	}
	for _, j := range shapes {
		row := []string{"  " + o.Shapes[j].Name}
		for _, p := range o.Predictions {
			row = append(row, msNumber(p.Shapes[j].LatencyMs))
		}
		rows = append(rows, row)
	}
	writeAligned(ew, "", rows, func(col int) bool { return col > 0 })
}

// writeObservedAdvice writes what would help at the headline RTT and the caveats: each in
// full, or (brief) the caveats in their brief form.
func writeObservedAdvice(ew *words.Writer, o *Observed, full bool) {
	if len(o.Losers) > 0 {
		ew.Printf("\nWhat would help at +%s\n", msText2(o.HeadlineRTT))
		for _, l := range o.Losers {
			writeWrapped(ew, "  ", "    ", loserText(o, l, full))
		}
	}
	if len(o.Caveats) > 0 {
		ew.Printf("\nCaveats\n")
		for _, c := range o.Caveats {
			writeWrapped(ew, "  ", "    ", caveatText(o, c, full))
		}
	}
}

// loserText says how much a shape loses at the headline RTT and what would help it, in
// full or in brief.
func loserText(o *Observed, l observe.Loser, full bool) string {
	return shapeName(o, l.Rank, l.Shape) + ": " + loserBody(l, full)
}

// loserBody is loserText without the shape's name.
func loserBody(l observe.Loser, full bool) string {
	a := l.Brief
	if full || a == "" {
		a = l.Advice
	}
	return fmt.Sprintf("+%s a transaction, %s of the time added. %s.", msValue(l.AddedMs), pctText(l.ShareOfAdded), capitalize(a))
}

// caveatText writes a caveat with the shape it concerns, in full or in brief.
func caveatText(o *Observed, c observe.Caveat, full bool) string {
	t := c.Brief
	if full || t == "" {
		t = c.Text
	}
	if c.Shape > 0 {
		t = shapeName(o, c.Shape, "") + ": " + t
	}
	return t
}

// shapeName is the short name of the shape of rank (from 1), or text when there is none.
func shapeName(o *Observed, rank int, text string) string {
	if rank >= 1 && rank <= len(o.Shapes) {
		return o.Shapes[rank-1].Name
	}
	return cut(text, 40)
}

// writeWrapped writes s wrapped to the summary's width, the first line after first and the
// others after indent.
func writeWrapped(ew *words.Writer, first, indent, s string) {
	for i, l := range wrap(s, summaryWidth-len(indent)) {
		if i == 0 {
			ew.Printf("%s%s\n", first, l)
			continue
		}
		ew.Printf("%s%s\n", indent, l)
	}
}

// writeObservedText writes an observation in full: what the summary says, the caveats in
// full, and every shape with its figures and statements, the busiest first.
func writeObservedText(ew *words.Writer, o *Observed) {
	ew.Printf("%s\n", o.Title)
	ew.Printf("%s\n", o.Question)
	ew.Printf("Verdict: %s\n\n", o.Verdict)
	writeReplayed(ew, o)
	writePredictionRows(ew, o, false)
	writeObservedAdvice(ew, o, true)
	ew.Printf("\nShapes, by their share of the time at +%s (times in ms; observed at the proxy, predicted for %s)\n",
		msText2(o.HeadlineRTT), words.Count(o.Clients, "client"))
	head := []string{"shape", "count", "share", "time share", "round trips", "statements", "observed", "p99"}
	for _, p := range o.Predictions[1:] {
		head = append(head, rttColumn(time.Duration(p.RTTNs)))
	}
	rows := [][]string{head}
	for _, j := range o.Ranked {
		s := o.Shapes[j]
		row := []string{s.Name, fmt.Sprint(s.Count), pctText(s.Share), pctText(s.TimeShare), fmt.Sprintf("%.1f", s.RoundTrips),
			fmt.Sprintf("%.1f", s.Statements), msNumber(s.LatencyMs), msNumber(s.P99Ms)}
		for _, p := range o.Predictions[1:] {
			q := msNumber(p.Shapes[j].LatencyMs)
			if p.Shapes[j].Serial {
				q += " q"
			}
			row = append(row, q)
		}
		rows = append(rows, row)
	}
	writeAligned(ew, "  ", rows, func(col int) bool { return col > 0 })
	ew.Printf("  q: the shape's serial section is modelled as a queue\n")
	for _, j := range o.Ranked {
		s := o.Shapes[j]
		ew.Printf("  %s  %s\n", strings.Fields(s.Label)[0], cut(s.Text, 300))
		if s.Serial != "" {
			ew.Printf("      %s\n", s.Serial)
		}
	}
}

// rttColumn heads a prediction column: "0", "+1 ms".
func rttColumn(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	return "+" + msText2(d)
}

// msNumber writes a time in milliseconds to three significant figures, without the unit.
func msNumber(ms float64) string {
	if ms >= 1000 {
		return fmtNum(float64(int64(ms + 0.5)))
	}
	return strings.TrimSuffix(msValue(ms), " ms")
}
