package agent

import (
	"fmt"
	"maps"

	"github.com/dblat/dblat/internal/execution"
	"github.com/dblat/dblat/internal/workload/tpcc"
)

// Assignment is one agent's part of a run as the coordinator writes it to the store (as
// JSON, results.Part.Assignment).
type Assignment struct {
	// Spec is the part's run: its terminals (FirstTerminal …), its pool, its home
	// warehouses, and everything else as the whole run has it. Its Target may be
	// overridden by the agent (Agent.Target).
	Spec execution.Spec `json:"spec"`
	// TargetSecret is set when the run's target DSN holds a password, stored redacted in
	// Spec.Target: the agent must have the DSN of its own (Agent.Target).
	TargetSecret bool `json:"target_secret,omitempty"`
	// Index numbers the part among Parts.
	Index int `json:"index"`
	Parts int `json:"parts"`
}

// Split divides spec among n agents. Terminals are split as evenly as possible and keep
// the numbers they would have in one process (Spec.FirstTerminal), so every terminal
// draws the same inputs as there; connections are split like terminals. For TPC-C with
// at least n active warehouses (warehouses), each part gets a contiguous range of home
// warehouses (tpcc.OptionHomeWarehouses) and terminals in proportion to it, so every
// warehouse's terminals run on one agent; with fewer warehouses than agents, the
// terminals keep their one-process home warehouses (round-robin over all), shared across
// agents. Every part goes through the whole run's latency link configuration, which each
// agent calibrates on its own path.
func Split(spec execution.Spec, n, warehouses int) ([]Assignment, error) {
	switch {
	case n < 1:
		return nil, execution.Inputf("agents must be at least 1, got %d", n)
	case spec.Terminals < n:
		return nil, execution.Inputf("%d terminals cannot be split among %d agents: give at least one terminal per agent", spec.Terminals, n)
	case spec.Connections > 0 && spec.Connections < n:
		return nil, execution.Inputf("%d connections cannot be split among %d agents: give at least one per agent", spec.Connections, n)
	case spec.Rate > 0:
		return nil, execution.Inputf("open-loop runs (--rate) cannot be split among agents yet: drop --rate or --agents")
	case spec.Options[tpcc.OptionHomeWarehouses] != "":
		return nil, execution.Inputf("%s is set per agent when a run is split: drop it", tpcc.OptionHomeWarehouses)
	}
	partition := spec.Workload == tpcc.Definition.Name && warehouses >= n
	// bound(k) is where part k starts, in terminals (and in warehouses when partitioned).
	termBound := func(k int) int { return k * spec.Terminals / n }
	whBound := func(k int) int { return k * warehouses / n }
	if partition {
		termBound = func(k int) int { return (whBound(k)*spec.Terminals + warehouses/2) / warehouses }
	}
	out := make([]Assignment, n)
	for k := range n {
		s := spec
		s.Options = maps.Clone(spec.Options)
		s.Record = maps.Clone(spec.Record)
		s.FirstTerminal = termBound(k)
		s.Terminals = termBound(k+1) - s.FirstTerminal
		if s.Terminals < 1 {
			return nil, execution.Inputf("%d terminals over %d warehouses leave agent %d without a terminal: give more terminals", spec.Terminals, warehouses, k)
		}
		if spec.Connections > 0 {
			s.Connections = (k+1)*spec.Connections/n - k*spec.Connections/n
		}
		if partition {
			if s.Options == nil {
				s.Options = map[string]string{}
			}
			s.Options[tpcc.OptionHomeWarehouses] = fmt.Sprintf("%d-%d", whBound(k)+1, whBound(k+1))
			s.Scale = warehouses
		}
		out[k] = Assignment{Spec: s, Index: k, Parts: n}
	}
	return out, nil
}
