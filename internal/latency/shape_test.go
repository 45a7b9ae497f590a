package latency

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/stalltest"
)

func binomialBounds(n int64, p, alpha float64) (int64, int64) { return BinomialBounds(n, p, alpha) }

// TestLossDraw: each transmission is lost with the configured probability, counted exactly
// (the count falls outside its binomial 99.99 % bounds once in 10,000 runs of the test),
// and a chunk waits one RTO per round of retransmissions, doubling: RTO, 3 RTO, 7 RTO, the
// share of chunks that need a second round being the loss rate again.
func TestLossDraw(t *testing.T) {
	for _, p := range []float64{0.001, 0.02, 0.3} {
		st := &lossStats{}
		l := newLossDraw(p, RTOMin, 7, 3, st)
		const chunks = 400_000
		rto := int64(RTOMin)
		// The waits of 1, 2, 3, ... rounds: RTO, 3 RTO, 7 RTO, ... each round's timeout
		// at most RTOMax.
		rounds := map[int64]int{}
		for r, sum, next := 1, int64(0), rto; r < 64; r++ {
			sum += next
			rounds[sum] = r
			next = min(2*next, int64(RTOMax))
		}
		var again, delayed int64
		for i := range chunks {
			n := 100
			if i%4 == 0 {
				n = 3 * MSS // three segments
			}
			d := l.delay(n)
			switch r := rounds[d]; {
			case d == 0:
			case r == 1:
				delayed++
			case r > 1:
				delayed++
				again++
			default:
				t.Fatalf("loss %v: a chunk waited %v, not a sum of doubling timeouts of %v", p, time.Duration(d), RTOMin)
			}
		}
		c := st.counts()
		if c.Sent < chunks*6/4 || c.Chunks != delayed || c.Added < time.Duration(delayed*rto) {
			t.Errorf("loss %v: counts %+v for %d delayed chunks", p, c, delayed)
		}
		lo, hi := binomialBounds(c.Sent, p, 1e-4)
		if c.Lost < lo || c.Lost > hi {
			t.Errorf("loss %v: %d of %d transmissions lost, want %d to %d (99.99 %%)", p, c.Lost, c.Sent, lo, hi)
		}
		// A second round happens when one of the first round's retransmissions is lost:
		// at least the loss rate of the chunks that had one (more for chunks that lost
		// several segments), at most 1−(1−p)^3 of them.
		lo, _ = binomialBounds(delayed, p, 1e-4)
		_, hi = binomialBounds(delayed, 1-math.Pow(1-p, 3), 1e-4)
		if again < lo || again > hi {
			t.Errorf("loss %v: %d of %d delayed chunks lost a retransmission, want %d to %d", p, again, delayed, lo, hi)
		}
		t.Logf("loss %v: %d of %d lost, %d chunks delayed, %d of them twice or more", p, c.Lost, c.Sent, delayed, again)
	}
}

// TestRTO: a lost segment costs what Linux's TCP waits on a path of the link's shape.
func TestRTO(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want time.Duration
	}{
		{Config{}, 200 * time.Millisecond},
		{Config{RTT: time.Millisecond}, 201 * time.Millisecond},
		{Config{Up: 10 * time.Millisecond, Down: 22 * time.Millisecond}, 232 * time.Millisecond},
		// Uniform ±1 ms each way: the 200 ms floor still rules.
		{Config{RTT: 10 * time.Millisecond, Jitter: time.Millisecond}, 210 * time.Millisecond},
		// Normal with σ 50 ms each way: σ(RTT) = 70.7 ms, mdev 56.4 ms, 4·mdev 225.7 ms.
		{Config{RTT: 400 * time.Millisecond, Jitter: 50 * time.Millisecond, Distribution: Normal}, 625_700 * time.Microsecond},
		{Config{RTT: 200 * time.Second}, RTOMax},
	} {
		if got := c.cfg.RTO(); got < c.want-200*time.Microsecond || got > c.want+200*time.Microsecond {
			t.Errorf("%v: RTO %v, want %v", c.cfg, got, c.want)
		}
	}
}

