package wire

import (
	"cmp"
	"slices"
	"sync"
)

// maxReasons bounds the distinct reasons an Aggregate keeps per map; the rest are counted
// under otherReason.
const (
	maxReasons  = 32
	otherReason = "(other reasons)"
)

// ShapeStats accumulates the transactions of one shape. A Tracker keeps its own and hands
// them to an Aggregate (Tracker.Flush); read them through Aggregate.Shapes.
type ShapeStats struct {
	Shape Shape
	Count int64
	// Sums over the transactions.
	Statements, RoundTrips, BytesUp, BytesDown, ServerNs, ClientNs int64
	// Splits (Counts.ClientSplits and the rest) summed.
	ClientSplits, ClientSplitNs, ServerSplits, ServerSplitNs int64
	// GapNs sums the gaps since the previous transaction of the Gaps transactions that had
	// one (not a connection's first).
	GapNs, Gaps int64
	// RoundTripCounts maps a number of round trips to how many transactions took it.
	RoundTripCounts map[int64]int64
	// Outcomes.
	Autocommits, Commits, Rollbacks, Failed, Errors int64
}

func (s *ShapeStats) add(tx *Tx) {
	s.Count++
	s.Statements += int64(tx.Statements)
	s.RoundTrips += tx.RoundTrips
	s.BytesUp += tx.BytesUp
	s.BytesDown += tx.BytesDown
	s.ServerNs += tx.ServerNs
	s.ClientNs += tx.ClientNs
	s.ClientSplits += tx.ClientSplits
	s.ClientSplitNs += tx.ClientSplitNs
	s.ServerSplits += tx.ServerSplits
	s.ServerSplitNs += tx.ServerSplitNs
	if tx.HasGap {
		s.GapNs += tx.GapNs
		s.Gaps++
	}
	if s.RoundTripCounts == nil {
		s.RoundTripCounts = map[int64]int64{}
	}
	s.RoundTripCounts[tx.RoundTrips]++
	switch tx.Outcome {
	case Committed:
		s.Commits++
	case RolledBack:
		s.Rollbacks++
	default:
		s.Autocommits++
	}
	if tx.Failed {
		s.Failed++
	}
	s.Errors += int64(tx.Errors)
}

func (s *ShapeStats) merge(o *ShapeStats) {
	s.Count += o.Count
	s.Statements += o.Statements
	s.RoundTrips += o.RoundTrips
	s.BytesUp += o.BytesUp
	s.BytesDown += o.BytesDown
	s.ServerNs += o.ServerNs
	s.ClientNs += o.ClientNs
	s.ClientSplits += o.ClientSplits
	s.ClientSplitNs += o.ClientSplitNs
	s.ServerSplits += o.ServerSplits
	s.ServerSplitNs += o.ServerSplitNs
	s.GapNs += o.GapNs
	s.Gaps += o.Gaps
	if s.RoundTripCounts == nil {
		s.RoundTripCounts = map[int64]int64{}
	}
	for k, v := range o.RoundTripCounts {
		s.RoundTripCounts[k] += v
	}
	s.Autocommits += o.Autocommits
	s.Commits += o.Commits
	s.Rollbacks += o.Rollbacks
	s.Failed += o.Failed
	s.Errors += o.Errors
}

// ShapeSummary is what an Aggregate reports about one shape: means over its transactions.
type ShapeSummary struct {
	Shape
	Count          int64   `json:"count"`
	RoundTripsMean float64 `json:"round_trips_mean"`
	RoundTripsP50  int64   `json:"round_trips_p50"`
	RoundTripsMax  int64   `json:"round_trips_max"`
	StatementsMean float64 `json:"statements_mean"`
	BytesUpMean    float64 `json:"bytes_up_mean"`
	BytesDownMean  float64 `json:"bytes_down_mean"`
	ServerMsMean   float64 `json:"server_ms_mean"`
	ClientMsMean   float64 `json:"client_ms_mean"`
	// ClientSplitsMean and ClientSplitMsMean are the split requests per transaction and
	// their pauses (Counts.ClientSplits); ServerSplitsMean and ServerSplitMsMean the same
	// for answers.
	ClientSplitsMean  float64 `json:"client_splits_mean,omitempty"`
	ClientSplitMsMean float64 `json:"client_split_ms_mean,omitempty"`
	ServerSplitsMean  float64 `json:"server_splits_mean,omitempty"`
	ServerSplitMsMean float64 `json:"server_split_ms_mean,omitempty"`
	// BetweenMsMean is the mean gap since the previous transaction on the same connection,
	// over the transactions that had one; 0 when none had.
	BetweenMsMean float64 `json:"between_ms_mean"`
	Autocommits   int64   `json:"autocommits"`
	Commits       int64   `json:"commits"`
	Rollbacks     int64   `json:"rollbacks"`
	Failed        int64   `json:"failed"`
	Errors        int64   `json:"errors"`
}

