// Package execution owns a run and a study: it resolves the target once, opens nothing but
// what the run needs, starts, restarts and stops managed servers, loads and restores data,
// puts the latency link between the terminals and the server, calls the runner, and writes
// every run to the results store as soon as it ends.
//
// A run is described by one spec.Run, whether it comes from the command line or from a study
// cell (RunOf). It is resolved and validated here (check: spec.Run.Validate, then the
// workload's and the engine's options through their option declarations); the runner gets
// its Drive as it is, and every connection the run's connect timeout
// (engine.OpenOptions.ConnectTimeout). Core.Run takes it through a lifecycle of named steps
// (see Core.runOn): check, connect, data, prepare, inspect and calibrate judge and ready
// everything before the run is stored, so that a problem found there stores nothing (an
// *InputError, tagged by the field it concerns, for what the user asked); then begin stores
// it, the start barrier lets agents start together (Core.BeforeStart), measure runs the
// runner and finish stores the figures. Workloads and engines are looked up in their registries (package workload,
// package engine) and asked for their capabilities; nothing here tests a workload's or an
// engine's name. Plan checks a study against those capabilities before any server starts,
// and places each problem in the study file by the path of the field it concerns.
//
// RunStudy runs a study a round at a time and makes its plan again after each round from
// what the cells measured (sequential repeats: study.Study.Schedule), within its budget
// (study.Study.Allot), and says at the end how each cell's interval compares with its
// precision (Shortfalls). The first load of a data set on a managed server is kept as a
// template in the state directory (templates.go, engine.Templater) that later studies
// restore instead of loading.
//
// The link a run goes through has its shape from the run's link fields (spec.Run.Resolve);
// the run stores what the link did over its window (results.LinkAchieved): the delays it
// applied and the losses it injected (latency.Link.StatsSince), and the bandwidth it used,
// sampled every results.PeakInterval from what its cable delivered (latency.Link.Carried)
// for the peak.
//
// A managed server may run under a memory limit (ServerStart.Memory; managed.Contain holds
// it there), refused before it starts where the host cannot hold one or the cache its
// settings ask for does not fit; each run on it first drops its data from the page cache
// (what dblat restored is charged to dblat, not to the server's limit) and records the
// limit read back and what the server read from the disk (StatReadBytes). A run may start
// an operation on its managed server during its window (spec.Params.During: a backup, a
// vacuum, a checkpoint, an index build, each the engine's own way: engine.Operator); it
// records its times and outcome, waits for one that outlasts the window (OperationGrace),
// and a failed one fails nothing else.
//
// StoreObserved stores what an observation session saw (package observe: `dblat proxy
// --observe`) as a run of workload "observed", which reports read like any other run.
//
// Its neighbours: package cli parses flags and prints what an Observer is told; package
// study expands study files into cells; package runner drives the terminals; package agent
// drives one run from several processes; package observe follows an application's
// connections; package results stores what was measured. This package prints nothing.
package execution
