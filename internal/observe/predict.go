package observe

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dblat/dblat/internal/signals"
	"github.com/dblat/dblat/internal/stats"
	"github.com/dblat/dblat/internal/words"
)

// Prediction is what Predict expects of the observed application at one added RTT.
type Prediction struct {
	// RTTNs is the round-trip time added between the application and the server (what
	// `dblat proxy --rtt` adds); Clients the closed loop's population.
	RTTNs   int64 `json:"rtt_ns"`
	Clients int   `json:"clients"`
	// TPS is the predicted throughput, LatencyMs the mean response time of a transaction
	// as the application sees it.
	TPS       float64 `json:"tps"`
	LatencyMs float64 `json:"latency_ms"`
	// BlindTPS is the throughput the same model gives without the serial sections (a
	// model blind to contention), when there are any; 0 otherwise.
	BlindTPS float64 `json:"blind_tps,omitempty"`
	// UpperBound says the predicted throughput is an upper bound: waits that grow with the
	// RTT were seen but not modelled (see Notes). LowerBound says it is a lower bound: the
	// observed times hold waits that shrink as the RTT grows (the host's CPUs were busy,
	// and clients, server and proxy queued for them). With both, it is neither.
	UpperBound bool `json:"upper_bound"`
	LowerBound bool `json:"lower_bound,omitempty"`
	// Shapes are the per-shape predictions, the most frequent first.
	Shapes []ShapePrediction `json:"shapes"`
}

// ShapePrediction is what Predict expects of one shape.
type ShapePrediction struct {
	Shape string `json:"shape"`
	Hash  string `json:"hash"`
	Count int64  `json:"count"`
	// Share is the shape's share of the transactions.
	Share      float64 `json:"share"`
	RoundTrips float64 `json:"round_trips"`
	// LatencyMs is the predicted mean response time, ObservedMs the one observed (at the
	// observation's RTT), AddedMs their difference.
	LatencyMs  float64 `json:"latency_ms"`
	ObservedMs float64 `json:"observed_ms"`
	AddedMs    float64 `json:"added_ms"`
	// Serial is set when the shape's serial section was modelled as a queue.
	Serial bool `json:"serial,omitempty"`
}

// Forecast is Predict's whole answer: the prediction at the RTT asked for, what the model
// gives at the observation's own RTT (to compare with what was observed), the RTTs at which
// throughput falls, the shapes that lose most and what would help.
type Forecast struct {
	Prediction
	// ObservedRTTNs, ObservedTPS and ObservedLatencyMs are the observation's; ModelTPS
	// and ModelLatencyMs what the model gives at the observation's RTT and client count
	// (the closer to the observed, the better the model describes the application).
	ObservedRTTNs int64 `json:"observed_rtt_ns"`
	// NetworkRTTNs is the network RTT a capture's times already contain (Network); the RTT
	// asked for is added to it.
	NetworkRTTNs      int64   `json:"network_rtt_ns,omitempty"`
	ObservedClients   float64 `json:"observed_clients"`
	ObservedTPS       float64 `json:"observed_tps"`
	ObservedLatencyMs float64 `json:"observed_latency_ms"`
	ModelTPS          float64 `json:"model_tps"`
	ModelLatencyMs    float64 `json:"model_latency_ms"`
	// Fall10RTTNs and Fall50RTTNs are the added RTTs at which throughput has fallen by
	// 10 % and 50 % from its value with no added RTT (for Clients clients).
	Fall10RTTNs int64 `json:"fall_10pct_rtt_ns"`
	Fall50RTTNs int64 `json:"fall_50pct_rtt_ns"`
	// Losers are the shapes that lose most at the RTT asked for, with advice.
	Losers []Loser `json:"losers,omitempty"`
	// Notes say what the prediction assumes and where it is a bound; Caveats are the same
	// notes in parts (the shape each concerns, a brief form), one per note, in order.
	Notes   []string `json:"notes,omitempty"`
	Caveats []Caveat `json:"caveats,omitempty"`
	// Evidence quotes measured runs that show what fewer round trips buy (set by the
	// caller, which has the results store: TPC-C's modes).
	Evidence []string `json:"evidence,omitempty"`
}

