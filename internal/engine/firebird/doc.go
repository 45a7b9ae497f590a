// Package firebird is dblat's Firebird engine. It opens connections through the pure-Go
// driver github.com/nakagami/firebirdsql (database/sql name "firebirdsql"), classifies
// Firebird errors, reads back the effective database settings and the monitoring (MON$)
// counters, bulk-loads rows with parameterised EXECUTE BLOCK statements, and runs private
// managed Firebird servers (3.0; 4.0 and 5.0 from their own tarballs: versions.go) in each
// of the three architectures (server.go).
//
// It sits below the workloads and the runner, which reach it only through engine.Engine,
// engine.BulkLoader and managed.Launcher; package engine and package managed are the only
// parts of dblat it imports. Sub-package fbtest gives tests a real managed server.
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
// Dial: the driver dials TCP itself and has no dialer hook, so when OpenOptions.Dial is set
// Open bridges each connection through a one-shot loopback listener (see Engine.Open); the
// round trips the Dial-ed connection sees are those of the driver, at the price of one more
// loopback hop per message (about 11 µs per round trip).
package firebird
