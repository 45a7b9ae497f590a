// Package agent drives one run with several dblat processes on several machines, the
// agents, coordinated through the results store they all share (a PostgreSQL database;
// a SQLite file works for agents on one machine).
//
// An Agent joins the store under a name, heart-beats, and waits for a part of a run: its
// terminals (numbered as in one process), for TPC-C its range of home warehouses, and the
// run's latency link, which it calibrates itself. It runs the part with the execution
// core, starting its terminals at the one start time the coordinator announced, on its
// own clock corrected by the offset it measured to the store's clock, and writes the
// part's figures back to the store (once, however often it retries). A Coordinator
// (`dblat run … --agents N`) stores the run, waits for N idle agents, hands out the parts
// (Split), announces the start when every part is ready, watches the heartbeats, and
// finishes the run with the exact merge of its parts (Merge): counts summed, HDR
// histograms merged, per-second samples summed by wall-clock second. An agent that dies
// or stops heart-beating fails the run with a reason naming it.
//
// The package sits between the execution core (internal/execution), which runs each part
// as it runs any run, and the results store (internal/results), which holds the agents,
// the parts and the merged run; the command line (internal/cli) only parses and prints.
// It places no processes: Kubernetes (deploy/kubernetes), ssh or systemd start agents.
package agent