// Loser is a shape whose transactions lose much at the RTT asked for.
type Loser struct {
	Shape string `json:"shape"`
	// Rank is the shape's rank in the observation, from 1 (as TypeLabel numbers it).
	Rank int `json:"rank"`
	// AddedMs is the added response time per transaction; ShareOfAdded the shape's share
	// of the added time over all transactions.
	AddedMs      float64 `json:"added_ms"`
	ShareOfAdded float64 `json:"share_of_added"`
	RoundTrips   float64 `json:"round_trips"`
	Statements   float64 `json:"statements"`
	// Advice says what would help; Brief says it in a short line.
	Advice string `json:"advice"`
	Brief  string `json:"brief"`
}

// minLoserShare: a shape that takes less of the added time than this is not worth advice
// (beside the one that loses most, which is always named).
const minLoserShare = 0.02

// maxClients bounds the population Predict models (mean-value analysis costs one step per
// client).
const maxClients = 1_000_000

// model is an observation prepared for prediction.
type model struct {
	o      *Observation
	shares []float64
	total  float64
	gap    float64 // mean time between transactions, ns
	down0  float64 // the observation's down delay, ns: the last answer's way to the client
	rtt0   float64
}

func newModel(o *Observation) (*model, error) {
	if o.Transactions == 0 || len(o.Shapes) == 0 {
		return nil, errors.New("the observation holds no transaction: nothing to predict (observe the application while it runs transactions)")
	}
	m := &model{o: o, gap: o.BetweenMsMean * 1e6, down0: float64(o.DownNs), rtt0: float64(o.RTTNs)}
	if o.Network != nil {
		// A capture saw each transaction end before its last answer crossed the network's
		// client side to the application, and start after its first request did.
		m.down0 += float64(o.Network.ClientSideNs)
	}
	for _, s := range o.Shapes {
		m.total += float64(s.Count)
	}
	for _, s := range o.Shapes {
		m.shares = append(m.shares, float64(s.Count)/m.total)
	}
	return m, nil
}

// at evaluates the model at added RTT rtt (ns) with n clients; serial false ignores serial
// sections.
func (m *model) at(rtt float64, n int, serial bool) Prediction {
	d := rtt - m.rtt0
	p := Prediction{RTTNs: int64(rtt), Clients: n}
	z := 0.0
	var demands []float64 // per serial station: its demand per cycle, ns
	var cv2 []float64     // per serial station: its holding time's squared coefficient of variation
	var station []int     // per shape: its station, or -1
	for i, s := range m.o.Shapes {
		q := m.shares[i]
		dur := s.LatencyMsMean*1e6 + s.RoundTripsMean*d
		station = append(station, -1)
		if serial && s.Serial != nil {
			h := s.Serial.HeldMsMean*1e6 + float64(s.Serial.RoundTripsHeld)*d
			rest := dur - h - s.Serial.WaitMsMean*1e6
			z += q * (m.gap + max(0, rest))
			station[i] = len(demands)
			demands = append(demands, q*max(0, h))
			cv2 = append(cv2, holdingCV2(s.Serial.HeldMsMean*1e6-float64(s.Serial.RoundTripsHeld)*m.rtt0, h))
			continue
		}
		z += q * (m.gap + max(0, dur))
	}
	// Mean-value analysis of a closed network: a delay station (the clients' time outside
	// the serial sections) and one FCFS queue per serial section. An arriving transaction
	// waits for those queued ahead and for the rest of the holding time of the one holding
	// the lock: exact MVA takes that rest to be a whole holding time (exponential), which
	// overstates it once round trips of added RTT, the same every time, make up most of the
	// holding time. The rest is counted as D·(1+C²)/2 instead, C² the holding time's squared
	// coefficient of variation: the residual-service correction for non-exponential FCFS
	// centres (Reiser and Lavenberg's approximate MVA; Lazowska et al., Quantitative System
	// Performance, 1984). With C² = 1 it is exact MVA.
	resp := make([]float64, len(demands))
	queue := make([]float64, len(demands))
	util := make([]float64, len(demands))
	x := 0.0
	for k := 1; k <= n; k++ {
		sum := 0.0
		for j, dj := range demands {
			resp[j] = dj * (1 + queue[j] - util[j]*(1-cv2[j])/2)
			sum += resp[j]
		}
		if z+sum <= 0 {
			x = math.Inf(1)
			break
		}
		x = float64(k) / (z + sum)
		// The approximation can exceed what the busiest section can pass, one holding
		// time at a time: throughput is bounded by it (the bottleneck bound).
		for _, dj := range demands {
			if dj > 0 && x*dj > 1 {
				x = 1 / dj
			}
		}
		for j, dj := range demands {
			queue[j] = x * resp[j]
			util[j] = x * dj
		}
	}
	p.TPS = x * 1e9
	lat := 0.0
	for i, s := range m.o.Shapes {
		q := m.shares[i]
		dur := s.LatencyMsMean*1e6 + s.RoundTripsMean*d
		t := dur
		if j := station[i]; j >= 0 {
			h := s.Serial.HeldMsMean*1e6 + float64(s.Serial.RoundTripsHeld)*d
			t = max(0, dur-h-s.Serial.WaitMsMean*1e6) + resp[j]/q
		}
		t = max(0, t+m.down0)
		lat += q * t
		p.Shapes = append(p.Shapes, ShapePrediction{Shape: s.Shape, Hash: s.Hash, Count: s.Count, Share: q,
			RoundTrips: s.RoundTripsMean, LatencyMs: t / 1e6, ObservedMs: (s.LatencyMsMean*1e6 + m.down0) / 1e6,
			Serial: station[i] >= 0})
		p.Shapes[i].AddedMs = p.Shapes[i].LatencyMs - p.Shapes[i].ObservedMs
	}
	p.LatencyMs = lat / 1e6
	return p
}

