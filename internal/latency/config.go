package latency

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Config describes the link to emulate. The zero value is a transparent link (no delay, no
// jitter, no bandwidth limit). A Config is a plain value: it is copied by Listen and never
// modified afterwards.
type Config struct {
	// RTT is the round-trip time the link adds, split evenly between the two directions
	// (RTT/2 each way) unless Up or Down is set.
	RTT time.Duration
	// Up and Down are the one-way delays client→server and server→client. Setting either
	// overrides the RTT split for both directions: the link then adds exactly Up and Down.
	Up, Down time.Duration

	// Jitter is the spread of each one-way delay: the half-width for Uniform, the standard
	// deviation for Normal and ParetoNormal (as in tc-netem). It applies to every direction
	// whose base delay is non-zero; a zero-delay direction stays a straight pass-through.
	// Delays are clamped at 0, so Jitter larger than the delay raises the mean (as in netem).
	Jitter time.Duration
	// Distribution is the shape of the jitter; see Distribution for the exact definitions
	// and for how order within a TCP stream is kept without inflating delays.
	Distribution Distribution

	// BandwidthUp and BandwidthDown are the link capacities in bytes per second for each
	// direction, shared by all connections of the link as on one cable; 0 means unlimited.
	// A chunk then takes len/bandwidth to serialise, after the chunks queued before it, and
	// its propagation delay starts when it has been serialised (as netem's rate does).
	// ParseBandwidth converts "100mbit" and friends.
	BandwidthUp, BandwidthDown int64

	// Loss is the probability that a TCP segment (MSS bytes of a chunk) is lost, drawn for
	// every segment of each direction independently; 0 means none. The link terminates TCP
	// and cannot drop bytes of the stream, so a lost segment is delayed as TCP delays it:
	// the chunk holding it is released one retransmission timeout (RTO) late, twice that
	// if the retransmission is lost too, and so on (exponential backoff); chunks behind it
	// wait, as TCP delivers in order. See RTO and the package documentation, "Loss".
	Loss float64

	// DelayConnect makes connection set-up cost what it costs on a real path: the client's
	// first byte cannot leave before one RTT after the connection was accepted (its SYN-ACK
	// would take that long), and the server's first byte cannot leave before RTT+Up (when
	// the handshake's final ACK would reach it). Connect plus the first request and reply
	// therefore take 2 RTT, as over netem. The upstream connection is dialled at once.
	DelayConnect bool

	// QueueLimit bounds the bytes the link holds for one connection and one direction
	// (buffer capacity, so small chunks count at least 2 KiB). When it is full the link stops
	// reading from the sender, whose own socket buffer then fills: TCP back-pressure.
	// A connection's throughput is therefore at most about QueueLimit / one-way delay.
	// 0 means DefaultQueueLimit.
	QueueLimit int64

	// Seed seeds the jitter draws. Connection n (in accept order) and each direction get
	// their own stream derived from Seed, so a run is reproducible; 0 is a valid seed.
	Seed int64

	// Spin busy-waits the last microseconds before each release, within a CPU budget,
	// instead of the default: waking early by the predicted timer wake-up latency and
	// releasing on waking, which puts the median release on time at no CPU (see the package
	// documentation, "Clock"). Spinning narrows the spread of single releases on an idle
	// machine, and costs the CPU the server under test would otherwise have.
	Spin bool
}

// DefaultQueueLimit is the per-connection, per-direction queue bound used when
// Config.QueueLimit is 0. 32 MiB lets one connection move more than 500 MB/s through a
// 50 ms one-way delay (32 MiB / 50 ms = 671 MB/s), the bulk target of the link, while
// keeping a runaway bulk transfer's memory bounded.
const DefaultQueueLimit = 32 << 20

// oneWay returns the base delay of each direction.
func (c Config) oneWay() (up, down time.Duration) {
	if c.Up != 0 || c.Down != 0 {
		return c.Up, c.Down
	}
	return c.RTT / 2, c.RTT - c.RTT/2
}

// OneWay returns the delay the configuration adds in each direction (Up and Down, or
// RTT split in halves).
func (c Config) OneWay() (up, down time.Duration) { return c.oneWay() }

// AddedRTT is the round-trip time the configuration asks the link to add: Up+Down, or RTT.
func (c Config) AddedRTT() time.Duration {
	up, down := c.oneWay()
	return up + down
}

func (c Config) queueLimit() int64 {
	if c.QueueLimit > 0 {
		return c.QueueLimit
	}
	return DefaultQueueLimit
}

// Validate reports the first thing wrong with c, or nil.
func (c Config) Validate() error {
	switch {
	case c.RTT < 0 || c.Up < 0 || c.Down < 0:
		return errors.New("latency: negative delay")
	case c.Jitter < 0:
		return errors.New("latency: negative jitter")
	case c.BandwidthUp < 0 || c.BandwidthDown < 0:
		return errors.New("latency: negative bandwidth")
	case c.QueueLimit < 0:
		return errors.New("latency: negative queue limit")
	case c.Distribution < Uniform || c.Distribution > ParetoNormal:
		return fmt.Errorf("latency: unknown distribution %d", int(c.Distribution))
	case !(c.Loss >= 0 && c.Loss < 1):
		return fmt.Errorf("latency: loss %v is not a probability below 1", c.Loss)
	}
	return nil
}

// MSS is the segment size the link's loss is drawn per (Config.Loss): the payload of a
// 1500-byte Ethernet frame less IPv4, TCP and timestamp option headers (1500−20−20−12),
// what Linux sends on such a path.
const MSS = 1448

// Linux's bounds on the retransmission timeout (include/net/tcp.h: TCP_RTO_MIN, TCP_RTO_MAX).
const (
	RTOMin = 200 * time.Millisecond
	RTOMax = 120 * time.Second
)

// RTO is the retransmission timeout a lost segment costs on this link: what Linux's TCP
// computes for a path of its shape once its estimators have settled (tcp_set_rto: the
// smoothed RTT plus the RTT variance term, the latter never below TCP_RTO_MIN), that is
// RTT + max(200 ms, 4·mdev), RTT being the mean added round trip (jitter's mean included,
// as clamping at 0 raises it) and mdev the mean deviation of a normal RTT of the jittered
// RTT's standard deviation (σ·√(2/π)), capped at TCP_RTO_MAX. Below about 60 ms of jitter
// the 200 ms floor decides: a LAN's lost segment costs RTT + 200 ms, a cross-region
// path's (32 ms) 232 ms. A constant 200 ms would make a lost segment cheaper on a long
// path than TCP makes it.
func (c Config) RTO() time.Duration {
	var mean, variance float64
	up, down := c.oneWay()
	for _, d := range []time.Duration{up, down} {
		m, sd := float64(d), 0.0
		if c.Jitter > 0 && d > 0 {
			m, sd = newQuantiles(d, c.Jitter, c.Distribution).moments()
		}
		mean += m
		variance += sd * sd
	}
	mdev := math.Sqrt(variance) * math.Sqrt(2/math.Pi)
	rto := time.Duration(mean + max(float64(RTOMin), 4*mdev))
	return min(rto, RTOMax)
}

// OneWaySD returns the standard deviation of the delay the configuration asks for in each
// direction: its jitter's, after clamping at 0 and ±4 J (0 without jitter), before
// bandwidth and loss add theirs.
func (c Config) OneWaySD() (up, down time.Duration) {
	u, d := c.oneWay()
	sd := func(delay time.Duration) time.Duration {
		if c.Jitter == 0 || delay == 0 {
			return 0
		}
		_, s := newQuantiles(delay, c.Jitter, c.Distribution).moments()
		return time.Duration(s)
	}
	return sd(u), sd(d)
}

// String renders c compactly for logs and result records ("rtt=10ms jitter=1ms/normal").
func (c Config) String() string {
	up, down := c.oneWay()
	var b strings.Builder
	if c.Up != 0 || c.Down != 0 {
		fmt.Fprintf(&b, "up=%v down=%v", up, down)
	} else {
		fmt.Fprintf(&b, "rtt=%v", c.RTT)
	}
	if c.Jitter > 0 {
		fmt.Fprintf(&b, " jitter=%v/%v", c.Jitter, c.Distribution)
	}
	if c.BandwidthUp > 0 {
		fmt.Fprintf(&b, " bw-up=%s", FormatBandwidth(c.BandwidthUp))
	}
	if c.BandwidthDown > 0 {
		fmt.Fprintf(&b, " bw-down=%s", FormatBandwidth(c.BandwidthDown))
	}
	if c.Loss > 0 {
		fmt.Fprintf(&b, " loss=%s rto=%v", FormatLoss(c.Loss), c.RTO().Round(time.Microsecond))
	}
	if c.DelayConnect {
		b.WriteString(" delay-connect")
	}
	return b.String()
}

// Distribution is the shape of the jitter added to a one-way delay d with spread J
// (Config.Jitter). Every shape is sampled by inverse transform from a quantile function Q
// on [0,1], tabulated at 4096 points like netem's tables, clamped to d±4J (netem's s16
// tables end at ±32767/8192 ≈ 4 J) and then at 0:
//
//   - Uniform: d + J·(2u−1), uniform on [d−J, d+J) — netem's default without a table.
//   - Normal: d + J·Φ⁻¹(u), normal with standard deviation J (netem "normal").
//   - ParetoNormal: d + J·(Φ⁻¹(u)/4 + (1−u)^(−1/3) − 3/2), the NIST Net mix of a quarter
//     normal and three quarters Pareto (shape 3) that iproute2's paretonormal table
//     encodes; mean ≈ d−0.02 J, median ≈ d−0.24 J, long right tail (p99 ≈ d+3.7 J).
//
// Order. A byte stream cannot deliver a chunk before the one sent ahead of it, so a release
// time is max(own, previous). Drawing every chunk independently and clamping like that (what
// toxiproxy does) inflates delays whenever chunks follow each other faster than the jitter
// range: for 5±4 ms uniform with a chunk every 1 ms the mean becomes 6.3 ms (toxiproxy
// measured 6.5 ms, see the latency-injection notes). The link instead
// draws a fresh, independent delay whenever the previous chunk of the direction has already
// been delivered (every request/response turn, so closed-loop traffic sees exactly the
// distribution above), and otherwise moves the previous chunk's delay by a random step that
// keeps both the order and the distribution (a Metropolis-style move in quantile space, see
// jitter.go). Under a steady stream the delivered delays therefore still follow the requested
// distribution (5±4 ms every 1 ms: mean 4.99 ms) but are correlated from chunk to chunk, as
// queueing delay on a real path is: the delay can fall by at most the gap between two
// chunks. With chunks less than ~0.1 ms apart the heavy tails of Normal and ParetoNormal are
// visited slowly (mean −6 % over 20 s of such a stream). Chunks of one burst (gap ≈ 0)
// share one delay, so a message split over several reads is not jittered twice.
type Distribution int

const (
	// Uniform jitter on [d−J, d+J). The zero value.
	Uniform Distribution = iota
	// Normal jitter with standard deviation J, clamped at ±4 J.
	Normal
	// ParetoNormal jitter as netem's paretonormal table (see Distribution).
	ParetoNormal
)

var distNames = [...]string{"uniform", "normal", "paretonormal"}

// Unit is the standard deviation of the distribution at Jitter 1, unclamped: 1/√3 for
// Uniform (a half-width), 1 for Normal, about 0.85 for ParetoNormal (its ±4 tails
// included). A measured standard deviation divided by it is the jitter that would give it.
func (d Distribution) Unit() float64 {
	if d < 0 || int(d) >= len(distUnits) {
		return 1
	}
	return distUnits[d]
}

// distUnits are the Units, computed once from the quantile functions.
var distUnits = func() [3]float64 {
	var u [3]float64
	for d := range u {
		_, u[d] = newQuantiles(1<<40, 1<<30, Distribution(d)).moments()
		u[d] /= 1 << 30
	}
	return u
}()

// String returns the netem-style name ("uniform", "normal", "paretonormal").
func (d Distribution) String() string {
	if d >= 0 && int(d) < len(distNames) {
		return distNames[d]
	}
	return "Distribution(" + strconv.Itoa(int(d)) + ")"
}

// ParseDistribution accepts the names String returns ("pareto-normal" too), any case; its
// error reads after the value's name.
func ParseDistribution(s string) (Distribution, error) {
	k := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), "-", "")
	for i, n := range distNames {
		if k == n {
			return Distribution(i), nil
		}
	}
	return 0, fmt.Errorf("must be uniform, normal or paretonormal, got %q", s)
}

