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
	// started and lasted time the window; peak is the most bytes each way the links
	// delivered in one results.PeakInterval of it (Link.Carried), per second; stopPeak ends
	// its sampling.
	started  time.Time
	lasted   time.Duration
	peak     [2]float64
	stopPeak func()
}

// windowStart records the links' state when the measurement window starts, and starts
// sampling their traffic for its peak.
func (ls *linkSet) windowStart() {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.marks = map[*latency.Link]latency.Mark{}
	for _, l := range ls.links {
		ls.marks[l] = l.Mark()
	}
	ls.started, ls.peak = time.Now(), [2]float64{}
	if ls.cfg != nil {
		ls.stopPeak = ls.samplePeak()
	}
}

// samplePeak reads the links' traffic every results.PeakInterval until the returned
// function is called, keeping the most each direction carried in one interval.
func (ls *linkSet) samplePeak() func() {
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		tick := time.NewTicker(results.PeakInterval)
		defer tick.Stop()
		last, at := ls.carried(), time.Now()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				t, now := ls.carried(), time.Now()
				// Per second of the interval as it lasted: a late tick is not a burst.
				secs := now.Sub(at).Seconds()
				ls.mu.Lock()
				for i := range t {
					ls.peak[i] = max(ls.peak[i], float64(t[i]-last[i])/secs)
				}
				ls.mu.Unlock()
				last, at = t, now
			}
		}
	}()
	return func() {
		close(done)
		<-exited
	}
}

// carried is what every link has delivered so far, up and down (Link.Carried).
func (ls *linkSet) carried() [2]int64 {
	ls.mu.Lock()
	links := make([]*latency.Link, 0, len(ls.links))
	for _, l := range ls.links {
		links = append(links, l)
	}
	ls.mu.Unlock()
	var t [2]int64
	for _, l := range links {
		u, d := l.Carried()
		t[0], t[1] = t[0]+u, t[1]+d
	}
	return t
}

// windowEnd records the links' statistics over the window.
func (ls *linkSet) windowEnd() {
	ls.mu.Lock()
	stop := ls.stopPeak
	ls.stopPeak = nil
	ls.mu.Unlock()
	if stop != nil {
		stop()
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.lasted = time.Since(ls.started)
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
		BandwidthDown: c.BandwidthDown, DelayConnect: c.DelayConnect, Loss: c.Loss}
	if c.Jitter > 0 {
		l.Distribution = c.Distribution.String()
	}
	if c.Loss > 0 {
		l.RTO = c.RTO()
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
	if ls.window != nil {
		l.Achieved = ls.achieved(up, down)
	}
	return l
}

// achieved is what the links did over the window, each way; up and down are the delays
// asked for. Called with mu held, after windowEnd.
func (ls *linkSet) achieved(up, down time.Duration) *results.LinkAchieved {
	a := &results.LinkAchieved{Window: ls.lasted}
	jitter := func(s latency.DelaySummary) time.Duration {
		if ls.cfg.Jitter == 0 {
			return 0
		}
		return time.Duration(float64(s.SD) / ls.cfg.Distribution.Unit())
	}
	for _, st := range ls.window {
		a.Up = addWay(a.Up, st.DelayUp, jitter(st.SpreadUp), st.LossUp, st.Totals.BytesUp)
		a.Down = addWay(a.Down, st.DelayDown, jitter(st.SpreadDown), st.LossDown, st.Totals.BytesDown)
	}
	for i, w := range []*results.LinkWay{&a.Up, &a.Down} {
		if !w.Delay.Measured {
			// A delay alone: every chunk got it (each released chunk has a lateness).
			d := []time.Duration{up, down}[i]
			n := ls.lateness(i)
			w.Delay = results.Delay{N: n, Mean: d, P50: d, P99: d, Max: d}
		}
		if secs := ls.lasted.Seconds(); secs > 0 {
			w.MeanRate = float64(w.Bytes) / secs
		}
		w.PeakRate = ls.peak[i]
	}
	return a
}

// lateness returns how many chunks the links released late or on time in direction i (0
// up, 1 down) over the window.
func (ls *linkSet) lateness(i int) int64 {
	var n int64
	for _, st := range ls.window {
		s := st.LatenessUp
		if i == 1 {
			s = st.LatenessDown
		}
		n += int64(s.N)
	}
	return n
}

// addWay adds one link's window to a direction's figures: its delays, the jitter they
// achieved (from those no loss delayed), its losses and bytes (a run has one link per
// upstream address, nearly always one: with several, counts add up and each quantile, the
// spread and the jitter are the worst).
func addWay(w results.LinkWay, d latency.DelaySummary, jitter time.Duration, loss latency.LossCounts, bytes int64) results.LinkWay {
	w.Bytes += bytes
	w.Jitter = max(w.Jitter, jitter)
	w.Sent, w.Lost, w.LossChunks, w.LossAdded = w.Sent+loss.Sent, w.Lost+loss.Lost, w.LossChunks+loss.Chunks, w.LossAdded+loss.Added
	if d.N == 0 {
		return w
	}
	n := int64(d.N)
	w.Delay = results.Delay{Measured: true, N: w.Delay.N + n, Mean: results.MeanOf(w.Delay.Mean, w.Delay.N, d.Mean, n),
		SD: max(w.Delay.SD, d.SD), P50: max(w.Delay.P50, d.P50), P99: max(w.Delay.P99, d.P99), Max: max(w.Delay.Max, d.Max)}
	return w
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