// holdingCV2 is the squared coefficient of variation of a lock's holding time h (ns) whose
// part observed on the server is server (ns): that part is taken to vary as an exponential
// time does (its standard deviation its mean), the round trips of added RTT not at all.
func holdingCV2(server, h float64) float64 {
	if h <= 0 {
		return 1
	}
	server = max(0, min(server, h))
	return server * server / (h * h)
}

func (m *model) hasSerial() bool {
	for _, s := range m.o.Shapes {
		if s.Serial != nil {
			return true
		}
	}
	return false
}

// Clients returns the closed loop's population Predict assumes by default: the observed
// mean number of clients, rounded, at least 1.
func (o *Observation) ClientsDefault() int {
	return max(1, int(math.Round(o.Clients)))
}

// Predict predicts the observed application at added RTT rtt with clients clients (0: as
// many as observed). The model: every transaction takes the time it took in the
// observation plus its round trips times the RTT added beyond the observation's; each
// client waits the observed mean time between its transactions; the serial sections the
// observation found are queues whose holding time grows by one RTT per round trip they
// span; throughput and queueing follow from mean-value analysis of that closed loop, with
// the residual holding time of a lock that added RTT makes nearly constant (see at).
// It assumes the server answers each request as fast as it did in the observation, which
// is what the notes say where that is doubtful.
func Predict(o *Observation, rtt time.Duration, clients int) (*Forecast, error) {
	if rtt < 0 {
		return nil, fmt.Errorf("RTT %s: an added round-trip time cannot be negative", rtt)
	}
	m, err := newModel(o)
	if err != nil {
		return nil, err
	}
	if clients == 0 {
		clients = o.ClientsDefault()
	}
	if clients < 1 || clients > maxClients {
		return nil, fmt.Errorf("%d clients: give 1 to %d", clients, maxClients)
	}
	f := &Forecast{ObservedRTTNs: o.RTTNs, ObservedClients: o.Clients, ObservedTPS: o.TPS,
		ObservedLatencyMs: o.LatencyMsMean + m.down0/1e6}
	if o.Network != nil {
		f.NetworkRTTNs = o.Network.RTTNs
	}
	serial := m.hasSerial()
	f.Prediction = m.at(float64(rtt), clients, true)
	if serial {
		f.BlindTPS = m.at(float64(rtt), clients, false).TPS
	}
	check := m.at(m.rtt0, o.ClientsDefault(), true)
	f.ModelTPS, f.ModelLatencyMs = check.TPS, check.LatencyMs
	base := m.at(0, clients, true).TPS
	f.Fall10RTTNs = m.fall(base*0.9, clients)
	f.Fall50RTTNs = m.fall(base*0.5, clients)
	f.Losers = losers(o, f.Prediction, rtt)
	f.Caveats = m.caveats(f, clients, rtt)
	for _, c := range f.Caveats {
		f.UpperBound = f.UpperBound || c.Bound
		f.LowerBound = f.LowerBound || c.Lower
		f.Notes = append(f.Notes, c.note(o))
	}
	return f, nil
}

