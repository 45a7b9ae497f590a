package report

import "time"

// observedSection is what the page shows of one observed application, ready for the
// template: its chart, the prediction table's rows, what would help, the caveats and the
// shapes, the busiest first (detailShapes of them, the rest collapsed).
type observedSection struct {
	*Observed
	Chart *htmlChart
	// Heading says the section names itself (several observations, or a study's report);
	// alone in its report, the page's title names it.
	Heading bool
	// ShapeHeads are the prediction table's shape columns (the Top shapes' names), and
	// Rows its rows, one per ObservedRTTs level.
	ShapeHeads []string
	Rows       []predictedRow
	// RTTHeads head the shape tables' predicted columns (the levels above 0).
	RTTHeads []string
	Help     []namedText
	Caveats  []namedText
	Shapes   []shapeRow
	More     []shapeRow
	// ShownShare and MoreShare are the shares of the time at the headline RTT of the
	// shapes in Shapes and in More.
	ShownShare, MoreShare float64
	// Replayed is the replay set against its capture, for a replay's observation; nil
	// otherwise.
	Replayed *replayView
}

// predictedRow is the prediction at one added RTT: throughput, mean response time and the
// Top shapes' mean response times, written for the page.
type predictedRow struct {
	RTT, TPS, Mean string
	Shapes         []string
}

// namedText is an item of what would help or of the caveats: the shape it concerns ("" for
// none), the text, what more there is to say (the advice in full), and whether it bounds
// the throughput.
type namedText struct {
	Name, Text, More string
	Bound            bool
}

// shapeRow is one shape in the shape tables, with its predicted mean response time at
// each level above 0.
type shapeRow struct {
	ObservedShape
	Predicted []string
}

// newObservedSection prepares o for the page.
func newObservedSection(o *Observed, heading bool) *observedSection {
	sec := &observedSection{Observed: o, Heading: heading, Replayed: newReplayView(o)}
	top := o.Ranked[:o.Top]
	for _, j := range top {
		sec.ShapeHeads = append(sec.ShapeHeads, o.Shapes[j].Name)
	}
	for i, p := range o.Predictions {
		row := predictedRow{RTT: rttColumn(time.Duration(p.RTTNs)), TPS: boundMark(o.UpperBound, o.LowerBound) + meanText(p.TPS), Mean: msNumber(p.LatencyMs)}
		for _, j := range top {
			row.Shapes = append(row.Shapes, msNumber(p.Shapes[j].LatencyMs))
		}
		sec.Rows = append(sec.Rows, row)
		if i > 0 {
			sec.RTTHeads = append(sec.RTTHeads, row.RTT)
		}
	}
	for _, l := range o.Losers {
		sec.Help = append(sec.Help, namedText{Name: shapeName(o, l.Rank, l.Shape), Text: loserBody(l, false),
			More: capitalize(l.Advice) + "."})
	}
	for _, c := range o.Caveats {
		n := namedText{Text: capitalize(c.Text) + ".", Bound: c.Bound}
		if c.Shape > 0 {
			n.Name = shapeName(o, c.Shape, "")
		}
		sec.Caveats = append(sec.Caveats, n)
	}
	for k, j := range o.Ranked {
		row := shapeRow{ObservedShape: o.Shapes[j]}
		for _, p := range o.Predictions[1:] {
			row.Predicted = append(row.Predicted, msNumber(p.Shapes[j].LatencyMs))
		}
		if k < detailShapes {
			sec.Shapes = append(sec.Shapes, row)
			sec.ShownShare += row.TimeShare
			continue
		}
		sec.More = append(sec.More, row)
		sec.MoreShare += row.TimeShare
	}
	return sec
}
