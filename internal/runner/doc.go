// Package runner drives a workload: it starts the terminals, hands each transaction a
// pooled connection, times the wait for that connection separately from the service time,
// records per-transaction-type HDR histograms and per-interval samples, excludes the warm-up,
// and returns the measurement window's figures.
//
// It does not load data, parse flags, print, or store anything: package execution builds
// its Config (with the Samples callback it stores and reports) and stores the Result.
// Below it sit package workload (what runs), package engine (how errors are classified)
// and package latency (the round trips and bytes each connection's Meter counts; Metered
// wraps a dialled connection so the runner can attribute them to transactions); it fills
// in package results' model types.
package runner
