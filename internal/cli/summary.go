package cli

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/spec"
	"github.com/dblat/dblat/internal/workload"
)

// runProgress prints a line every `every` of run time from the per-second samples: the
// throughput over the lines' interval, the headline figure (NOPM for TPC-C, TPS otherwise),
// the worst one-second p99 of the interval and the errors.
type runProgress struct {
	a          *app
	every      time.Duration
	head       string // the headline's transaction type; "" for TPS
	open       bool   // an open-loop run: report response time, not service time
	nextAt     time.Duration
	started    bool
	commits    int64
	headCount  int64
	errors     int64
	worstP99   int64
	windowFrom time.Duration
}

func newRunProgress(a *app, every time.Duration, r *results.Run) *runProgress {
	return &runProgress{a: a, every: every, head: headlineType(r), open: r.Params.OpenLoop()}
}

func (p *runProgress) sample(ss []results.Sample) {
	if p.every <= 0 || len(ss) == 0 {
		return
	}
	off := ss[0].Offset
	if !p.started {
		p.started = true
		p.windowFrom = off - time.Second
		p.nextAt = off - time.Second + p.every
	}
	for _, s := range ss {
		switch {
		case s.Type == "":
			p.commits += s.Committed
			p.errors += s.Errors
			if p.open {
				p.worstP99 = max(p.worstP99, s.RespP99Us)
			} else {
				p.worstP99 = max(p.worstP99, s.P99Us)
			}
		case s.Type == p.head:
			p.headCount += s.Committed
		}
	}
	if off < p.nextAt {
		return
	}
	span := off - p.windowFrom
	phase := "window"
	if off <= 0 {
		phase = "warm-up"
	}
	head := fmt.Sprintf("tps %9.1f", float64(p.commits)/span.Seconds())
	if p.head != "" {
		head = fmt.Sprintf("tpm %9.0f  nopm %9.0f", float64(p.commits)/span.Minutes(), float64(p.headCount)/span.Minutes())
	}
	what := "p99"
	if p.open {
		what = "response p99"
	}
	p.a.info("%8s %-7s  %s  worst 1-s %s %8.2f ms  errors %d", fmtOffset(off), phase, head, what, float64(p.worstP99)/1000, p.errors)
	p.commits, p.headCount, p.errors, p.worstP99 = 0, 0, 0, 0
	p.windowFrom = off
	p.nextAt = off + p.every
}

func fmtOffset(d time.Duration) string {
	return fmt.Sprintf("%+.0fs", d.Seconds())
}

