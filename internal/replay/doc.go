// Package replay replays an application's recorded sessions against a database, as they
// ran: each connection of the capture becomes a session, opened when it was opened, that
// resends the client's own messages in order with their pauses, so that the target sees
// the application's statements, values, round trips, timing and concurrency; and it tells
// where the target answered otherwise than the captured server.
//
// # What it does
//
// A Recording is every connection's conversation chunk by chunk, both directions, with
// the times the source saw them. Tape makes one from any source of package observe's
// connections (observe.Config.Tape): the proxy (`dblat proxy --capture FILE`) and a packet
// capture (package capture: `dblat observe --pcap … --capture FILE`, and `dblat replay
// --pcap` in memory). A file is written as it goes, readable by its owner only: it holds
// the application's data.
//
// Run replays one. Each recorded connection is decoded with its protocol's wire decoder
// (the engines' wire.Protocol) to find its start-up, its requests and the points where the
// client waited: a message is resent once the target has completed as many requests as the
// captured server had when the client sent it, and has answered since the session's
// previous message where the captured server had (a turn of the conversation), then after
// the captured pause (scaled by Config.Speed and ThinkScale; none with Fast). A driver that
// took 6 round trips for a transaction so takes 6 in the replay. The start-up is not
// resent: the session authenticates as the target's DSN says, with the other start-up
// parameters the application asked for. With OrderCommits a transaction waits until the
// commits that preceded its start in the capture have been replayed.
//
// The replay's own connections are observed (package observe) as the proxy observes an
// application: the Result sets its shapes beside the capture's (round trips, server time,
// response time, throughput) and lists the divergences: per statement, the command tag
// with its rows, or the error's SQLSTATE, against what the captured server answered. A
// target that was not restored to the capture's start is no failure: its divergences are
// reported. A part that cannot be replayed (TLS, a protocol not replayed, a session
// followed from its middle whose prepared statements are unknown to the target) is said
// in one line per reason.
//
// PostgreSQL is replayed (simple and extended protocol: statement and portal names are the
// client's own, so a fresh session takes them as they are; a cancel request is sent with
// the key the target gave the session it names; the answers compared are each statement's
// command tag with its rows, or the error's SQLSTATE). MySQL/MariaDB is replayed with the
// captured client's capabilities (less TLS and compression), authenticating with
// mysql_native_password, and the statement ids of COM_STMT_EXECUTE, _CLOSE, _RESET,
// _FETCH and _SEND_LONG_DATA mapped from the captured server's to the target's as its
// PREPARE_OKs come (the engine's decoder reads them: wire.Reply); the answers compared are
// each command's rows affected and returned, or the error's number. Firebird is replayed
// in an attachment the engine's driver makes (Srp, wire encryption off) through a bridge
// that keeps it once the server has answered op_attach, before the driver opens anything
// on it; the session's operations are resent as they are, at the protocol version the
// captured client came to (a driver that comes to another is said), and the statement and
// transaction handles are not mapped: a fresh attachment running the same operations gets
// the same handles, and one the target gives otherwise is said in one line. Its answers
// compared are success or error.
//
// # Neighbours
//
// Package observe follows the connections (its Observer shows this package's Tape every
// chunk) and measures both sides; package capture reads packet captures into it; package
// latency's link carries the replay (Config.Dial: Link.Dial); package cli parses `dblat
// replay`, resolves the target and prints the Result; package execution stores it as a run.
// It prints nothing and stores nothing.
package replay
