package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/dblat/dblat/internal/latency"
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

// link returns the link a run goes through, or nil for a direct connection.
func (o *linkOptions) link() (*latency.Config, error) {
	if !o.enabled() {
		return nil, nil
	}
	cfg, err := o.config()
	if err != nil {
		return nil, err
	}
	return &cfg, nil
}

// latenessText writes a lateness distribution as its mean (what throughput answers to: the
// RTT a run achieved is the requested one plus the mean lateness each way) and percentiles,
// in microseconds.
func latenessText(s latency.Summary) string {
	if s.N == 0 {
		return "no delayed data"
	}
	us := func(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d)/1e3) }
	return fmt.Sprintf("mean %s p50 %s p90 %s p99 %s p99.9 %s max %s µs (%d chunks)", us(s.Mean), us(s.P50), us(s.P90), us(s.P99), us(s.P999), us(s.Max), s.N)
}

// holdCPUForLink holds the CPUs out of deep idle states while a link that delays runs, as
// runs and calibrations do (--no-cpu-latency-hold says not to), so that its releases wake
// on time; it returns the function that lets go. At RTT 0 nothing waits on a timer, and
// the application observed runs as it would without dblat.
func (a *app) holdCPUForLink(cfg latency.Config) func() {
	if a.noCPUHold || cfg.AddedRTT() == 0 {
		return func() {}
	}
	h, err := latency.HoldCPULatency()
	if err != nil {
		a.info("note: CPUs not held out of deep idle states (%v): the link's releases may be late by a CPU's wake-up", err)
		return func() {}
	}
	return h.Release
}
