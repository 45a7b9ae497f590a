// Package tpcc is TPC-C (revision 5.11) for any engine dblat speaks to: the schema of §1.3,
// the initial population of §4.3 (Load), the five transactions of §2 run by emulated
// terminals (Workload, a workload.Workload) in three round-trip modes, and the
// consistency conditions of §3.3.2 (Check). Every rule in the code cites its clause.
// Everything engine-specific goes through engine.Dialect and the optional engine.BulkLoader
// and engine.Batcher; the package never tests an engine's name, and its SQL is plain
// SQL-92 with "?" placeholders, except the stored procedures, written once per procedure
// language.
//
// # Neighbours
//
// Package workload defines the interfaces implemented here. Package engine supplies the
// dialect, the error classes, the bulk-load fast path and batches. Package runner drives the
// terminals: it times, counts and classifies (engine.Engine.Classify) what Terminal.Run
// returns, and retries nothing itself; this package neither times nor stores anything.
// Definition declares it to package workload's registry, through which the execution core
// loads (Load), finds the loaded scale (LoadedWarehouses), builds runs (New, with
// Config.Mode one of Modes) and checks the data (Check); the CLI does not import it.
//
// # Transactions
//
// Each transaction is one database transaction. How it talks to the server is the
// round-trip mode (Config.Mode), the answer to "what mitigates latency?": talk to the
// server less. Every mode runs the same profiles on the same inputs, locks rows in the
// same order at the same isolation, and leaves the same data behind (TestModesAgree
// compares what each transaction displays and the final data, on every engine):
//
//   - ModeClient (the default, as in go-tpc and BenchBase): one prepared SQL statement
//     per step of the profile, begun with (*sql.Conn).BeginTx, so the round trips follow
//     the spec's profiles (37 for an average New-Order on PostgreSQL). Where the dialect
//     has UPDATE ... RETURNING, an update and the read of the same row are one statement.
//     Statements are prepared once on the pool (Prepare) and bound to each transaction
//     with (*sql.Tx).StmtContext. Files: neworder.go, payment.go, ...
//   - ModeBatched: the same logic on the client, the statements sent in a few batches
//     through the engine's engine.Batcher (a pgx pipeline with the BEGIN folded in on
//     PostgreSQL, an anonymous compound statement on MariaDB, an EXECUTE BLOCK on
//     Firebird): a batch holds every statement whose arguments are known, reads of many
//     keys become one statement with an IN list, and values only the server combines stay
//     there. New-Order is two batches (the client must see which items exist before it
//     may commit), Payment and Order-Status one or two (two when the customer is chosen
//     by name), Delivery two, Stock-Level one. Files: *_batched.go, batch.go.
//   - ModeProcedure: one call of a stored procedure per transaction, as in HammerDB,
//     installed by Load (and by Prepare on databases loaded before). The sources are
//     TPC-C's, so they live here, one file per Dialect.ProcedureLanguage
//     (procedures_plpgsql.go, procedures_sqlpsm.go, procedures_psql.go): a capability,
//     not a product name. PL/pgSQL and SQL/PSM procedures begin and commit their own
//     transaction: one round trip. PSQL cannot commit, so on Firebird the client begins
//     and commits around EXECUTE PROCEDURE: three, the minimum with this driver
//     (procedures.go says why).
//
// The inputs are drawn on the client in every mode (HammerDB's procedures draw their
// own), so that one seed gives one run whatever the mode.
//
// New-Order rolls back 1 % of orders through an unused item (§2.4.1.4) and then returns
// workload.ErrExpectedRollback. Its items are processed in item-number order, so
// concurrent New-Orders lock STOCK rows in one order and cannot deadlock (§2.3.1 allows
// any order). Payment and Order-Status select 60 % of customers by last name, taking the
// middle one by first name (§2.5.2.2). Delivery delivers all ten districts in one
// database transaction, inline: the deferred queue and result file of §2.7.2 are not
// modelled, as in most kits. Stock-Level looks at the last 20 orders of the terminal's own
// district with a threshold of 10 to 20 (§2.8).
//
// # Isolation
//
// New-Order, Payment and Delivery run at Dialect.LockingIsolation (READ COMMITTED on
// PostgreSQL, what most kits use) and lock every row they change by writing it first: an
// UPDATE or DELETE takes the row lock and does its arithmetic in SQL (D_NEXT_O_ID + 1,
// W_YTD + amount, the S_QUANTITY rule ...), and only then is the row read back (RETURNING,
// or a SELECT that sees the transaction's own write). Concurrent transactions on a hot row
// (the warehouse in Payment, the district in New-Order) therefore queue on its lock and
// proceed with the committed value: no lost updates and no serialization failures, so
// contention shows up as response time, as on a locking engine. Nothing is read before
// it is locked except data no transaction changes (W_TAX, D_TAX, C_DISCOUNT, ITEM,
// S_DIST_xx and S_DATA, the customers of a last name). The one row that must be found
// before it can be written is each district's oldest NEW-ORDER row: Delivery reads it
// with a lock (SELECT ... ORDER BY no_o_id LIMIT 1 FOR UPDATE, or ROWS 1 WITH LOCK on
// Firebird), so concurrent Deliveries of a warehouse queue for it and a waiter gets the
// next oldest. Every mode locks in the same order: New-Order the district, then stock rows
// in item order; Payment the warehouse, the district, the customer; Delivery the
// districts' NEW-ORDER rows in district order, then orders, order lines and customers
// (the batched mode all ten NEW-ORDER rows first, which keeps that order among
// Deliveries), so a mode cannot deadlock where another does not. How long a transaction
// holds its locks is what the modes change: a New-Order holds its district row for its
// remaining round trips, so under latency the modes differ in contention as much as in
// waiting. TestModesUnderContention runs 16 terminals on one warehouse at 80 % Delivery
// in every mode and engine and allows no error but the update conflicts Firebird 3.0 has
// on hot rows in every mode.
//
// Order-Status and Stock-Level are read-only transactions at Dialect.SnapshotIsolation
// (REPEATABLE READ on PostgreSQL): each sees one committed state, and read-only snapshot
// transactions never fail with serialization errors there.
//
// The consequence: §3.4.1 asks for level 3 (serializable) among New-Order, Payment,
// Delivery and Order-Status. With the access pattern above every value a transaction
// writes depends only on rows it has locked or on data nobody changes, so no anomaly
// reaches the data (the consistency checks hold after concurrent runs), but READ
// COMMITTED itself gives no phantom protection, and the isolation tests of §3.4.2 are not
// run. REPEATABLE READ would be serializable for TPC-C (snapshot isolation, §7 of the
// fact sheet), at the price of a 40001 error on every hot-row conflict, which the runner
// would count and the study would then measure instead of the engine.
//
// # Loading
//
// Load generates every table in chunks of one table and one warehouse (or half of one),
// each chunk from its own random stream, so equal seeds give equal data whatever the
// number of workers (Fingerprint proves it). Random strings are slices of pre-generated
// random pools, as §4.3.2.1 allows for the initial load, and rows hold pointers to reused
// variables, so a row costs a few random draws and no allocation. Chunks go through the
// engine's BulkLoader (one COPY each on PostgreSQL) or, without one or with
// LoadConfig.NoBulk, through multi-row INSERTs. Tables are created without keys; as soon
// as a table's last chunk is in, its primary key and indexes are built and its
// statistics refreshed while the other tables still load (ORDER-LINE, whose key takes
// longest, is loaded first). Tables stay logged. On PostgreSQL with wal_level=minimal,
// creating a table and COPYing into it in one transaction would skip WAL; the loader does
// not rely on that.
//
// # Not done
//
// ModeBatched does not use the Firebird 4 batch API or PostgreSQL functions called in a
// pipeline; ModeProcedure on Firebird does not commit in autonomous transactions (it
// would save the begin and the commit, but change what a rollback undoes). No keying/think
// pacing unless Config.Think is on; transaction types are drawn by weight (§5.2.4.1)
// unless Config.Deck draws them from a card deck (§5.2.4.2); no deferred Delivery; no
// isolation tests (§3.4.2), no durability tests (§3.5); foreign keys are not declared; no
// tpmC is computed here, and results are not audited TPC-C results.
package tpcc
