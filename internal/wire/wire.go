package wire

// Direction says which side sent a chunk.
type Direction uint8

const (
	// Client is the client→server direction ("up").
	Client Direction = iota
	// Server is the server→client direction ("down").
	Server
)

func (d Direction) String() string {
	if d == Server {
		return "server"
	}
	return "client"
}

// Decoder follows one connection in one protocol. The proxy (through a Tracker) feeds it a
// copy of every chunk it forwarded, in the order it received them, with the chunk's receive
// time in nanoseconds of a monotonic clock.
//
// The contract every implementation keeps:
//   - ClientData and ServerData never block and do no I/O; they must not retain b after
//     they return (a decoder copies what it keeps, and buffers only an incomplete message).
//   - A server chunk that answers a client chunk is fed after it: the caller feeds each
//     chunk when it receives it, under one lock per connection that it holds around every
//     call of the connection's Decoder (and Interceptor). Implementations are therefore not
//     safe for concurrent use and need no locking of their own.
//   - When the decoder cannot follow the conversation (a parse failure, TLS, compression, an
//     operation it does not know), it reports EvCannotFollow once, with the reason, and
//     ignores everything after; it never panics on any input.
//   - Close is called once when the connection has ended; a decoder that holds part of a
//     message then reports that the connection ended inside one.
type Decoder interface {
	ClientData(b []byte, at int64)
	ServerData(b []byte, at int64)
	Close(at int64)
}

// Action is what an Interceptor asks the proxy to do with a chunk.
type Action uint8

const (
	// Forward forwards the chunk unchanged (the zero Intercept).
	Forward Action = iota
	// Replace forwards Intercept.Bytes instead of the chunk.
	Replace
	// Answer sends Intercept.Bytes back to the chunk's sender and forwards nothing.
	Answer
)

// Intercept is an Interceptor's instruction for one chunk.
type Intercept struct {
	Action Action
	// Bytes are the replacement (Replace) or the answer (Answer). They stay valid until the
	// next call of the Interceptor.
	Bytes []byte
}

// Interceptor is an optional capability of a Decoder: the one hook through which the proxy
// changes bytes, used to decline TLS during the handshake so that a client that prefers TLS
// continues in clear (PostgreSQL: SSLRequest answered 'N' by the proxy itself; MySQL:
// CLIENT_SSL cleared in the server's greeting).
//
// The proxy calls Intercept with every chunk before forwarding it, under the connection's
// lock; after the handshake it returns the zero Intercept at once. The proxy then forwards
// what it was told to and feeds the Decoder a copy of what it forwarded (the replacement
// for Replace; nothing for Answer: the decoder knows what it answered). A decoder that
// declined TLS reports, when the client then gives up, that the client requires TLS.
type Interceptor interface {
	Intercept(from Direction, b []byte) Intercept
}

// Verdict is a Protocol's answer to whether a connection speaks it.
type Verdict uint8

const (
	// NeedMore means the bytes so far do not tell yet.
	NeedMore Verdict = iota
	// Yes means the connection speaks the protocol.
	Yes
	// No means it does not.
	No
)

// Protocol is one product's client/server protocol as a proxy sees it. Implementations
// are safe for concurrent use.
type Protocol interface {
	// Name names the protocol in messages ("PostgreSQL").
	Name() string
	// Sniff tells from the first bytes the client and the server sent (either may be
	// empty; each is everything that side sent so far, up to a few kilobytes) whether the
	// connection speaks the protocol. It must not retain the slices.
	Sniff(client, server []byte) Verdict
	// NewDecoder returns a decoder for one connection that reports to sink. The decoder
	// may implement Interceptor.
	NewDecoder(sink Sink) Decoder
	// Lexicon says how the protocol's SQL writes literals and comments, for Normalize.
	Lexicon() Lexicon
}

// Resumer is an optional capability of a Protocol: following a connection from its middle,
// where its handshake was not seen (a packet capture that started after the connection
// did, or that lost some of its bytes). A protocol that implements it knows a point in the
// conversation after which a decoder can start with no state but what that point implies:
// every request answered and no transaction open (PostgreSQL's ReadyForQuery with status
// idle). Implementations are safe for concurrent use.
type Resumer interface {
	Protocol
	// ResumeScanner returns a scanner for one connection: it is shown the connection's
	// chunks in the order they were seen until it finds the point.
	ResumeScanner() ResumeScanner
}

// ResumeScanner looks for the point where a Resumer's decoder can start following a
// connection. It is not safe for concurrent use.
type ResumeScanner interface {
	// Chunk is shown one chunk and reports whether the next chunk the client sends starts
	// at that point: everything the server sent so far answers everything the client sent,
	// and no transaction is open. It must not retain b.
	Chunk(from Direction, b []byte) bool
	// Decoder returns a decoder that starts at the point found, as if the handshake had
	// been seen and the connection were idle, with what the scanner learned of the
	// connection on the way (MySQL's capabilities in effect); it reports to sink. It must
	// still report EvCannotFollow where what follows does not fit.
	Decoder(sink Sink) Decoder
}

