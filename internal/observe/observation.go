package observe

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/signals"
	"github.com/dblat/dblat/internal/wire"
	"github.com/dblat/dblat/internal/words"
)

// FormatVersion is the version of the Observation JSON format this build writes and reads.
const FormatVersion = 1

// Observation is what an Observer saw: its JSON form is the file `dblat proxy --observe`
// writes and what is stored with an observed run. It holds no literal or parameter value.
type Observation struct {
	// Version is FormatVersion.
	Version int `json:"version"`
	// Source is what showed the bytes: "proxy" (dblat proxy --observe), "pcap" (a capture
	// file) or "interface" (a live capture); "" in observations written before it was
	// recorded, which were all the proxy's.
	Source string `json:"source,omitempty"`
	// Protocol is the protocol most followed connections spoke ("PostgreSQL"), "" when no
	// connection was recognised; Protocols counts ended connections by protocol ("" for
	// none known).
	Protocol  string           `json:"protocol"`
	Protocols map[string]int64 `json:"protocols,omitempty"`
	// Engine is the engine named on the proxy's command line, "" when the protocol was told
	// from the first bytes.
	Engine string `json:"engine,omitempty"`
	// Upstream is the server's address.
	Upstream string `json:"upstream,omitempty"`
	// Started and Ended are when the observer started and when this snapshot was taken.
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended"`
	// WindowNs runs from the first transaction's start to the last one's end: the time TPS
	// is measured over.
	WindowNs int64 `json:"window_ns"`
	// RTTNs is the round-trip time the proxy added while observing (UpNs + DownNs): the
	// observed times contain it once per round trip, and Predict adds only the difference.
	RTTNs  int64 `json:"rtt_ns"`
	UpNs   int64 `json:"up_ns"`
	DownNs int64 `json:"down_ns"`
	// Connections counts the connections that ended or were open at the snapshot;
	// MaxOpen is the most open at once.
	Connections int64 `json:"connections"`
	MaxOpen     int64 `json:"max_open"`
	// Clients is the mean number of connections that were in a transaction or between two
	// of them (sum over transactions of their time and the time before them, over the
	// window): the population of the closed loop Predict assumes by default.
	Clients float64 `json:"clients"`
	// Transactions counts the transactions that ended, Statements their statements;
	// Abandoned counts those open when their connection ended or stopped being followed,
	// and transactions open at the snapshot are in neither.
	Transactions int64 `json:"transactions"`
	Statements   int64 `json:"statements"`
	Abandoned    int64 `json:"abandoned"`
	// TPS is Transactions over the window.
	TPS float64 `json:"tps"`
	// LatencyMsMean is the mean time in a transaction at the proxy (first request to last
	// answer), over all shapes; RoundTripsMean and BetweenMsMean likewise.
	LatencyMsMean  float64 `json:"latency_ms_mean"`
	RoundTripsMean float64 `json:"round_trips_mean"`
	BetweenMsMean  float64 `json:"between_ms_mean"`
	// Totals is all the traffic; InTransactions the part inside transactions.
	Totals         wire.Counts `json:"totals"`
	InTransactions wire.Counts `json:"in_transactions"`
	// Unfollowed counts the connections that were forwarded but not followed (no known
	// protocol, TLS, a parse failure) and their traffic.
	Unfollowed Unfollowed `json:"unfollowed"`
	// CannotFollow and Notes count connections by why they could not be followed and by
	// what the decoders noted (a TLS decline), one line each.
	CannotFollow map[string]int64 `json:"cannot_follow,omitempty"`
	Notes        map[string]int64 `json:"notes,omitempty"`
	// Shapes are the transaction shapes, the most frequent first.
	Shapes []Shape `json:"shapes"`
	// BetweenSplitMsMean is the time per transaction in split requests outside any
	// transaction (Totals less InTransactions); Diagnoses say what it and the shapes'
	// splits mean, one line each.
	BetweenSplitMsMean float64  `json:"between_split_ms_mean,omitempty"`
	Diagnoses          []string `json:"diagnoses,omitempty"`
	// Network is the network round-trip time a capture's times already contain, estimated
	// from its TCP handshakes and timestamps; nil for the proxy, which adds its own (RTTNs).
	Network *Network `json:"network,omitempty"`
	// Capture is what a capture saw of the packets; nil for the proxy.
	Capture *Capture `json:"capture,omitempty"`
	// Host is what the machine that observed was doing meanwhile (package signals), where
	// the observation ran live on it (the proxy, a live capture); nil for a packet capture
	// read afterwards. Its busy CPUs and waits for a CPU say whether the observed times
	// were inflated by the host: clients, server and proxy queueing for its CPUs.
	Host *signals.Load `json:"host,omitempty"`
	// Signals are the host's signals over the observation, stored with its run (they are
	// not written to the observation's file).
	Signals []results.Signal `json:"-"`
	// Replay, for a replay's own observation (Source SourceReplay), is its result set
	// against its capture (package replay's Result, without the observations); nil
	// otherwise.
	Replay json.RawMessage `json:"replay,omitempty"`
}

