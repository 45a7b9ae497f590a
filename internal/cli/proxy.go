package cli

import (
	"fmt"
	"strings"
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

// bytesSI formats a byte count.
func bytesSI(n int64) string { return si(n) + "B" }

// latenessText writes a lateness distribution as its percentiles in microseconds.
func latenessText(s latency.Summary) string {
	if s.N == 0 {
		return "no delayed data"
	}
	us := func(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d)/1e3) }
	return fmt.Sprintf("p50 %s p90 %s p99 %s p99.9 %s max %s µs (%d chunks)", us(s.P50), us(s.P90), us(s.P99), us(s.P999), us(s.Max), s.N)
}
