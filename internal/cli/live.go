package cli

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/dblat/dblat/internal/execution"
	"github.com/dblat/dblat/internal/live"
	"github.com/dblat/dblat/internal/results"
)

// liveFlags are the flags that make a run or a study observable while it runs.
type liveFlags struct {
	metricsAddr string
	progress    string
}

func (l *liveFlags) add(f *pflag.FlagSet) {
	f.StringVar(&l.metricsAddr, "metrics-addr", "", "serve live OpenMetrics (throughput and response time per type, errors, round trips, link lateness, study progress) at http://ADDR/metrics, e.g. 127.0.0.1:9464")
	f.StringVar(&l.progress, "progress", "text", "progress while running: text (lines on stderr), json (one object per line on stdout, for scripts; the summary too) or none")
}

func (l *liveFlags) check() error {
	switch l.progress {
	case "text", "json", "none":
		return nil
	}
	return usagef("--progress %q: use text, json or none", l.progress)
}

// observe adds the live views the flags ask for to core's observer, starting the metrics
// server (stopped when ctx ends).
func (a *app) observe(ctx context.Context, core *execution.Core, l *liveFlags, printEvery time.Duration) error {
	text := core.Observer.(*observer)
	text.printEvery = printEvery
	obs := []execution.Observer{text}
	switch l.progress {
	case "json":
		text.printEvery = 0
		a.json = &jsonProgress{enc: json.NewEncoder(a.st.Stdout)}
		obs = append(obs, a.json)
	case "none":
		text.printEvery = 0
	}
	if l.metricsAddr != "" {
		m := live.New()
		addr, err := m.Serve(ctx, l.metricsAddr)
		if err != nil {
			return usagef("--metrics-addr %s: %v", l.metricsAddr, err)
		}
		a.info("live metrics at http://%s/metrics", addr)
		obs = append(obs, m)
	}
	core.Observer = execution.Observers(obs...)
	return nil
}

// jsonProgress prints one JSON object per event and per sampled second.
type jsonProgress struct {
	execution.NopObserver
	mu  sync.Mutex
	enc *json.Encoder
}

func (j *jsonProgress) emit(v any) {
	j.mu.Lock()
	defer j.mu.Unlock()
	_ = j.enc.Encode(v)
}

type jsonType struct {
	Committed int64   `json:"committed"`
	Errors    int64   `json:"errors"`
	P50ms     float64 `json:"p50_ms"`
	P99ms     float64 `json:"p99_ms"`
	MaxMs     float64 `json:"max_ms"`
}

func (j *jsonProgress) RunStarted(r *results.Run) {
	j.emit(map[string]any{"event": "run_started", "time": time.Now().UTC(), "run": r.ID, "study": r.Study, "workload": r.Params.Workload,
		"target": r.Server.Target, "terminals": r.Params.Terminals, "rtt_ms": r.Params.RTT.Seconds() * 1e3,
		"warmup_s": r.Params.Warmup.Seconds(), "window_s": r.Params.Duration.Seconds()})
}

func (j *jsonProgress) Samples(r *results.Run, ss []results.Sample) {
	types := map[string]jsonType{}
	var offset time.Duration
	for _, s := range ss {
		name := s.Type
		if name == "" {
			name, offset = "all", s.Offset
		}
		types[name] = jsonType{Committed: s.Committed, Errors: s.Errors, P50ms: ms(s.P50Us), P99ms: ms(s.P99Us), MaxMs: ms(s.MaxUs)}
	}
	phase := "window"
	if offset <= 0 {
		phase = "warmup"
	}
	j.emit(map[string]any{"event": "tick", "run": r.ID, "offset_s": offset.Seconds(), "phase": phase, "types": types})
}

func (j *jsonProgress) RunEnded(r *results.Run) {
	metric := results.MetricOf([]results.Run{*r})
	ev := map[string]any{"event": "run_ended", "time": time.Now().UTC(), "run": r.ID, "status": r.Status, "reason": r.Reason,
		"metric": metric, "value": results.MetricValue(r, metric), "tps": r.Summary.TPS, "errors": r.Summary.Errors,
		"window_s": r.Summary.Elapsed.Seconds()}
	if l := r.Link; l != nil {
		ev["link_added_rtt_ms"] = l.AchievedP50.Seconds() * 1e3
	}
	j.emit(ev)
}

func (j *jsonProgress) StudyStep(s execution.StudyStep) {
	j.emit(map[string]any{"event": "study_step", "study": s.Study, "index": s.Index, "total": s.Total, "cell": s.Cell,
		"repeat": s.Repeat, "elapsed_s": s.Elapsed.Seconds(), "remaining_s": s.Remaining.Seconds()})
}

// studyEnded reports the end of a study and where its report is.
func (j *jsonProgress) studyEnded(study, report string) {
	j.emit(map[string]any{"event": "study_ended", "time": time.Now().UTC(), "study": study, "report": report})
}

// ms turns microseconds into milliseconds.
func ms(us int64) float64 { return float64(us) / 1000 }