// printSummary writes a run's headline figures and per-type table. An open-loop run's table
// leads with response times (from each transaction's intended start), then service time
// and schedule lag; a closed-loop run's shows service times, as the runs before open loops.
func printSummary(w io.Writer, r *results.Run) {
	s := r.Summary
	fmt.Fprintf(w, "run %d  %s  %s on %s (%s)\n", r.ID, r.Status, r.Params.Workload, r.Server.Target, shortVersion(r.Server.Version))
	if r.Reason != "" {
		fmt.Fprintf(w, "  reason: %s\n", r.Reason)
	}
	warm := fmt.Sprintf("%v warm-up", r.WarmupHad())
	if r.Params.WarmupAuto {
		warm = fmt.Sprintf("%v warm-up (auto: until throughput was steady, at most %v)", r.WarmupHad().Round(100*time.Millisecond), r.Params.Warmup)
	}
	fmt.Fprintf(w, "  %s, window %.1f s after %s\n", sizeText(r), s.Elapsed.Seconds(), warm)
	fmt.Fprintf(w, "  path %s; %s\n", describePath(r), optionsText(r))
	open := r.Params.OpenLoop()
	if open {
		fmt.Fprintf(w, "  open loop: offered %s/s (%s), achieved %.1f/s; %s in the window, %d skipped, %d not started by its end\n",
			spec.FormatRate(r.Params.Rate), r.Params.Arrival, s.AchievedRate, plural(int(s.Offered), "arrival"), s.Skipped, s.Backlog)
		if s.Overload {
			fmt.Fprintf(w, "  OVERLOAD POINT: the offered rate was not sustained; the response times measure a growing backlog, not the server at %s/s\n",
				spec.FormatRate(r.Params.Rate))
		}
	}
	head := fmt.Sprintf("TPS %.1f   TPM %.0f", s.TPS, s.TPM)
	if results.MetricOf([]results.Run{*r}) == results.MetricNOPM {
		head = fmt.Sprintf("NOPM %.0f   TPM %.0f   TPS %.1f", s.NOPM, s.TPM, s.TPS)
	}
	fmt.Fprintf(w, "  %s   committed %d   rolled back %d   errors %s\n", head, s.Committed, s.Rollbacks, fmtErrors(s.Errors))
	if note := thinkNote(r); note != "" {
		fmt.Fprintf(w, "  note: %s\n", note)
	}
	if r.Params.MaxTries > 1 || s.Retries > 0 {
		done := s.Committed + s.Rollbacks + sum(s.Errors)
		rate := 0.0
		if done > 0 {
			rate = 100 * float64(s.Retried) / float64(done)
		}
		fmt.Fprintf(w, "  retries %d (%s retried, %.1f %% of those that ended; max tries %d; errors are the transactions that failed every try)\n",
			s.Retries, plural(int(s.Retried), "transaction"), rate, r.Params.Tries())
	}
	if r.Params.LatencyLimit > 0 {
		fmt.Fprintf(w, "  latency limit %v: %s took longer\n", r.Params.LatencyLimit, plural(int(s.Late), "transaction"))
	}
	for _, class := range sortedKeys(s.ErrorExamples) {
		for _, m := range s.ErrorExamples[class] {
			fmt.Fprintf(w, "  e.g. %s: %s\n", class, m)
		}
	}
	if done := s.Committed + s.Rollbacks; done > 0 && r.Client.CPUSeconds > 0 {
		line := fmt.Sprintf("  client CPU %.1f µs per transaction (%.2f s over the window)",
			r.Client.CPUSeconds/float64(done)*1e6, r.Client.CPUSeconds)
		if l := r.Link; l != nil && l.CPUSeconds > 0 {
			line += fmt.Sprintf(", of which the link's timing %.1f µs", l.CPUSeconds/float64(done)*1e6)
		}
		if st := r.Client.Steal; st != nil && *st >= 0.001 {
			line += fmt.Sprintf("; the VM's host took %.1f %% of the machine's CPU (steal)", 100**st)
		}
		fmt.Fprintln(w, line)
	}
	if l := r.Link; l != nil && (l.LatenessUp != nil || l.LatenessDown != nil) {
		hold := "CPUs held out of deep idle states"
		if !r.Client.CPULatencyHold {
			hold = "CPUs not held out of deep idle states"
		}
		fmt.Fprintf(w, "  link: calibrated +%s (p50); released late by up %s, down %s; %s\n",
			spec.FormatDuration(l.AchievedP50.Round(time.Microsecond)), lateText(l.LatenessUp), lateText(l.LatenessDown), hold)
	}
	if line := scriptsLine(r.Scripts); line != "" {
		fmt.Fprintln(w, line)
	}
	if open {
		fmt.Fprintln(w, "  response = from the intended start to the end; service = from the connection checkout; lag = response − service")
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	if open {
		fmt.Fprintln(tw, "type\tcommitted\trollback\terrors\tretries\tresponse p50 ms\tp90 ms\tp99 ms\tmax ms\tservice p50 ms\tp99 ms\tlag p99 ms\tround trips\t")
	} else {
		fmt.Fprintln(tw, "type\tcommitted\trollback\terrors\tretries\tp50 ms\tp90 ms\tp99 ms\tmax ms\twait ms\tround trips\tbytes up\tbytes down\t")
	}
	for _, t := range r.Tx {
		if t.Committed+t.Rollbacks+sum(t.Errors) == 0 {
			continue // a type this run never ran (blob_write in a read run)
		}
		lat := func(us int64) string { return orDash(ms(us), "%.2f") }
		if t.Committed+t.Rollbacks == 0 {
			lat = func(int64) string { return "–" }
		}
		if open {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", t.Type, t.Committed, t.Rollbacks,
				sum(t.Errors), t.Retries, lat(t.RespP50Us), lat(t.RespP90Us), lat(t.RespP99Us), lat(t.RespMaxUs),
				lat(t.P50Us), lat(t.P99Us), lat(t.LagP99Us), orDash(t.RoundTrips, "%.1f"))
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%.3f\t%s\t%s\t%s\t\n", t.Type, t.Committed, t.Rollbacks,
			sum(t.Errors), t.Retries, lat(t.P50Us), lat(t.P90Us), lat(t.P99Us), lat(t.MaxUs), t.WaitMeanUs/1000,
			orDash(t.RoundTrips, "%.1f"), orDash(t.BytesUp, "%.0f"), orDash(t.BytesDown, "%.0f"))
	}
	tw.Flush()
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

// shortSum is a script's hash as summaries name it: its first 12 hex digits.
func shortSum(sum string) string { return sum[:min(len(sum), 12)] }

// printScripts prints the texts a run ran, each under a header naming its file, kind,
// weight and SHA-256.
func printScripts(w io.Writer, scripts []results.Script) {
	for _, sc := range scripts {
		fmt.Fprintf(w, "--- %s: %s", sc.Kind, sc.Path)
		if sc.Kind != results.ScriptInit {
			fmt.Fprintf(w, " (transaction type %s, weight %g)", sc.Name, sc.Weight)
		}
		fmt.Fprintf(w, ", sha256 %s\n%s", sc.SHA256, sc.Text)
		if !strings.HasSuffix(sc.Text, "\n") {
			fmt.Fprintln(w)
		}
	}
}

func ms(us int64) float64 { return float64(us) / 1000 }

func orDash(v float64, format string) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf(format, v)
}

func sum(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

func fmtErrors(m map[string]int64) string {
	if sum(m) == 0 {
		return "0"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

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
	for _, k := range sortedKeys(r.Params.Options) {
		parts = append(parts, k+"="+r.Params.Options[k])
	}
	return strings.Join(parts, " ")
}
