// Package execution owns a run and a study: it resolves the target once, opens nothing but
// what the run needs, starts, restarts and stops managed servers, loads and restores data,
// puts the latency link between the terminals and the server, calls the runner, and writes
// every run to the results store as soon as it ends.
//
// A run is described by one typed Spec, whether it comes from the command line or from a
// study cell (SpecOf). Workloads and engines are looked up in their registries (package
// workload, package engine) and asked for their capabilities; nothing here tests a
// workload's or an engine's name. Plan checks a study against those capabilities before
// any server starts.
//
// Its neighbours: package cli parses flags and prints what an Observer is told; package
// study expands study files into cells; package runner drives the terminals; package
// results stores what was measured. This package prints nothing.
package execution
