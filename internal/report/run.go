package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dblat/dblat/internal/disturb"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/spec"
	"github.com/dblat/dblat/internal/words"
	"github.com/dblat/dblat/internal/workload"
)

// WriteRunSummary writes one run's headline figures and its per-type table: what `dblat
// run` prints when a run ends and `dblat results show` opens with. An open-loop run's table
// leads with response times (from each transaction's intended start), then service time
// and schedule lag; a closed-loop run's shows service times, as the runs before open loops.
// Like every writer here it is a pure function of the run, but for the workload registry's
// declarations (scale names, think times); it returns the first write error.
func WriteRunSummary(w io.Writer, r *results.Run) error {
	ew := words.NewWriter(w, "report: write run summary")
	writeRunHead(ew, r)
	writeRunNotes(ew, r)
	writeRunTable(ew, r)
	return ew.Err()
}

// writeRunHead writes the summary's first lines: what ran where, its size, window, path
// and options, the open loop's arrivals, and the headline figures.
func writeRunHead(ew *words.Writer, r *results.Run) {
	s := r.Summary
	ew.Printf("run %d  %s  %s on %s (%s)\n", r.ID, r.Status, r.Params.Workload, r.Server.Target, shortVersion(r.Server.Version))
	if r.Reason != "" {
		ew.Printf("  reason: %s\n", r.Reason)
	}
	warm := fmt.Sprintf("%v warm-up", r.WarmupHad())
	if r.Params.WarmupAuto {
		warm = fmt.Sprintf("%v warm-up (auto: until throughput was steady, at most %v)", r.WarmupHad().Round(100*time.Millisecond), r.Params.Warmup)
	}
	ew.Printf("  %s, window %.1f s after %s\n", RunSize(r), s.Elapsed.Seconds(), warm)
	ew.Printf("  path %s; %s\n", RunPath(r), optionsText(r))
	if r.Params.OpenLoop() {
		ew.Printf("  open loop: offered %s/s (%s), achieved %.1f/s; %s in the window, %d skipped, %d not started by its end\n",
			spec.FormatRate(r.Params.Rate), r.Params.Arrival, s.AchievedRate, words.Count(int(s.Offered), "arrival"), s.Skipped, s.Backlog)
		if s.Overload {
			ew.Printf("  OVERLOAD POINT: the offered rate was not sustained; the response times measure a growing backlog, not the server at %s/s\n",
				spec.FormatRate(r.Params.Rate))
		}
	}
	head := fmt.Sprintf("TPS %.1f   TPM %.0f", s.TPS, s.TPM)
	if results.MetricOf([]results.Run{*r}) == results.MetricNOPM {
		head = fmt.Sprintf("NOPM %.0f   TPM %.0f   TPS %.1f", s.NOPM, s.TPM, s.TPS)
	}
	ew.Printf("  %s   committed %d   rolled back %d   errors %s\n", head, s.Committed, s.Rollbacks, errorsText(s.Errors))
}

