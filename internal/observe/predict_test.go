package observe

import (
	"encoding/json"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/signals"
)

// oneShape is an observation of 4 clients running one shape of 5 round trips that took
// 2 ms at the proxy, 0.5 ms apart, with no RTT added.
func oneShape() *Observation {
	return &Observation{Version: FormatVersion, Protocol: "PostgreSQL", Transactions: 1000, Clients: 4, TPS: 1600,
		BetweenMsMean: 0.5, LatencyMsMean: 2,
		Shapes: []Shape{{Shape: "BEGIN; UPDATE t SET a = a + ? WHERE id = ?; SELECT ?; COMMIT", Hash: "00000000000000aa", Count: 1000,
			RoundTripsMean: 5, RoundTripsP50: 5, RoundTripsMax: 5, StatementsMean: 5, LatencyMsMean: 2}}}
}

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %.6g, want %.6g (±%g)", what, got, want, tol)
	}
}

// TestPredictClosedLoop: without serial sections a transaction takes its observed time
// plus R·r, and N clients cycle through it and the gap: X = N / (D + R·r + G).
func TestPredictClosedLoop(t *testing.T) {
	o := oneShape()
	f, err := Predict(o, 20*time.Millisecond, 0)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "latency ms", f.LatencyMs, 2+5*20, 1e-9)
	near(t, "TPS", f.TPS, 4/(102.5e-3), 1e-6)
	near(t, "shape latency ms", f.Shapes[0].LatencyMs, 102, 1e-9)
	near(t, "added ms", f.Shapes[0].AddedMs, 100, 1e-9)
	if f.Clients != 4 || f.RTTNs != int64(20*time.Millisecond) {
		t.Errorf("clients %d, rtt %d", f.Clients, f.RTTNs)
	}
	// X(r) = 4/(2.5 ms + 5r) falls 10 % at 5r = 2.5/0.9 − 2.5 ms, and by half at 5r = 2.5 ms.
	near(t, "10 % RTT µs", float64(f.Fall10RTTNs)/1e3, (2.5/0.9-2.5)/5*1e3, 1.01)
	near(t, "50 % RTT µs", float64(f.Fall50RTTNs)/1e3, 2.5/5*1e3, 1.01)
	near(t, "model TPS at the observation", f.ModelTPS, 1600, 1e-6)
	if f.UpperBound || f.BlindTPS != 0 {
		t.Errorf("upper bound %v, blind %v: nothing to bound", f.UpperBound, f.BlindTPS)
	}
	if len(f.Losers) != 1 || !strings.Contains(f.Losers[0].Advice, "round trips") {
		t.Errorf("losers %+v", f.Losers)
	}
	// More clients scale throughput in this model; the prediction says it is a bound then.
	f16, err := Predict(o, 20*time.Millisecond, 16)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "TPS at 16", f16.TPS, 16/(102.5e-3), 1e-6)
	if !f16.UpperBound || !strings.Contains(strings.Join(f16.Notes, "\n"), "16 clients is more than") {
		t.Errorf("16 clients: upper bound %v, notes %q", f16.UpperBound, f16.Notes)
	}
}

// TestPredictObservedRTT: an observation made through an added RTT predicts only the
// difference, and reproduces itself at its own RTT.
func TestPredictObservedRTT(t *testing.T) {
	o := oneShape()
	o.RTTNs, o.UpNs, o.DownNs = int64(10*time.Millisecond), int64(5*time.Millisecond), int64(5*time.Millisecond)
	// At the proxy (raw receive times) a transaction of 5 round trips shows 5 up delays and
	// 4 down delays: 2 ms of its own plus 45 ms.
	o.Shapes[0].LatencyMsMean, o.LatencyMsMean = 47, 47
	f, err := Predict(o, 10*time.Millisecond, 0)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "latency at the observed RTT", f.LatencyMs, 52, 1e-9) // 2 + 5 × 10
	f, err = Predict(o, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "latency at 0", f.LatencyMs, 2, 1e-9)
	if !strings.Contains(strings.Join(f.Notes, "\n"), "observed through an added RTT of 10ms") {
		t.Errorf("notes %q", f.Notes)
	}
}