// bitUnits are bits per second with tc's SI prefixes or IEC prefixes.
var bitUnits = []struct {
	suffix string
	bytes  float64 // bytes per second per unit
}{
	{"kibit", 1024.0 / 8}, {"mibit", 1024.0 * 1024 / 8}, {"gibit", 1024.0 * 1024 * 1024 / 8},
	{"kbit", 1e3 / 8}, {"mbit", 1e6 / 8}, {"gbit", 1e9 / 8}, {"tbit", 1e12 / 8}, {"bit", 1.0 / 8},
}

// perSecondPrefix maps the prefix of a "/s" unit (lower case) to its multiplier.
var perSecondPrefix = map[string]float64{
	"": 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12, "ki": 1 << 10, "mi": 1 << 20, "gi": 1 << 30,
}

// ParseBandwidth converts a bandwidth to bytes per second; its errors read after the
// value's name ("needs a unit: ..."). It accepts bits per second with
// tc's SI prefixes ("100mbit" = 12.5e6 B/s, "1gbit", "2.5kbit") or IEC prefixes ("1gibit"),
// and rates written with "/s", where an upper-case B means bytes and a lower-case b bits
// ("10MB/s" = 1e7 B/s, "10MiB/s" = 10·2^20 B/s, "100Mb/s" = 12.5e6 B/s).
// "0", "" and "unlimited" mean no limit (0). A bare number is refused as ambiguous, and so is
// "mbps" (tc reads it as megabytes per second, most people as megabits).
func ParseBandwidth(s string) (int64, error) {
	t := strings.TrimSpace(s)
	lt := strings.ToLower(t)
	if lt == "" || lt == "0" || lt == "unlimited" {
		return 0, nil
	}
	if strings.HasSuffix(lt, "bps") {
		return 0, fmt.Errorf("%q is ambiguous: write mbit or Mb/s for megabits, MB/s for megabytes per second", s)
	}
	num, mult := "", 0.0
	if head, ok := strings.CutSuffix(t, "/s"); ok && len(head) > 0 {
		unit := head[len(head)-1]
		if unit != 'B' && unit != 'b' {
			return 0, fmt.Errorf("has an unknown unit: %q (write 100mbit, 1gbit, 12.5MB/s)", s)
		}
		head = head[:len(head)-1]
		i := len(head)
		for i > 0 && (head[i-1] >= 'a' && head[i-1] <= 'z' || head[i-1] >= 'A' && head[i-1] <= 'Z') {
			i--
		}
		p, ok := perSecondPrefix[strings.ToLower(head[i:])]
		if !ok {
			return 0, fmt.Errorf("has an unknown unit: %q (write 100mbit, 1gbit, 12.5MB/s)", s)
		}
		num, mult = head[:i], p
		if unit == 'b' {
			mult /= 8
		}
	} else {
		for _, u := range bitUnits {
			if n, ok := strings.CutSuffix(lt, u.suffix); ok {
				num, mult = n, u.bytes
				break
			}
		}
		if mult == 0 {
			return 0, fmt.Errorf("needs a unit: %q (write 100mbit, 1gbit, 12.5MB/s)", s)
		}
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("is not a rate: %q (write 100mbit, 1gbit, 12.5MB/s)", s)
	}
	b := math.Round(v * mult)
	if b > math.MaxInt64/2 {
		return 0, fmt.Errorf("is too large: %q", s)
	}
	if v > 0 && b < 1 {
		return 0, fmt.Errorf("is below 1 byte per second: %q", s)
	}
	return int64(b), nil
}