func (s *ShapeStats) summary() ShapeSummary {
	n := float64(s.Count)
	r := ShapeSummary{Shape: s.Shape, Count: s.Count, Autocommits: s.Autocommits, Commits: s.Commits,
		Rollbacks: s.Rollbacks, Failed: s.Failed, Errors: s.Errors}
	if s.Count == 0 {
		return r
	}
	r.RoundTripsMean = float64(s.RoundTrips) / n
	r.StatementsMean = float64(s.Statements) / n
	r.BytesUpMean = float64(s.BytesUp) / n
	r.BytesDownMean = float64(s.BytesDown) / n
	r.ServerMsMean = float64(s.ServerNs) / n / 1e6
	r.ClientMsMean = float64(s.ClientNs) / n / 1e6
	r.ClientSplitsMean = float64(s.ClientSplits) / n
	r.ClientSplitMsMean = float64(s.ClientSplitNs) / n / 1e6
	r.ServerSplitsMean = float64(s.ServerSplits) / n
	r.ServerSplitMsMean = float64(s.ServerSplitNs) / n / 1e6
	if s.Gaps > 0 {
		r.BetweenMsMean = float64(s.GapNs) / float64(s.Gaps) / 1e6
	}
	keys := make([]int64, 0, len(s.RoundTripCounts))
	for k := range s.RoundTripCounts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	r.RoundTripsMax = keys[len(keys)-1]
	half, seen := (s.Count+1)/2, int64(0) // the lower median
	for _, k := range keys {
		if seen += s.RoundTripCounts[k]; seen >= half {
			r.RoundTripsP50 = k
			break
		}
	}
	return r
}

// ConnStats is what an Aggregate knows about the connections it was given.
type ConnStats struct {
	// Connections counts ended connections (flushed after Tracker.Close).
	Connections int64 `json:"connections"`
	// Protocols counts ended connections by the protocol they spoke ("" for none known).
	Protocols map[string]int64 `json:"protocols"`
	// CannotFollow counts connections by why they could not be followed.
	CannotFollow map[string]int64 `json:"cannot_follow"`
	// Notes counts connections by the decoders' notes about them.
	Notes map[string]int64 `json:"notes"`
	// Transactions and Statements count what ended; Abandoned counts transactions open
	// when their connection ended or stopped being followed.
	Transactions int64 `json:"transactions"`
	Statements   int64 `json:"statements"`
	Abandoned    int64 `json:"abandoned"`
	// Totals is all traffic; InTransactions the part inside transactions (a pipelined
	// chunk shared by several transactions counts once per transaction).
	Totals         Counts `json:"totals"`
	InTransactions Counts `json:"in_transactions"`
}

// Aggregate merges the figures of many Trackers, per shape and in total. It is safe for
// concurrent use; the zero value is ready.
type Aggregate struct {
	mu     sync.Mutex
	shapes map[uint64]*ShapeStats
	conns  ConnStats
}

// Flush moves the tracker's figures since its last Flush into a: its shapes, traffic and
// counts, and, once after Close, the facts about the connection (its protocol, why it could
// not be followed, its notes). Call it from the goroutine that owns the tracker, under the
// connection's lock; a is locked for the duration.
func (t *Tracker) Flush(a *Aggregate) {
	t.report()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.shapes == nil {
		a.shapes = map[uint64]*ShapeStats{}
	}
	for h, s := range t.shapes {
		if have := a.shapes[h]; have != nil {
			have.merge(s)
		} else {
			a.shapes[h] = s
		}
	}
	t.shapes = nil
	c := &a.conns
	c.Totals = c.Totals.add(t.c.sub(t.flushed))
	c.InTransactions = c.InTransactions.add(t.inTx.sub(t.flushedInTx))
	c.Transactions += t.txs - t.flushedTxs
	c.Statements += t.stmts
	c.Abandoned += t.abandoned - t.flushedAbandons
	t.flushed, t.flushedInTx, t.flushedTxs, t.flushedAbandons = t.c, t.inTx, t.txs, t.abandoned
	t.stmts = 0
	if t.closed && !t.reported {
		t.reported = true
		c.Connections++
		count(&c.Protocols, t.Protocol())
		if t.stopped != "" {
			count(&c.CannotFollow, t.stopped)
		}
		for _, n := range t.notes {
			count(&c.Notes, n)
		}
	}
}

func count(m *map[string]int64, k string) {
	if *m == nil {
		*m = map[string]int64{}
	}
	if _, ok := (*m)[k]; !ok && len(*m) >= maxReasons {
		k = otherReason
	}
	(*m)[k]++
}

// Shapes returns a summary per shape, the most frequent first (ties by hash).
func (a *Aggregate) Shapes() []ShapeSummary {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]ShapeSummary, 0, len(a.shapes))
	for _, s := range a.shapes {
		out = append(out, s.summary())
	}
	slices.SortFunc(out, func(x, y ShapeSummary) int {
		if c := cmp.Compare(y.Count, x.Count); c != 0 {
			return c
		}
		return cmp.Compare(x.Hash, y.Hash)
	})
	return out
}

// Conns returns what a knows about connections (a copy).
func (a *Aggregate) Conns() ConnStats {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.conns
	c.Protocols = cloneMap(c.Protocols)
	c.CannotFollow = cloneMap(c.CannotFollow)
	c.Notes = cloneMap(c.Notes)
	return c
}

func cloneMap(m map[string]int64) map[string]int64 {
	if m == nil {
		return nil
	}
	out := make(map[string]int64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
