// Package observe watches an application's database connections through dblat proxy, tells
// what its transactions cost on the wire, and predicts what a farther database would cost
// them.
//
// # What it does
//
// Observer is a latency.Observer: the proxy (package latency's link, started by `dblat proxy
// --observe`) shows it every chunk it reads, and it feeds each connection's chunks to a
// wire.Tracker of the protocols it was given (an engine's own, through engine.WireProtocol,
// or all of them to be told apart by the first bytes). It forwards every byte unchanged but
// the one exchange the Tracker's Interceptor changes to decline TLS during a handshake. A
// connection it cannot follow (no known protocol, TLS it cannot decline, a parse failure) is
// still forwarded and counted; the reason is reported once (Config.OnNote).
//
// Snapshot returns an Observation: per transaction shape (the sequence of its normalised
// statements, without literal or parameter values) its count, round trips, statements,
// bytes, server time, client time, time between transactions and time in the transaction,
// and where the shape's transactions run one at a time from some round trip to their end
// (a lock they all take: a hot row), that serial section. Its JSON form is the --observe
// file and is stored with the run (Run).
//
// Predict answers the what-if from an Observation alone: at an added RTT r and N clients in
// a closed loop, each transaction takes its observed time plus its round trips times the
// RTT added beyond the observation's, the clients keep their observed time between
// transactions, and serial sections are queues whose holding time grows with the round trips
// they span (mean-value analysis, the lock's residual holding time corrected for the
// constant part added RTT makes of it). It gives response time per shape and overall,
// throughput, the RTTs at which throughput falls by 10 % and 50 %, the shapes that lose
// most and what would help.
//
// Recorder keeps, when asked, samples of the statements each shape ran with their literal
// and parameter values, and Script writes them as a pgbench-style script (package script's
// language) that replays the application: one branch per shape at its observed frequency,
// values drawn from those recorded. Only a recording holds values; an Observation never does.
//
// # Neighbours
//
// Package latency calls Observer and knows nothing of databases; package wire and the engine
// packages decode the protocols; package cli wires them together (dblat proxy, dblat
// predict); package report draws an observation's predictions; package results stores an
// observation as a run of workload "observed".
package observe