// Curve predicts the mean response time and throughput at each RTT, for the report's chart.
func Curve(o *Observation, rtts []time.Duration, clients int) ([]Prediction, error) {
	m, err := newModel(o)
	if err != nil {
		return nil, err
	}
	if clients == 0 {
		clients = o.ClientsDefault()
	}
	out := make([]Prediction, 0, len(rtts))
	for _, r := range rtts {
		out = append(out, m.at(float64(r), clients, true))
	}
	return out, nil
}

// fall returns the added RTT at which throughput falls to target (bisection: throughput
// only falls as the RTT grows), 0 when it never does within an hour.
func (m *model) fall(target float64, n int) int64 {
	lo, hi := 0.0, float64(time.Hour)
	if m.at(hi, n, true).TPS > target {
		return 0
	}
	for hi-lo > 1000 { // to the microsecond
		mid := (lo + hi) / 2
		if m.at(mid, n, true).TPS > target {
			lo = mid
		} else {
			hi = mid
		}
	}
	return int64(hi)
}

// losers ranks the shapes by their share of the added response time and says what would
// help the first three.
func losers(o *Observation, p Prediction, rtt time.Duration) []Loser {
	total := 0.0
	for _, s := range p.Shapes {
		total += s.Share * max(0, s.AddedMs)
	}
	if total <= 0 {
		return nil
	}
	idx := make([]int, len(p.Shapes))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		return cmp.Compare(p.Shapes[b].Share*p.Shapes[b].AddedMs, p.Shapes[a].Share*p.Shapes[a].AddedMs)
	})
	var out []Loser
	for k, i := range idx[:min(3, len(idx))] {
		s, os := p.Shapes[i], o.Shapes[i]
		if s.AddedMs <= 0 || k > 0 && s.Share*s.AddedMs < minLoserShare*total {
			break
		}
		l := Loser{Shape: s.Shape, Rank: i + 1, AddedMs: s.AddedMs, ShareOfAdded: s.Share * s.AddedMs / total,
			RoundTrips: s.RoundTrips, Statements: os.StatementsMean}
		l.Advice, l.Brief = advice(os, rtt), briefAdvice(os, rtt)
		out = append(out, l)
	}
	return out
}

// advice says what would make a shape cost fewer round trips.
func advice(s Shape, rtt time.Duration) string {
	r := s.RoundTripsMean
	var a string
	switch {
	case r >= 3:
		a = fmt.Sprintf("its %.0f statements take %.1f round trips: sent as one batch (a pipeline, or several statements in one request) or run as one stored procedure they would take 1 or 2, saving about %s a transaction at %s",
			s.StatementsMean, r, fmtMs((r-2)*float64(rtt)/1e6), fmtRTT(rtt))
	case r >= 2:
		a = fmt.Sprintf("%.1f round trips: one statement or procedure call would save %s a transaction at %s", r, fmtMs((r-1)*float64(rtt)/1e6), fmtRTT(rtt))
	default:
		a = "one round trip already: only a nearer server, or fewer transactions (caching, batching several into one), helps"
	}
	if s.Serial != nil {
		a += fmt.Sprintf("; its transactions hold a lock from round trip %d across %d more round trips, and wait for each other there: take that lock last (move the statement of round trip %d to just before COMMIT) or run the transaction as one procedure, and it is held for no round trip",
			s.Serial.FromRoundTrip, s.Serial.RoundTripsHeld, s.Serial.FromRoundTrip)
	}
	return a
}

// briefAdvice says in a line what advice says.
func briefAdvice(s Shape, rtt time.Duration) string {
	r := s.RoundTripsMean
	var a string
	switch {
	case r >= 3:
		a = fmt.Sprintf("one batch or procedure, 1 or 2 round trips instead of %.1f, would save about %s at %s", r, fmtMs((r-2)*float64(rtt)/1e6), fmtRTT(rtt))
	case r >= 2:
		a = fmt.Sprintf("one statement or procedure call would save about %s at %s", fmtMs((r-1)*float64(rtt)/1e6), fmtRTT(rtt))
	default:
		a = "one round trip already: only a nearer server or fewer transactions help"
	}
	if s.Serial != nil {
		a += fmt.Sprintf("; taking its lock last (round trip %d) would hold it for no round trip", s.Serial.FromRoundTrip)
	}
	return a
}

