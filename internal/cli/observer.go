package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/dblat/dblat/internal/execution"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/spec"
	"github.com/dblat/dblat/internal/workload"
)

// observer prints what the execution core does: steps and warnings, load progress bars, a
// progress line every --print-every of a run, and a line per finished study run.
type observer struct {
	a *app
	// printEvery is how often a run prints its progress line (0: never).
	printEvery time.Duration
	prog       *runProgress
}

var _ execution.Observer = (*observer)(nil)

func (o *observer) Info(msg string) { o.a.info("%s", msg) }

func (o *observer) LoadProgress(label string) func(done, total int64) {
	return o.a.newProgress(label).update
}

func (o *observer) RunStarted(r *results.Run) {
	pace := ""
	if r.Params.OpenLoop() {
		pace = fmt.Sprintf(", open loop at %s/s (%s)", spec.FormatRate(r.Params.Rate), r.Params.Arrival)
	}
	warm := fmt.Sprint(r.Params.Warmup)
	if r.Params.WarmupAuto {
		warm = fmt.Sprintf("until steady (at most %v)", r.Params.Warmup)
	}
	o.a.info("run %d: %s on %s, %s%s, %s, warm-up %s, window %v",
		r.ID, r.Params.Workload, r.Server.Target, sizeText(r), pace, describePath(r), warm, r.Params.Duration)
	o.prog = newRunProgress(o.a, o.printEvery, r)
}

func (o *observer) Samples(_ *results.Run, s []results.Sample) {
	if o.prog != nil {
		o.prog.sample(s)
	}
}

func (o *observer) RunEnded(r *results.Run) {
	if r.Study != "" {
		if r.Status == results.StatusFinished {
			o.a.info("  run %d: %s", r.ID, oneRunLine(r))
		} else {
			o.a.info("  run %d %s: %s", r.ID, r.Status, r.Reason)
		}
	}
}

func (o *observer) StudyStep(s execution.StudyStep) {
	o.a.info("[%d/%d] %s (repeat %d/%d)  elapsed %s, ETA %s", s.Index, s.Total, s.Cell, s.Repeat, s.Repeats,
		s.Elapsed.Round(time.Second), s.Remaining.Round(time.Second))
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

// sizeText says how big a run was: its scale (where the workload has one), terminals and
// connections: "4 warehouses, 16 terminals, 16 connections".
func sizeText(r *results.Run) string {
	parts := []string{plural(r.Params.Terminals, "terminal"), plural(r.Params.Connections, "connection")}
	if s := scaleText(r); s != "" {
		parts = append([]string{s}, parts...)
	}
	return strings.Join(parts, ", ")
}

// headlineType is the transaction type whose commits make a run's headline figure, or ""
// when every completed transaction counts.
func headlineType(r *results.Run) string {
	if def, err := workload.Lookup(r.Params.Workload); err == nil {
		return def.Metric.TxType
	}
	return ""
}

// runPath names how a stored run reached the server: "direct", "unix" (a managed server's
// socket) or "link 5ms" (dblat's latency link, at RTT 0 too).
func runPath(r *results.Run) string {
	if p := spec.PathOf(&r.Params, r.Link != nil); p != spec.PathLink {
		return p
	}
	return "link " + spec.FormatDuration(r.Params.RTT)
}

// describePath says how a run reached the server, with what its link's calibration measured:
// "direct", "unix socket", "rtt 5ms (measured +5.02ms)".
func describePath(r *results.Run) string {
	switch spec.PathOf(&r.Params, r.Link != nil) {
	case spec.PathUnix:
		return "unix socket"
	case spec.PathDirect:
		return "direct"
	}
	l := r.Link
	s := fmt.Sprintf("rtt %s", spec.FormatDuration(l.RTT))
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

// oneRunLine is a finished run's headline in one line.
func oneRunLine(r *results.Run) string {
	metric := results.MetricOf([]results.Run{*r})
	s := fmt.Sprintf("%s %.0f  TPM %.0f", metric, results.MetricValue(r, metric), r.Summary.TPM)
	if metric == results.MetricTPS {
		s = fmt.Sprintf("TPS %.1f", r.Summary.TPS)
	}
	head := headlineType(r)
	for _, t := range r.Tx {
		if t.Type == head || head == "" && len(r.Tx) == 1 {
			if r.Params.OpenLoop() {
				s += fmt.Sprintf("  %s response p90 %.2f ms, %.1f round trips", t.Type, ms(t.RespP90Us), t.RoundTrips)
			} else {
				s += fmt.Sprintf("  %s p90 %.2f ms, %.1f round trips", t.Type, ms(t.P90Us), t.RoundTrips)
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
	if n := sum(r.Summary.Errors); n > 0 {
		s += fmt.Sprintf("  errors %s", fmtErrors(r.Summary.Errors))
	}
	return s
}
