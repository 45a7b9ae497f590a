package observe

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/dblat/dblat/internal/results"
)

// maxTypeLabel bounds the length of a shape's label as a transaction type of a run.
const maxTypeLabel = 60

// TypeLabel names shape i (from 0) of an observation as a transaction type: its rank and
// the start of its text ("#1 BEGIN; UPDATE pgbench_accounts SET …"), unique within the
// observation.
func TypeLabel(i int, s Shape) string {
	return clip(fmt.Sprintf("#%d %s", i+1, s.Shape), maxTypeLabel)
}

// maxShortLabel bounds the length of ShortLabel's excerpt, in characters.
const maxShortLabel = 32

// ShortLabel names shape i (from 0) of an observation in few words, for a chart's legend or
// a table's row: its rank and the start of its first statement that does more than open the
// transaction ("#1 UPDATE warehouse SET w_ytd = w_ytd…" where TypeLabel writes "#1 begin
// isolation level read committed; UPDATE w…"). Shapes whose statements start alike differ by
// their rank.
func ShortLabel(i int, s Shape) string {
	stmts := strings.Split(s.Shape, "; ")
	first := stmts[0]
	for _, st := range stmts {
		if !opensTransaction(st) {
			first = st
			break
		}
	}
	return fmt.Sprintf("#%d %s", i+1, clipRunes(first, maxShortLabel))
}

// opensTransaction reports whether a normalised statement only opens a transaction or
// sets its characteristics: BEGIN, START TRANSACTION, SET TRANSACTION.
func opensTransaction(stmt string) bool {
	f := strings.Fields(strings.ToUpper(stmt))
	switch {
	case len(f) == 0:
		return true
	case f[0] == "BEGIN" || f[0] == "START":
		return true
	case f[0] == "SET" && len(f) > 1 && f[1] == "TRANSACTION":
		return true
	}
	return false
}

// clipRunes shortens s to n characters, the last an ellipsis when it was longer.
func clipRunes(s string, n int) string {
	r := []rune(strings.Join(strings.Fields(s), " "))
	if len(r) <= n {
		return string(r)
	}
	return strings.TrimRight(string(r[:n-1]), " ") + "…"
}

// RunSource says how an observed run describes what showed the bytes: its link's kind
// ("proxy", "pcap", "interface") and who saw the server (the server version's suffix:
// "dblat proxy", "a packet capture").
type RunSource struct {
	LinkKind string
	SeenBy   string
}

// RunSourceOf returns how a run describes an observation of source (Observation.Source;
// "" for the proxy).
func RunSourceOf(source string) RunSource {
	switch source {
	case SourcePcap:
		return RunSource{LinkKind: SourcePcap, SeenBy: "a packet capture"}
	case SourceInterface:
		return RunSource{LinkKind: SourceInterface, SeenBy: "a live packet capture"}
	case SourceReplay:
		return RunSource{LinkKind: SourceReplay, SeenBy: "dblat replay"}
	}
	return RunSource{LinkKind: SourceProxy, SeenBy: "dblat proxy"}
}

// Run returns the observation as a finished run of workload results.WorkloadObserved: its
// shapes as transaction types (times in the transaction where the bytes were seen, round
// trips and bytes per transaction), its totals as the run's summary, the link of src (the
// proxy's delays; none for a capture), and the observation itself (Run.Observation), from
// which reports predict. engine names the engine when known ("" otherwise: the protocol's
// name stands in).
func (o *Observation) Run(engine string, src RunSource) (*results.Run, error) {
	doc, err := json.Marshal(o)
	if err != nil {
		return nil, err
	}
	if engine == "" {
		engine = o.Engine
	}
	if engine == "" {
		engine = strings.ToLower(o.Protocol)
	}
	window := time.Duration(o.WindowNs)
	r := &results.Run{
		Status:  results.StatusFinished,
		Started: o.Started,
		Ended:   o.Ended,
		Params:  results.Params{Workload: results.WorkloadObserved, RTT: time.Duration(o.RTTNs)},
		Link: &results.Link{Kind: src.LinkKind, RTT: time.Duration(o.RTTNs), Up: time.Duration(o.UpNs), Down: time.Duration(o.DownNs),
			RoundTrips: o.Totals.RoundTrips, BytesUp: o.Totals.BytesUp, BytesDown: o.Totals.BytesDown},
		Server:      results.Server{Engine: engine, Target: o.Upstream, Version: o.Protocol + " (as " + src.SeenBy + " saw it)"},
		Observation: doc,
		Signals:     o.Signals,
	}
	r.Params.Terminals = o.ClientsDefault()
	r.Params.Connections = int(o.MaxOpen)
	r.Params.Duration = window
	r.Summary = results.Summary{Metric: results.MetricTPS, Elapsed: window, TPS: o.TPS, TPM: o.TPS * 60}
	for i, s := range o.Shapes {
		tx := results.TxSummary{Type: TypeLabel(i, s), Committed: s.Count - s.Rollbacks, Rollbacks: s.Rollbacks,
			MeanUs: s.LatencyMsMean * 1e3, P50Us: int64(s.LatencyMsP50 * 1e3), P99Us: int64(s.LatencyMsP99 * 1e3),
			MaxUs: int64(s.LatencyMsMax * 1e3), RoundTrips: s.RoundTripsMean, RoundTripsP50: s.RoundTripsP50,
			RoundTripsP99: s.RoundTripsMax, BytesUp: s.BytesUpMean, BytesDown: s.BytesDownMean, Hist: s.Hist}
		if s.Errors > 0 {
			tx.Errors = map[string]int64{"other": s.Errors}
		}
		if h, err := results.DecodeHist(s.Hist); err == nil {
			tx.P90Us, tx.P95Us, tx.P999Us = h.ValueAtQuantile(90), h.ValueAtQuantile(95), h.ValueAtQuantile(99.9)
		}
		r.Tx = append(r.Tx, tx)
		r.Summary.Committed += tx.Committed
		r.Summary.Rollbacks += tx.Rollbacks
		if s.Errors > 0 {
			if r.Summary.Errors == nil {
				r.Summary.Errors = map[string]int64{}
			}
			r.Summary.Errors["other"] += s.Errors
		}
	}
	return r, nil
}

// FromRun returns the observation a run stored (Run), or an error saying the run is not one.
func FromRun(r *results.Run) (*Observation, error) {
	if len(r.Observation) == 0 {
		return nil, fmt.Errorf("run %d is not an observation (workload %q): store one with dblat proxy --observe", r.ID, r.Params.Workload)
	}
	return Decode(r.Observation)
}