// writeRunNotes writes what qualifies the figures: a window too short for think times,
// retries, the latency limit, example errors, the client's CPU, the link's timing, the
// scripts that ran, what disturbed the window (and whether a study set the run aside for
// it), and what an open loop's columns mean.
func writeRunNotes(ew *words.Writer, r *results.Run) {
	s := r.Summary
	if note := thinkNote(r); note != "" {
		ew.Printf("  note: %s\n", note)
	}
	if r.Params.MaxTries > 1 || s.Retries > 0 {
		done := s.Committed + s.Rollbacks + errorCount(s.Errors)
		rate := 0.0
		if done > 0 {
			rate = 100 * float64(s.Retried) / float64(done)
		}
		ew.Printf("  retries %d (%s retried, %.1f %% of those that ended; max tries %d; errors are the transactions that failed every try)\n",
			s.Retries, words.Count(int(s.Retried), "transaction"), rate, r.Params.Tries())
	}
	if r.Params.LatencyLimit > 0 {
		ew.Printf("  latency limit %v: %s took longer\n", r.Params.LatencyLimit, words.Count(int(s.Late), "transaction"))
	}
	for _, class := range slices.Sorted(maps.Keys(s.ErrorExamples)) {
		for _, m := range s.ErrorExamples[class] {
			ew.Printf("  e.g. %s: %s\n", class, m)
		}
	}
	if n := s.Errors[retryableClass]; n > 0 && r.Params.Tries() == 1 {
		ew.Printf("  note: %s lost a race for a row (a serialization failure, deadlock or update conflict): --max-tries 5 (study key max_tries) runs each again with the same input, as pgbench's does\n",
			words.Count(int(n), "transaction"))
	}
	if line := cpuLine(r); line != "" {
		ew.Printf("%s\n", line)
	}
	if l := r.Link; l != nil && (l.LatenessUp != nil || l.LatenessDown != nil) {
		hold := "CPUs held out of deep idle states"
		if !r.Client.CPULatencyHold {
			hold = "CPUs not held out of deep idle states"
		}
		ew.Printf("  link: calibrated +%s (p50); released late by up %s, down %s; %s\n",
			spec.FormatDuration(l.AchievedP50.Round(time.Microsecond)), lateText(l.LatenessUp), lateText(l.LatenessDown), hold)
	}
	for _, line := range AchievedLines(r) {
		ew.Printf("  %s\n", line)
	}
	if line := scriptsLine(r.Scripts); line != "" {
		ew.Printf("%s\n", line)
	}
	if c := cellCache([]*results.Run{r}); c != nil && (c.MemoryLimit > 0 || r.Params.Options[results.FactorMemory] != "") {
		ew.Printf("  server memory: %s\n", c.Text())
	}
	for i := range r.Operations {
		o := &r.Operations[i]
		line := fmt.Sprintf("  operation: %s at %s (%s): %s", o.Name, spec.FormatDuration(o.At), o.Tool, o.Outcome)
		if o.Ran() {
			line += fmt.Sprintf(", from %.1f s to %.1f s", o.Started.Seconds(), o.Ended.Seconds())
		}
		if o.Error != "" {
			line += ": " + o.Error
		} else if o.Detail != "" {
			line += ": " + o.Detail
		}
		ew.Printf("%s\n", line)
		var parts []string
		for _, p := range phases(r, o) {
			parts = append(parts, fmt.Sprintf("%s %.1f tx/s, p99 %.2f ms", p.Name, p.TPS, p.P99Ms))
		}
		if len(parts) > 0 {
			ew.Printf("    %s\n", strings.Join(parts, "; "))
		}
	}
	for _, d := range r.Disturbances {
		ew.Printf("  disturbed: %s took %s of the window, %s\n", disturb.Describe(d.Cause), seconds(d.Lost), d.Evidence)
	}
	if r.SetAside != "" {
		ew.Printf("  SET ASIDE: %s\n", r.SetAside)
	}
	if r.Params.OpenLoop() {
		ew.Printf("  response = from the intended start to the end; service = from the connection checkout; lag = response − service\n")
	}
}

// cpuLine says what the client's CPU cost per transaction, the link's timing's share of it
// and the VM host's steal; "" when the run ended no transaction or measured no CPU.
func cpuLine(r *results.Run) string {
	done := r.Summary.Committed + r.Summary.Rollbacks
	if done == 0 || r.Client.CPUSeconds <= 0 {
		return ""
	}
	line := fmt.Sprintf("  client CPU %.1f µs per transaction (%.2f s over the window)",
		r.Client.CPUSeconds/float64(done)*1e6, r.Client.CPUSeconds)
	if l := r.Link; l != nil && l.CPUSeconds > 0 {
		line += fmt.Sprintf(", of which the link's timing %.1f µs", l.CPUSeconds/float64(done)*1e6)
	}
	if st := r.Client.Steal; st != nil && *st >= 0.001 {
		line += fmt.Sprintf("; the VM's host took %.1f %% of the machine's CPU (steal)", 100**st)
	}
	return line
}

// writeRunTable writes a line per transaction type the run ran: response time, service
// time and schedule lag for an open loop; service time, pool wait, round trips and bytes
// for a closed one.
func writeRunTable(ew *words.Writer, r *results.Run) {
	open := r.Params.OpenLoop()
	tw := words.NumberColumns(ew)
	if open {
		fmt.Fprintln(tw, "type\tcommitted\trollback\terrors\tretries\tresponse p50 ms\tp90 ms\tp99 ms\tmax ms\tservice p50 ms\tp99 ms\tlag p99 ms\tround trips\t")
	} else {
		fmt.Fprintln(tw, "type\tcommitted\trollback\terrors\tretries\tp50 ms\tp90 ms\tp99 ms\tmax ms\twait ms\tround trips\tbytes up\tbytes down\t")
	}
	for _, t := range r.Tx {
		if t.Committed+t.Rollbacks+errorCount(t.Errors) == 0 {
			continue // a type this run never ran (blob_write in a read run)
		}
		lat := func(us int64) string { return orDash(msOf(us), "%.2f") }
		if t.Committed+t.Rollbacks == 0 {
			lat = func(int64) string { return "–" }
		}
		if open {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", t.Type, t.Committed, t.Rollbacks,
				errorCount(t.Errors), t.Retries, lat(t.RespP50Us), lat(t.RespP90Us), lat(t.RespP99Us), lat(t.RespMaxUs),
				lat(t.P50Us), lat(t.P99Us), lat(t.LagP99Us), orDash(t.RoundTrips, "%.1f"))
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%.3f\t%s\t%s\t%s\t\n", t.Type, t.Committed, t.Rollbacks,
			errorCount(t.Errors), t.Retries, lat(t.P50Us), lat(t.P90Us), lat(t.P99Us), lat(t.MaxUs), t.WaitMeanUs/1000,
			orDash(t.RoundTrips, "%.1f"), orDash(t.BytesUp, "%.0f"), orDash(t.BytesDown, "%.0f"))
	}
	tw.Flush()
}

