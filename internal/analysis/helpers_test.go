package analysis

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/spec"
)

// Synthetic runs. A clean run is one every rule passes: a PostgreSQL server with 1 GB of
// shared_buffers for a 900 MB database on another machine, 10 s of warm-up before a 60 s
// window, a calibrated link that delivered the RTT asked for, no errors, and a client using
// 5 % of its cores. Tests change one thing at a time.

const (
	tR  = 20.0                 // round trips per transaction in the synthetic runs
	tS  = 5 * time.Millisecond // time per transaction that is not added RTT
	tEl = 60 * time.Second     // measurement window
	tWu = 10 * time.Second     // warm-up
	mib = 1 << 20
)

var tStart = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

// cleanRun returns a clean finished run with throughput tps (completed transactions per
// second) and round trips per transaction tR split over two types (new_order 45 % at 30.0,
// payment 55 % at 11.818…, so the weighted mean is 20).
func cleanRun(id int64, rtt time.Duration, terminals int, tps float64) results.Run {
	done := int64(tps * tEl.Seconds())
	no := done * 45 / 100
	pay := done - no
	// Weighted mean exactly tR: 30·no + x·pay = 20·done.
	xPay := (tR*float64(done) - 30*float64(no)) / float64(pay)
	started := tStart.Add(time.Duration(id) * 2 * time.Minute)
	return results.Run{
		ID: id, Study: "synthetic", Status: results.StatusFinished, Started: started, Ended: started.Add(tEl + tWu),
		Params: results.Params{Drive: spec.Drive{Terminals: terminals, Connections: terminals, Duration: tEl, Warmup: tWu, Seed: 1}, Workload: "tpcc", Scale: 10, RTT: rtt, Mix: map[string]float64{"new_order": 45, "payment": 43, "order_status": 4, "delivery": 4, "stock_level": 4}, Options: map[string]string{"set.shared_buffers": "1GB"}},
		Link: &results.Link{Kind: "proxy", RTT: rtt, Up: rtt / 2, Down: rtt - rtt/2, DelayConnect: true,
			AchievedP50: rtt, AchievedP99: rtt + 20*time.Microsecond, Samples: 200},
		Server: results.Server{
			Engine: "postgres", Target: "pg-bench", Managed: false,
			Version: "PostgreSQL 15.18 on x86_64-pc-linux-gnu, 64-bit",
			Settings: map[string]string{"shared_buffers": "131072 8kB", "fsync": "on", "synchronous_commit": "on",
				"block_size": "8192", "max_connections": "100", "port": "5432"},
			DatabaseBytes: 900 * mib,
		},
		Client: results.Client{Hostname: "client1", OS: "Debian GNU/Linux 12", Kernel: "Linux 6.1", CPUModel: "EPYC",
			Cores: 16, MemoryBytes: 64 << 30, GoVersion: "go1.26.8", DblatVersion: "v0.3.0",
			CPUSeconds: 0.05 * tEl.Seconds() * 16},
		Summary: results.Summary{Elapsed: tEl, Committed: done, TPS: tps, TPM: tps * 60, NOPM: float64(no) / tEl.Minutes()},
		Tx: []results.TxSummary{
			{Type: "new_order", Committed: no, RoundTrips: 30},
			{Type: "payment", Committed: pay, RoundTrips: xPay},
		},
	}
}

// modelX is the synthetic truth: min(n/(R·r + s), c) in tx/s; c = 0 means no capacity.
func modelX(n int, rtt time.Duration, c float64) float64 {
	x := float64(n) / (tR*rtt.Seconds() + tS.Seconds())
	if c > 0 {
		x = min(x, c)
	}
	return x
}

// noise returns the relative offsets of five repeats: mean 0, CV 1.6 %.
var noise = []float64{-0.02, -0.01, 0, 0.01, 0.02}

// study builds a full study: every rtt × terminals cell repeated len(noise) times with
// throughput f(n, rtt) × (1 + noise), ids ascending, repeat-major.
func study(rtts []time.Duration, terms []int, f func(int, time.Duration) float64) []results.Run {
	var runs []results.Run
	id := int64(0)
	for _, off := range noise {
		for _, n := range terms {
			for _, r := range rtts {
				id++
				runs = append(runs, cleanRun(id, r, n, f(n, r)*(1+off)))
			}
		}
	}
	return runs
}

var (
	factorsRT = []string{results.FactorRTT, results.FactorTerminals}
	ms        = time.Millisecond
	us        = time.Microsecond
)

// hist returns an encoded histogram of the given values in microseconds.
func hist(t testing.TB, values ...int64) string {
	t.Helper()
	h := hdrhistogram.New(1, 10*60*1_000_000, 3)
	for _, v := range values {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	s, err := results.EncodeHist(h)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// repeat returns n copies of v.
func repeat(v int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// shuffled returns a copy of runs in a random order (fixed seed).
func shuffled(runs []results.Run) []results.Run {
	out := slices.Clone(runs)
	r := rand.New(rand.NewPCG(1, 2))
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// byID returns a pointer to the run with id.
func byID(runs []results.Run, id int64) *results.Run {
	for i := range runs {
		if runs[i].ID == id {
			return &runs[i]
		}
	}
	panic("no run")
}

// ids returns the IDs of the runs matching keep, ascending.
func ids(runs []results.Run, keep func(*results.Run) bool) []int64 {
	var out []int64
	for i := range runs {
		if keep(&runs[i]) {
			out = append(out, runs[i].ID)
		}
	}
	slices.Sort(out)
	return out
}