// Network is the round-trip time between the application and the server that a capture's
// times contain, wherever it was taken. Its server side (from the capture point to the
// server and back) is inside the server time of every round trip, its client side (to the
// application and back) inside the client time and the time between transactions; a
// capture on the application's host has all of it on the server side, one on the
// database's host all of it on the client side. Predict adds the RTT it is asked for to
// these times, which keep theirs; the application's response time is the observed one plus
// ClientSideNs.
type Network struct {
	// RTTNs is ServerSideNs + ClientSideNs.
	RTTNs        int64 `json:"rtt_ns"`
	ServerSideNs int64 `json:"server_side_ns"`
	ClientSideNs int64 `json:"client_side_ns"`
	// Handshakes counts the connections whose handshake was seen whole (SYN, SYN-ACK,
	// ACK): each gives both sides, and the figures above are their medians.
	// TimestampConns counts the connections without one whose TCP timestamps gave an
	// estimate (the smallest delay before a segment's timestamp was echoed, each way),
	// used where no handshake was seen.
	Handshakes     int64 `json:"handshakes"`
	TimestampConns int64 `json:"timestamp_conns,omitempty"`
}

// Basis says what the estimate rests on, for people.
func (n *Network) Basis() string {
	switch {
	case n.Handshakes > 0 && n.TimestampConns > 0:
		return fmt.Sprintf("from %s, and the TCP timestamps of %s without one", words.Count(n.Handshakes, "TCP handshake"), words.Count(n.TimestampConns, "connection"))
	case n.Handshakes > 0:
		return "from " + words.Count(n.Handshakes, "TCP handshake")
	case n.TimestampConns > 0:
		return "from the TCP timestamps of " + words.Count(n.TimestampConns, "connection")
	}
	return "no handshake or TCP timestamps seen: taken as 0"
}

// Capture is what a packet capture saw and what of it could not be followed.
type Capture struct {
	// Packets and Bytes are the TCP packets of this server's connections read (all
	// directions) and their captured bytes.
	Packets int64 `json:"packets"`
	Bytes   int64 `json:"bytes"`
	// KernelDrops is what the kernel dropped before the capture read it (live captures:
	// PACKET_STATISTICS); nil when not known (a file).
	KernelDrops *int64 `json:"kernel_drops,omitempty"`
	// Retransmitted counts segments seen again (retransmissions, duplicates), OutOfOrder
	// those that arrived after a later one.
	Retransmitted int64 `json:"retransmitted"`
	OutOfOrder    int64 `json:"out_of_order"`
	// MidStream counts the connections already open when the capture started (no SYN
	// seen); Resumed those of them, and of the connections with a gap, that were followed
	// from a point where their protocol allows it (PostgreSQL's ReadyForQuery, MySQL's OK
	// packet outside a transaction).
	MidStream int64 `json:"mid_stream"`
	Resumed   int64 `json:"resumed"`
	// Gaps counts the holes in connections' streams (bytes the capture did not hold:
	// dropped packets, a short snap length) and GapBytes their size; the transaction open
	// at a gap is abandoned, never counted, and the following stops until it can resume.
	Gaps     int64 `json:"gaps"`
	GapBytes int64 `json:"gap_bytes"`
}

// Unfollowed is the traffic of connections an Observer forwarded without following them.
type Unfollowed struct {
	Connections int64 `json:"connections"`
	BytesUp     int64 `json:"bytes_up"`
	BytesDown   int64 `json:"bytes_down"`
	RoundTrips  int64 `json:"round_trips"`
}