// RunLine is a finished run's headline in one line: its metric, the headline type's p90
// (response time in an open loop) and round trips, the open loop's achieved rate, retries
// and errors. `dblat study run` prints it as each run ends.
func RunLine(r *results.Run) string {
	metric := results.MetricOf([]results.Run{*r})
	s := fmt.Sprintf("%s %.0f  TPM %.0f", metric, results.MetricValue(r, metric), r.Summary.TPM)
	if metric == results.MetricTPS {
		s = fmt.Sprintf("TPS %.1f", r.Summary.TPS)
	}
	head := headlineType(r)
	for _, t := range r.Tx {
		if t.Type == head || head == "" && len(r.Tx) == 1 {
			if r.Params.OpenLoop() {
				s += fmt.Sprintf("  %s response p90 %.2f ms, %.1f round trips", t.Type, msOf(t.RespP90Us), t.RoundTrips)
			} else {
				s += fmt.Sprintf("  %s p90 %.2f ms, %.1f round trips", t.Type, msOf(t.P90Us), t.RoundTrips)
			}
		}
	}
	if r.Params.OpenLoop() {
		s += fmt.Sprintf("  achieved %.1f/s", r.Summary.AchievedRate)
		if r.Summary.Overload {
			s += " OVERLOAD"
		}
	}
	if r.Summary.Retries > 0 {
		s += fmt.Sprintf("  retries %d", r.Summary.Retries)
	}
	if n := errorCount(r.Summary.Errors); n > 0 {
		s += fmt.Sprintf("  errors %s", errorsText(r.Summary.Errors))
	}
	return s
}

// RunSize says how big a run was: its scale (where the workload has one), terminals and
// connections: "4 warehouses, 16 terminals, 16 connections".
func RunSize(r *results.Run) string {
	parts := []string{words.Count(r.Params.Terminals, "terminal"), words.Count(r.Params.Connections, "connection")}
	if s := scaleText(r); s != "" {
		parts = append([]string{s}, parts...)
	}
	return strings.Join(parts, ", ")
}

// PathText says in a word or two how a run reaches the server, for a table's column:
// "link 5ms" (dblat's latency link, at RTT 0 too), "direct" (TCP) or "unix" (a managed
// server's socket). path is spec.Run.Path's or spec.PathOf's, rtt the run's RTT.
func PathText(path string, rtt time.Duration) string {
	if path == spec.PathLink {
		return "link " + spec.FormatDuration(rtt)
	}
	return path
}

// RunPathText is PathText of a stored run.
func RunPathText(r *results.Run) string {
	return PathText(spec.PathOf(&r.Params, r.Link != nil), r.Params.RTT)
}

// RunPath says how a run reached the server, with its link's shape and what its
// calibration measured: "direct", "unix socket", "rtt 5ms (measured +5.02ms)",
// "rtt 2ms, profile cross-az, loss 0.1% (measured +2.01ms)".
func RunPath(r *results.Run) string {
	switch spec.PathOf(&r.Params, r.Link != nil) {
	case spec.PathUnix:
		return "unix socket"
	case spec.PathDirect:
		return "direct"
	}
	l := r.Link
	s := "rtt " + spec.FormatDuration(l.RTT)
	if shape := ShapeText(&r.Params); shape != "" {
		s += ", " + shape
	}
	if l.Samples > 0 {
		// The added RTT is the achieved one less the direct baseline: below zero at rtt 0
		// when the baseline happened to be the slower measurement.
		added, sign := l.AchievedP50.Round(time.Microsecond), "+"
		if added < 0 {
			added, sign = -added, "−"
		}
		s += fmt.Sprintf(" (measured %s%s)", sign, spec.FormatDuration(added))
	}
	return s
}

