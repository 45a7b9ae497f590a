package cli

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/dblat/dblat/internal/latency"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/runner"
)

// linkOptions are the flags that put a latency link between the terminals and the server.
type linkOptions struct {
	rtt, up, down, jitter time.Duration
	distribution          string
	bandwidth             string
	direct                bool
	delayConnect          bool
	// rttSet is true when --rtt (or another link flag) was given: even --rtt 0 goes through
	// the link then, so that its overhead is part of what is measured.
	rttSet bool
}

func (o *linkOptions) add(cmd *cobra.Command) {
	f := cmd.Flags()
	f.DurationVar(&o.rtt, "rtt", 0, "round-trip time to add between terminals and server (split half each way); --rtt 0 still goes through the link")
	f.DurationVar(&o.up, "up", 0, "one-way delay client→server (overrides the --rtt split)")
	f.DurationVar(&o.down, "down", 0, "one-way delay server→client (overrides the --rtt split)")
	f.DurationVar(&o.jitter, "jitter", 0, "spread of each one-way delay (see --distribution)")
	f.StringVar(&o.distribution, "distribution", "uniform", "jitter distribution: uniform, normal or paretonormal")
	f.StringVar(&o.bandwidth, "bandwidth", "", `link capacity each way, e.g. 100mbit or 1gbit (default unlimited)`)
	f.BoolVar(&o.direct, "direct", false, "connect straight to the server, with no link (the default when no link flag is given)")
	f.BoolVar(&o.delayConnect, "delay-connect", true, "connection set-up costs one RTT, as on a real network")
}

// resolve records which flags were given; call it in RunE.
func (o *linkOptions) resolve(cmd *cobra.Command) error {
	for _, name := range []string{"rtt", "up", "down", "jitter", "bandwidth"} {
		if cmd.Flags().Changed(name) {
			o.rttSet = true
		}
	}
	if o.direct && o.rttSet {
		return usagef("--direct bypasses the link: drop it, or drop --rtt/--up/--down/--jitter/--bandwidth")
	}
	_, err := o.config()
	return err
}

func (o *linkOptions) enabled() bool { return o.rttSet && !o.direct }

// config turns the flags into a link configuration.
func (o *linkOptions) config() (latency.Config, error) {
	for name, d := range map[string]time.Duration{"--rtt": o.rtt, "--up": o.up, "--down": o.down, "--jitter": o.jitter} {
		if d < 0 {
			return latency.Config{}, usagef("%s must not be negative, got %v", name, d)
		}
	}
	dist, err := latency.ParseDistribution(o.distribution)
	if err != nil {
		return latency.Config{}, usageError{fmt.Errorf("--distribution: %w", err)}
	}
	cfg := latency.Config{RTT: o.rtt, Up: o.up, Down: o.down, Jitter: o.jitter, Distribution: dist, DelayConnect: o.delayConnect}
	if o.bandwidth != "" {
		bw, err := latency.ParseBandwidth(o.bandwidth)
		if err != nil {
			return latency.Config{}, usageError{fmt.Errorf("--bandwidth: %w", err)}
		}
		cfg.BandwidthUp, cfg.BandwidthDown = bw, bw
	}
	if err := cfg.Validate(); err != nil {
		return latency.Config{}, usageError{err}
	}
	return cfg, nil
}

// linkSet is the dialer of a run: it meters every connection the runner opens and, when a
// link is configured, sends TCP connections through a latency link started on first use
// for each upstream address. Safe for concurrent use.
type linkSet struct {
	cfg     *latency.Config // nil: no link
	mu      sync.Mutex
	links   map[string]*latency.Link
	closeCh chan struct{}
}

func newLinkSet(o *linkOptions) (*linkSet, error) {
	ls := &linkSet{links: map[string]*latency.Link{}}
	if o.enabled() {
		cfg, err := o.config()
		if err != nil {
			return nil, err
		}
		ls.cfg = &cfg
	}
	return ls, nil
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
	return runner.Metered(ctx, c), nil
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
		BandwidthDown: c.BandwidthDown, DelayConnect: c.DelayConnect}
	if c.Jitter > 0 {
		l.Distribution = c.Distribution.String()
	}
	if cal != nil {
		l.AchievedP50, l.AchievedP99, l.Samples = cal.Added.P50, cal.Added.P99, cal.Added.N
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	for _, lk := range ls.links {
		t := lk.Totals()
		l.RoundTrips += t.RoundTrips
		l.BytesUp += t.BytesUp
		l.BytesDown += t.BytesDown
	}
	return l
}

// calibrate measures the RTT the configured link adds, briefly: at most ~2 s or 200 samples.
func (ls *linkSet) calibrate(ctx context.Context) (*latency.Calibration, error) {
	if ls.cfg == nil {
		return nil, nil
	}
	samples := 200
	if rtt := ls.cfg.AddedRTT(); rtt > 0 {
		samples = max(20, min(200, int(2*time.Second/rtt)))
	}
	return latency.Calibrate(ctx, *ls.cfg, latency.CalibrateOptions{Samples: samples, MaxDuration: 5 * time.Second, Inline: true})
}

// close stops every link.
func (ls *linkSet) close() {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	for k, l := range ls.links {
		_ = l.Close()
		delete(ls.links, k)
	}
}
