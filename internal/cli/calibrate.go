package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/spf13/cobra"

	"github.com/dblat/dblat/internal/latency"
	"github.com/dblat/dblat/internal/option"
	"github.com/dblat/dblat/internal/spec"
)

// calibrateFlags are dblat calibrate's flags.
type calibrateFlags struct {
	rtts       []string
	conns      []int
	samples    int
	bulk       int64
	inline     bool
	failOnMiss bool
	format     string
	link       spec.Params
	lo         linkOptions
}

// defaultCalibrateRTTs are the RTTs dblat calibrate measures unless told otherwise.
var defaultCalibrateRTTs = []string{"0", "0.1ms", "0.5ms", "1ms", "10ms", "100ms"}

func (a *app) calibrateCommand() *cobra.Command {
	var f calibrateFlags
	cmd := &cobra.Command{
		Use:   "calibrate [--rtt 0,0.1ms,0.5ms,1ms,10ms,100ms] [--conns 1,32] [--jitter D --distribution S] [--bandwidth B] [--loss P] [--profile NAME]",
		Short: "Measure how precisely the latency link adds each RTT, and what its shape achieves: requested vs achieved",
		Long: `For each requested RTT and each number of concurrent connections, ping-pongs small
messages through the link to a built-in echo server and prints the error of the added RTT
(achieved minus requested) at p50, p99 and p99.9, after subtracting the same ping-pong's
direct round trip. The targets are max(2 %, 25 µs) at p50 and max(5 %, 150 µs) at p99.
--format json prints one object per level instead, for scripts. It exits 0 whatever the
verdicts; with --fail-on-miss it exits 3 when any level misses the targets.

The link's other fields calibrate its shape, with the same flags as dblat run and dblat
proxy. Each level then also checks, on a line of its own: the median added RTT against
the one the shape makes (jitter moves it where its distribution is skewed; bandwidth adds
each ping's serialisation); the jitter each direction achieved (the standard deviation of
the delays the link applied, read as a jitter of its distribution) within 10 %; with
--loss, the segments lost within their binomial 99.99 % bounds and each loss costing one
retransmission timeout (RTT + 200 ms at least, as Linux's TCP waits); with --bandwidth, a
bulk transfer each way (--bulk bytes, two seconds' worth by default) within 5 % of the
rate. --profile calibrates a named network (its RTT unless --rtt is given).

Like runs, it holds the CPUs out of deep idle states while it measures (see
--no-cpu-latency-hold), which is what the figures then describe.

Each connection pings once per max(RTT, conns/10,000 s): all connections together send
at most 10,000 pings a second, so that the calibration measures the link rather than a
CPU saturated by back-to-back ping-pongs.

By default it measures the link as an external client of dblat proxy sees it (through a
loopback TCP listener); --inline measures the in-process path dblat's own terminals use
(dblat run --rtt), which has no extra TCP hop.`,
		Example: `  dblat calibrate --rtt 0.1ms,1ms --conns 1,32
  dblat calibrate --rtt 1ms --jitter 500us --distribution normal --inline
  dblat calibrate --rtt 1ms --bandwidth 100mbit --conns 1
  dblat calibrate --rtt 1ms --loss 2% --conns 4
  dblat calibrate --profile cross-az`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.calibrate(cmd, &f) },
	}
	rtt, _ := spec.Lookup("rtt")
	cmd.Flags().BoolVar(&f.failOnMiss, "fail-on-miss", false, "exit 3 when any level misses the accuracy target (a row that says NO; on_target false in JSON)")
	cmd.Flags().StringSliceVar(&f.rtts, "rtt", defaultCalibrateRTTs, rtt.Usage+"; several, comma-separated, are calibrated one after another")
	cmd.Flags().IntSliceVar(&f.conns, "conns", []int{1, 32}, "concurrent connections, comma-separated")
	cmd.Flags().BoolVar(&f.inline, "inline", false, "measure the in-process path of dblat's terminals instead of the proxy")
	cmd.Flags().IntVar(&f.samples, "samples", 0, "round trips per level (default: up to 2000, ~5 s per level; with jitter at least 4000)")
	cmd.Flags().Int64Var(&f.bulk, "bulk", 0, "bytes of the bulk transfer each way that calibrates a --bandwidth (default: two seconds' worth, 64 KiB to 256 MiB)")
	cmd.Flags().StringVar(&f.format, "format", "text", "text, or json: one object per level")
	f.link = spec.Defaults()
	f.lo.add(cmd, &f.link, "rtt")
	_ = cmd.Flags().MarkHidden("direct")
	return cmd
}