// Thresholds of the notes.
const (
	// slowRoundTrip: a round trip whose mean server time exceeds this many times the
	// median of its shape's round trips, and slowRoundTripMs, looks like a wait.
	slowRoundTrip   = 5.0
	slowRoundTripMs = 1.0
	// modelMiss: when the model at the observation's own RTT misses the observed
	// throughput by more than this share, it says so.
	modelMiss = 0.05
)

// Caveat is one of a forecast's notes in parts: what it assumes, or where it is only a
// bound, and the shape it concerns.
type Caveat struct {
	// Shape is the rank of the shape it concerns (from 1, as TypeLabel numbers it), 0 when
	// it concerns the whole observation.
	Shape int `json:"shape,omitempty"`
	// Bound says that it makes the predicted throughput an upper bound; Lower that it
	// makes it a lower bound.
	Bound bool `json:"bound,omitempty"`
	Lower bool `json:"lower,omitempty"`
	// Text says it in full, without naming the shape; Brief in one short line.
	Text  string `json:"text"`
	Brief string `json:"brief"`
}

// note is the caveat as Forecast.Notes writes it: the shape's text first, when it
// concerns one.
func (c Caveat) note(o *Observation) string {
	if c.Shape < 1 || c.Shape > len(o.Shapes) {
		return c.Text
	}
	return clip(o.Shapes[c.Shape-1].Shape, 80) + ": " + c.Text
}

// Levels at which the host's load makes a prediction a bound: tasks waited for a CPU a
// tenth of the time while three quarters of the CPUs were busy. On the 2-CPU machine the
// client matrix runs on, its four-client cells at RTT 0 had the CPUs 90 % busy and waits
// for one a quarter of the time, and their predictions at +2 ms were 6–15 % pessimistic.
const (
	hostCPUWait = 0.10
	hostBusy    = 0.75
)

// hostCaveat says when the observed times were inflated by the host: its CPUs busy, and
// tasks — the clients, the server, the proxy — waiting for one. Those waits are part of
// each round trip's time and of the time between transactions; at an added RTT each client
// spends more of its time waiting on the network, the CPUs have less to do, and the waits
// shrink, so the prediction, which keeps them, is pessimistic: its response time an upper
// bound and its throughput a lower one.
func hostCaveat(h *signals.Load, rtt time.Duration) (Caveat, bool) {
	if h == nil || h.CPUs <= 0 || h.CPUWait < hostCPUWait || h.BusyCPUs < hostBusy*h.CPUs || rtt <= 0 {
		return Caveat{}, false
	}
	return Caveat{Lower: true,
		Text: fmt.Sprintf("while it was observed, the machine's CPUs were %.0f %% busy and tasks waited for one %.0f %% of the time: the observed times include waits for a CPU, which shrink when an added RTT leaves the CPUs idle longer, so the response time predicted is an upper bound and the throughput a lower bound (observe with the clients, the server and dblat on CPUs of their own to predict closer)",
			100*h.BusyCPUs/h.CPUs, 100*h.CPUWait),
		Brief: fmt.Sprintf("the host's CPUs were %.0f %% busy while observed (waits for a CPU %.0f %% of the time): throughput is a lower bound", 100*h.BusyCPUs/h.CPUs, 100*h.CPUWait)}, true
}

