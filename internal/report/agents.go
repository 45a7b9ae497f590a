package report

import (
	"time"

	"github.com/dblat/dblat/internal/results"
)

// AgentRow is one agent's part of a run that several agents drove together (`run
// --agents N`): what that agent measured on its own, so that one slow, client-bound or
// late-starting agent stands out of the merged figures.
type AgentRow struct {
	RunID int64  `json:"run_id"`
	Agent string `json:"agent"`
	// State is the part's results.PartState; Reason says why a failed part failed.
	State  string `json:"state"`
	Reason string `json:"reason,omitempty"`
	// The figures below are zero for a part without a result (a failed one).
	Terminals int   `json:"terminals"`
	Committed int64 `json:"committed"`
	// Throughput is the report's metric (NOPM or TPS) as the part measured it.
	Throughput float64 `json:"throughput"`
	// ClientCPUPerTxUs is the agent's own CPU per completed transaction, in µs; 0 when
	// not measured.
	ClientCPUPerTxUs float64 `json:"client_cpu_per_tx_us,omitempty"`
	// LinkP50 is the RTT the agent's link was calibrated to add (0 without a link);
	// LateUpP99 and LateDownP99 how late it released data during the window, at p99.
	LinkP50     time.Duration `json:"link_p50_ns,omitempty"`
	LateUpP99   time.Duration `json:"late_up_p99_ns,omitempty"`
	LateDownP99 time.Duration `json:"late_down_p99_ns,omitempty"`
	// StartedAfter is how long after the start the coordinator announced the part started
	// its terminals, on the store's clock; Started is false when not known.
	StartedAfter time.Duration `json:"started_after_ns"`
	Started      bool          `json:"started"`
}

// AgentRows lists the parts of runs (by run ID in parts) in run order, then part order,
// with throughput in metric (results.MetricNOPM or MetricTPS).
func AgentRows(runs []results.Run, parts map[int64][]results.Part, metric string) []AgentRow {
	var rows []AgentRow
	for i := range runs {
		for _, p := range parts[runs[i].ID] {
			row := AgentRow{RunID: p.RunID, Agent: p.Agent, State: string(p.State), Reason: p.Reason}
			if !p.StartAt.IsZero() && !p.Started.IsZero() {
				row.StartedAfter, row.Started = p.Started.Sub(p.StartAt), true
			}
			if pr := p.Result; pr != nil {
				row.Terminals, row.Committed = pr.Params.Terminals, pr.Summary.Committed
				row.Throughput = results.MetricValue(pr, metric)
				if done := pr.Summary.Committed + pr.Summary.Rollbacks; done > 0 && pr.Client.CPUSeconds > 0 {
					row.ClientCPUPerTxUs = pr.Client.CPUSeconds / float64(done) * 1e6
				}
				if l := pr.Link; l != nil {
					row.LinkP50 = l.AchievedP50
					if l.LatenessUp != nil {
						row.LateUpP99 = l.LatenessUp.P99
					}
					if l.LatenessDown != nil {
						row.LateDownP99 = l.LatenessDown.P99
					}
				}
			}
			rows = append(rows, row)
		}
	}
	return rows
}
