// Package runner drives a workload: it starts the terminals, hands each transaction a
// pooled connection, retries a transaction that failed with a retryable error (with the same
// input, up to Config.MaxTries), records per-transaction-type HDR histograms and
// per-interval samples, excludes the warm-up, and returns the measurement window's figures.
//
// Terminals run closed-loop by default: each starts its next transaction when its last one
// ends, after its keying and think times. With Config.Rate they run open-loop: transactions
// arrive at a fixed rate on a schedule fixed before the run (constant or Poisson, seeded),
// and free terminals pick the arrivals up in order; the schedule holds no queue, so memory
// stays flat however far behind the terminals fall, and an arrival picked up later than
// Config.LatencyLimit is skipped and counted (pgbench's -R and --latency-limit). Every
// transaction has three times: its response time from its intended start (its arrival; the
// end of its keying time; or when its terminal asked for a connection), its service time
// from the connection checkout, and the schedule lag between them. An open-loop run counts
// the arrivals of its window that were offered, skipped and left unstarted, and marks itself
// an overload point when it did not keep its rate (results.IsOverload).
//
// A run's timeline has three phases (timeline.go): the warm-up, whose transactions are
// sampled but count in no figure (fixed, or ended when throughput is steady); the window,
// whose ending transactions count; and the drain, in which no transaction starts and those
// in flight finish or are canceled after Config.DrainTimeout. A drain (Hooks.Drain) or a
// hard stop (the context) cuts the window short, and its figures so far are returned.
//
// A transaction on a metered connection runs on a context that is never canceled
// (workload.WithStopping): the database drivers watch every statement's cancelable context,
// with a goroutine or a callback each time, which cost Firebird's TPC-C client a fifth of
// its CPU. When the run is canceled (its window ended DrainTimeout ago, or its caller
// gave up), the runner closes the connections of the transactions still in flight, which
// fails their statements at once.
//
// It does not load data, parse flags, print, store anything, or check its Config: it drives
// the run's spec.Drive as the execution core resolved and validated it (spec.Run.Validate),
// reading its zero values as spec does (Drive.Pool, Drive.Tries); the execution core builds
// its Config (with the Samples callback it stores and reports) and stores the Result.
// Below it sit package workload (what runs: Terminal.Next draws a transaction, Run executes
// it as often as it is retried), package engine (how errors are classified) and package
// latency (the round trips and bytes each connection's Meter counts, which Metered wraps a
// dialled connection with so the runner can attribute them to transactions; the Sleeper
// that wakes terminals on time); it fills in package results' model types.
package runner
