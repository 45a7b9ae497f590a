package cli

import (
	"fmt"
	"time"

	"github.com/dblat/dblat/internal/execution"
	"github.com/dblat/dblat/internal/report"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/spec"
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
		r.ID, r.Params.Workload, r.Server.Target, report.RunSize(r), pace, report.RunPath(r), warm, r.Params.Duration)
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
			o.a.info("  run %d: %s", r.ID, report.RunLine(r))
		} else {
			o.a.info("  run %d %s: %s", r.ID, r.Status, r.Reason)
		}
	}
}

func (o *observer) StudyStep(s execution.StudyStep) {
	o.a.info("[%d/%d] %s (repeat %d/%d)  elapsed %s, ETA %s", s.Index, s.Total, s.Cell, s.Repeat, s.Repeats,
		s.Elapsed.Round(time.Second), s.Remaining.Round(time.Second))
}
