// Package wire follows a database connection from the bytes a proxy forwards, without
// owning the stream: it tells which requests form which transaction and what each
// transaction cost in round trips, bytes, server time and client time.
//
// # What it does
//
// A proxy (package latency's link, through dblat proxy) forwards each chunk first and
// unchanged, then feeds a copy to a Tracker, one per connection. The Tracker counts turns
// of the conversation as latency.Meter does (a round trip is server data after client
// data), finds out which protocol the connection speaks (Protocol.Sniff, from the first
// bytes each side sent), and passes the chunks on to that protocol's Decoder. The Decoder
// keeps its own parsing state and reports what it sees as Events to a Sink (the Tracker):
// a statement sent, a request complete, the server's answer with the transaction status
// after it (idle, in a transaction, in a failed transaction), an explicit commit or
// rollback, and, once, why it cannot follow the conversation any further. A decoder that
// reads the answers says, with each completed request, what they held (Reply: rows
// returned and affected, the error's code, the id the server gave what the request made),
// which a replay compares with the capture's and maps. A decoding
// failure only stops the decoding; the proxy goes on forwarding and the Tracker goes on
// counting bytes and round trips of the connection.
//
// The Tracker groups a connection's requests into transactions, from the first statement
// while idle to the answer that brings the status back to idle (an autocommit statement is
// a transaction of one statement), and records per transaction its shape (the sequence of
// its statements normalised as pg_stat_statements does: Normalize), statements, round
// trips, bytes each way, server time, client time and the gap since the previous
// transaction. It also times the chunks of each flight per direction: a pause of SplitPause
// or more between two chunks the client sent before the server answered (a request written
// in several writes, the later ones held back: Nagle's algorithm meeting a delayed ACK) is
// counted as a split, time that is neither the server's nor the client's work. Aggregate
// merges trackers' figures per shape, safe for concurrent use.
//
// A source that only watches the bytes (a packet capture) runs its Trackers watch-only
// (TrackerConfig.WatchOnly): no Interceptor is asked, so a TLS request reaches the server as
// sent and a client that switches to TLS is not followed. Such a source may also start in
// the middle of a connection, or lose bytes of it: a Protocol that implements Resumer knows
// a point from which a decoder can follow with no earlier state (everything answered, no
// transaction open), and the Tracker then starts there (TrackerConfig.Resume).
//
// The one place bytes may be changed is an Interceptor: a decoder that declines TLS during
// the handshake (PostgreSQL's SSLRequest answered 'N' by the proxy, MySQL's CLIENT_SSL
// capability cleared in the server's greeting), so that a client that merely prefers TLS
// goes on in clear and can be followed. It is a separate, explicit hook that the proxy calls
// before forwarding a chunk; everything else in this package only reads copies.
//
// # Neighbours
//
// The engine packages implement Protocol and Decoder for their product's wire protocol
// (engine.WireProtocol finds them); package observe feeds Trackers with what the proxy
// (package latency) or a packet capture (package capture) shows it; a later prediction
// reads Aggregate's per-shape figures. Package wire knows no product and imports nothing of
// dblat but package sqllex, the SQL lexer that Normalize and TxControl share with the script
// language (a protocol's Lexicon is its dialect); package wiretest holds a tee proxy,
// captures and conformance checks for the decoders' tests.
package wire
