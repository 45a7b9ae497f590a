package report

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/spec"
)

// The synthetic study: seed 000 in miniature. Three Firebird architectures × four RTTs × two
// terminal counts × three repeats, NOPM = base(mode) × gain(terminals) × keep(rtt) plus a
// repeat offset of −10, 0, +10, so every full cell has mean = the product and sd = 10
// exactly. Deviations, each exercising one rule:
//   - SuperClassic, 1ms, 10 terminals: repeat 1 is missing (n = 2, offsets ±10);
//   - SuperServer, 100ms, 20 terminals: only repeat 0 (n = 1, mean = product − 10);
//   - one failed run (Classic, 10ms, 20 terminals) with a partial NOPM of 123;
//   - one aborted run (SuperServer, 0, 10 terminals).
var (
	fixModes   = []string{"Classic", "SuperClassic", "SuperServer"}
	fixBase    = map[string]float64{"Classic": 3000, "SuperClassic": 2800, "SuperServer": 1500}
	fixRTTs    = []time.Duration{0, time.Millisecond, 10 * time.Millisecond, 100 * time.Millisecond}
	fixKeep    = map[time.Duration]float64{0: 1, time.Millisecond: 0.8, 10 * time.Millisecond: 0.25, 100 * time.Millisecond: 0.04}
	fixTerms   = []int{10, 20}
	fixGain    = map[int]float64{10: 1, 20: 1.2}
	fixOffsets = []float64{-10, 0, 10}
	fixSlow    = map[string]int64{"Classic": 10, "SuperClassic": 11, "SuperServer": 15} // service time ×1/10
	fixStart   = time.Date(2026, 1, 10, 9, 0, 0, 0, time.UTC)
	fixFactors = []string{results.FactorRTT, results.FactorTerminals, "set.ServerMode"}
)

// fixMean is the NOPM a full cell of the fixture averages to.
func fixMean(mode string, rtt time.Duration, term int) float64 {
	return fixBase[mode] * fixGain[term] * fixKeep[rtt]
}

func fixSkip(mode string, rtt time.Duration, term, rep int) bool {
	switch {
	case mode == "SuperClassic" && rtt == time.Millisecond && term == 10:
		return rep == 1
	case mode == "SuperServer" && rtt == 100*time.Millisecond && term == 20:
		return rep != 0
	}
	return false
}

// fixTx returns the two transaction types of one run. Service time grows with the round
// trips each type makes (new_order 14, payment 7) times the RTT, over a base of 2 ms / 1 ms
// (×1.1 for SuperClassic, ×1.5 for SuperServer);
// each histogram holds 200 values spread from 1× to 1.5× that, plus a 3× tail of 2 values.
func fixTx(t testing.TB, mode string, rtt time.Duration, rep int) []results.TxSummary {
	mk := func(typ string, baseUs, trips int64, up, down float64) results.TxSummary {
		h := hdrhistogram.New(1, 10*60*1_000_000, 3)
		svc := baseUs*fixSlow[mode]/10 + trips*rtt.Microseconds() + int64(rep)*50
		for i := range 200 {
			v := svc + svc*int64(i)/400
			if i >= 198 {
				v = 3 * svc
			}
			if err := h.RecordValue(v); err != nil {
				t.Fatal(err)
			}
		}
		w := hdrhistogram.New(1, 10*60*1_000_000, 3)
		for i := range 200 {
			_ = w.RecordValue(int64(1 + i%10))
		}
		enc, err := results.EncodeHist(h)
		if err != nil {
			t.Fatal(err)
		}
		wenc, err := results.EncodeHist(w)
		if err != nil {
			t.Fatal(err)
		}
		return results.TxSummary{
			Type: typ, Committed: 198, Rollbacks: 2, MeanUs: h.Mean(),
			P50Us: h.ValueAtQuantile(50), P90Us: h.ValueAtQuantile(90), P95Us: h.ValueAtQuantile(95),
			P99Us: h.ValueAtQuantile(99), P999Us: h.ValueAtQuantile(99.9), MaxUs: h.Max(),
			WaitMeanUs: w.Mean(), WaitP99Us: w.ValueAtQuantile(99),
			RoundTrips: float64(trips), RoundTripsP50: trips, RoundTripsP99: trips,
			BytesUp: up, BytesDown: down, WritesUp: float64(trips),
			Hist: enc, WaitHist: wenc,
		}
	}
	return []results.TxSummary{
		mk("new_order", 2000, 14, 2400, 5200),
		mk("payment", 1000, 7, 900, 1100),
	}
}

