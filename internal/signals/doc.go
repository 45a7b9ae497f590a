// Package signals samples, beside a run or an observation, what else was happening on the
// machine and in the server, interval by interval, so that a run whose throughput dipped can
// say why (package disturb names the cause from these signals and the run's own samples):
//
//   - the kernel's pressure stall information (PSI, /proc/pressure/{cpu,io,memory}): the
//     share of each interval in which some task, or every non-idle task ("full"), waited
//     for a CPU, for IO or for memory; the same for the managed server's own cgroup where
//     it has one (package managed places it in one where the host allows);
//   - the machine's CPU time from /proc/stat: CPUs busy, steal (what the hypervisor gave to
//     other guests) and iowait;
//   - the CPU dblat itself used, the CPU the managed server's processes used, and the longest
//     time dblat's own process went without a CPU (a goroutine that should wake every
//     StallTick, and how late it woke);
//   - the busiest other processes, by name, in the intervals in which the machine was busy
//     beyond dblat and the server;
//   - the server's own view, read through the engine's optional engine.Signaler capability
//     (WAL syncs and their time, checkpoints, autovacuum workers, backends waiting on IO, ...).
//
// Each signal has a name (the constants in signals.go, and "db.NAME" for the engine's) and a
// value per interval whose unit the name implies: a share of the interval (PSI, steal,
// iowait, between 0 and 1), CPUs (CPU seconds per second), seconds, or a count. Where the
// kernel has no pressure information the sampler says so once (Sampler.Notes) and the
// PSI signals are missing: a check can say less there, and says that.
//
// Sampling costs little: a handful of small /proc reads every Every (500 ms by default), a
// goroutine that wakes every StallTick (100 ms), and one query of the server a second;
// package execution's BenchmarkSignalsCost measures what that adds to dblat's CPU per
// transaction. It runs in its own goroutines and never blocks a run: a server query that
// hangs (the server stalled) only delays the server's next reading.
//
// It imports package results for the stored form (results.Signal) and nothing else of
// dblat; package execution starts a Sampler beside every run, package cli beside every
// observation.
package signals
