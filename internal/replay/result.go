package replay

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dblat/dblat/internal/observe"
	"github.com/dblat/dblat/internal/wire"
)

// maxListed bounds the divergences a Result lists one by one; all are counted.
const maxListed = 1000

// Result is what a replay measured, set against the capture: its JSON form is `dblat
// replay -o FILE`. It holds no literal or parameter value: statements are normalised.
type Result struct {
	// Transactions counts the replay's transactions (its Observation's), Divergences the
	// statements whose answer differed from the capture's server's.
	Transactions int64 `json:"transactions"`
	Divergences  int64 `json:"divergences"`
	// DurationS runs from the replay's first message to its last answer, CaptureDurationS
	// from the recording's first chunk to its last.
	DurationS        float64 `json:"duration_s"`
	CaptureDurationS float64 `json:"capture_duration_s"`
	// LatencyMsMean is the replay's mean time in a transaction (its Observation's).
	LatencyMsMean float64 `json:"latency_ms_mean"`
	// TPS is the replay's throughput, CaptureTPS the capture's, each over its own window.
	TPS        float64 `json:"tps"`
	CaptureTPS float64 `json:"capture_tps"`
	// CaptureTransactions counts the capture's transactions.
	CaptureTransactions int64 `json:"capture_transactions"`
	// Sessions counts the capture's sessions (cancel requests apart), NotReplayed those
	// not replayed at all, Stopped those that stopped before their end; Notes say why,
	// one line each, with how many sessions each concerns.
	Sessions    int            `json:"sessions"`
	NotReplayed int            `json:"not_replayed"`
	Stopped     int            `json:"stopped"`
	Notes       map[string]int `json:"notes,omitempty"`
	// RTTNs is the RTT the link added; Speed, ThinkScale, Fast and OrderCommits how it
	// was replayed.
	RTTNs        int64   `json:"rtt_ns"`
	Speed        float64 `json:"speed"`
	ThinkScale   float64 `json:"think_scale"`
	Fast         bool    `json:"fast,omitempty"`
	AutoCorrect  bool    `json:"think_auto_correct,omitempty"`
	OrderCommits bool    `json:"order_commits,omitempty"`
	// Predicted is what dblat predict's model gives from the capture at the link's RTT and
	// the capture's clients (observe.Predict), to set beside what the replay measured;
	// nil when the link added no RTT or the capture cannot be predicted from.
	Predicted *Predicted `json:"predicted,omitempty"`
	// Shapes are the replay's shapes with the observation's fields, each beside the
	// capture's figures of the same shape; shapes the capture had and the replay did not
	// come last, with the capture's figures only.
	Shapes []ShapeResult `json:"shapes"`
	// DivergedStatements summarise the divergences per statement (normalised), the most
	// first; DivergenceList lists them (at most maxListed), in order of the capture.
	DivergedStatements []StatementDivergence `json:"diverged_statements,omitempty"`
	DivergenceList     []Divergence          `json:"divergence_list,omitempty"`
	// Capture and Replay are the two observations whole (the capture's as its recording is
	// followed again; the replay's as the replay's own connections were).
	Capture *observe.Observation `json:"capture"`
	Replay  *observe.Observation `json:"replay"`
}

// Predicted is the model's figures at the replay's RTT.
type Predicted struct {
	RTTNs     int64   `json:"rtt_ns"`
	Clients   int     `json:"clients"`
	TPS       float64 `json:"tps"`
	LatencyMs float64 `json:"latency_ms"`
	// LatencyErrorPct is how far the replay's mean transaction latency is from the model's,
	// in percent of the model's.
	LatencyErrorPct float64 `json:"latency_error_pct"`
}

// ShapeResult is one shape of a replay beside the capture's figures of it.
type ShapeResult struct {
	observe.Shape
	// TPS is the shape's throughput in the replay.
	TPS float64 `json:"tps"`
	// Capture is the capture's figures of the same shape, nil when it had none.
	Capture *ShapeFigures `json:"capture,omitempty"`
}

// ShapeFigures are a shape's main figures in one observation.
type ShapeFigures struct {
	Count          int64   `json:"count"`
	RoundTripsMean float64 `json:"round_trips_mean"`
	RoundTripsP50  int64   `json:"round_trips_p50"`
	ServerMsMean   float64 `json:"server_ms_mean"`
	LatencyMsMean  float64 `json:"latency_ms_mean"`
	TPS            float64 `json:"tps"`
}

