// Package live publishes what a run or a study is doing while it runs, as Prometheus
// metrics (OpenMetrics text) for Prometheus, Grafana or a script polling the endpoint. It
// is an execution.Observer: it keeps the latest per-second figures of the running run
// (throughput and response-time quantiles per transaction type, errors), each ended run's
// totals (transactions and errors by class, round trips per transaction, the latency
// link's lateness and calibration), and the study's progress and ETA.
//
// It does not measure anything itself and stores nothing: package execution reports to
// it, and package cli starts its HTTP server (--metrics-addr). Metric names start with
// dblat_ and follow Prometheus conventions (seconds, _total counters).
package live

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/dblat/dblat/internal/execution"
	"github.com/dblat/dblat/internal/results"
)

// Metrics is the live view; its methods implement execution.Observer. Safe for concurrent
// use.
type Metrics struct {
	execution.NopObserver
	reg *prometheus.Registry

	mu      sync.Mutex
	current *results.Run

	running     prometheus.Gauge
	runID       prometheus.Gauge
	phase       *prometheus.GaugeVec
	tps         *prometheus.GaugeVec
	latency     *prometheus.GaugeVec
	txTotal     *prometheus.CounterVec
	errorsTotal *prometheus.CounterVec
	intervalErr prometheus.Gauge
	runsTotal   *prometheus.CounterVec
	roundTrips  *prometheus.GaugeVec
	lateness    *prometheus.GaugeVec
	calibrated  prometheus.Gauge
	studyDone   prometheus.Gauge
	studyTotal  prometheus.Gauge
	studyETA    prometheus.Gauge
}

// New returns an empty live view.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	f := func(c prometheus.Collector) { m.reg.MustRegister(c) }
	m.running = prometheus.NewGauge(prometheus.GaugeOpts{Name: "dblat_run_active", Help: "1 while a run is measuring (warm-up or window), else 0."})
	m.runID = prometheus.NewGauge(prometheus.GaugeOpts{Name: "dblat_run_id", Help: "Id of the current or last run in the results store."})
	m.phase = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "dblat_run_phase", Help: "1 for the current run's phase (warmup or window)."}, []string{"phase"})
	m.tps = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "dblat_throughput_tps",
		Help: "Transactions committed per second in the last sampled interval, per type (type=\"all\" for every type)."}, []string{"type"})
	m.latency = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "dblat_response_time_seconds",
		Help: "Service time of the transactions of the last sampled interval, per type and quantile (0.5, 0.99, 1 = max)."}, []string{"type", "quantile"})
	m.txTotal = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "dblat_transactions_total",
		Help: "Transactions completed in the measurement windows of ended runs, per type and outcome (committed, rollback)."}, []string{"type", "outcome"})
	m.errorsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "dblat_errors_total",
		Help: "Failed transactions in the measurement windows of ended runs, per class (retryable, connection, other)."}, []string{"class"})
	m.intervalErr = prometheus.NewGauge(prometheus.GaugeOpts{Name: "dblat_interval_errors", Help: "Failed transactions in the last sampled interval."})
	m.runsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "dblat_runs_total", Help: "Runs ended, per status."}, []string{"status"})
	m.roundTrips = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "dblat_round_trips_per_transaction",
		Help: "Round trips per committed transaction in the last ended run, per type."}, []string{"type"})
	m.lateness = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "dblat_link_lateness_seconds",
		Help: "How late the latency link released data in the last ended run's window, per direction and quantile."}, []string{"direction", "quantile"})
	m.calibrated = prometheus.NewGauge(prometheus.GaugeOpts{Name: "dblat_link_added_rtt_seconds",
		Help: "The RTT the current run's latency link was calibrated to add (median)."})
	m.studyDone = prometheus.NewGauge(prometheus.GaugeOpts{Name: "dblat_study_runs_started", Help: "Runs of this invocation's study plan started so far."})
	m.studyTotal = prometheus.NewGauge(prometheus.GaugeOpts{Name: "dblat_study_runs_planned", Help: "Runs in this invocation's study plan."})
	m.studyETA = prometheus.NewGauge(prometheus.GaugeOpts{Name: "dblat_study_remaining_seconds", Help: "Estimated time until the study's plan is done."})
	for _, c := range []prometheus.Collector{m.running, m.runID, m.phase, m.tps, m.latency, m.txTotal, m.errorsTotal,
		m.intervalErr, m.runsTotal, m.roundTrips, m.lateness, m.calibrated, m.studyDone, m.studyTotal, m.studyETA} {
		f(c)
	}
	return m
}

