package latency

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"gonum.org/v1/gonum/stat/distuv"
)

// ShapeCalibration is the outcome of CalibrateShape: the ping-pong calibration of a link,
// and, for each part of its shape, what it achieved against what it was asked and whether
// that is on target (Checks).
type ShapeCalibration struct {
	*Calibration
	// Median is the added RTT the shape makes the median ping take (MedianRTT), which
	// the achieved median is judged against where jitter or bandwidth move it.
	Median time.Duration `json:"median_ns"`
	// Throughput is the bulk transfer's, with a bandwidth limit; nil without one.
	Throughput *Throughput `json:"throughput,omitempty"`
	// LossCost is the median time a ping waited per retransmission timeout it met: what
	// one loss cost, to set beside Config.RTO; 0 when no ping met one.
	LossCost time.Duration `json:"loss_cost_ns,omitempty"`
	Checks   []Check       `json:"checks"`
}

// Check is one figure of a calibration against its target.
type Check struct {
	// Name says what is checked ("jitter up", "loss", "bandwidth down").
	Name string `json:"name"`
	// Want and Got are the figure asked for and the one achieved, in words ("500µs",
	// "100mbit"); Target says how close Got must be.
	Want   string `json:"want"`
	Got    string `json:"got"`
	Target string `json:"target"`
	OK     bool   `json:"ok"`
}

// Targets of a shape's checks.
const (
	// JitterTarget bounds the jitter a direction achieved (its applied delays' standard
	// deviation read as a jitter, Calibration.JitterOf) around the one asked for.
	JitterTarget = 0.10
	// BandwidthTarget bounds a bulk transfer's rate below the bandwidth asked for; above
	// it, only the clock's granularity (0.1 %) is allowed.
	BandwidthTarget = 0.05
	// LossAlpha is the probability that a right count of losses falls outside its
	// bounds: the binomial distribution's 99.99 % interval.
	LossAlpha = 1e-4
	// LossCostTarget bounds the median cost of a loss around the RTO: the wake-ups of a
	// ping that waited, 2 % or 1 ms.
	LossCostTarget = 0.02
)

// CalibrateShape calibrates a link with cfg as Calibrate does and checks each part of its
// shape: the median added RTT against the shape's (MedianRTT) within max(2 %, 25 µs), and
// the p99 too where nothing spreads it (no jitter, no loss) within max(5 %, 150 µs); the
// jitter each delayed direction achieved within JitterTarget of what its distribution
// gives (its clamping at 0 included); the losses counted within their binomial 99.99 %
// bounds and each costing one RTO (LossCostTarget); and, with a bandwidth limit, a bulk
// transfer of bulk bytes each way (CalibrateBandwidth) within BandwidthTarget of it.
func CalibrateShape(ctx context.Context, cfg Config, opts CalibrateOptions, bulk int64) (*ShapeCalibration, error) {
	cal, err := Calibrate(ctx, cfg, opts)
	if err != nil {
		return nil, err
	}
	o := cal.Options
	s := &ShapeCalibration{Calibration: cal, Median: cfg.MedianRTT(o.Size)}
	rtt := cfg.AddedRTT()
	us := func(d time.Duration) string { return FormatDuration(d) }
	p50 := max(rtt/50, 25*time.Microsecond)
	e50 := cal.Added.P50 - s.Median
	s.Checks = append(s.Checks, Check{Name: "added RTT p50", Want: us(s.Median), Got: us(cal.Added.P50),
		Target: "±" + us(p50), OK: e50 <= p50 && e50 >= -p50})
	if cfg.Jitter == 0 && cfg.Loss == 0 {
		p99 := max(rtt/20, 150*time.Microsecond)
		e99 := cal.Added.P99 - s.Median
		s.Checks = append(s.Checks, Check{Name: "added RTT p99", Want: us(s.Median), Got: us(cal.Added.P99),
			Target: "±" + us(p99), OK: e99 <= p99 && e99 >= -p99})
	}
	if cfg.Jitter > 0 {
		sdUp, sdDown := cfg.OneWaySD()
		for _, d := range []struct {
			name string
			sd   time.Duration
			got  DelaySummary
		}{{"jitter up", sdUp, cal.SpreadUp}, {"jitter down", sdDown, cal.SpreadDown}} {
			if d.sd == 0 {
				continue // a direction without delay has no jitter
			}
			want := time.Duration(float64(d.sd) / cfg.Distribution.Unit())
			got := cal.JitterOf(d.got)
			s.Checks = append(s.Checks, Check{Name: d.name, Want: us(want) + " " + cfg.Distribution.String(), Got: us(got),
				Target: fmt.Sprintf("±%.0f %% (%d delays)", 100*JitterTarget, d.got.N),
				OK:     math.Abs(float64(got)/float64(want)-1) <= JitterTarget})
		}
	}
	if cfg.Loss > 0 {
		sent, lost := cal.LossUp.Sent+cal.LossDown.Sent, cal.LossUp.Lost+cal.LossDown.Lost
		lo, hi := BinomialBounds(sent, cfg.Loss, LossAlpha)
		got := "none sent"
		if sent > 0 {
			got = fmt.Sprintf("%d of %d (%s)", lost, sent, FormatLoss(float64(lost)/float64(sent)))
		}
		s.Checks = append(s.Checks, Check{Name: "loss", Want: FormatLoss(cfg.Loss), Got: got,
			Target: fmt.Sprintf("%d to %d lost (99.99 %%)", lo, hi), OK: sent > 0 && lost >= lo && lost <= hi})
		rto := cfg.RTO()
		if cost, n := lossCost(cal, rto); n > 0 {
			s.LossCost = cost
			tol := max(time.Duration(float64(rto)*LossCostTarget), time.Millisecond)
			s.Checks = append(s.Checks, Check{Name: "cost of a loss", Want: us(rto) + " (RTO)", Got: fmt.Sprintf("%s over %d timeouts", us(cost), n),
				Target: "±" + us(tol), OK: cost-rto <= tol && rto-cost <= tol})
		}
	}
	if cfg.BandwidthUp > 0 || cfg.BandwidthDown > 0 {
		tp, err := CalibrateBandwidth(ctx, cfg, bulk, o.Inline)
		if err != nil {
			return nil, err
		}
		s.Throughput = tp
		for _, d := range []struct {
			name string
			bw   int64
			got  float64
		}{{"bandwidth up", cfg.BandwidthUp, tp.Up}, {"bandwidth down", cfg.BandwidthDown, tp.Down}} {
			if d.bw == 0 {
				continue
			}
			s.Checks = append(s.Checks, Check{Name: d.name, Want: FormatBandwidth(d.bw), Got: FormatBandwidth(int64(d.got)),
				Target: fmt.Sprintf("-%.0f %% (%d bytes)", 100*BandwidthTarget, bulk),
				OK:     d.got >= float64(d.bw)*(1-BandwidthTarget) && d.got <= float64(d.bw)*1.001})
		}
	}
	return s, nil
}

