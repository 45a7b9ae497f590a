package storetest

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/spec"
)

// NormTime drops the monotonic reading and location of t, keeping the instant, so that
// times compare with reflect.DeepEqual.
func NormTime(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return time.Unix(0, t.UnixNano()).UTC()
}

// Norm returns r with its times normalised (NormTime) and its observation's JSON compact
// (an indented export re-indents it).
func Norm(r results.Run) results.Run {
	r.Started, r.Ended = NormTime(r.Started), NormTime(r.Ended)
	if len(r.Observation) > 0 {
		var b bytes.Buffer
		if json.Compact(&b, r.Observation) == nil {
			r.Observation = b.Bytes()
		}
	}
	return r
}

// Hist returns the encoded HDR histogram of values, as TxSummary.Hist holds it.
func Hist(t testing.TB, values ...int64) string {
	t.Helper()
	h := hdrhistogram.New(1, 60_000_000, 3)
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

// fixtureOrders is a script text two of FullRun's scripts share: the store keeps it once.
const fixtureOrders = "\\set n random(1, 10)\nSELECT :n;\n"

// FullRun returns a run with every field set but ID, UID, Status, Reason, Ended and
// Samples, which the store or the test sets. Its client is this process on host
// "bench-1".
func FullRun(t testing.TB, study, cell string, started time.Time) results.Run {
	return results.Run{
		Study:   study,
		CellKey: cell,
		Started: started,
		Params: results.Params{Drive: spec.Drive{Terminals: 32, Connections: 16, Duration: 5 * time.Minute, Warmup: 30 * time.Second, MinTransactions: 600, WarmupAuto: true, Seed: 42, Rate: 850.5, Arrival: spec.ArrivalPoisson, LatencyLimit: 250 * time.Millisecond, MaxTries: 3}, ConnectTimeout: 45 * time.Second, Workload: "tpcc", Scale: 10, Mix: map[string]float64{"new_order": 45, "payment": 43, "order_status": 4, "delivery": 4, "stock_level": 4}, Think: true, RTT: 1500 * time.Microsecond, Up: 500 * time.Microsecond, Down: time.Millisecond,
			Jitter: 100 * time.Microsecond, Distribution: "normal", Bandwidth: 12_500_000, Loss: 0.001, Profile: "own-dc", During: "backup@2m0s", Options: map[string]string{"mode": "client", "set.shared_buffers": "8GB"},
			ScriptParams: spec.ScriptParams{Scripts: []string{"orders.sql@10", "status.sql"}, Builtins: []string{"select-only@2"}, Defines: map[string]string{"products": "1000", "quote": `it's "x"`}, Init: "schema.sql"}},
		Link: &results.Link{Kind: "proxy", RTT: 1500 * time.Microsecond, Up: 750 * time.Microsecond, Down: 750 * time.Microsecond,
			Jitter: 100 * time.Microsecond, Distribution: "normal", BandwidthUp: 12_500_000, BandwidthDown: 12_500_000,
			DelayConnect: true, AchievedP50: 1510 * time.Microsecond, AchievedP99: 1620 * time.Microsecond, Samples: 200,
			RoundTrips: 123456, BytesUp: 1 << 20, BytesDown: 1 << 21,
			LatenessUp:   &results.Lateness{N: 1000, Mean: 6 * time.Microsecond, P50: 4 * time.Microsecond, P90: 9 * time.Microsecond, P99: 40 * time.Microsecond, P999: 90 * time.Microsecond, Max: 300 * time.Microsecond},
			LatenessDown: &results.Lateness{N: 999, Mean: 7 * time.Microsecond, P50: 5 * time.Microsecond, P90: 10 * time.Microsecond, P99: 50 * time.Microsecond, P999: 95 * time.Microsecond, Max: 310 * time.Microsecond},
			CPUSeconds:   0.75, Loss: 0.001, RTO: 201500 * time.Microsecond,
			Achieved: &results.LinkAchieved{Window: 5 * time.Minute,
				Up: results.LinkWay{Delay: results.Delay{Measured: true, N: 1000, Mean: 510 * time.Microsecond, SD: 101 * time.Microsecond, P50: 500 * time.Microsecond, P99: 760 * time.Microsecond, Max: 202 * time.Millisecond},
					Jitter: 101 * time.Microsecond, Bytes: 1 << 20, MeanRate: 3495.25, PeakRate: 40960.5, Sent: 1200, Lost: 2, LossChunks: 2, LossAdded: 403 * time.Millisecond},
				Down: results.LinkWay{Delay: results.Delay{Measured: true, N: 999, Mean: 1010 * time.Microsecond, SD: 99 * time.Microsecond, P50: time.Millisecond, P99: 1300 * time.Microsecond, Max: 1500 * time.Microsecond},
					Jitter: 99 * time.Microsecond, Bytes: 1 << 21, MeanRate: 6990.5, PeakRate: 81920.25, Sent: 2400, Lost: 1, LossChunks: 1, LossAdded: 201500 * time.Microsecond}}},
		Server: results.Server{
			Engine: "postgres", Target: "postgres://bench@db:5432/tpcc", Managed: true,
			Version: "PostgreSQL 17.2", Settings: map[string]string{"shared_buffers": "8GB", "max_connections": "100"},
			DatabaseBytes: 1 << 30, MemoryLimit: 512 << 20,
		},
		Client: results.Client{
			Hostname: "bench-1", OS: "linux", Kernel: "6.1.0", CPUModel: "EPYC", Cores: 2, Procs: 2,
			MemoryBytes: 8 << 30, GoVersion: "go1.26", DblatVersion: "0.1.0", PID: os.Getpid(),
			CPUSeconds: 12.5, CPULatencyHold: true, Steal: &fixtureSteal, Pressure: &fixturePressure, CanaryUs: 351.5,
		},
		Agents: 3, StartSkew: 1234567 * time.Nanosecond,
		// Compact, its keys in the order PostgreSQL's jsonb keeps them (shorter first).
		Observation: json.RawMessage(`{"version":1,"protocol":"PostgreSQL"}`),
		Scripts: []results.Script{
			{Kind: "script", Name: "orders", Path: "orders.firebird.sql", Weight: 10, SHA256: results.ScriptSum(fixtureOrders), Text: fixtureOrders},
			{Kind: "script", Name: "status", Path: "status.sql", Weight: 1, SHA256: results.ScriptSum("SELECT 1;\n"), Text: "SELECT 1;\n"},
			{Kind: "builtin", Name: "select-only", Path: "select-only.sql", Weight: 2, SHA256: results.ScriptSum(fixtureOrders), Text: fixtureOrders},
			{Kind: "init", Name: "init", Path: "schema.sql", SHA256: results.ScriptSum("CREATE TABLE t (ü int);\n"), Text: "CREATE TABLE t (ü int);\n"},
		},
		Signals: []results.Signal{
			{Offset: -250 * time.Millisecond, Span: 250 * time.Millisecond, Name: "host.io.full", Value: 0.96},
			{Offset: 0, Span: 250 * time.Millisecond, Name: "host.io.full", Value: 1.0 / 3},
			{Offset: 0, Span: time.Second, Name: "server.wal_sync_s", Value: 1.04},
		},
		Disturbances: []results.Disturbance{{Cause: "disk", From: 100 * time.Millisecond, To: 1100 * time.Millisecond, Lost: 1050 * time.Millisecond,
			Evidence: `IO pressure "full" 96 % from 0.0 to 1.1 s`}},
		SetAside: "disturbed: re-run under the study's policy",
		Operations: []results.Operation{{Name: "backup", Tool: "pg_basebackup -X stream -c fast", At: 2 * time.Minute,
			Started: 2*time.Minute + 3*time.Millisecond, Ended: 6 * time.Minute, Outcome: results.OperationFailed,
			Error: `pg_basebackup: exit status 1: "no space left"`, Detail: "ünïcode"}},
		StatsBefore: map[string]float64{"xact_commit": 1000, "blks_hit": 1e9 + 0.5, "tiny": 1e-7, "third": 1.0 / 3},
		StatsAfter:  map[string]float64{"xact_commit": 91000, "blks_hit": 2e9, "huge": 1e300},
		Summary: results.Summary{Metric: results.MetricNOPM,
			Elapsed: 5*time.Minute + 3*time.Millisecond, Warmup: 17 * time.Second, Committed: 90000, Rollbacks: 400,
			Errors: map[string]int64{"retryable": 12}, TPS: 300.1, TPM: 18006, NOPM: 8100.25,
			ErrorExamples: map[string][]string{"retryable": {"deadlock detected (SQLSTATE 40P01)", `quote " and \ and ünïcode`}},
			Retries:       70, Retried: 55, Late: 31,
			Offered: 255150, Skipped: 120, Backlog: 4, AchievedRate: 849.9, Overload: true,
		},
		Tx: []results.TxSummary{
			{Type: "new_order", Committed: 40000, Rollbacks: 400, Errors: map[string]int64{"retryable": 10},
				MeanUs: 2100.5, P50Us: 1900, P90Us: 3000, P95Us: 3500, P99Us: 5000, P999Us: 9000, MaxUs: 20000,
				WaitMeanUs: 3.25, WaitP99Us: 40, RoundTrips: 14.5, RoundTripsP50: 14, RoundTripsP99: 22,
				BytesUp: 2048.5, BytesDown: 4096.25, WritesUp: 12.75, Hist: Hist(t, 1900, 3000, 20000), WaitHist: Hist(t, 3, 40),
				Retries: 60, Retried: 50, RespMeanUs: 2500.25, RespP50Us: 2000, RespP90Us: 3400, RespP99Us: 8000, RespMaxUs: 250000,
				LagMeanUs: 400.5, LagP99Us: 3000, LagMaxUs: 230000, RespHist: Hist(t, 2000, 3400, 250000), LagHist: Hist(t, 10, 3000, 230000)},
			{Type: "payment", Committed: 38000, MeanUs: 900, P50Us: 800, P90Us: 1200, P95Us: 1500,
				P99Us: 2500, P999Us: 4000, MaxUs: 9000, Hist: Hist(t, 800, 9000)},
			{Type: "stock_level", Committed: 12000, Errors: map[string]int64{}, MeanUs: 5000.75},
		},
	}
}

// Samples returns n intervals of samples for each of types, the first two in the warm-up
// (negative offsets).
func Samples(n int, types ...string) []results.Sample {
	var out []results.Sample
	for i := range n {
		for _, ty := range types {
			out = append(out, results.Sample{
				Offset: time.Duration(i-2) * 5 * time.Second,
				Type:   ty, Committed: int64(100 + i), Errors: int64(i % 3),
				P50Us: 1000 + int64(i), P99Us: 5000 + int64(i), MaxUs: 9000 + int64(i), RespP99Us: 7000 + int64(i),
				StallUs: 300 + int64(i),
			})
		}
	}
	return out
}

// ZeroFields lists the leaf fields of v that hold their zero value, descending into
// structs, the first element of slices, and requiring maps to be non-empty.
func ZeroFields(prefix string, v reflect.Value) []string {
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			break
		}
		var out []string
		for i := range v.NumField() {
			out = append(out, ZeroFields(prefix+"."+v.Type().Field(i).Name, v.Field(i))...)
		}
		return out
	case reflect.Pointer:
		if v.IsNil() {
			return []string{prefix}
		}
		return ZeroFields(prefix, v.Elem())
	case reflect.Slice:
		if v.Len() == 0 {
			return []string{prefix}
		}
		return ZeroFields(prefix+"[0]", v.Index(0))
	case reflect.Map:
		if v.Len() == 0 {
			return []string{prefix}
		}
		return nil
	}
	if v.IsZero() {
		return []string{prefix}
	}
	return nil
}

// fixtureSteal is FullRun's client steal share.
var fixtureSteal = 0.0375

// fixturePressure is FullRun's client pressure information.
var fixturePressure = true
