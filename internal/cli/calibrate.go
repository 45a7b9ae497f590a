package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/dblat/dblat/internal/latency"
)

// calibrateFlags are dblat calibrate's flags.
type calibrateFlags struct {
	rtts       []string
	conns      []int
	samples    int
	inline     bool
	failOnMiss bool
	format     string
	lo         linkOptions
}

func (a *app) calibrateCommand() *cobra.Command {
	var f calibrateFlags
	cmd := &cobra.Command{
		Use:   "calibrate [--rtt 0,0.1ms,0.5ms,1ms,10ms,100ms] [--conns 1,32]",
		Short: "Measure how precisely the latency link adds each RTT: requested vs achieved",
		Long: `For each requested RTT and each number of concurrent connections, ping-pongs small
messages through the link to a built-in echo server and prints the error of the added RTT
(achieved minus requested) at p50, p99 and p99.9, after subtracting the same ping-pong's
direct round trip. The targets are max(2 %, 25 µs) at p50 and max(5 %, 150 µs) at p99.
--format json prints one object per level instead, for scripts. It exits 0 whatever the
verdicts; with --fail-on-miss it exits 3 when any level misses the targets.

Like runs, it holds the CPUs out of deep idle states while it measures (see
--no-cpu-latency-hold), which is what the figures then describe.

Each connection pings once per max(RTT, conns/10,000 s): all connections together send
at most 10,000 pings a second, so that the calibration measures the link rather than a
CPU saturated by back-to-back ping-pongs.

By default it measures the link as an external client of dblat proxy sees it (through a
loopback TCP listener); --inline measures the in-process path dblat's own terminals use
(dblat run --rtt), which has no extra TCP hop.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.calibrate(cmd, &f) },
	}
	cmd.Flags().BoolVar(&f.failOnMiss, "fail-on-miss", false, "exit 3 when any level misses the accuracy target (a row that says NO; on_target false in JSON)")
	cmd.Flags().StringSliceVar(&f.rtts, "rtt", []string{"0", "0.1ms", "0.5ms", "1ms", "10ms", "100ms"}, "RTTs to calibrate, comma-separated")
	cmd.Flags().IntSliceVar(&f.conns, "conns", []int{1, 32}, "concurrent connections, comma-separated")
	cmd.Flags().BoolVar(&f.inline, "inline", false, "measure the in-process path of dblat's terminals instead of the proxy")
	cmd.Flags().IntVar(&f.samples, "samples", 0, "round trips per level (default: up to 2000, ~5 s per level)")
	cmd.Flags().StringVar(&f.format, "format", "text", "text, or json: one object per level")
	cmd.Flags().StringVar(&f.lo.distribution, "distribution", "uniform", "jitter distribution: uniform, normal or paretonormal")
	cmd.Flags().DurationVar(&f.lo.jitter, "jitter", 0, "spread of each one-way delay")
	cmd.Flags().StringVar(&f.lo.bandwidth, "bandwidth", "", "link capacity each way, e.g. 100mbit")
	return cmd
}

// levels checks the flags and returns the link's base configuration and the RTTs to
// calibrate.
func (f *calibrateFlags) levels(cmd *cobra.Command) (latency.Config, []time.Duration, error) {
	if err := f.lo.resolve(cmd); err != nil {
		return latency.Config{}, nil, err
	}
	base, err := f.lo.config()
	if err != nil {
		return latency.Config{}, nil, err
	}
	var levels []time.Duration
	for _, s := range f.rtts {
		d, err := parseRTT(s)
		if err != nil {
			return latency.Config{}, nil, err
		}
		levels = append(levels, d)
	}
	if len(levels) == 0 {
		return latency.Config{}, nil, usagef("--rtt: give at least one RTT to calibrate, e.g. --rtt 0,1ms")
	}
	if len(f.conns) == 0 {
		return latency.Config{}, nil, usagef("--conns: give at least one number of connections, e.g. --conns 1,32")
	}
	for _, c := range f.conns {
		if c < 1 {
			return latency.Config{}, nil, usagef("--conns %d: each level needs at least 1 connection", c)
		}
	}
	if cmd.Flags().Changed("samples") && f.samples < 1 {
		return latency.Config{}, nil, usagef("--samples %d: measure at least 1 round trip per level (leave it out for the default)", f.samples)
	}
	if f.format != "text" && f.format != "json" {
		return latency.Config{}, nil, usagef("--format %q: use text or json", f.format)
	}
	return base, levels, nil
}

// calibrate runs dblat calibrate: each RTT with each number of connections, a line (or a
// JSON object) per level.
func (a *app) calibrate(cmd *cobra.Command, f *calibrateFlags) error {
	base, levels, err := f.levels(cmd)
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
	// Thousands of connections do not fit in this process's open-file limit with
	// the echo server's ends: the echo server then runs in a process of its own.
	echoAddr := ""
	if need := 2*uint64(slices.Max(f.conns)) + 1000; need > openFileLimit() {
		addr, stopEcho, err := startEchoProcess()
		if err != nil {
			return fmt.Errorf("start the echo server process: %w", err)
		}
		defer stopEcho()
		echoAddr = addr
	}
	enc := json.NewEncoder(a.st.Stdout)
	if f.format == "text" {
		a.printf("%-10s %5s %8s %12s %12s %12s %12s %s\n", "rtt", "conns", "samples", "direct p50", "err p50", "err p99", "err p99.9", "on target")
	}
	missed := 0
	for _, rtt := range levels {
		for _, c := range f.conns {
			cfg := base
			cfg.RTT, cfg.Up, cfg.Down = rtt, 0, 0
			opts := latency.CalibrateOptions{Conns: c, Samples: f.samples, Inline: f.inline, EchoAddr: echoAddr}
			if opts.Samples == 0 {
				// Enough for a p99.9 at small RTTs, bounded to ~5 s per level at large ones.
				opts.Samples = max(100, min(2000, int(5*time.Second/opts.Interval(rtt))*c))
			}
			cal, err := latency.Calibrate(ctx, cfg, opts)
			if err != nil {
				return err
			}
			ok := onTarget(rtt, cal.Error)
			if !ok {
				missed++
			}
			if f.format == "json" {
				if err := enc.Encode(calibrationJSON(cal, held, ok)); err != nil {
					return err
				}
				continue
			}
			verdict := "yes"
			if !ok {
				verdict = "NO"
			}
			a.printf("%-10s %5d %8d %12s %12s %12s %12s %s\n", fmtRTT(rtt), c, cal.Error.N, us(cal.Direct.P50),
				us(cal.Error.P50), us(cal.Error.P99), us(cal.Error.P999), verdict)
		}
	}
	if missed > 0 && f.failOnMiss {
		return fmt.Errorf("%d of %d levels missed the link's accuracy target: %w", missed, len(levels)*len(f.conns), errCheckFailed)
	}
	return nil
}

func parseRTT(s string) (time.Duration, error) {
	if s == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
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

// onTarget reports whether a calibration's error meets the link's accuracy targets: p50
// within max(2 %, 25 µs) and p99 within max(5 %, 150 µs) of the requested RTT.
func onTarget(rtt time.Duration, e latency.Summary) bool {
	p50, p99 := max(rtt/50, 25*time.Microsecond), max(rtt/20, 150*time.Microsecond)
	return e.P50 <= p50 && e.P50 >= -p50 && e.P99 <= p99 && e.P99 >= -p99
}

// calibrationLevel is one level of `dblat calibrate --format json`.
type calibrationLevel struct {
	RTTNanos       int64 `json:"rtt_ns"`
	Conns          int   `json:"conns"`
	Inline         bool  `json:"inline"`
	Samples        int   `json:"samples"`
	DirectP50      int64 `json:"direct_p50_ns"`
	ErrP50         int64 `json:"err_p50_ns"`
	ErrP90         int64 `json:"err_p90_ns"`
	ErrP99         int64 `json:"err_p99_ns"`
	ErrP999        int64 `json:"err_p999_ns"`
	LateUpP50      int64 `json:"lateness_up_p50_ns"`
	LateUpP99      int64 `json:"lateness_up_p99_ns"`
	LateDownP50    int64 `json:"lateness_down_p50_ns"`
	LateDownP99    int64 `json:"lateness_down_p99_ns"`
	CPULatencyHold bool  `json:"cpu_latency_hold"`
	OnTarget       bool  `json:"on_target"`
}

func calibrationJSON(c *latency.Calibration, held, ok bool) calibrationLevel {
	return calibrationLevel{RTTNanos: int64(c.Requested), Conns: c.Options.Conns, Inline: c.Options.Inline, Samples: c.Error.N,
		DirectP50: int64(c.Direct.P50), ErrP50: int64(c.Error.P50), ErrP90: int64(c.Error.P90), ErrP99: int64(c.Error.P99),
		ErrP999: int64(c.Error.P999), LateUpP50: int64(c.LatenessUp.P50), LateUpP99: int64(c.LatenessUp.P99),
		LateDownP50: int64(c.LatenessDown.P50), LateDownP99: int64(c.LatenessDown.P99), CPULatencyHold: held, OnTarget: ok}
}

// openFileLimit is this process's open-file limit (soft, which Go raises to the hard one).
func openFileLimit() uint64 {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 1024
	}
	return lim.Cur
}

// startEchoProcess runs `dblat echo-server` as a child process and returns the address it
// listens on and the function that stops it (by its PID, which this process started).
func startEchoProcess() (string, func(), error) {
	exe, err := os.Executable()
	if err != nil {
		return "", nil, err
	}
	cmd := exec.Command(exe, "echo-server")
	cmd.Env = append(os.Environ(), "DBLAT_CLI_CHILD=1") // the test binary runs the CLI then
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return "", nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() {
		stdin.Close() // the server exits at the end of its input
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		stop()
		return "", nil, fmt.Errorf("no address from the echo server: %w", err)
	}
	return strings.TrimSpace(line), stop, nil
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
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				return err
			}
			a.printf("%s\n", ln.Addr())
			go func() {
				_, _ = io.Copy(io.Discard, os.Stdin)
				ln.Close()
			}()
			latency.ServeEcho(ln)
			return nil
		},
	}
}