// TestPredictSerial: a serial section is a queue. One client never waits; many are bounded
// by one transaction per section; the contention-blind figure is reported beside.
func TestPredictSerial(t *testing.T) {
	o := oneShape()
	// Held for the last 2 ms... of a 4 ms transaction of which 1 ms was waiting: 1 ms
	// outside it.
	o.Shapes[0].LatencyMsMean, o.LatencyMsMean, o.BetweenMsMean = 4, 4, 0
	o.Shapes[0].Serial = &Serial{FromRoundTrip: 3, RoundTripsHeld: 2, HeldMsMean: 2, WaitMsMean: 1}
	one, err := Predict(o, 10*time.Millisecond, 1)
	if err != nil {
		t.Fatal(err)
	}
	// Alone: 1 ms + 3 RTT outside, 2 ms + 2 RTT inside, no wait.
	near(t, "latency alone", one.LatencyMs, 1+30+2+20, 1e-9)
	near(t, "TPS alone", one.TPS, 1/(53e-3), 1e-6)
	many, err := Predict(o, 10*time.Millisecond, 1000)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "TPS bound", many.TPS, 1/(22e-3), 0.01)
	if many.BlindTPS <= many.TPS*10 {
		t.Errorf("blind %.1f should far exceed the bounded %.1f", many.BlindTPS, many.TPS)
	}
	if !many.Shapes[0].Serial || !strings.Contains(strings.Join(many.Notes, "\n"), "one at a time from round trip 3") {
		t.Errorf("shape %+v, notes %q", many.Shapes[0], many.Notes)
	}
}

// TestPredictConstantHolding: a lock held only across round trips of added RTT (no server
// time in it) is held the same time every time, so the transaction that arrives behind the
// holder waits on average half a holding time for it, not a whole one as for an
// exponential time. Two clients, by hand: the first alone finds the lock free, R1 = D and
// U1 = Q1 = D/(Z+D); the second waits for the half of the holder's time that is left,
// R2 = D·(1 + Q1 − U1/2), and X = 2/(Z+R2).
func TestPredictConstantHolding(t *testing.T) {
	o := oneShape()
	o.Shapes[0].LatencyMsMean, o.LatencyMsMean, o.BetweenMsMean = 1, 1, 0
	o.Shapes[0].Serial = &Serial{FromRoundTrip: 4, RoundTripsHeld: 2}
	f, err := Predict(o, 10*time.Millisecond, 2)
	if err != nil {
		t.Fatal(err)
	}
	d := 20e-3              // 2 round trips of 10 ms
	z := 1e-3 + 5*10e-3 - d // the rest of the transaction
	q1 := d / (z + d)
	r2 := d * (1 + q1 - q1/2)
	near(t, "TPS", f.TPS, 2/(z+r2), 1e-9)
	if exp := 2 / (z + d*(1+q1)); f.TPS <= exp {
		t.Errorf("TPS %.4f not above exact MVA's %.4f for an exponential holding time", f.TPS, exp)
	}
}

// TestPredictWaitNote: a round trip that waits far longer than the others makes the
// prediction an upper bound.
func TestPredictWaitNote(t *testing.T) {
	o := oneShape()
	o.Shapes[0].RoundTripServerMs = []float64{0.2, 0.3, 4, 0.2, 0.5}
	f, err := Predict(o, 5*time.Millisecond, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !f.UpperBound || !strings.Contains(strings.Join(f.Notes, "\n"), "round trip 3 waits 4.00 ms") {
		t.Errorf("upper bound %v, notes %q", f.UpperBound, f.Notes)
	}
	var b strings.Builder
	if err := f.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`: at most \d`).MatchString(b.String()) {
		t.Errorf("text does not say the throughput is a bound:\n%s", b.String())
	}
}

// TestCaveats: each note has its caveat, in order, naming the shape it concerns by rank; a
// caveat that bounds the throughput marks the forecast an upper bound; losers carry the
// rank of their shape.
func TestCaveats(t *testing.T) {
	o := oneShape()
	o.Shapes = append(o.Shapes, Shape{Shape: "SELECT ?", Hash: "bb", Count: 500, RoundTripsMean: 3, RoundTripsP50: 3,
		RoundTripsMax: 3, StatementsMean: 3, LatencyMsMean: 6, RoundTripServerMs: []float64{0.2, 4, 0.3}})
	o.Shapes[0].Serial = &Serial{FromRoundTrip: 3, RoundTripsHeld: 2, HeldMsMean: 1}
	o.RTTNs = int64(time.Millisecond)
	f, err := Predict(o, 5*time.Millisecond, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Caveats) != len(f.Notes) {
		t.Fatalf("%d caveats for %d notes: %+v", len(f.Caveats), len(f.Notes), f.Caveats)
	}
	shapes := map[int]bool{}
	for i, c := range f.Caveats {
		if !strings.HasSuffix(f.Notes[i], c.Text) || c.Brief == "" || len(c.Brief) > len(c.Text) {
			t.Errorf("caveat %d %+v for note %q", i, c, f.Notes[i])
		}
		if c.Shape > 0 {
			shapes[c.Shape] = true
			if !strings.HasPrefix(f.Notes[i], o.Shapes[c.Shape-1].Shape[:8]) {
				t.Errorf("note %q does not begin with shape %d", f.Notes[i], c.Shape)
			}
		}
	}
	if !shapes[1] || !shapes[2] || !f.UpperBound {
		t.Errorf("caveats %+v: want shape 1's serial section and shape 2's wait, an upper bound", f.Caveats)
	}
	for _, l := range f.Losers {
		if l.Rank < 1 || o.Shapes[l.Rank-1].Shape != l.Shape {
			t.Errorf("loser %+v: rank does not name its shape", l)
		}
		if l.Brief == "" || len(l.Brief) >= len(l.Advice) {
			t.Errorf("loser %+v: no brief advice shorter than the advice", l)
		}
	}
}