// ParseLoss reads a loss probability: a percentage ("1%", "0.05%") or a fraction ("0.01");
// "0" or "" is none. Values of 100 % and above are refused: every segment would be lost
// forever.
func ParseLoss(s string) (float64, error) {
	t := strings.TrimSpace(s)
	if t == "" || t == "0" {
		return 0, nil
	}
	num, pct := strings.CutSuffix(t, "%")
	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("must be a percentage like 0.1%% or a fraction like 0.001, got %q", s)
	}
	if pct {
		v /= 100
	}
	if v < 0 || v >= 1 {
		return 0, fmt.Errorf("must be at least 0 and below 100%%, got %q", s)
	}
	return v, nil
}

// FormatLoss writes a loss probability as a percentage, as ParseLoss reads it back: "1%",
// "0.05%", "0" for none.
func FormatLoss(p float64) string {
	if p == 0 {
		return "0"
	}
	// Rounded to 9 significant digits of the percentage: 0.007 is "0.7%", not 0.7000000000000001%.
	return strconv.FormatFloat(p*100, 'g', 9, 64) + "%"
}

// FormatBandwidth renders bytes per second in bits per second with tc's SI prefixes
// ("100mbit"), the inverse of ParseBandwidth up to rounding.
func FormatBandwidth(bytesPerSec int64) string {
	bits := float64(bytesPerSec) * 8
	for _, u := range []struct {
		name string
		v    float64
	}{{"tbit", 1e12}, {"gbit", 1e9}, {"mbit", 1e6}, {"kbit", 1e3}} {
		if bits >= u.v {
			return strconv.FormatFloat(bits/u.v, 'f', -1, 64) + u.name
		}
	}
	return strconv.FormatFloat(bits, 'f', -1, 64) + "bit"
}