func fixRun(t testing.TB, id int64, mode string, rtt time.Duration, term int) results.Run {
	cache := "256"
	if mode == "SuperServer" {
		cache = "2048"
	}
	started := fixStart.Add(time.Duration(id) * 2 * time.Minute)
	return results.Run{
		ID: id, Study: "latency", Status: results.StatusFinished, Started: started,
		Ended:  started.Add(100 * time.Second),
		Params: results.Params{Drive: spec.Drive{Terminals: term, Connections: term, Duration: 90 * time.Second, Warmup: 10 * time.Second, Seed: id}, Workload: "tpcc", Scale: 10, RTT: rtt, Options: map[string]string{"set.ServerMode": mode}},
		Server: results.Server{
			Engine: "firebird", Target: "fb3-" + mode, Managed: true, Version: "WI-V3.0.6.33328 Firebird 3.0",
			Settings: map[string]string{"ServerMode": mode, "DefaultDbCachePages": cache, "TcpRemoteBufferSize": "8192"},
		},
		Client: results.Client{Hostname: "bench1", OS: "linux", Kernel: "6.1.0", CPUModel: "Ryzen 7 1700", Cores: 16,
			GoVersion: "go1.26.8", DblatVersion: "v0.1.0"},
		Summary: results.Summary{Elapsed: 90 * time.Second, Committed: 396, Rollbacks: 4},
	}
}

var (
	fixOnce sync.Once
	fixRuns []results.Run
)

// fixture returns the synthetic study's runs in the order a study would run them
// (repeat-major), with ids and start times ascending. They are made once per test binary
// (encoding 280 histograms is the slow part); callers get their own slice but share the
// runs' maps and must not modify them.
func fixture(t testing.TB) []results.Run {
	fixOnce.Do(func() { fixRuns = makeFixture(t) })
	if fixRuns == nil {
		t.Fatal("the fixture could not be made")
	}
	return slices.Clone(fixRuns)
}

func makeFixture(t testing.TB) []results.Run {
	var runs []results.Run
	id := int64(0)
	for rep, off := range fixOffsets {
		for _, mode := range fixModes {
			for _, term := range fixTerms {
				for _, rtt := range fixRTTs {
					if fixSkip(mode, rtt, term, rep) {
						continue
					}
					id++
					r := fixRun(t, id, mode, rtt, term)
					r.CellKey = results.FactorValue(&r, "rtt") + "/" + results.FactorValue(&r, "terminals") + "/" + mode
					r.Summary.NOPM = fixMean(mode, rtt, term) + off
					r.Summary.TPS = r.Summary.NOPM / 60 / 0.45
					r.Summary.TPM = r.Summary.TPS * 60
					r.Tx = fixTx(t, mode, rtt, rep)
					runs = append(runs, r)
				}
			}
		}
	}
	id++
	failed := fixRun(t, id, "Classic", 10*time.Millisecond, 20)
	failed.Status, failed.Reason = results.StatusFailed, "server exited: signal 9 (killed)"
	failed.Summary.NOPM, failed.Summary.Elapsed = 123, 41*time.Second
	failed.Tx = fixTx(t, "Classic", 10*time.Millisecond, 0)
	runs = append(runs, failed)
	id++
	aborted := fixRun(t, id, "SuperServer", 0, 10)
	aborted.Status, aborted.Reason = results.StatusAborted, "process 4242 gone"
	aborted.Summary = results.Summary{}
	runs = append(runs, aborted)
	return runs
}

func fixInput(t testing.TB) Input {
	return Input{
		Study:       "latency",
		Description: "Firebird 3 architectures under TPC-C, 10 warehouses, RTT 0–100 ms (synthetic test data).",
		Factors:     fixFactors,
		Source:      "name: latency\nfactors:\n  rtt: [0, 1ms, 10ms, 100ms]\n  terminals: [10, 20]\n  set.ServerMode: [Classic, SuperClassic, SuperServer]\nrepeats: 3\n",
		Runs:        fixture(t),
	}
}