// Handler serves the metrics in the Prometheus text format, or OpenMetrics when the
// scraper asks for it.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{EnableOpenMetrics: true})
}

// Serve serves the metrics at /metrics on addr until ctx ends. It returns the address it
// listens on (addr may give port 0) once listening; errors after that are ignored.
func (m *Metrics) Serve(ctx context.Context, addr string) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", m.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return
		}
	}()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	return ln.Addr().String(), nil
}

// RunStarted implements execution.Observer.
func (m *Metrics) RunStarted(r *results.Run) {
	m.mu.Lock()
	m.current = r
	m.mu.Unlock()
	m.running.Set(1)
	m.runID.Set(float64(r.ID))
	m.phase.Reset()
	m.phase.WithLabelValues("warmup").Set(1)
	m.tps.Reset()
	m.latency.Reset()
	if r.Link != nil {
		m.calibrated.Set(r.Link.AchievedP50.Seconds())
	}
}

// Samples implements execution.Observer: the last interval's figures.
func (m *Metrics) Samples(_ *results.Run, ss []results.Sample) {
	for _, s := range ss {
		t := s.Type
		if t == "" {
			t = "all"
			m.intervalErr.Set(float64(s.Errors))
			m.phase.Reset()
			if s.Offset <= 0 {
				m.phase.WithLabelValues("warmup").Set(1)
			} else {
				m.phase.WithLabelValues("window").Set(1)
			}
		}
		m.tps.WithLabelValues(t).Set(float64(s.Committed)) // samples are one second long
		m.latency.WithLabelValues(t, "0.5").Set(float64(s.P50Us) / 1e6)
		m.latency.WithLabelValues(t, "0.99").Set(float64(s.P99Us) / 1e6)
		m.latency.WithLabelValues(t, "1").Set(float64(s.MaxUs) / 1e6)
	}
}

// RunEnded implements execution.Observer: the run's totals.
func (m *Metrics) RunEnded(r *results.Run) {
	m.running.Set(0)
	m.runsTotal.WithLabelValues(string(r.Status)).Inc()
	for _, t := range r.Tx {
		m.txTotal.WithLabelValues(t.Type, "committed").Add(float64(t.Committed))
		m.txTotal.WithLabelValues(t.Type, "rollback").Add(float64(t.Rollbacks))
		if t.RoundTrips > 0 {
			m.roundTrips.WithLabelValues(t.Type).Set(t.RoundTrips)
		}
	}
	for class, n := range r.Summary.Errors {
		m.errorsTotal.WithLabelValues(class).Add(float64(n))
	}
	if l := r.Link; l != nil {
		for dir, x := range map[string]*results.Lateness{"up": l.LatenessUp, "down": l.LatenessDown} {
			if x == nil {
				continue
			}
			for q, v := range map[string]time.Duration{"0.5": x.P50, "0.9": x.P90, "0.99": x.P99, "0.999": x.P999, "1": x.Max} {
				m.lateness.WithLabelValues(dir, q).Set(v.Seconds())
			}
		}
	}
}

// StudyStep implements execution.Observer.
func (m *Metrics) StudyStep(s execution.StudyStep) {
	m.studyDone.Set(float64(s.Index - 1))
	m.studyTotal.Set(float64(s.Total))
	m.studyETA.Set(s.Remaining.Seconds())
}