// scaleText says how much data a run used: "4 warehouses", "scale 1"; "" for a workload
// whose data has no scale (blob, ping).
func scaleText(r *results.Run) string {
	def, err := workload.Lookup(r.Params.Workload)
	switch {
	case err != nil || def.Scale.Name == "scale":
		return fmt.Sprintf("scale %d", r.Params.Scale)
	case def.Scale.Name == "":
		return ""
	case r.Params.Scale == 1:
		return "1 " + strings.TrimSuffix(def.Scale.Name, "s")
	}
	return fmt.Sprintf("%d %s", r.Params.Scale, def.Scale.Name)
}

// headlineType is the transaction type whose commits make a run's headline figure, or ""
// when every completed transaction counts.
func headlineType(r *results.Run) string {
	if def, err := workload.Lookup(r.Params.Workload); err == nil {
		return def.Metric.TxType
	}
	return ""
}

// thinkNote warns, for a closed-loop run with think times, when its window is shorter than
// the time one terminal takes to complete one headline transaction (a New-Order): the
// keying and mean think times of the mix's transactions (workload.Definition.Pauses), per
// headline transaction. With TPC-C's default mix that is about 47 s, so an 8 s window
// measures a handful of New-Orders, or none, and its NOPM is no throughput figure.
func thinkNote(r *results.Run) string {
	def, err := workload.Lookup(r.Params.Workload)
	if !r.Params.Think || r.Params.OpenLoop() || err != nil || len(def.Pauses) == 0 {
		return ""
	}
	c, ok := def.ThinkCycle(workload.Mix(r.Params.Mix))
	if !ok {
		return ""
	}
	cycle, head := c.Seconds(), def.Metric.TxType
	window := r.Summary.Elapsed.Seconds()
	if window <= 0 || window >= cycle {
		return ""
	}
	what := "transaction"
	if head != "" {
		what = head
	}
	return fmt.Sprintf("with think times one terminal completes a %s about every %.0f s (keying and mean think times at this mix); "+
		"this %.0f s window is shorter than that, so %d terminals were expected to complete about %.1f: the throughput is no figure of the server. "+
		"Use a window of several of those cycles.", what, cycle, window, r.Params.Terminals, float64(r.Params.Terminals)*window/cycle)
}

// optionsText lists a run's options as stored (workload and engine options at their values
// or defaults, the mode, the transport): "mode=client protocol=prepared transport=tcp".
func optionsText(r *results.Run) string {
	if len(r.Params.Options) == 0 {
		return "no options"
	}
	parts := make([]string, 0, len(r.Params.Options))
	for _, k := range slices.Sorted(maps.Keys(r.Params.Options)) {
		parts = append(parts, k+"="+r.Params.Options[k])
	}
	return strings.Join(parts, " ")
}

// scriptsLine names the texts a run ran, each file (the engine's variant when it ran one)
// with its weight and the first 12 hex digits of its SHA-256; "" for a run without.
func scriptsLine(scripts []results.Script) string {
	var parts []string
	init := ""
	for _, sc := range scripts {
		id := fmt.Sprintf("%s [%s]", sc.Path, shortSum(sc.SHA256))
		switch {
		case sc.Kind == results.ScriptInit:
			init = "; data by " + id
		case sc.Weight != 1:
			parts = append(parts, fmt.Sprintf("%s @%g [%s]", sc.Path, sc.Weight, shortSum(sc.SHA256)))
		default:
			parts = append(parts, id)
		}
	}
	if len(parts) == 0 && init == "" {
		return ""
	}
	return "  scripts: " + strings.Join(parts, ", ") + init + " (dblat results show RUN --scripts prints them)"
}

// shortSum is a script's hash as summaries and tables name it: its first 12 hex digits.
func shortSum(sum string) string { return sum[:min(len(sum), 12)] }

// shortVersion trims "PostgreSQL 15.18 (Debian ...) on x86_64..." to "PostgreSQL 15.18" and
// "10.11.19-MariaDB-0+deb12u1 (Debian 12)" to its first word: a product name followed by a
// version number keeps both.
func shortVersion(v string) string {
	f := strings.Fields(v)
	switch {
	case len(f) >= 2 && f[1] != "" && f[1][0] >= '0' && f[1][0] <= '9':
		return f[0] + " " + f[1]
	case len(f) >= 1:
		return f[0]
	}
	return v
}

