// Package results is dblat's results store: every measured run, its per-transaction-type
// summaries with HDR histograms, its per-interval samples, and the study definitions, kept
// so that reports, comparisons and statistics can be (re)computed later.
//
// Store is one interface with two backends, chosen by Open from the location: a local
// SQLite file (the default; pure Go driver modernc.org/sqlite) or a PostgreSQL database
// (postgres://… or a key=value DSN; driver pgx) that several dblat processes on several
// machines share, and that a team can query with its own SQL tools. Both run the same
// queries through database/sql; a small dialect holds what differs (placeholders, time and
// JSON column types, row locks). Both pass one conformance suite, package storetest, so
// that what is written to one reads back from the other field for field. The schema, its
// views for analysis in SQL and example queries are documented in docs/results-schema.md.
//
// The execution core writes through Store (package execution; for a run that agents
// drove, the coordinator of package agent): Begin once a run is about to start, AddSamples
// every few seconds as the runner reports them, Finish once when the run ends (its per-type
// rows and final figures in one transaction). Reports and the CLI read with List and Get,
// and Export dumps runs as JSON or CSV; ParseID and ParseIDs read
// run ids as users write them ("12", "12,13,14"), for every command that takes them. Import copies one store's runs and studies into
// another, identifying runs by their UID, so that copying twice adds nothing. The store does
// no reporting, comparison or statistics of its own, which is why the HDR histograms are
// kept and EncodeHist/DecodeHist live here, and Group, which groups runs into a study's
// cells by their factor levels: the one grouping that reports and analyses share. A run's parameters are package spec's Params
// (results.Params); otherwise it imports no other dblat package: execution, the CLI and
// reports sit above it.
//
// A run is visible as StatusRunning from Begin on. If the process that began it dies, the
// next Open on the same host marks it StatusAborted, so a crash never leaves a run looking
// live. Opening a store never discards data; the schema is upgraded in place by ordered
// migrations (one transaction; on PostgreSQL under an advisory lock, so that processes
// opening a new store at once create it once), and a store written by a newer dblat is
// refused rather than touched.
//
// Nothing secret is stored: the model has no password fields, Server.Target holds a
// redacted DSN, and Store.Location drops the password of a PostgreSQL DSN.
package results
