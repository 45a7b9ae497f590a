package observe

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/dblat/dblat/internal/words"
)

// tableShapes is how many shapes the text tables list; the rest are summed in one line.
const tableShapes = 20

// WriteText writes a readable summary of o: one line of totals, a table of its shapes
// (numbered as TypeLabel numbers them), and what could not be followed.
func (o *Observation) WriteText(w io.Writer) error {
	var b strings.Builder
	proto := o.Protocol
	if proto == "" {
		proto = "no known protocol"
	}
	fmt.Fprintf(&b, "observed %s (%s) in %s over %s: %.1f TPS, %.1f clients on average, %s\n",
		words.Count(o.Transactions, "transaction"), proto, words.Count(o.Connections, "connection"),
		fmtDur(time.Duration(o.WindowNs)), o.TPS, o.Clients, words.Count(int64(len(o.Shapes)), "shape"))
	if o.Abandoned > 0 {
		fmt.Fprintf(&b, "%s open when its connection ended or stopped being followed (not counted)\n", words.Count(o.Abandoned, "transaction"))
	}
	if o.RTTNs > 0 {
		fmt.Fprintf(&b, "observed through an added RTT of %s: its times include it\n", fmtRTT(time.Duration(o.RTTNs)))
	}
	if n := o.Network; n != nil {
		fmt.Fprintf(&b, "network RTT already in these times: %s (%s between the capture point and the server, %s between it and the application; %s)\n",
			fmtRTT(time.Duration(n.RTTNs).Round(time.Microsecond)), fmtRTT(time.Duration(n.ServerSideNs).Round(time.Microsecond)),
			fmtRTT(time.Duration(n.ClientSideNs).Round(time.Microsecond)), n.Basis())
	}
	if c := o.Capture; c != nil {
		fmt.Fprintf(&b, "captured: %s (%s)", words.Count(c.Packets, "packet"), words.Bytes(c.Bytes))
		if c.KernelDrops != nil {
			fmt.Fprintf(&b, ", %s dropped by the kernel", words.Count(*c.KernelDrops, "packet"))
		}
		if c.Retransmitted > 0 || c.OutOfOrder > 0 {
			fmt.Fprintf(&b, ", %s retransmitted, %s out of order", words.Count(c.Retransmitted, "segment"), words.Count(c.OutOfOrder, "segment"))
		}
		b.WriteString("\n")
		if c.MidStream > 0 || c.Gaps > 0 {
			fmt.Fprintf(&b, "%s already open when the capture started; %s in the captured streams (%s missing); %s followed again from a point where the protocol allows it; the transactions open at a gap or at the capture's start are not counted\n",
				words.Count(c.MidStream, "connection"), words.Count(c.Gaps, "gap"), words.Bytes(c.GapBytes), words.Count(c.Resumed, "connection"))
		}
	}
	if len(o.Shapes) > 0 {
		tw := words.NumberColumns(&b)
		fmt.Fprintln(tw, "#\tcount\tshare\trt/tx\tstmts\tB up\tB down\tserver ms\tclient ms\tin tx ms\tp99 ms\tbetween ms\t")
		rest, restN := 0, int64(0)
		for i, s := range o.Shapes {
			if i >= tableShapes {
				rest++
				restN += s.Count
				continue
			}
			rt := fmt.Sprintf("%.1f", s.RoundTripsMean)
			if s.RoundTripsMax != s.RoundTripsP50 {
				rt = fmt.Sprintf("%.1f (≤%d)", s.RoundTripsMean, s.RoundTripsMax)
			}
			fmt.Fprintf(tw, "%d\t%d\t%.1f %%\t%s\t%.1f\t%.0f\t%.0f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t\n", i+1, s.Count,
				100*float64(s.Count)/float64(max(1, o.Transactions)), rt, s.StatementsMean, s.BytesUpMean, s.BytesDownMean,
				s.ServerMsMean, s.ClientMsMean, s.LatencyMsMean, s.LatencyMsP99, s.BetweenMsMean)
		}
		tw.Flush()
		if rest > 0 {
			fmt.Fprintf(&b, "… and %s of %s more\n", words.Count(restN, "transaction"), words.Count(int64(rest), "shape"))
		}
		for i, s := range o.Shapes[:min(tableShapes, len(o.Shapes))] {
			fmt.Fprintf(&b, "%3d  %s\n", i+1, clip(s.Shape, 300))
			if s.Serial != nil {
				fmt.Fprintf(&b, "     one at a time from round trip %d to the end (%d round trips held, %.3f ms; %.3f ms waiting): a lock all of them take\n",
					s.Serial.FromRoundTrip, s.Serial.RoundTripsHeld, s.Serial.HeldMsMean, s.Serial.WaitMsMean)
			}
			for _, d := range s.Diagnoses {
				fmt.Fprintf(&b, "     %s\n", d)
			}
		}
	}
	for _, d := range o.Diagnoses {
		fmt.Fprintf(&b, "%s\n", d)
	}
	if o.Unfollowed.Connections > 0 {
		how := "forwarded"
		if o.Source != "" && o.Source != SourceProxy {
			how = "seen"
		}
		fmt.Fprintf(&b, "%s %s without being followed: %s up, %s down, %s\n", words.Count(o.Unfollowed.Connections, "connection"), how,
			words.Bytes(o.Unfollowed.BytesUp), words.Bytes(o.Unfollowed.BytesDown), words.Count(o.Unfollowed.RoundTrips, "round trip"))
	}
	for _, r := range slices.Sorted(maps.Keys(o.CannotFollow)) {
		fmt.Fprintf(&b, "not followed (%s): %s\n", words.Count(o.CannotFollow[r], "connection"), r)
	}
	for _, r := range slices.Sorted(maps.Keys(o.Notes)) {
		fmt.Fprintf(&b, "note (%s): %s\n", words.Count(o.Notes[r], "connection"), r)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteText writes a forecast for people: the headline, the per-shape table, the shapes
// that lose most with advice, and the notes.
func (f *Forecast) WriteText(w io.Writer) error {
	var b strings.Builder
	rtt := time.Duration(f.RTTNs)
	bound := ""
	switch {
	case f.UpperBound && f.LowerBound:
		bound = "about "
	case f.UpperBound:
		bound = "at most "
	case f.LowerBound:
		bound = "at least "
	}
	fmt.Fprintf(&b, "at %s added RTT with %s: %s%.1f TPS, mean response time %s (observed at %s: %.1f TPS, %s)\n",
		fmtRTT(rtt), words.Count(int64(f.Clients), "client"), bound, f.TPS, fmtMs(f.LatencyMs),
		fmtRTT(time.Duration(f.ObservedRTTNs)), f.ObservedTPS, fmtMs(f.ObservedLatencyMs))
	switch {
	case f.Fall10RTTNs > 0 && f.Fall50RTTNs > 0:
		fmt.Fprintf(&b, "throughput falls by 10 %% at %s added RTT and by half at %s\n",
			fmtRTT(time.Duration(f.Fall10RTTNs).Round(time.Microsecond)), fmtRTT(time.Duration(f.Fall50RTTNs).Round(time.Microsecond)))
	case f.Fall10RTTNs > 0:
		fmt.Fprintf(&b, "throughput falls by 10 %% at %s added RTT\n", fmtRTT(time.Duration(f.Fall10RTTNs).Round(time.Microsecond)))
	}
	tw := words.NumberColumns(&b)
	fmt.Fprintln(tw, "#\tcount\trt/tx\tobserved ms\tpredicted ms\tadded ms\t")
	for i, s := range f.Shapes {
		if i >= tableShapes {
			break
		}
		mark := ""
		if s.Serial {
			mark = " (queue)"
		}
		fmt.Fprintf(tw, "%d\t%d\t%.1f\t%.3f\t%.3f%s\t%+.3f\t\n", i+1, s.Count, s.RoundTrips, s.ObservedMs, s.LatencyMs, mark, s.AddedMs)
	}
	tw.Flush()
	if len(f.Losers) > 0 {
		b.WriteString("what loses most:\n")
		for _, l := range f.Losers {
			fmt.Fprintf(&b, "  %s: %s a transaction (%.0f %% of the added time); %s\n", clip(l.Shape, 100), "+"+fmtMs(l.AddedMs),
				100*l.ShareOfAdded, l.Advice)
		}
	}
	for _, e := range f.Evidence {
		fmt.Fprintf(&b, "evidence: %s\n", e)
	}
	for _, n := range f.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func fmtDur(d time.Duration) string {
	switch {
	case d >= time.Minute:
		return d.Round(time.Second).String()
	case d >= time.Second:
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	return fmtMs(float64(d) / 1e6)
}
