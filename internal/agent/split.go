package agent

import (
	"maps"

	"github.com/dblat/dblat/internal/execution"
	"github.com/dblat/dblat/internal/spec"
	"github.com/dblat/dblat/internal/workload"
)

// Assignment is one agent's part of a run as the coordinator writes it to the store (as
// JSON, results.Part.Assignment).
type Assignment struct {
	// Run is the part's run: its terminals (FirstTerminal …), its pool, the options that
	// confine it to its data, and everything else as the whole run has it. Its Target may
	// be overridden by the agent (Agent.Target).
	Run spec.Run `json:"spec"`
	// TargetSecret is set when the run's target DSN holds a password, stored redacted in
	// Run.Target: the agent must have the DSN of its own (Agent.Target).
	TargetSecret bool `json:"target_secret,omitempty"`
	// Index numbers the part among Parts.
	Index int `json:"index"`
	Parts int `json:"parts"`
}

// Split divides rs among n agents. Terminals are split as evenly as possible and keep the
// numbers they would have in one process (Drive.FirstTerminal), so every terminal draws the
// same inputs as there; connections are split like terminals. A workload that can divide
// its data (workload.Definition.Split: TPC-C, with at least n warehouses) gives each part
// data of its own and terminals in proportion to it; otherwise every part runs on all of
// the data. Every part goes through the whole run's latency link configuration, which each
// agent calibrates on its own path.
func Split(rs spec.Run, def *workload.Definition, n, scale int) ([]Assignment, error) {
	switch {
	case n < 1:
		return nil, execution.Inputf("agents must be at least 1, got %d", n)
	case rs.Terminals < n:
		return nil, execution.Inputf("%d terminals cannot be split among %d agents: give at least one terminal per agent", rs.Terminals, n)
	case rs.Connections > 0 && rs.Connections < n:
		return nil, execution.Inputf("%d connections cannot be split among %d agents: give at least one per agent", rs.Connections, n)
	case rs.OpenLoop():
		return nil, execution.Inputf("open-loop runs (--rate) cannot be split among agents yet: drop --rate or --agents")
	}
	for _, o := range def.SplitOptions {
		if rs.Options[o] != "" {
			return nil, execution.Inputf("%s is set per agent when a run is split: drop it", o)
		}
	}
	var parts []workload.Partition
	if def.Split != nil {
		parts = def.Split(scale, n)
	}
	// bound(k) is where part k starts, in terminals: in proportion to the shares of the
	// parts before it, or evenly.
	bound := func(k int) int { return k * rs.Terminals / n }
	if parts != nil {
		cum := make([]int, n+1)
		for k, p := range parts {
			cum[k+1] = cum[k] + p.Share
		}
		total := cum[n]
		bound = func(k int) int { return (cum[k]*rs.Terminals + total/2) / total }
	}
	out := make([]Assignment, n)
	for k := range n {
		r := rs.Clone()
		r.FirstTerminal = bound(k)
		r.Terminals = bound(k+1) - r.FirstTerminal
		if r.Terminals < 1 {
			return nil, execution.Inputf("%d terminals over %d agents leave agent %d without a terminal: give more terminals", rs.Terminals, n, k)
		}
		if rs.Connections > 0 {
			r.Connections = (k+1)*rs.Connections/n - k*rs.Connections/n
		}
		r.Connections = min(r.Connections, r.Terminals)
		if parts != nil {
			if r.Options == nil {
				r.Options = map[string]string{}
			}
			maps.Copy(r.Options, parts[k].Options)
			r.Scale = scale
		}
		out[k] = Assignment{Run: r, Index: k, Parts: n}
	}
	return out, nil
}
