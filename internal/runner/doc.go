// Package runner drives a workload: it starts the terminals, hands each transaction a
// pooled connection, times the wait for that connection separately from the service time,
// records per-transaction-type HDR histograms and per-interval samples, excludes the warm-up,
// and returns the measurement window's figures.
//
// It does not load data, parse flags, print, or store anything: the CLI does that with the
// Hooks and the Result. Below it sit package workload (what runs) and package engine (how
// errors are classified).
package runner