// Sink receives a decoder's events. The Event and everything it points to are valid only
// during the call: a Sink copies what it keeps.
type Sink interface {
	Event(e *Event)
}

// EventKind says what an Event reports.
type EventKind uint8

const (
	// EvStatement: the client sent a statement for execution as part of the current
	// request (Text, Params). Several may belong to one request (a pipeline, a simple
	// query with several statements).
	EvStatement EventKind = iota + 1
	// EvPrepare: the current request prepares a statement (Text, possibly empty) without
	// running it (PostgreSQL's Parse without Execute, COM_STMT_PREPARE, Firebird's
	// allocate and prepare). Requests that only prepare and complete while no transaction
	// is open belong to the next transaction (see Tracker).
	EvPrepare
	// EvSent: the client finished a request that the server will answer; the server's
	// answers complete requests in the order they were sent (EvCompleted).
	EvSent
	// EvCompleted: the server completed the oldest request not yet completed. Status is the
	// transaction status after it, End an explicit commit or rollback it performed.
	EvCompleted
	// EvCannotFollow: the decoder stops (Reason); no events follow.
	EvCannotFollow
	// EvNote: a fact about the connection worth one line (Reason), e.g. that the proxy
	// declined TLS for a client that went on in clear. Decoding continues.
	EvNote
)

// Status is the transaction status after a response.
type Status uint8

const (
	// StatusUnknown: the response does not say (the status stays what it was).
	StatusUnknown Status = iota
	// StatusIdle: no transaction is open.
	StatusIdle
	// StatusInTx: a transaction is open.
	StatusInTx
	// StatusFailed: a transaction is open and failed; it can only be rolled back.
	StatusFailed
)

func (s Status) String() string {
	switch s {
	case StatusIdle:
		return "idle"
	case StatusInTx:
		return "in transaction"
	case StatusFailed:
		return "failed transaction"
	}
	return "unknown"
}

// End is an explicit end of a transaction that a request performed.
type End uint8

const (
	EndNone End = iota
	// EndCommit: COMMIT (and Firebird's commit retaining, which also starts a new one).
	EndCommit
	// EndRollback: ROLLBACK (and COMMIT of a failed PostgreSQL transaction, which rolls back).
	EndRollback
)

// Reply is what a decoder read of the server's answer to one request (Event.Reply).
type Reply struct {
	// Known is set when the decoder reads answers at all.
	Known bool
	// Returned counts the rows of the result sets, Affected the rows the statements
	// changed (as the server counts them), over every result of the request.
	Returned, Affected int64
	// Code is the error's code (MySQL's error number, PostgreSQL's SQLSTATE), "" for none.
	Code string
	// StmtID is the server's id for the object the request made (MySQL's prepared
	// statement, Firebird's statement or transaction handle); HasStmtID says there is one.
	StmtID    uint32
	HasStmtID bool
}

// Param is one parameter value of a statement, as text: text-format values as sent,
// binary-format values of common types decoded, others as \x followed by hex.
type Param struct {
	Null bool
	Text []byte
}

// Event is what a decoder reports; see EventKind for which fields each kind sets.
type Event struct {
	Kind EventKind
	// Text is the SQL text of a statement (EvStatement, EvPrepare), as sent, one statement.
	Text []byte
	// Params are the statement's parameter values where the protocol shows them.
	Params []Param
	// ParamsHidden reports that the statement has parameters whose values the decoder
	// could not render (Firebird messages without a known format, MySQL long data).
	ParamsHidden bool
	// Status is set for EvCompleted. End is set for EvCompleted (an explicit commit or
	// rollback the request performed) and for EvStatement (the statement only ends a
	// transaction: COMMIT, ROLLBACK, their Firebird operations; see TxControl).
	Status Status
	End    End
	// Failed reports that the completed request ended in an error (EvCompleted).
	Failed bool
	// Reply, for EvCompleted, is what the server's answer said where the decoder reads it
	// (a replay compares it with the capture's): the rows the request's statements returned
	// and affected, the error's code, and the id the server gave a statement the request
	// prepared (MySQL's statement id). The zero Reply says nothing.
	Reply Reply
	// Reason says why the decoder stops (EvCannotFollow) or what to note (EvNote).
	Reason string
}

// Send reports ev to sink as an event of kind k and clears it for the next one: how a
// decoder reports what it filled in.
func Send(sink Sink, ev *Event, k EventKind) {
	ev.Kind = k
	sink.Event(ev)
	*ev = Event{}
}

// Stop reports once, through *stopped, that the decoder of protocol cannot follow its
// connection, for reason (EvCannotFollow, its Reason "protocol: reason").
func Stop(sink Sink, ev *Event, stopped *bool, protocol, reason string) {
	if *stopped {
		return
	}
	*stopped = true
	*ev = Event{Reason: protocol + ": " + reason}
	Send(sink, ev, EvCannotFollow)
}
