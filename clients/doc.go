// Package clients runs dblat's client matrix: real client libraries, in the languages
// applications are written in, through `dblat proxy --observe --record`, checked against
// what the clients themselves counted and measured.
//
// # What it does
//
// Each client is a small program in this directory (go/, c/, python/, node/, java/), run
// with a known number of transactions of one shape (SELECT a balance by key, UPDATE it,
// COMMIT, with the driver's own way of starting the transaction) against a dblat-managed
// PostgreSQL, MariaDB or Firebird server through an in-process `dblat proxy --rtt 0`. Its
// test (matrix_test.go) asserts that the proxy observed as many transactions as the client
// committed, with the round trips per transaction the protocol implies for that client, and
// that `dblat run script -f` replays the recording with the round trips the script runner
// takes for it. DBLAT_CLIENTS=all runs every client, not only the fast ones; with
// DBLAT_CLIENTS_PREDICT=1 it also runs each client at +2 ms and +20 ms with
// 1 and 4 connections and compares what the client measured with what `dblat predict
// --observed` predicted from the observation at RTT 0, and writes the compatibility table
// (DBLAT_CLIENTS_TABLE).
//
// The Go and C clients run in `make test`; the Python, Node and Java ones, installed by
// scripts/clients.sh under a cache directory (DBLAT_CLIENTS_CACHE), and the predictions run
// in `make clients`.
//
// # Neighbours
//
// It drives package cli in-process (proxy, run script, predict, results export) and reads
// package observe's Observation; the servers come from the engines' test packages (pgtest,
// mariadbtest, fbtest).
package clients