func TestParseLoss(t *testing.T) {
	for in, want := range map[string]float64{"0": 0, "": 0, "1%": 0.01, "0.05%": 0.0005, "0.02": 0.02, " 0.7% ": 0.007} {
		got, err := ParseLoss(in)
		if err != nil || math.Abs(got-want) > 1e-15 {
			t.Errorf("ParseLoss(%q) = %v, %v; want %v", in, got, err, want)
		}
		if back, _ := ParseLoss(FormatLoss(got)); math.Abs(back-got) > 1e-15 {
			t.Errorf("%q: FormatLoss %q reads back %v", in, FormatLoss(got), back)
		}
	}
	if FormatLoss(0.007) != "0.7%" || FormatLoss(0) != "0" {
		t.Errorf("FormatLoss: %q %q", FormatLoss(0.007), FormatLoss(0))
	}
	for _, bad := range []string{"100%", "1", "-1%", "x", "1%%", "NaN"} {
		if _, err := ParseLoss(bad); err == nil {
			t.Errorf("ParseLoss(%q) accepted", bad)
		}
	}
	if err := (Config{Loss: 1}).Validate(); err == nil {
		t.Error("a loss of 1 validated")
	}
}

// TestCalibrateLossCostsRTO: through the link's real sockets, every ping that lost a
// segment took one retransmission timeout longer per round of retransmissions, the pings
// account for all the time the link's loss added, and the losses are counted at the
// configured rate (within the binomial 99.99 % bounds: a false failure once in 10,000
// runs). How late a delayed ping may be is what the machine withheld from this process
// (measured alongside) plus 5 ms. A ping that met no loss is late by no more than that
// either, so while the longest stall stays under half an RTO less those 5 ms, a ping half
// an RTO late met a timeout; a calibration during a longer stall cannot be read so, and is
// taken again (three times, then the test is skipped, saying why).
func TestCalibrateLossCostsRTO(t *testing.T) {
	if raceEnabled {
		t.Skip("timing is meaningless under the race detector")
	}
	cfg := Config{RTT: time.Millisecond, Loss: 0.04, Seed: 3}
	rto := cfg.RTO()
	for attempt := 1; ; attempt++ {
		stalls := stalltest.Watch()
		cal, err := Calibrate(context.Background(), cfg, CalibrateOptions{Samples: 400, Conns: 4, Warmup: -1, Inline: true})
		st := stalls()
		if err != nil {
			t.Fatal(err)
		}
		lost := cal.LossUp.Lost + cal.LossDown.Lost
		sent := cal.LossUp.Sent + cal.LossDown.Sent
		if sent-lost != 2*int64(len(cal.Pings)) { // every lost segment was sent again
			t.Errorf("%d segments sent, %d lost, for %d one-byte pings and echoes", sent, lost, len(cal.Pings))
		}
		if lo, hi := binomialBounds(sent, cfg.Loss, 1e-4); lost < lo || lost > hi {
			t.Errorf("%d of %d segments lost, want %d to %d at %v", lost, sent, lo, hi, cfg.Loss)
		}
		slack := 5*time.Millisecond + st.Longest
		if slack >= rto/2 {
			if attempt == 3 {
				t.Skipf("the process went up to %v without a CPU in each of 3 calibrations: a ping that late may have met no loss", st.Longest)
			}
			continue
		}
		base := cal.Direct.P50 + cfg.AddedRTT()
		var rounds int64
		for _, p := range cal.Pings {
			excess := p - base
			k := int64((excess + rto/2) / rto) // timeouts this ping waited
			if k == 0 {
				continue
			}
			// k timeouts: one loss each in up and down (two RTOs), or one lost
			// retransmission (1+2 RTOs), and so on: whole timeouts, each ping as late as
			// its own wake-ups.
			if d := excess - time.Duration(k)*rto; d < -time.Millisecond || d > slack {
				t.Errorf("a ping took %v over %v: %d timeouts of %v and %v, want within -1 ms..%v", excess, base, k, rto, d, slack)
			}
			rounds += k
		}
		if added := cal.LossUp.Added + cal.LossDown.Added; time.Duration(rounds)*rto != added {
			t.Errorf("the pings waited %d timeouts of %v, the link added %v", rounds, rto, added)
		}
		t.Logf("%d of %d segments lost (%.2f %%), %d timeouts of %v; %v", lost, sent, 100*float64(lost)/float64(sent), rounds, rto, cal)
		return
	}
}