// levels checks the flags and returns the levels to calibrate: each RTT with each number
// of connections, the rest of the link's shape the same for all.
func (f *calibrateFlags) levels(cmd *cobra.Command) ([]latency.SweepLevel, error) {
	if err := f.lo.resolve(cmd); err != nil {
		return nil, err
	}
	split := f.lo.changed["up"] || f.lo.changed["down"]
	var rtts []time.Duration
	switch {
	case split && cmd.Flags().Changed("rtt"):
		return nil, usagef("--rtt lists RTTs split evenly, --up and --down give one split otherwise: give one or the other")
	case split:
		rtts = []time.Duration{f.link.Up + f.link.Down}
	case f.link.Profile != "" && !cmd.Flags().Changed("rtt"):
		rtts = []time.Duration{f.link.RTT}
	default:
		for _, s := range f.rtts {
			d, err := parseRTT(s)
			if err != nil {
				return nil, err
			}
			rtts = append(rtts, d)
		}
	}
	if len(rtts) == 0 {
		return nil, usagef("--rtt: give at least one RTT to calibrate, e.g. --rtt 0,1ms")
	}
	if len(f.conns) == 0 {
		return nil, usagef("--conns: give at least one number of connections, e.g. --conns 1,32")
	}
	for _, c := range f.conns {
		if c < 1 {
			return nil, usagef("--conns %d: each level needs at least 1 connection", c)
		}
	}
	if cmd.Flags().Changed("samples") && f.samples < 1 {
		return nil, usagef("--samples %d: measure at least 1 round trip per level (leave it out for the default)", f.samples)
	}
	if cmd.Flags().Changed("bulk") && f.bulk < 1 {
		return nil, usagef("--bulk %d: move at least 1 byte (leave it out for two seconds' worth)", f.bulk)
	}
	if f.format != "text" && f.format != "json" {
		return nil, usagef("--format %q: use text or json", f.format)
	}
	var out []latency.SweepLevel
	for _, rtt := range rtts {
		if !split {
			f.link.RTT = rtt
		}
		cfg, err := f.lo.config()
		if err != nil {
			return nil, err
		}
		for _, c := range f.conns {
			out = append(out, latency.SweepLevel{Config: cfg, Conns: c})
		}
	}
	return out, nil
}

// calibrate runs dblat calibrate (latency.Sweep): each RTT with each number of
// connections, a line (or a JSON object) per level, and a line per check of the link's
// shape.
func (a *app) calibrate(cmd *cobra.Command, f *calibrateFlags) error {
	levels, err := f.levels(cmd)
	if err != nil {
		return err
	}
	ctx, stop := a.interruptCancels(cmd.Context(), "stopping the calibration")
	defer stop()
	held := false
	if !a.noCPUHold {
		if h, err := latency.HoldCPULatency(); err == nil {
			defer h.Release()
			held = true
		} else {
			a.info("note: CPUs not held out of deep idle states (%v)", err)
		}
	}
	enc := json.NewEncoder(a.st.Stdout)
	if f.format == "text" {
		a.printf("%-10s %5s %8s %12s %12s %12s %12s %s\n", "rtt", "conns", "samples", "direct p50", "err p50", "err p99", "err p99.9", "on target")
	}
	res, err := latency.Sweep(ctx, latency.SweepOptions{Levels: levels, Samples: f.samples, Bulk: f.bulk, Inline: f.inline,
		EchoProcess: a.echoProcess,
		Level: func(cal *latency.ShapeCalibration, ok bool) error {
			if f.format == "json" {
				return enc.Encode(calibrationJSON(cal, held, ok))
			}
			a.printCalibration(cal, ok)
			return nil
		}})
	if err != nil {
		return err
	}
	if res.Missed > 0 && f.failOnMiss {
		return fmt.Errorf("%d of %d levels missed the link's accuracy target: %w", res.Missed, res.Levels, errCheckFailed)
	}
	return nil
}

// printCalibration prints a level's line and, for a link with a shape, a line per check.
func (a *app) printCalibration(cal *latency.ShapeCalibration, ok bool) {
	cfg := cal.Config
	a.printf("%-10s %5d %8d %12s %12s %12s %12s %s\n", fmtRTT(cal.Requested), cal.Options.Conns, cal.Error.N, us(cal.Direct.P50),
		us(cal.Error.P50), us(cal.Error.P99), us(cal.Error.P999), yesNo(ok))
	if cfg.Jitter > 0 || cfg.Loss > 0 || cfg.BandwidthUp > 0 || cfg.BandwidthDown > 0 || cfg.Up != cfg.Down {
		a.printf("           %s\n", cfg)
		for _, c := range cal.Checks {
			a.printf("           %-15s want %-22s got %-28s target %-26s %s\n", c.Name, c.Want, c.Got, c.Target, yesNo(c.OK))
		}
	}
}

