// Package observe watches an application's database connections, tells what its
// transactions cost on the wire, and predicts what a farther database would cost them.
//
// # What it does
//
// Session is one observation from start to stop (`dblat proxy --observe`, `--record`): it
// owns the Observer that follows the connections and the files it writes, and hands each
// snapshot back to its caller. Sources feed it: Session.Listen starts package latency's
// link with the Observer attached, so that the proxy shows it every chunk it reads; any
// other source of a connection's chunks (package capture: a packet capture, one Session per
// server) shows them to Session.Observer the same way, through latency.Observer's Open, Data
// and Close (and Observer.Resume for a connection followed from its middle), and is
// attached so that Stop closes it. A capture's Config says so (Source, Passive: the trackers
// only watch; Now: the packets' clock; Complete: it adds the network RTT already in its
// times and what it could not follow). Session.Snapshot writes the Observation (SessionConfig.File) and the
// recording (SessionConfig.Script) so far; Session.Stop closes the sources first, so that
// every connection ends and its last transactions are counted, then takes the last
// snapshot. A Session prints nothing and stores nothing.
//
// Observer feeds each connection's chunks to a wire.Tracker of the protocols it was given
// (an engine's own, through engine.WireProtocol, or all of them to be told apart by the
// first bytes). It changes no byte but the one exchange the Tracker's Interceptor changes
// to decline TLS during a handshake (which only a source that forwards the bytes, the
// proxy, can apply). A connection it cannot follow (no known protocol, TLS it cannot decline, a parse
// failure) is still counted; the reason is reported once (Config.OnNote).
//
// Observer.Snapshot returns an Observation: per transaction shape (the sequence of its normalised
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
// most and what would help. RoundTripEvidence sets beside it the stored runs that show what
// fewer round trips bought on a real server: runs of a workload that declares round-trip
// modes (workload.Definition.RoundTripModes: TPC-C's), alike but for their mode.
//
// Recorder keeps, when asked, samples of the statements each shape ran with their literal
// and parameter values, and Script writes them as a pgbench-style script (package script's
// language) that replays the application: one branch per shape at its observed frequency,
// values drawn from those recorded. Only a recording holds values; an Observation never does.
// Config.Tape, when set, is shown every chunk of every connection as it was forwarded, with
// its time: the whole conversation, which package replay keeps as a recording (`--capture`)
// and resends session by session.
//
// # Neighbours
//
// Package latency's link is one source of a Session and knows nothing of databases;
// package capture is another (dblat observe); package wire and the engine packages decode
// the protocols; package cli parses `dblat proxy`'s
// flags, turns SIGUSR1 and Ctrl-C into Session.Snapshot and Session.Stop and prints what
// they hand back (and `dblat predict`'s forecasts); package execution stores an
// observation as a run of workload "observed" (Core.StoreObserved) in package results,
// whose finished runs RoundTripEvidence reads; package report draws an observation's
// predictions; package replay keeps the chunks a Tape is shown and observes its own
// sessions with an Observer (Source SourceReplay).
package observe