// StatementDivergence is how often one statement's answers differed.
type StatementDivergence struct {
	// Statement is normalised (no value); Count how many of its runs diverged; Example one
	// of them.
	Statement string     `json:"statement"`
	Count     int64      `json:"count"`
	Example   Divergence `json:"example"`
}

// Divergence is one statement whose answer in the replay differed from the capture's.
type Divergence struct {
	// Session numbers the session (the recording's connection), Request the request in it
	// (from 1), Statement the normalised statement ("" when the protocol did not say).
	Session   uint64 `json:"session"`
	Request   int    `json:"request"`
	Statement string `json:"statement"`
	// Captured and Replayed are the two answers: a command tag with its rows, an error
	// with its code, "not run" (the statement was not reached), "not answered" (the
	// session stopped first).
	Captured string `json:"captured"`
	Replayed string `json:"replayed"`
}

// finish sets the Result's figures from the sessions.
func (res *Result) finish(r *runner, sessions []*sess, rec *Recording) {
	rp, cp := res.Replay, res.Capture
	res.Transactions, res.CaptureTransactions = rp.Transactions, cp.Transactions
	res.LatencyMsMean, res.TPS, res.CaptureTPS = rp.LatencyMsMean, rp.TPS, cp.TPS
	res.RTTNs = rp.RTTNs
	var firstAt, lastAt time.Time
	for _, s := range sessions {
		if s.firstAt.IsZero() {
			continue
		}
		if firstAt.IsZero() || s.firstAt.Before(firstAt) {
			firstAt = s.firstAt
		}
		if s.lastAt.After(lastAt) {
			lastAt = s.lastAt
		}
	}
	if !firstAt.IsZero() {
		res.DurationS = lastAt.Sub(firstAt).Seconds()
	}
	var first, last int64
	for _, c := range rec.Conns {
		for _, ch := range c.Chunks {
			if first == 0 || ch.At < first {
				first = ch.At
			}
			last = max(last, ch.At)
		}
	}
	res.CaptureDurationS = time.Duration(last - first).Seconds()
	res.Notes = r.notified
	byStmt := map[string]*StatementDivergence{}
	for _, s := range sessions {
		if s.why != "" {
			res.Stopped++
		}
		var lex wire.Lexicon
		if s.p.proto != nil {
			lex = s.p.proto.Lexicon()
		}
		for _, d := range diverge(s, lex) {
			res.Divergences++
			if len(res.DivergenceList) < maxListed {
				res.DivergenceList = append(res.DivergenceList, d)
			}
			sd := byStmt[d.Statement]
			if sd == nil {
				sd = &StatementDivergence{Statement: d.Statement, Example: d}
				byStmt[d.Statement] = sd
			}
			sd.Count++
		}
	}
	for _, sd := range byStmt {
		res.DivergedStatements = append(res.DivergedStatements, *sd)
	}
	slices.SortFunc(res.DivergedStatements, func(a, b StatementDivergence) int {
		if a.Count != b.Count {
			return int(b.Count - a.Count)
		}
		return strings.Compare(a.Statement, b.Statement)
	})
	res.Shapes = pairShapes(cp, rp)
	if r.rtt > 0 && cp.Transactions > 0 {
		if f, err := observe.Predict(cp, r.rtt, 0); err == nil {
			res.Predicted = &Predicted{RTTNs: f.RTTNs, Clients: f.Clients, TPS: f.TPS, LatencyMs: f.LatencyMs}
			if f.LatencyMs > 0 {
				res.Predicted.LatencyErrorPct = 100 * (res.LatencyMsMean - f.LatencyMs) / f.LatencyMs
			}
		}
	}
}

// pairShapes sets each replay shape beside the capture's of the same hash.
func pairShapes(cp, rp *observe.Observation) []ShapeResult {
	tps := func(o *observe.Observation, s observe.Shape) float64 {
		if o.WindowNs <= 0 {
			return 0
		}
		return float64(s.Count) / (float64(o.WindowNs) / 1e9)
	}
	capt := map[string]observe.Shape{}
	for _, s := range cp.Shapes {
		capt[s.Hash] = s
	}
	var out []ShapeResult
	seen := map[string]bool{}
	for _, s := range rp.Shapes {
		sr := ShapeResult{Shape: s, TPS: tps(rp, s)}
		if c, ok := capt[s.Hash]; ok {
			sr.Capture = &ShapeFigures{Count: c.Count, RoundTripsMean: c.RoundTripsMean, RoundTripsP50: c.RoundTripsP50,
				ServerMsMean: c.ServerMsMean, LatencyMsMean: c.LatencyMsMean, TPS: tps(cp, c)}
			seen[s.Hash] = true
		}
		out = append(out, sr)
	}
	for _, c := range cp.Shapes {
		if !seen[c.Hash] {
			out = append(out, ShapeResult{Shape: observe.Shape{Shape: c.Shape, Hash: c.Hash},
				Capture: &ShapeFigures{Count: c.Count, RoundTripsMean: c.RoundTripsMean, RoundTripsP50: c.RoundTripsP50,
					ServerMsMean: c.ServerMsMean, LatencyMsMean: c.LatencyMsMean, TPS: tps(cp, c)}})
		}
	}
	return out
}