// yesNo is a verdict's column: "yes", or "NO" to stand out.
func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "NO"
}

func parseRTT(s string) (time.Duration, error) {
	d, err := option.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, usagef("--rtt %q: write a duration such as 0.5ms or 10ms", s)
	}
	return d, nil
}

func fmtRTT(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	return d.String()
}

func us(d time.Duration) string { return fmt.Sprintf("%+.1fµs", float64(d)/1e3) }

// calibrationResult is one level of ` + "`dblat calibrate --format json`" + `.
type calibrationResult struct {
	RTTNanos       int64               `json:"rtt_ns"`
	Conns          int                 `json:"conns"`
	Inline         bool                `json:"inline"`
	Samples        int                 `json:"samples"`
	DirectP50      int64               `json:"direct_p50_ns"`
	ErrP50         int64               `json:"err_p50_ns"`
	ErrP90         int64               `json:"err_p90_ns"`
	ErrP99         int64               `json:"err_p99_ns"`
	ErrP999        int64               `json:"err_p999_ns"`
	LateUpP50      int64               `json:"lateness_up_p50_ns"`
	LateUpP99      int64               `json:"lateness_up_p99_ns"`
	LateDownP50    int64               `json:"lateness_down_p50_ns"`
	LateDownP99    int64               `json:"lateness_down_p99_ns"`
	CPULatencyHold bool                `json:"cpu_latency_hold"`
	OnTarget       bool                `json:"on_target"`
	Link           string              `json:"link"`
	MedianNanos    int64               `json:"median_added_ns"`
	JitterUpNanos  int64               `json:"jitter_up_ns,omitempty"`
	JitterDnNanos  int64               `json:"jitter_down_ns,omitempty"`
	LossUp         latency.LossCounts  `json:"loss_up"`
	LossDown       latency.LossCounts  `json:"loss_down"`
	LossCostNanos  int64               `json:"loss_cost_ns,omitempty"`
	Throughput     *latency.Throughput `json:"throughput,omitempty"`
	Checks         []latency.Check     `json:"checks"`
}

func calibrationJSON(c *latency.ShapeCalibration, held, ok bool) calibrationResult {
	r := calibrationResult{RTTNanos: int64(c.Requested), Conns: c.Options.Conns, Inline: c.Options.Inline, Samples: c.Error.N,
		DirectP50: int64(c.Direct.P50), ErrP50: int64(c.Error.P50), ErrP90: int64(c.Error.P90), ErrP99: int64(c.Error.P99),
		ErrP999: int64(c.Error.P999), LateUpP50: int64(c.LatenessUp.P50), LateUpP99: int64(c.LatenessUp.P99),
		LateDownP50: int64(c.LatenessDown.P50), LateDownP99: int64(c.LatenessDown.P99), CPULatencyHold: held, OnTarget: ok,
		Link: c.Config.String(), MedianNanos: int64(c.Median), LossUp: c.LossUp, LossDown: c.LossDown,
		LossCostNanos: int64(c.LossCost), Throughput: c.Throughput, Checks: c.Checks}
	if c.Config.Jitter > 0 {
		r.JitterUpNanos, r.JitterDnNanos = int64(c.JitterOf(c.SpreadUp)), int64(c.JitterOf(c.SpreadDown))
	}
	return r
}

// echoProcess is the command of the echo server that latency.Sweep starts in a process
// of its own for thousands of connections: this executable's echo-server.
func (a *app) echoProcess() (*exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, "echo-server")
	cmd.Env = append(os.Environ(), "DBLAT_CLI_CHILD=1") // the test binary runs the CLI then
	cmd.Stderr = a.st.Stderr
	return cmd, nil
}

// echoServerCommand is the hidden upstream of `dblat calibrate` for thousands of
// connections: it echoes on a loopback port, prints the address, and exits when its
// standard input ends (its parent closed it, or died).
func (a *app) echoServerCommand() *cobra.Command {
	return &cobra.Command{
		Use:    "echo-server",
		Short:  "Echo every byte on a loopback port (used by dblat calibrate)",
		Hidden: true,
		Args:   noArgs,
		RunE: func(*cobra.Command, []string) error {
			return latency.ServeEchoProcess(os.Stdin, a.st.Stdout)
		},
	}
}
