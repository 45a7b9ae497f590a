// Package firebird is dblat's Firebird engine. It opens connections through the pure-Go
// driver github.com/nakagami/firebirdsql (database/sql name "firebirdsql"), starts their
// read-write transactions with the run's transaction parameters, classifies Firebird
// errors, reads back the effective database settings and the monitoring (MON$) counters,
// bulk-loads rows through external tables (or parameterised EXECUTE BLOCKs), keeps pristine
// copies of loaded databases and a database per page size, and runs private managed
// Firebird servers (3.0; 4.0 and 5.0 from their own tarballs: versions.go) in each of the
// three architectures (server.go).
//
// It sits below the workloads and the runner, which reach it only through engine.Engine,
// the optional capabilities of package engine (BulkLoader, LoadSession, RunHooks, Restorer,
// Databases ...) and managed.Launcher; packages engine, managed and option are the only parts
// of dblat it imports. Sub-package fbtest gives tests a real managed server.
//
// What it does not do:
//   - It does not run statements for callers outside explicit transactions, and callers must
//     not either: the driver's autocommit mode keeps one transaction open for the life of a
//     connection (COMMIT RETAINING), which pins the oldest snapshot (OST) and so garbage
//     collection, and it can leave work of prepared queries uncommitted. Every unit of work
//     belongs in BeginTx ... Commit.
//   - It does not start or use the system service (firebird3.0.service, port 3050, lock
//     directory /tmp/firebird): managed servers are private processes with their own
//     configuration root, lock directory, security database and loopback port.
//   - It does not support Firebird 4.0 or later as a managed server (the list of known
//     firebird.conf keys and the valid page sizes are those of 3.0); Engine itself talks to
//     any version the driver supports, but Dialect describes 3.0.
//   - It does not compress the wire: the driver's wire_compress is broken against 3.0.
//
// # Transaction parameters
//
// Read-write READ COMMITTED transactions (TPC-C's New-Order, Payment and Delivery; tpcb)
// start with the run options lock_resolution (wait, nowait) and record_version
// (rec_version, no_rec_version), which RunDSN puts into the DSN (txparams.go). The driver
// cannot send NO_RECORD_VERSION with NOWAIT, nor a lock time-out. The default is wait and
// no_rec_version, chosen from BenchmarkTxParams (10 warehouses, client mode, 5 s warm-up,
// 30 s windows; medians of 2 rounds for Super and SuperClassic, 1 round for Classic;
// Firebird 3.0.11 on a shared 2-core machine; conflicts are the attempted transactions that
// failed as engine.ClassRetryable, not retried):
//
//	                                 Super             SuperClassic      Classic
//	terminals  parameters            NOPM  conflicts   NOPM  conflicts   NOPM  conflicts
//	10         wait,rec_version      3711    0.0 %     4407    0.0 %     3590    0.0 %
//	10         nowait,rec_version    3206    0.0 %     4523    0.0 %     2976    0.1 %
//	10         wait,no_rec_version   3600    0.0 %     4899    0.0 %     3862    0.0 %
//	50         wait,rec_version      2881   32.1 %     3877   32.0 %     3004   32.0 %
//	50         nowait,rec_version    2341   36.8 %     4164   36.1 %     2668   37.5 %
//	50         wait,no_rec_version   3804    4.0 %     3600    2.1 %     3462    8.5 %
//
// Firebird 3 has no statement restart: with rec_version (the driver's own choice) an UPDATE
// of a row that a concurrent transaction changed waits for it and, when it commits, fails
// with an update conflict, so at 50 terminals a third of the attempts failed (with 10
// terminals on 10 warehouses, one per warehouse, they hardly meet). With no_rec_version the
// UPDATE's read waits for the writer and then applies to what it committed: the failures
// fall to 2-9 %, at the same NOPM (the differences in NOPM are within the spread between
// rounds, up to ±30 % on this machine). nowait fails even more often and gains nothing.
// The price of no_rec_version: every read of a row that another transaction is changing
// waits (New-Order's read of its warehouse waits for the Payments on it), so response times
// spread, and more waits give deadlocks more chances (see Deadlocks). BenchmarkSQL runs
// Firebird with read_committed, no_rec_version, wait for the same reason.
//
// # Deadlocks
//
// Firebird 3.0.11's lock manager looks for a deadlock only when a wait has gone on for
// DeadlockTimeout (10 s by default), and a waiter woken on purpose starts that clock again
// (src/lock/lock.cpp, wait_for_request, in Firebird's current source), the likeliest reason
// why a deadlock can go unnoticed: fb_lock_print showed "potential deadlock" and "Deadlock
// scans: 0" 13 s into a wait, and two transactions deadlocked on purpose were found after
// 9.4 s in one run and not within 58 s in others, in every architecture. The batched
// Delivery of package tpcc once deadlocked (its retry locked a district's NEW-ORDER row
// after later districts'), and the terminals that needed those rows queued behind it: of
// 19 batched runs of 10 terminals on 2 warehouses (Super, 10 s windows), 4 ended 11 to
// 42 s after their window, and with 16 terminals on one warehouse at 80 % Delivery no
// transaction committed at all ("Deadlock scans: 0" after 20 s of waiting). Every mode
// now locks those rows in district order. The runner cancels what still runs 2 s after
// the window (runner.DefaultDrainTimeout; TestRunEndsOnTime); inside the window stuck
// terminals show as lost throughput; `--set DeadlockTimeout=1` shortens the wait where
// the detection does run.
//
// # Loading
//
// CopyRows writes rows in the server's own record format to a file in the managed server's
// load directory and moves them into the table with one INSERT ... SELECT from an external
// table over that file (extload.go); BeginLoad turns forced writes off for the load. Tables
// get their keys after their last chunk (package tpcc). What limits a load is the server's
// CPU: through EXECUTE BLOCK parameters a warehouse cost ~17 s of server CPU and ~10 s of
// dblat's (3.3 warehouses/min for 2 warehouses); through external tables it costs 2.5-3.6 s
// of the server's and 0.7-0.9 s of dblat's, most of it inserting the rows (UTF8 CHAR
// columns double that: a CHAR(24) holds 96 bytes, and STOCK has ten of them) and building
// ORDER-LINE's, STOCK's and CUSTOMER's keys. Concurrent inserts do not help on 2 cores
// (Super spins on its page latches: 7.5 s of server CPU for 2 warehouses one insert at a
// time, 10.5-12.8 s with 2 or 4 at once), so the loads encode their files in parallel and
// insert one at a time. BenchmarkLoad10Warehouses, 10 warehouses on Super, the two paths
// one after the other on the same machine while other work kept its load average at 9 to
// 17 on its 2 cores: external tables 5.6 warehouses/min (3.5 s of server CPU and 0.9 s of
// dblat's per warehouse), EXECUTE BLOCKs 1.0 warehouses/min (16.4 s and 9.3 s). On an idle
// machine the CPU figures allow some 25 warehouses/min; the rest of the way to
// PostgreSQL's COPY would need a single-byte character set for the text columns.
//
// # Pristine copies and page sizes
//
// Restorer copies the database file while the server holds it closed (restores overwrite it
// in place): for 10 warehouses (1036 MB) a restore takes 1.7 s, nbackup's 4.7 s
// (BenchmarkRestore; see SavePristine). Databases gives each page_size its own database,
// bench-p<size>.fdb, next to the server's own bench.fdb.
//
// Dial: the driver dials TCP itself and has no dialer hook, so when OpenOptions.Dial is set
// Open lets each connection attach through a one-shot loopback bridge and then points the
// driver's wire channel at the Dial-ed connection itself (adopt.go): the round trips the
// Dial-ed connection sees are those of the driver, with no extra hop.
package firebird