// caveats says what the prediction assumes and where it is only a bound.
func (m *model) caveats(f *Forecast, clients int, rtt time.Duration) []Caveat {
	var out []Caveat
	o := m.o
	if f.ObservedTPS > 0 && math.Abs(f.ModelTPS-f.ObservedTPS) > modelMiss*f.ObservedTPS {
		out = append(out, Caveat{
			Text: fmt.Sprintf("at the observation's own RTT and %d clients the model gives %.1f TPS where %.1f were observed: the application did not run as a steady closed loop of that many clients (think times, a ramp-up, idle connections), and the figures are only as good as that",
				o.ClientsDefault(), f.ModelTPS, f.ObservedTPS),
			Brief: fmt.Sprintf("at the observed RTT the model gives %.1f TPS where %.1f were observed: not a steady closed loop of %d clients",
				f.ModelTPS, f.ObservedTPS, o.ClientsDefault())})
	}
	var firstUses []int // the ranks of the shapes that take more round trips on first use
	for i, s := range o.Shapes {
		if c, ok := shapeCaveat(s); ok {
			c.Shape = i + 1
			out = append(out, c)
		}
		if firstUse(o, &s) {
			firstUses = append(firstUses, i+1)
		}
		if s.ClientSplitsMean > 0 && len(s.Diagnoses) > 0 && s.ClientSplitMsMean >= diagMinShare*s.LatencyMsMean {
			if pause := s.ClientSplitMsMean / s.ClientSplitsMean; pause >= nagleMinMs && pause <= nagleMaxMs {
				// Measured (clients/, mysql-connector-python's prepared cursor): 42.8 ms
				// pauses at RTT 0 grew by about 3 ms at +2 ms and 8 ms at +20 ms, as the
				// delayed-ACK timeout adapts to the interval between the client's segments.
				out = append(out, Caveat{Shape: i + 1, Bound: true,
					Text: fmt.Sprintf("%.1f of its %.1f ms are pauses inside the client's requests (Nagle's algorithm meeting a delayed ACK): kept as they were, but a delayed ACK's timeout adapts to the interval between the client's segments, so they grow with the RTT (seen: 43 ms pauses 8 ms longer at +20 ms): the response time predicted is a lower bound and the throughput an upper bound; with TCP_NODELAY on the client's socket they would go",
						s.ClientSplitMsMean, s.LatencyMsMean),
					Brief: fmt.Sprintf("%.1f ms of pauses inside its requests (Nagle and a delayed ACK) grow with the RTT: response time a lower bound; set TCP_NODELAY", s.ClientSplitMsMean)})
			}
		}
	}
	out = append(out, firstUseCaveat(o, firstUses)...)
	if f.BlindTPS > 0 && f.TPS > 0 {
		more := 100 * (f.BlindTPS/f.TPS - 1)
		out = append(out, Caveat{
			Text: fmt.Sprintf("without the serial sections the same model would predict %.1f TPS at %s: %.0f %% more than with them",
				f.BlindTPS, fmtRTT(rtt), more),
			Brief: fmt.Sprintf("without the serial sections the model would predict %.0f %% more throughput at %s", more, fmtRTT(rtt))})
	}
	if float64(clients) > o.Clients*1.5 {
		out = append(out, Caveat{Bound: true,
			Text:  fmt.Sprintf("%d clients is more than the %.1f observed: the prediction assumes the server answers as fast with more of them, an upper bound of throughput where it is busy", clients, o.Clients),
			Brief: fmt.Sprintf("%d clients where %.1f were observed: throughput is an upper bound where the server is busy", clients, o.Clients)})
	}
	if c, ok := hostCaveat(o.Host, rtt); ok {
		out = append(out, c)
	}
	if o.RTTNs > 0 {
		d := fmtRTT(time.Duration(o.RTTNs))
		out = append(out, Caveat{Text: fmt.Sprintf("observed through an added RTT of %s: predictions add or remove the difference", d),
			Brief: fmt.Sprintf("observed at %s of added RTT: predictions add or remove the difference", d)})
	}
	if n := o.Network; n != nil {
		have := fmtRTT(time.Duration(n.RTTNs).Round(time.Microsecond))
		out = append(out, Caveat{
			Text: fmt.Sprintf("the capture's times already hold a network RTT of %s (%s between the capture point and the server, %s between it and the application; %s): the prediction adds %s to it",
				have, fmtRTT(time.Duration(n.ServerSideNs).Round(time.Microsecond)),
				fmtRTT(time.Duration(n.ClientSideNs).Round(time.Microsecond)), n.Basis(), fmtRTT(rtt)),
			Brief: fmt.Sprintf("captured with a network RTT of %s already in its times: %s is added to it", have, fmtRTT(rtt))})
	}
	if len(o.CannotFollow) > 0 || o.Unfollowed.Connections > 0 {
		n := words.Count(o.Unfollowed.Connections, "connection")
		out = append(out, Caveat{Text: fmt.Sprintf("%s could not be followed: their transactions are not in the prediction", n),
			Brief: fmt.Sprintf("%s not followed: their transactions are not in the prediction", n)})
	}
	return out
}

