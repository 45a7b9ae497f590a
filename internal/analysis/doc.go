// Package analysis explains and judges the stored runs of a study: a latency model fitted
// to each series, the knees where added round-trip time starts to cost throughput, the
// connection-pool size that pays at each RTT, TPC-C's response-time limits, and a
// credibility check that flags comparisons that are not like for like.
//
// Everything here is a pure function of []results.Run and the study's factor keys: no
// store, clock, environment or network is read, and every result is sorted so that the
// same runs always give the same output (JSON-serialisable structs, and WriteText for a
// terminal).
//
// # The latency model
//
// A terminal that needs R round trips per transaction over an added RTT r, with a time s per
// transaction that is not added RTT (server work, client work, the base network), completes
// at most 1/(R·r + s) transactions per second; N terminals with no think time complete
// N/(R·r + s), until the server saturates at a capacity C:
//
//	X(r) = min(N/(R·r + s), C)
//
// R is measured (round trips per completed transaction, metered on the client's connections,
// averaged over the transaction types by their share of the mix, at each RTT level), r is
// measured (the
// calibrated RTT the link added), and only s, and C where the data show a plateau, are
// fitted. See FitLatency for the method and for when the model is said not to fit.
//
// # Response time at a fixed rate
//
// Open-loop runs (results.Params.Rate) offer the same load at every RTT, so their response
// times show what a user waits as the RTT grows. ResponseAtRate models a transaction's
// service time as R·r + s and its response time as that plus M/M/N's wait for a free
// terminal, finds where the terminals saturate (λ·(R·r + s) = N) and where the runs stopped
// sustaining the rate, and says where the measured response departs from the model and why
// (the server's own queueing, bursts near saturation, constant arrivals queueing less).
//
// # The credibility check
//
// Check applies one rule per pitfall (see the Rule… constants): runs in one chart that
// differ in anything besides the study's factors (seed 002: builds, page sizes and caches
// that differ between the runs compared), engine pitfalls (Firebird's update conflicts, a
// cache left at its default, data that fits in RAM), error and conflict rates, too few or
// too noisy repeats (seed 000: "each test configuration is run at least five times"), a saturated client, an RTT that the link did not deliver, a missing or short
// warm-up, open-loop runs that did not sustain their rate (overload points), and retries
// after conflicts, a finding of their own apart from errors. Each Finding names its
// severity, the runs and cells it concerns, the evidence and what to change; errors mean the
// figure must not be quoted, so `dblat check` exits non-zero on them.
//
// # What it does not do
//
// It does not open a results store (the CLI reads runs with results.Store.List and passes
// them in), run anything, or render the report's charts. It does not know what a study
// claims: "cache-bound" and "disk" findings are stated as what the data show, for the
// reader to weigh.
//
// # Neighbours
//
// Package results on one side (the Run model, factor keys, the grouping of runs into cells,
// HDR histogram decoding); on the other, package report (report/analysis.go turns Findings
// into report Warnings and renders the sections into a report) and package cli (`dblat
// analyze STUDY`, `dblat check study STUDY`, `dblat check runs ID...`). Cells are grouped by
// results.Group, as report.Build groups them, so a finding's cell keys are the report's.
package analysis