// Shape is what an Observation knows about the transactions of one shape. Times are means
// over its transactions, in milliseconds, as the proxy saw them.
type Shape struct {
	// Shape is the normalised statements joined by "; " (wire.Shape.Text); Hash identifies
	// it (wire.Shape.Hash in hexadecimal, the same on every run).
	Shape string `json:"shape"`
	Hash  string `json:"hash"`
	Count int64  `json:"count"`
	// RoundTrips per transaction: mean, lower median and maximum.
	RoundTripsMean float64 `json:"round_trips_mean"`
	RoundTripsP50  int64   `json:"round_trips_p50"`
	RoundTripsMax  int64   `json:"round_trips_max"`
	StatementsMean float64 `json:"statements_mean"`
	BytesUpMean    float64 `json:"bytes_up_mean"`
	BytesDownMean  float64 `json:"bytes_down_mean"`
	// ServerMsMean sums the waits for the server's answers; ClientMsMean the time the
	// application spent between its own round trips inside the transaction.
	ServerMsMean float64 `json:"server_ms_mean"`
	ClientMsMean float64 `json:"client_ms_mean"`
	// BetweenMsMean is the mean time since the previous transaction on the same connection
	// (over the transactions that had one).
	BetweenMsMean float64 `json:"between_ms_mean"`
	// LatencyMs is the time in the transaction, from its first request to its last
	// answer: mean, percentiles and maximum. Hist is its HDR histogram in microseconds
	// (results.EncodeHist's encoding).
	LatencyMsMean float64 `json:"latency_ms_mean"`
	LatencyMsP50  float64 `json:"latency_ms_p50"`
	LatencyMsP99  float64 `json:"latency_ms_p99"`
	LatencyMsMax  float64 `json:"latency_ms_max"`
	Hist          string  `json:"hist,omitempty"`
	// How the transactions ended.
	Autocommits int64 `json:"autocommits"`
	Commits     int64 `json:"commits"`
	Rollbacks   int64 `json:"rollbacks"`
	Failed      int64 `json:"failed"`
	Errors      int64 `json:"errors"`
	// RoundTripServerMs is the mean server time of each round trip, in order, over the
	// transactions that took the usual number (RoundTripsP50) among the recent ones the
	// serial analysis looked at; empty when there were too few.
	RoundTripServerMs []float64 `json:"round_trip_server_ms,omitempty"`
	// Serial is set when the shape's transactions ran one at a time from one of their round
	// trips to their end (see Serial).
	Serial *Serial `json:"serial,omitempty"`
	// ClientSplitsMean is how often a transaction's request reached the proxy in several
	// chunks with a pause of wire.SplitPause or more between them while the server had
	// not answered, ClientSplitMsMean the time in those pauses (in neither ServerMsMean nor
	// ClientMsMean); ServerSplitsMean and ServerSplitMsMean the same for the server's
	// answers (within ServerMsMean). Per transaction.
	ClientSplitsMean  float64 `json:"client_splits_mean,omitempty"`
	ClientSplitMsMean float64 `json:"client_split_ms_mean,omitempty"`
	ServerSplitsMean  float64 `json:"server_splits_mean,omitempty"`
	ServerSplitMsMean float64 `json:"server_split_ms_mean,omitempty"`
	// Diagnoses say, one line each, where time the protocol does not explain went (split
	// requests: see Diagnose).
	Diagnoses []string `json:"diagnoses,omitempty"`
}

// Serial is a section of a shape's transactions that never ran concurrently in the
// observation while the rest of them did: from the answer to one round trip to the end of
// the transaction. A lock every such transaction takes (a hot row all of them update) does
// that: the next transaction waits in that round trip until the holder commits. The section
// is held for the round trips after it, so it lengthens by RoundTripsHeld RTTs when the
// database moves away, and the throughput of the shape cannot exceed one transaction per
// section.
type Serial struct {
	// FromRoundTrip numbers the round trip (from 1) whose answer starts the section.
	FromRoundTrip int `json:"from_round_trip"`
	// RoundTripsHeld is how many round trips follow within the section.
	RoundTripsHeld int `json:"round_trips_held"`
	// HeldMsMean is the section's mean length; WaitMsMean the mean wait in round trip
	// FromRoundTrip beyond what it took when no other transaction held the section.
	HeldMsMean float64 `json:"held_ms_mean"`
	WaitMsMean float64 `json:"wait_ms_mean"`
	// Overlap is the mean number of other transactions in the section while one was in it
	// (0 for a section strictly one at a time); TxOverlap the same for whole transactions,
	// which shows that they did run concurrently.
	Overlap   float64 `json:"overlap"`
	TxOverlap float64 `json:"tx_overlap"`
	// Utilisation is the share of the analysed time some transaction was in the section.
	Utilisation float64 `json:"utilisation"`
}

// ReadFile reads an observation written by WriteFile (dblat proxy --observe).
func ReadFile(path string) (*Observation, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	o, err := Decode(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return o, nil
}

// Decode reads an observation's JSON form.
func Decode(b []byte) (*Observation, error) {
	var o Observation
	if err := json.Unmarshal(b, &o); err != nil {
		return nil, fmt.Errorf("not an observation (written by dblat proxy --observe): %w", err)
	}
	switch {
	case o.Version == 0:
		return nil, errors.New("not an observation: no version field (write one with dblat proxy --observe FILE)")
	case o.Version > FormatVersion:
		return nil, fmt.Errorf("observation format %d is newer than this dblat's (%d): upgrade dblat", o.Version, FormatVersion)
	}
	return &o, nil
}

// WriteFile writes o as indented JSON to path, replacing it whole: it writes a temporary
// file beside it and renames it, so that a reader never sees half of one.
func (o *Observation) WriteFile(path string) error {
	b, err := json.MarshalIndent(o, "", "  ")
	if err != nil {
		return err
	}
	return WriteWhole(path, append(b, '\n'), 0o644)
}

// WriteWhole replaces path by data through a temporary file in the same directory, created
// with permissions perm, so that a reader never sees half of it.
func WriteWhole(path string, data []byte, perm os.FileMode) error {
	tmp := path + ".tmp"
	os.Remove(tmp) // a leftover of a crash keeps its permissions otherwise
	if err := os.WriteFile(tmp, data, perm); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}
