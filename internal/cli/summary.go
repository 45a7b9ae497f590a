package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/dblat/dblat/internal/results"
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
	p := &runProgress{a: a, every: every, open: r.Params.OpenLoop()}
	if def, err := workload.Lookup(r.Params.Workload); err == nil {
		p.head = def.Metric.TxType
	}
	return p
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
