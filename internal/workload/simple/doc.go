// Package simple holds dblat's pgbench-style workloads, for any engine dblat speaks to:
//
//   - tpcb: pgbench's built-in TPC-B-like transaction (BEGIN, five statements, END);
//   - select-only: pgbench -S, one primary-key SELECT sent alone;
//   - blob: one SELECT that reads BlobsPerTx rows' blobs (or, with BlobWrite, one UPDATE per
//     row in a transaction), the round-trip cost seed 000 warns about on Firebird;
//   - ping: SELECT 1, the floor of what a statement costs.
//
// With them seed 003 (pgbench -S at 10 clients, with and without added latency) can be
// repeated on every engine, and its numbers set beside pgbench's own on PostgreSQL.
//
// # Data
//
// Load creates pgbench's tables with pgbench's names and columns (pgbench_branches, _tellers,
// _accounts, _history; 100,000 accounts per unit of scale) and fills them as `pgbench -i`
// does, so pgbench runs on data loaded here, as BenchmarkSelectOnlyVsPgbench does; the blob
// data is the table simple_blob. Each completed load is recorded last in simple_meta, which
// Loaded reads back. Everything engine-specific goes through engine.Dialect (column types,
// Blob, Dual, LockingIsolation) and the optional engine.BulkLoader; the package never tests
// an engine's name.
//
// # Transactions and protocols
//
// pgbench sends select-only's SELECT (and here ping and the blob read too) without BEGIN, so
// the server commits it alone: one round trip. These statements run alone on the runner's
// *sql.Conn too, except on engines whose driver cannot do that safely (capability engine.TxOnly:
// the Firebird driver's autocommit keeps one transaction open per connection), where they run
// in a read-only transaction that costs BEGIN and COMMIT round trips on top; the runs say so
// (Workload.ExplicitTx). tpcb and blob writes run at Dialect.LockingIsolation.
//
// Config.Protocol chooses how statements travel where the engine has several protocols
// (capability engine.QueryProtocols, PostgreSQL): "prepared" (the default; pgx's per-connection
// statement cache, a named statement parsed once and then Bind/Execute/Sync), "extended"
// (pgx QueryExecModeExec: Parse of the unnamed statement, Bind, Describe, Execute, Sync, every
// time and in one round trip, as pgbench -M extended; pgx's DescribeExec would cost two) and
// "simple" (pgx QueryExecModeSimpleProtocol: the Query message with the arguments
// interpolated by the client, as pgbench -M simple). The choice is passed per statement as a
// leading argument, not through the DSN: a DSN's default_query_exec_mode would be overridden
// by statements prepared through database/sql, and would apply to the runner's own queries
// too. Elsewhere statements are prepared once per connection through database/sql
// (simple/extended are refused, naming the engine). Single-row statements run alone take the
// engine's engine.RowQuerier path when it has one: the driver connection through (*sql.Conn).Raw,
// which spares database/sql's row machinery (BenchmarkSelectOnlyPaths measures it).
//
// # Neighbours
//
// Package workload defines the interfaces implemented here; package engine supplies the
// dialects, error classes and bulk loaders. Package runner drives the terminals and counts
// round trips per transaction through its metered connections; this package neither times
// nor stores anything. The CLI calls Load, Loaded and New.
//
// # Not done
//
// No pgbench -N (simple-update), custom scripts, -R rate limiting, -C reconnects, pipeline
// mode, or partitioned/unlogged tables; no scale above 20,000 (pgbench's bigint aid);
// pgbench's filler columns stay empty as pgbench leaves them; history is never truncated
// (pgbench truncates it, and vacuums, before each run unless -n; restore a pristine copy
// between runs instead). On Firebird 3.0, tpcb at a small scale mostly fails with update
// conflicts on the branch row (no statement restart before 4.0), which the runner counts as
// retryable errors.
package simple
