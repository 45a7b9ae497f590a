package execution

import (
	"context"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/dblat/dblat/internal/latency"
	"github.com/dblat/dblat/internal/results"
)

// linkSet is the dialer of a run: it meters every connection the runner opens and, when a
// link is configured, sends TCP connections through a latency link started on first use
// for each upstream address. Safe for concurrent use.
type linkSet struct {
	cfg   *latency.Config // nil: no link
	mu    sync.Mutex
	links map[string]*latency.Link
	// marks are each link's state when the measurement window started, and window its
	// statistics over the window once it ended.
	marks  map[*latency.Link]latency.Mark
	window map[*latency.Link]latency.Stats
}

// windowStart records the links' state when the measurement window starts.
func (ls *linkSet) windowStart() {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.marks = map[*latency.Link]latency.Mark{}
	for _, l := range ls.links {
		ls.marks[l] = l.Mark()
	}
}

// windowEnd records the links' statistics over the window.
func (ls *linkSet) windowEnd() {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.window = map[*latency.Link]latency.Stats{}
	for l, m := range ls.marks {
		ls.window[l] = l.StatsSince(m)
	}
}

func newLinkSet(cfg *latency.Config) *linkSet {
	return &linkSet{cfg: cfg, links: map[string]*latency.Link{}}
}

// dial implements engine.OpenOptions.Dial. Through a link, the connection is made in
// process (Link.Dial): the terminals do not pay the two loopback hops an external client of
// the link pays.
func (ls *linkSet) dial(ctx context.Context, network, addr string) (c net.Conn, err error) {
	if ls.cfg != nil && strings.HasPrefix(network, "tcp") {
		l, lerr := ls.link(addr)
		if lerr != nil {
			return nil, lerr
		}
		c, err = l.Dial(ctx)
	} else {
		var d net.Dialer
		c, err = d.DialContext(ctx, network, addr)
	}
	if err != nil {
		return nil, err
	}
	return latency.MeterInto(ctx, c), nil
}

func (ls *linkSet) link(upstream string) (*latency.Link, error) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if l, ok := ls.links[upstream]; ok {
		return l, nil
	}
	// The link outlives the dial's context: it serves every connection of the run.
	l, err := latency.Listen(context.Background(), "127.0.0.1:0", upstream, *ls.cfg)
	if err != nil {
		return nil, err
	}
	ls.links[upstream] = l
	return l, nil
}

// rtt is the RTT the run asked the link to add (0 without a link).
func (ls *linkSet) rtt() time.Duration {
	if ls.cfg == nil {
		return 0
	}
	return ls.cfg.AddedRTT()
}

// describe returns the stored description of the link, with its totals, or nil.
func (ls *linkSet) describe(cal *latency.Calibration) *results.Link {
	if ls.cfg == nil {
		return nil
	}
	c := ls.cfg
	up, down := c.Up, c.Down
	if up == 0 && down == 0 {
		up, down = c.RTT/2, c.RTT-c.RTT/2
	}
	l := &results.Link{Kind: "inline", RTT: c.AddedRTT(), Up: up, Down: down, Jitter: c.Jitter, BandwidthUp: c.BandwidthUp,
		BandwidthDown: c.BandwidthDown, DelayConnect: c.DelayConnect}
	if c.Jitter > 0 {
		l.Distribution = c.Distribution.String()
	}
	if cal != nil {
		l.AchievedP50, l.AchievedP99, l.Samples = cal.Added.P50, cal.Added.P99, cal.Added.N
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	// A run has one link per upstream address, nearly always one. With several, counts
	// add up and each lateness percentile is the worst link's (an upper bound). Traffic
	// counts cover the whole run; lateness and timing CPU the measurement window.
	for _, lk := range ls.links {
		t := lk.Totals()
		l.RoundTrips += t.RoundTrips
		l.BytesUp += t.BytesUp
		l.BytesDown += t.BytesDown
	}
	for _, st := range ls.window {
		l.CPUSeconds += st.TimingCPU.Seconds()
		l.LatenessUp = worse(l.LatenessUp, st.LatenessUp)
		l.LatenessDown = worse(l.LatenessDown, st.LatenessDown)
	}
	return l
}

// worse merges a link's lateness into a run's: counts add, each percentile is the larger.
func worse(acc *results.Lateness, s latency.Summary) *results.Lateness {
	if s.N == 0 {
		return acc
	}
	l := &results.Lateness{N: int64(s.N), Mean: s.Mean, P50: s.P50, P90: s.P90, P99: s.P99, P999: s.P999, Max: s.Max}
	if acc == nil {
		return l
	}
	return &results.Lateness{N: acc.N + l.N, Mean: results.MeanOf(acc.Mean, acc.N, l.Mean, l.N),
		P50: max(acc.P50, l.P50), P90: max(acc.P90, l.P90), P99: max(acc.P99, l.P99),
		P999: max(acc.P999, l.P999), Max: max(acc.Max, l.Max)}
}

// calibrate measures the RTT the configured link adds, briefly: 200 samples, or as many
// as fit in half a second at the RTT but at least 20, through the link and then directly
// (at 20 ms, 25 each: 1.4 s with the warm-ups, where 100 each took 4.4 s of every run).
// Its median is the figure kept; how late the link released data during the run itself
// is recorded separately, from every chunk.
func (ls *linkSet) calibrate(ctx context.Context) (*latency.Calibration, error) {
	if ls.cfg == nil {
		return nil, nil
	}
	samples := 200
	if rtt := ls.cfg.AddedRTT(); rtt > 0 {
		samples = max(20, min(200, int(calibrationBudget/rtt)))
	}
	return latency.Calibrate(ctx, *ls.cfg, latency.CalibrateOptions{Samples: samples, MaxDuration: 5 * time.Second, Inline: true})
}

// calibrationBudget is the time calibrate gives each path's samples.
const calibrationBudget = 500 * time.Millisecond

// close stops every link.
func (ls *linkSet) close() {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	for k, l := range ls.links {
		_ = l.Close()
		delete(ls.links, k)
	}
}