// diverge compares a session's answers in the replay with the capture's, request by
// request and statement by statement.
func diverge(s *sess, lex wire.Lexicon) []Divergence {
	p := s.p
	var out []Divergence
	norm := func(text string) string {
		b, _ := wire.Normalize(nil, []byte(text), lex)
		return string(b)
	}
	stmtOf := func(req *request, j int) string {
		switch {
		case j < len(req.stmts):
			return norm(req.stmts[j])
		case len(req.stmts) == 1:
			return norm(req.stmts[0])
		}
		return ""
	}
	for i := range p.reqs {
		req := &p.reqs[i]
		if !req.answered {
			break // the capture ended before the server answered it
		}
		d := Divergence{Session: p.conn.ID, Request: i + 1}
		if i >= len(s.outcomes) {
			if s.sent == 0 && s.why != "" {
				break // not replayed at all: the session says why
			}
			d.Statement, d.Captured, d.Replayed = stmtOf(req, 0), summary(req.outcomes), "not answered"
			out = append(out, d)
			continue
		}
		got := s.outcomes[i]
		for j := 0; j < max(len(req.outcomes), len(got)); j++ {
			c, g := "not run", "not run"
			if j < len(req.outcomes) {
				c = req.outcomes[j].String()
			}
			if j < len(got) {
				g = got[j].String()
			}
			if c != g {
				d.Statement, d.Captured, d.Replayed = stmtOf(req, j), c, g
				out = append(out, d)
			}
		}
	}
	return out
}

func summary(os []outcome) string {
	var parts []string
	for _, o := range os {
		parts = append(parts, o.String())
	}
	if len(parts) == 0 {
		return "ok"
	}
	return strings.Join(parts, ", ")
}

// JSON returns the Result as indented JSON.
func (res *Result) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Summary says in a line or two what the replay did.
func (res *Result) Summary() string {
	pred := ""
	if p := res.Predicted; p != nil {
		pred = fmt.Sprintf("\nat +%s RTT the replay measured %.2f ms a transaction and %.1f TPS; dblat predict's model gives %.2f ms and %.1f TPS for %d clients (%+.1f %%)",
			time.Duration(p.RTTNs), res.LatencyMsMean, res.TPS, p.LatencyMs, p.TPS, p.Clients, p.LatencyErrorPct)
	}
	return fmt.Sprintf("replayed %d of %d sessions: %d transactions (the capture's: %d) in %.2f s (the capture's: %.2f s), %.2f ms a transaction, %d divergences",
		res.Sessions-res.NotReplayed, res.Sessions, res.Transactions, res.CaptureTransactions, res.DurationS, res.CaptureDurationS,
		res.LatencyMsMean, res.Divergences) + pred
}

// maxStored bounds the divergences listed in a stored replay.
const maxStored = 100

// Stored returns the Result as a replay's run keeps it (observe.Observation.Replay):
// without the two observations (the run is the replay's, and the capture's figures are
// beside each shape) and with at most maxStored divergences listed.
func (res *Result) Stored() (json.RawMessage, error) {
	c := *res
	c.Capture, c.Replay = nil, nil
	if len(c.DivergenceList) > maxStored {
		c.DivergenceList = c.DivergenceList[:maxStored]
	}
	return json.Marshal(&c)
}

// FromObservation returns the replay's Result a stored observation holds (Stored), nil
// when it holds none.
func FromObservation(o *observe.Observation) (*Result, error) {
	if len(o.Replay) == 0 {
		return nil, nil
	}
	var r Result
	if err := json.Unmarshal(o.Replay, &r); err != nil {
		return nil, fmt.Errorf("the replay's result: %w", err)
	}
	return &r, nil
}