// lateText writes a stored lateness as "p50 4 µs, p99 31 µs".
func lateText(l *results.Lateness) string {
	if l == nil || l.N == 0 {
		return "–"
	}
	return fmt.Sprintf("p50 %.0f µs, p99 %.0f µs", float64(l.P50)/1e3, float64(l.P99)/1e3)
}

// errorsText writes errors by class, in order: "deadlock 2, serialization 5"; "0" for none.
func errorsText(m map[string]int64) string {
	if errorCount(m) == 0 {
		return "0"
	}
	parts := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// errorCount adds up errors by class.
func errorCount(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// msOf turns microseconds into milliseconds.
func msOf(us int64) float64 { return float64(us) / 1000 }

// orDash writes v in format, or "-" when it is 0 (a figure the run did not measure).
func orDash(v float64, format string) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf(format, v)
}

// seconds writes a duration as a disturbance's cost reads: "560 ms", "1.1 s".
func seconds(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%d ms", d.Milliseconds())
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}

// ShapeText writes the link's shape a run asked for beyond its RTT, in the link fields'
// words, "" when it asked for none: "up 1ms, down 3ms, jitter 500µs normal, bandwidth
// 100mbit, loss 0.1%, profile lan-100mbit-loaded".
func ShapeText(p *results.Params) string {
	var parts []string
	for _, key := range spec.LinkKeys() {
		f, _ := spec.Lookup(key)
		v := f.Value(p)
		switch {
		case key == "rtt" || key == "distribution" || v == f.Default:
		case key == "jitter":
			dist, _ := spec.Lookup("distribution")
			parts = append(parts, key+" "+v+" "+dist.Value(p))
		default:
			parts = append(parts, key+" "+v)
		}
	}
	return strings.Join(parts, ", ")
}

// AchievedLines says what a run's link did in the window, a line per direction: the
// one-way delay it applied (with the jitter that spread stands for, where one was asked),
// the bandwidth used (mean and peak over results.PeakInterval), and the losses; none for a
// run without a link or stored before it was recorded.
func AchievedLines(r *results.Run) []string {
	l := r.Link
	if l == nil || l.Achieved == nil {
		return nil
	}
	var out []string
	for _, w := range []struct {
		name string
		way  results.LinkWay
	}{{"up", l.Achieved.Up}, {"down", l.Achieved.Down}} {
		d := w.way.Delay
		line := fmt.Sprintf("link %s: delay %s", w.name, spec.FormatDuration(d.Mean.Round(time.Microsecond)))
		if d.Measured {
			line += fmt.Sprintf(" mean, sd %s, p99 %s over %s", spec.FormatDuration(d.SD.Round(time.Microsecond)),
				spec.FormatDuration(d.P99.Round(time.Microsecond)), words.Count(int(d.N), "chunk"))
		}
		if w.way.Jitter > 0 {
			line += fmt.Sprintf(" (jitter %s of %s asked)", spec.FormatDuration(w.way.Jitter.Round(time.Microsecond)), spec.FormatDuration(l.Jitter))
		}
		line += fmt.Sprintf("; %s, %s/s on average, %s/s at the peak", words.Bytes(w.way.Bytes), bitsText(w.way.MeanRate), bitsText(w.way.PeakRate))
		if l.Loss > 0 {
			line += fmt.Sprintf("; %d of %s lost (%s), %s delayed by %s in all (RTO %s)", w.way.Lost, words.Count(int(w.way.Sent), "segment"),
				lossText(w.way.Lost, w.way.Sent), words.Count(int(w.way.LossChunks), "chunk"),
				spec.FormatDuration(w.way.LossAdded.Round(time.Millisecond)), spec.FormatDuration(l.RTO.Round(time.Millisecond)))
		}
		out = append(out, line)
	}
	return out
}

// bitsText writes a rate in bytes per second as bits per second: "980kbit", "1.25gbit".
func bitsText(bytesPerSec float64) string {
	bits := bytesPerSec * 8
	for _, u := range []struct {
		name string
		v    float64
	}{{"gbit", 1e9}, {"mbit", 1e6}, {"kbit", 1e3}} {
		if bits >= u.v {
			return strconv.FormatFloat(bits/u.v, 'f', 3, 64) + u.name
		}
	}
	return strconv.FormatFloat(bits, 'f', 0, 64) + "bit"
}

// lossText writes a share of segments lost as a percentage.
func lossText(lost, sent int64) string {
	if sent == 0 {
		return "0"
	}
	return fmt.Sprintf("%.3g %%", 100*float64(lost)/float64(sent))
}