// TestCalibrateJitterSpread: for each distribution, the one-way delays the link applied to
// real pings spread as the jitter asks: their standard deviation, read as a jitter
// (Calibration.JitterOf), within 10 % of the setting in each direction. The pings are one
// request and one answer at a time per connection, so every chunk draws afresh and the
// sample's standard deviation has the spread of a sample of independent draws: enough of
// them are taken (from each shape's kurtosis) that a deviation of 10 % is 4.31 standard
// errors, twice over: six checks fail together falsely less than once in 10,000 runs.
// The delays applied are the link's decisions, not its timing, so a busy machine does not
// change them.
func TestCalibrateJitterSpread(t *testing.T) {
	const jitter = 400 * time.Microsecond
	for _, dist := range []Distribution{Uniform, Normal, ParetoNormal} {
		cfg := Config{RTT: 4 * time.Millisecond, Jitter: jitter, Distribution: dist, Seed: 11}
		q := newQuantiles(2*time.Millisecond, jitter, dist)
		// The sample variance's relative standard error is √((κ−1)/n); the deviation's half.
		need := int(2 * (kurtosis(q) - 1) / 4 * math.Pow(4.31/0.1, 2))
		n := max(2000, need)
		cal, err := Calibrate(context.Background(), cfg, CalibrateOptions{Samples: n, Conns: 16, Inline: true})
		if err != nil {
			t.Fatal(err)
		}
		for dir, d := range map[string]DelaySummary{"up": cal.SpreadUp, "down": cal.SpreadDown} {
			got := cal.JitterOf(d)
			if d.N < n || math.Abs(float64(got)/float64(jitter)-1) > 0.1 {
				t.Errorf("%v %s: %d delays of sd %v: jitter %v, want %v ± 10 %%", dist, dir, d.N, d.SD, got, jitter)
			} else {
				t.Logf("%v %s: %d delays, mean %v sd %v: jitter %v (set %v)", dist, dir, d.N, d.Mean, d.SD, got, jitter)
			}
		}
	}
}

// kurtosis is the fourth standardised moment of a table's delays.
func kurtosis(q *quantiles) float64 {
	mean, sd := q.moments()
	var m4 float64
	const n = 1 << 18
	for i := range n {
		d := q.at((float64(i)+0.5)/n) - mean
		m4 += d * d * d * d
	}
	return m4 / n / math.Pow(sd, 4)
}

// TestCalibrateBandwidth: a bulk transfer through a 100 Mbit/s link runs at 100 Mbit/s
// each way, within 5 %: never faster than the cable (each chunk is serialised after the
// ones before it, by the clock), slower only by 5 % and what the machine withheld from
// this process (measured alongside: a late reader leaves the cable idle).
func TestCalibrateBandwidth(t *testing.T) {
	if raceEnabled {
		t.Skip("timing is meaningless under the race detector")
	}
	bw, _ := ParseBandwidth("100mbit")
	cfg := Config{RTT: time.Millisecond, BandwidthUp: bw, BandwidthDown: bw}
	for _, inline := range []bool{true, false} {
		const size = 15_000_000 // 1.2 s each way
		stalls := stalltest.Watch()
		tp, err := CalibrateBandwidth(context.Background(), cfg, size, inline)
		st := stalls()
		if err != nil {
			t.Fatal(err)
		}
		wire := time.Duration(float64(size) / float64(bw) * 1e9)
		for dir, rate := range map[string]float64{"up": tp.Up, "down": tp.Down} {
			took := time.Duration(float64(size) / rate * 1e9)
			if rate > float64(bw)*1.001 || took > wire*105/100+st.Total {
				t.Errorf("inline %v %s: %.2f Mbit/s (%v for %v on the wire), want 100 Mbit/s, -5 %% and %v without a CPU", inline, dir, rate*8/1e6, took, wire, st.Total)
			} else {
				t.Logf("inline %v %s: %.2f Mbit/s (the process went %v without a CPU)", inline, dir, rate*8/1e6, st.Total)
			}
		}
	}
}
