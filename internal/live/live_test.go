package live_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	_ "github.com/dblat/dblat/internal/engine/all"
	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
	"github.com/dblat/dblat/internal/execution"
	"github.com/dblat/dblat/internal/latency"
	"github.com/dblat/dblat/internal/live"
	"github.com/dblat/dblat/internal/managed"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/spec"
	_ "github.com/dblat/dblat/internal/workload/all"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// scrape reads the endpoint and parses it with Prometheus's own text parser.
func scrape(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("metrics do not parse: %v", err)
	}
	return fams
}

func value(fams map[string]*dto.MetricFamily, name string, labels ...string) (float64, bool) {
	f, ok := fams[name]
	if !ok {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		for i := 0; i+1 < len(labels); i += 2 {
			found := false
			for _, l := range m.GetLabel() {
				if l.GetName() == labels[i] && l.GetValue() == labels[i+1] {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.GetGauge() != nil:
			return m.GetGauge().GetValue(), true
		case m.GetCounter() != nil:
			return m.GetCounter().GetValue(), true
		}
	}
	return 0, false
}

// TestMetricsDuringARun scrapes the endpoint while a short select-only run through a 1 ms
// link measures, and after it ended.
func TestMetricsDuringARun(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	dir := t.TempDir()
	store, err := results.Open(context.Background(), filepath.Join(dir, "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	m := live.New()
	c := &execution.Core{Store: store, Servers: managed.Registry{Root: filepath.Join(dir, "state")}, Observer: m}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, err := m.Serve(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Load(ctx, dsn, execution.LoadSpec{Workload: "select-only", Scale: 1}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.Run(ctx, nil, spec.Run{Params: spec.Params{Drive: spec.Drive{MaxTries: 1, Terminals: 4, Duration: 4 * time.Second, Warmup: time.Second}, Workload: "select-only", RTT: time.Millisecond}, Target: dsn, Link: &latency.Config{}})
		done <- err
	}()
	deadline := time.Now().Add(20 * time.Second)
	var during map[string]*dto.MetricFamily
	for time.Now().Before(deadline) {
		time.Sleep(500 * time.Millisecond)
		during = scrape(t, addr)
		if v, _ := value(during, "dblat_run_phase", "phase", "window"); v == 1 {
			if tps, ok := value(during, "dblat_throughput_tps", "type", "select"); ok && tps > 0 {
				break
			}
		}
	}
	if v, _ := value(during, "dblat_run_active"); v != 1 {
		t.Errorf("during the window: dblat_run_active %v", v)
	}
	if tps, _ := value(during, "dblat_throughput_tps", "type", "all"); tps <= 0 {
		t.Errorf("during the window: throughput %v", tps)
	}
	if p99, _ := value(during, "dblat_response_time_seconds", "type", "select", "quantile", "0.99"); p99 < 0.001 {
		t.Errorf("during the window at 1 ms RTT: p99 %v s", p99)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	after := scrape(t, addr)
	if n, _ := value(after, "dblat_transactions_total", "type", "select", "outcome", "committed"); n <= 0 {
		t.Errorf("after the run: %v transactions", n)
	}
	if v, _ := value(after, "dblat_runs_total", "status", "finished"); v != 1 {
		t.Errorf("after the run: %v finished runs", v)
	}
	if v, ok := value(after, "dblat_link_lateness_seconds", "direction", "down", "quantile", "0.5"); !ok || v < 0 {
		t.Errorf("after the run: link lateness %v %v", v, ok)
	}
	if rt, _ := value(after, "dblat_round_trips_per_transaction", "type", "select"); rt < 1 {
		t.Errorf("after the run: %v round trips per transaction", rt)
	}
	if v, _ := value(after, "dblat_run_active"); v != 0 {
		t.Errorf("after the run: dblat_run_active %v", v)
	}
}
