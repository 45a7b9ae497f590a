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

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/latency"
)

func (a *app) proxyCommand() *cobra.Command {
	var (
		listen, upstream, backend string
		lo                        linkOptions
		every                     time.Duration
		po                        proxyObserve
	)
	cmd := &cobra.Command{
		Use:   "proxy --upstream HOST:PORT --rtt D [--listen ADDR] [--observe FILE] [--record FILE]",
		Short: "Run the latency link on its own, in front of any TCP server; observe an application's transactions",
		Long: `Listens (on loopback by default) and forwards every connection to --upstream, adding the
requested delay per direction with a pipelined delay line (delays never add up; order is
kept), optional jitter and a per-direction bandwidth limit. Prints its counters every
--print-every, on SIGUSR1 and as totals on Ctrl-C: connections, round trips, bytes each way,
and its own timing error measured on the real traffic (how late it released data, per
direction: p50, p90, p99, p99.9 and max).

--observe FILE follows the database protocol of every connection (PostgreSQL, MariaDB/MySQL,
Firebird: --engine names one, else each connection's first bytes tell) and groups what the
application sends into transactions and transactions into shapes (their statements with
literals and parameters removed). On SIGUSR1 and when it stops (Ctrl-C, SIGTERM) it writes
FILE: per shape its count, round trips, statements, bytes each way, server time, client time
and time between transactions; at stop it prints that as a table and stores the observation
in the results store as a run of workload "observed" (unless --no-store), for dblat report,
results show, results diff and dblat predict, which says what a farther database would cost
the application. FILE never holds literal or parameter values. Observe at --rtt 0 to
predict any RTT from it.

The bytes forwarded are never changed by observing, with one exception: a client that
offers TLS is told the server declines it (PostgreSQL's SSLRequest answered N; MySQL's
CLIENT_SSL cleared in the greeting), so that a client that merely prefers TLS goes on in
clear and can be followed. A client that requires TLS gives up, and the proxy says so in one
line. Traffic it cannot follow (no known protocol, TLS from the first byte, Firebird's wire
encryption: connect Firebird clients with wire_crypt=false) is forwarded and counted, with one
line saying so.

--record FILE also writes, at the same moments, the captured transactions as a script
workload (pgbench's script language) that replays the application: dblat run script -f FILE.
It WRITES LITERAL AND PARAMETER VALUES as the application sent them, which may be sensitive
(personal data, credentials in SQL): keep the file where such data may be kept.

--backend netem would use the kernel's netem qdisc on a veth pair in a private network
namespace; it is refused, in one line, on kernels without sch_netem.`,
		Example: `  dblat proxy --listen 127.0.0.1:6543 --upstream 127.0.0.1:5432 --rtt 10ms
  dblat proxy --upstream 127.0.0.1:3306 --rtt 1ms --jitter 100us --distribution normal --bandwidth 100mbit
  dblat proxy --upstream 127.0.0.1:5432 --rtt 0 --listen 127.0.0.1:6543 --observe app.json
  dblat predict --observed app.json --rtt 20ms`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if upstream == "" {
				return usagef("--upstream is required: the HOST:PORT of the server to forward to")
			}
			switch backend {
			case "proxy":
			case "netem":
				if err := latency.NetemAvailable(); err != nil {
					return usageError{err}
				}
				return usagef("--backend netem: the netem backend is not built yet; use --backend proxy")
			default:
				return usagef("--backend %q: use proxy or netem", backend)
			}
			if err := lo.resolve(cmd); err != nil {
				return err
			}
			cfg, err := lo.config()
			if err != nil {
				return err
			}
			obs, err := a.newProxyObserver(po, upstream, cfg)
			if err != nil {
				return err
			}
			var opts []latency.ListenOption
			if obs != nil {
				opts = append(opts, latency.WithObserver(obs))
			}
			ctx, drain, stop := a.interrupts(cmd.Context(), "closing the link")
			defer stop()
			link, err := latency.Listen(ctx, listen, upstream, cfg, opts...)
			if err != nil {
				return err
			}
			defer link.Close()
			a.printf("%s\n", link.Addr())
			a.info("forwarding %s -> %s, %s (Ctrl-C to stop)", link.Addr(), upstream, cfg)
			if obs != nil {
				a.proxyObserving(po)
			}
			tick := time.NewTicker(max(every, time.Second))
			defer tick.Stop()
			report := func(prefix string) {
				st := link.Stats()
				a.info("%s%s (%d open, %d failed), %s, %s up, %s down", prefix, plural(int(st.Accepted), "connection"),
					st.Active, st.Failed, plural(int(st.Totals.RoundTrips), "round trip"), bytesSI(st.Totals.BytesUp), bytesSI(st.Totals.BytesDown))
				a.info("%slateness (how late the link released data): up %s; down %s", prefix,
					latenessText(st.LatenessUp), latenessText(st.LatenessDown))
				if obs != nil {
					a.info("%s%s observed", prefix, plural(int(obs.Transactions()), "transaction"))
				}
			}
			for {
				select {
				case <-tick.C:
					if every > 0 {
						report("")
					}
				case <-a.st.Report:
					report("")
					if obs != nil {
						if _, err := a.writeObservation(obs, po, upstream); err != nil {
							return err
						}
					}
				case <-drain:
					report("total: ")
					if obs == nil {
						return nil
					}
					// Close first: every connection ends, and its last transactions are
					// counted (or abandoned) before the snapshot.
					link.Close()
					o, err := a.writeObservation(obs, po, upstream)
					if err != nil {
						return err
					}
					if err := o.WriteText(a.st.Stdout); err != nil {
						return err
					}
					return a.storeObservation(cmd.Context(), o, po)
				case <-ctx.Done():
					return nil
				}
			}
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:0", "address to listen on (loopback by default)")
	cmd.Flags().StringVar(&upstream, "upstream", "", "HOST:PORT of the server (required)")
	cmd.Flags().StringVar(&backend, "backend", "proxy", "proxy (dblat's userspace delay line) or netem (kernel qdisc, where available)")
	cmd.Flags().DurationVar(&every, "print-every", 10*time.Second, "how often to print counters (0: only at the end)")
	cmd.Flags().StringVar(&po.observe, "observe", "", "follow the database protocol and write the transactions' shapes and costs to this JSON file (on SIGUSR1 and at stop; never values)")
	cmd.Flags().StringVar(&po.record, "record", "", "also write the transactions as a replayable script to this file, WITH their literal and parameter values (may be sensitive)")
	cmd.Flags().StringVar(&po.engine, "engine", "", "the engine whose protocol the clients speak ("+strings.Join(engine.Names(), ", ")+"; default: told from each connection's first bytes)")
	cmd.Flags().BoolVar(&po.noStore, "no-store", false, "with --observe: do not store the observation in the results store at stop")
	lo.add(cmd)
	_ = cmd.Flags().MarkHidden("direct")
	return cmd
}

func (a *app) calibrateCommand() *cobra.Command {
	var (
		rtts       []string
		conns      []int
		samples    int
		inline     bool
		failOnMiss bool
		format     string
		lo         linkOptions
	)
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
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := lo.resolve(cmd); err != nil {
				return err
			}
			base, err := lo.config()
			if err != nil {
				return err
			}
			var levels []time.Duration
			for _, s := range rtts {
				d, err := parseRTT(s)
				if err != nil {
					return err
				}
				levels = append(levels, d)
			}
			if len(levels) == 0 {
				return usagef("--rtt: give at least one RTT to calibrate, e.g. --rtt 0,1ms")
			}
			if len(conns) == 0 {
				return usagef("--conns: give at least one number of connections, e.g. --conns 1,32")
			}
			for _, c := range conns {
				if c < 1 {
					return usagef("--conns %d: each level needs at least 1 connection", c)
				}
			}
			if cmd.Flags().Changed("samples") && samples < 1 {
				return usagef("--samples %d: measure at least 1 round trip per level (leave it out for the default)", samples)
			}
			if format != "text" && format != "json" {
				return usagef("--format %q: use text or json", format)
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
			if need := 2*uint64(slices.Max(conns)) + 1000; need > openFileLimit() {
				addr, stopEcho, err := startEchoProcess()
				if err != nil {
					return fmt.Errorf("start the echo server process: %w", err)
				}
				defer stopEcho()
				echoAddr = addr
			}
			enc := json.NewEncoder(a.st.Stdout)
			if format == "text" {
				a.printf("%-10s %5s %8s %12s %12s %12s %12s %s\n", "rtt", "conns", "samples", "direct p50", "err p50", "err p99", "err p99.9", "on target")
			}
			missed := 0
			for _, rtt := range levels {
				for _, c := range conns {
					cfg := base
					cfg.RTT, cfg.Up, cfg.Down = rtt, 0, 0
					opts := latency.CalibrateOptions{Conns: c, Samples: samples, Inline: inline, EchoAddr: echoAddr}
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
					if format == "json" {
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
			if missed > 0 && failOnMiss {
				return fmt.Errorf("%d of %d levels missed the link's accuracy target: %w", missed, len(levels)*len(conns), errCheckFailed)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&failOnMiss, "fail-on-miss", false, "exit 3 when any level misses the accuracy target (a row that says NO; on_target false in JSON)")
	cmd.Flags().StringSliceVar(&rtts, "rtt", []string{"0", "0.1ms", "0.5ms", "1ms", "10ms", "100ms"}, "RTTs to calibrate, comma-separated")
	cmd.Flags().IntSliceVar(&conns, "conns", []int{1, 32}, "concurrent connections, comma-separated")
	cmd.Flags().BoolVar(&inline, "inline", false, "measure the in-process path of dblat's terminals instead of the proxy")
	cmd.Flags().IntVar(&samples, "samples", 0, "round trips per level (default: up to 2000, ~5 s per level)")
	cmd.Flags().StringVar(&format, "format", "text", "text, or json: one object per level")
	cmd.Flags().StringVar(&lo.distribution, "distribution", "uniform", "jitter distribution: uniform, normal or paretonormal")
	cmd.Flags().DurationVar(&lo.jitter, "jitter", 0, "spread of each one-way delay")
	cmd.Flags().StringVar(&lo.bandwidth, "bandwidth", "", "link capacity each way, e.g. 100mbit")
	return cmd
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

// bytesSI formats a byte count.
func bytesSI(n int64) string { return si(n) + "B" }

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