func TestShortLabel(t *testing.T) {
	for _, c := range []struct {
		shape, want string
	}{
		{"begin isolation level read committed; UPDATE warehouse SET w_ytd = w_ytd + ? WHERE w_id = ?; COMMIT", "#3 UPDATE warehouse SET w_ytd = w_…"},
		{"START TRANSACTION; SET TRANSACTION READ ONLY; SELECT 1", "#3 SELECT 1"},
		{"BEGIN", "#3 BEGIN"},
		{"SELECT abalance FROM pgbench_accounts WHERE aid = ?", "#3 SELECT abalance FROM pgbench_ac…"},
	} {
		if got := ShortLabel(2, Shape{Shape: c.shape}); got != c.want {
			t.Errorf("ShortLabel(%q) = %q, want %q", c.shape, got, c.want)
		}
	}
}

// TestForecastJSON: the fields the issue names.
func TestForecastJSON(t *testing.T) {
	f, err := Predict(oneShape(), 20*time.Millisecond, 0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"rtt_ns", "clients", "tps", "latency_ms", "shapes", "fall_10pct_rtt_ns", "fall_50pct_rtt_ns"} {
		if _, ok := m[k]; !ok {
			t.Errorf("no %s in %s", k, b)
		}
	}
	sh := m["shapes"].([]any)[0].(map[string]any)
	for _, k := range []string{"shape", "count", "round_trips", "latency_ms"} {
		if _, ok := sh[k]; !ok {
			t.Errorf("no shapes[].%s in %s", k, b)
		}
	}
}

func TestPredictRefuses(t *testing.T) {
	if _, err := Predict(&Observation{Version: 1}, time.Millisecond, 0); err == nil || !strings.Contains(err.Error(), "no transaction") {
		t.Errorf("empty observation: %v", err)
	}
	if _, err := Predict(oneShape(), -time.Millisecond, 0); err == nil {
		t.Error("a negative RTT was accepted")
	}
}

func TestDecode(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"protocol":"x"}`, "no version field"},
		{`{"version":99}`, "newer than this dblat"},
		{`[1]`, "not an observation"},
	} {
		if _, err := Decode([]byte(c.in)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Decode(%s) = %v, want %q", c.in, err, c.want)
		}
	}
	b, _ := json.Marshal(oneShape())
	o, err := Decode(b)
	if err != nil || o.Shapes[0].Count != 1000 {
		t.Errorf("round trip: %+v, %v", o, err)
	}
}

// TestPredictBusyHost: an observation made while the host's CPUs were busy and tasks
// waited for one predicts a lower bound of throughput, and says why; one on a quiet host,
// or without the host's figures (a capture file), does not.
func TestPredictBusyHost(t *testing.T) {
	for _, c := range []struct {
		name  string
		host  *signals.Load
		lower bool
	}{
		{"busy", &signals.Load{CPUs: 2, BusyCPUs: 1.8, CPUWait: 0.25}, true},
		{"quiet", &signals.Load{CPUs: 2, BusyCPUs: 0.6, CPUWait: 0.01}, false},
		{"busy but nobody waited", &signals.Load{CPUs: 2, BusyCPUs: 1.9, CPUWait: 0.02}, false},
		{"unknown", nil, false},
	} {
		o := oneShape()
		o.Host = c.host
		f, err := Predict(o, 2*time.Millisecond, 0)
		if err != nil {
			t.Fatal(err)
		}
		said := strings.Contains(strings.Join(f.Notes, "\n"), "throughput a lower bound")
		if f.LowerBound != c.lower || said != c.lower {
			t.Errorf("%s: lower bound %v, notes %q", c.name, f.LowerBound, f.Notes)
		}
		var b strings.Builder
		if err := f.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		if c.lower != strings.Contains(b.String(), "at least") {
			t.Errorf("%s: text %q", c.name, b.String())
		}
	}
	if f, _ := Predict(&Observation{}, 0, 0); f != nil && f.LowerBound {
		t.Error("a lower bound at no added RTT")
	}
}