// OnTarget reports whether every check is on target.
func (s *ShapeCalibration) OnTarget() bool {
	return !slices.ContainsFunc(s.Checks, func(c Check) bool { return !c.OK })
}

// lossCost returns the median time a ping waited per retransmission timeout, over the
// pings that met one (those that took at least half an RTO more than the median ping), and
// how many timeouts they met in all: a ping that met k of them (a loss each way, a lost
// retransmission) took about k RTOs longer. The median, not the mean: a ping that a busy
// machine held for a fraction of an RTO would pull a mean away from what a loss costs.
func lossCost(c *Calibration, rto time.Duration) (time.Duration, int64) {
	base := c.Linked.P50
	var per []time.Duration
	var n int64
	for _, p := range c.Pings {
		e := p - base
		if k := int64((e + rto/2) / rto); k > 0 {
			per = append(per, e/time.Duration(k))
			n += k
		}
	}
	if n == 0 {
		return 0, 0
	}
	slices.Sort(per)
	return per[len(per)/2], n
}

// MedianRTT returns the median round trip the configuration adds to a ping of size bytes
// and its echo: each direction's delay drawn from its jitter's distribution (clamping
// included), plus the time the bandwidth takes to serialise the ping each way; loss is
// left out (at the rates it is meant for it does not move a median). It is computed by
// drawing 200,000 pairs from the quantile tables with a fixed seed: the same for the same
// configuration.
func (c Config) MedianRTT(size int) time.Duration {
	up, down := c.oneWay()
	serial := func(bw int64) time.Duration {
		if bw == 0 {
			return 0
		}
		return time.Duration(float64(size) * 1e9 / float64(bw))
	}
	base := serial(c.BandwidthUp) + serial(c.BandwidthDown)
	if c.Jitter == 0 {
		return up + down + base
	}
	table := func(d time.Duration) *quantiles {
		if d == 0 {
			return nil
		}
		return newQuantiles(d, c.Jitter, c.Distribution)
	}
	tu, td := table(up), table(down)
	rng := rand.New(rand.NewPCG(1, 2))
	draw := func(t *quantiles) float64 {
		if t == nil {
			return 0
		}
		return t.at(rng.Float64())
	}
	const n = 200_000
	sums := make([]float64, n)
	for i := range sums {
		sums[i] = draw(tu) + draw(td)
	}
	slices.Sort(sums)
	return time.Duration(sums[n/2]) + base
}

// BinomialBounds returns the fewest and the most successes in n trials of probability p
// outside which a binomial count falls with probability at most alpha (alpha/2 each side).
func BinomialBounds(n int64, p, alpha float64) (lo, hi int64) {
	if n <= 0 {
		return 0, 0
	}
	b := distuv.Binomial{N: float64(n), P: p}
	for lo = 0; lo < n && b.CDF(float64(lo)) < alpha/2; lo++ {
	}
	for hi = max(lo, int64(float64(n)*p)); hi < n && 1-b.CDF(float64(hi)) > alpha/2; hi++ {
	}
	return lo, hi
}

// FormatDuration writes d as dblat writes durations: "0", "250µs", "1.1ms", "201ms", "2s".
func FormatDuration(d time.Duration) string {
	switch {
	case d == 0:
		return "0"
	case d%time.Second == 0 || d >= time.Second || d <= -time.Second:
		return d.Round(time.Millisecond).String()
	case d >= time.Millisecond || d <= -time.Millisecond:
		return fmt.Sprintf("%.4gms", float64(d)/1e6)
	}
	return fmt.Sprintf("%.4gµs", float64(d)/1e3)
}