// shapeCaveat says how the prediction treats a shape's serial section, or that a round trip
// of it waits so much longer than the others that the throughput is only an upper bound.
func shapeCaveat(s Shape) (Caveat, bool) {
	if sr := s.Serial; sr != nil {
		return Caveat{
			Text: fmt.Sprintf("its transactions ran one at a time from round trip %d to their end (%.2f others on average inside, against %.2f in the whole transaction): a lock they all take, held across %d more round trips; modelled as a queue whose holding time grows by %d RTTs",
				sr.FromRoundTrip, sr.Overlap, sr.TxOverlap, sr.RoundTripsHeld, sr.RoundTripsHeld),
			Brief: fmt.Sprintf("one at a time from round trip %d to the end (a lock all of them take): a queue held %d more RTTs",
				sr.FromRoundTrip, sr.RoundTripsHeld)}, true
	}
	if len(s.RoundTripServerMs) < 2 {
		return Caveat{}, false
	}
	med := stats.Median(s.RoundTripServerMs)
	for k, v := range s.RoundTripServerMs {
		if v > slowRoundTripMs && v > slowRoundTrip*med {
			return Caveat{Bound: true,
				Text: fmt.Sprintf("round trip %d waits %.2f ms at the server, its other round trips %.2f ms at the median: if that is a lock wait (a row other transactions hold across their round trips) it grows with the RTT, and the predicted throughput is an upper bound",
					k+1, v, med),
				Brief: fmt.Sprintf("round trip %d waits %.2f ms at the server, the others %.2f: a lock wait would grow with the RTT (throughput an upper bound)",
					k+1, v, med)}, true
		}
	}
	return Caveat{}, false
}

// firstUseCaveat says which shapes take more round trips in a connection's first
// transaction than after (firstUse): one caveat for one shape, one for all of several.
func firstUseCaveat(o *Observation, ranks []int) []Caveat {
	const why = "the signature of a driver that prepares its statements on first use, once per connection; the prediction uses the mean, so connections that live longer than the observed ones pay less"
	switch len(ranks) {
	case 0:
		return nil
	case 1:
		s := o.Shapes[ranks[0]-1]
		return []Caveat{{Shape: ranks[0],
			Text: fmt.Sprintf("%d round trips usually, up to %d (%.2f on average), no more extra ones than one such transaction per connection: %s",
				s.RoundTripsP50, s.RoundTripsMax, s.RoundTripsMean, why),
			Brief: fmt.Sprintf("%d round trips usually, up to %d on a connection's first use (statements prepared once per connection)", s.RoundTripsP50, s.RoundTripsMax)}}
	}
	names := make([]string, 0, 3)
	for _, r := range ranks[:min(3, len(ranks))] {
		names = append(names, fmt.Sprintf("#%d", r))
	}
	list := strings.Join(names, ", ")
	if len(ranks) > 3 {
		list += fmt.Sprintf(" and %d more", len(ranks)-3)
	}
	return []Caveat{{
		Text: fmt.Sprintf("%s shapes (%s) take more round trips in some transactions than usually, no more such transactions than one per connection: %s",
			strconv.Itoa(len(ranks)), list, why),
		Brief: fmt.Sprintf("%d shapes take more round trips on a connection's first use (statements prepared once per connection)", len(ranks))}}
}

// fmtRTT writes an RTT as dblat's flags take it.
func fmtRTT(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	return d.String()
}

// fmtMs writes milliseconds with sensible precision.
func fmtMs(ms float64) string {
	switch {
	case ms >= 100:
		return fmt.Sprintf("%.0f ms", ms)
	case ms >= 10:
		return fmt.Sprintf("%.1f ms", ms)
	}
	return fmt.Sprintf("%.2f ms", ms)
}

// firstUse reports whether a shape's transactions took more round trips than usual no more
// often than once per connection (a driver that prepares its statements on first use, or
// validates a new connection): the extra round trips, over the shape's transactions, are
// at most the connections times the most extra one took.
func firstUse(o *Observation, s *Shape) bool {
	p50 := float64(s.RoundTripsP50)
	if s.Count < 10 || s.RoundTripsMax <= s.RoundTripsP50 || s.RoundTripsMean <= p50 || o.Connections == 0 {
		return false
	}
	return (s.RoundTripsMean-p50)*float64(s.Count) <= float64(s.RoundTripsMax-s.RoundTripsP50)*float64(o.Connections)+1e-9
}
