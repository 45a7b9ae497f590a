package cli

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/dblat/dblat/internal/latency"
	"github.com/dblat/dblat/internal/observe"
	"github.com/dblat/dblat/internal/spec"
	"github.com/dblat/dblat/internal/words"
)

// proxyFlags are dblat proxy's flags.
type proxyFlags struct {
	listen, upstream string
	link             spec.Params
	lo               linkOptions
	every            time.Duration
	po               proxyObserve
}

func (a *app) proxyCommand() *cobra.Command {
	var f proxyFlags
	cmd := &cobra.Command{
		Use:   "proxy --upstream HOST:PORT --rtt D [--listen ADDR] [--observe FILE] [--record FILE] [--capture FILE]",
		Short: "Run the latency link on its own, in front of any TCP server; observe an application's transactions",
		Long: `Listens (on loopback by default) and forwards every connection to --upstream, adding the
requested delay per direction with a pipelined delay line (delays never add up; order is
kept), optional jitter, a per-direction bandwidth limit and loss (each lost segment delays
its data by a retransmission timeout, as TCP does), or a named network's whole shape
(--profile): the link's flags are dblat run's. Prints its counters every
--print-every, on SIGUSR1 and as totals on Ctrl-C: connections, round trips, bytes each way,
and its own timing error measured on the real traffic (how late it released data, per
direction: p50, p90, p99, p99.9 and max).

` + proxyObserveHelp,
		Example: `  dblat proxy --listen 127.0.0.1:6543 --upstream 127.0.0.1:5432 --rtt 10ms
  dblat proxy --upstream 127.0.0.1:3306 --rtt 1ms --jitter 100us --distribution normal --bandwidth 100mbit
  dblat proxy --upstream 127.0.0.1:5432 --profile cross-region --loss 0.1%
  dblat proxy --upstream 127.0.0.1:5432 --rtt 0 --listen 127.0.0.1:6543 --observe app.json
  dblat predict --observed app.json --rtt 20ms`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.proxy(cmd, &f) },
	}
	cmd.Flags().StringVar(&f.listen, "listen", "127.0.0.1:0", "address to listen on (loopback by default)")
	cmd.Flags().StringVar(&f.upstream, "upstream", "", "HOST:PORT of the server (required)")
	cmd.Flags().DurationVar(&f.every, "print-every", 10*time.Second, "how often to print counters (0: only at the end)")
	f.po.add(cmd)
	f.link = spec.Defaults()
	f.lo.add(cmd, &f.link)
	_ = cmd.Flags().MarkHidden("direct")
	return cmd
}

// proxy runs dblat proxy until Ctrl-C: the link, with an observation session when asked
// (SIGUSR1 takes a snapshot; the first Ctrl-C stops it, prints it and stores it), and its
// counters every --print-every, on SIGUSR1 and at the end.
func (a *app) proxy(cmd *cobra.Command, f *proxyFlags) error {
	cfg, err := f.config(cmd)
	if err != nil {
		return err
	}
	sess, err := a.observeSession(f.po, f.upstream, cfg)
	if err != nil {
		return err
	}
	ctx, drain, stop := a.interrupts(cmd.Context(), "closing the link")
	defer stop()
	defer a.holdCPUForLink(cfg)()
	var link *latency.Link
	if sess != nil {
		link, err = sess.Listen(ctx, f.listen, cfg)
	} else {
		link, err = latency.Listen(ctx, f.listen, f.upstream, cfg)
	}
	if err != nil {
		return err
	}
	defer link.Close()
	a.printf("%s\n", link.Addr())
	a.info("forwarding %s -> %s, %s (Ctrl-C to stop)", link.Addr(), f.upstream, cfg)
	a.proxyObserving(f.po)
	tick := time.NewTicker(max(f.every, time.Second))
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			if f.every > 0 {
				a.proxyCounters(link, sess, "")
			}
		case <-a.st.Report:
			a.proxyCounters(link, sess, "")
			if sess != nil {
				if err := a.printSnapshot(sess.Snapshot()); err != nil {
					return err
				}
				if err := a.flushTape(sess); err != nil {
					return err
				}
			}
		case <-drain:
			a.proxyCounters(link, sess, "total: ")
			if sess == nil {
				return nil
			}
			return a.stopObserving(cmd.Context(), sess, f.po)
		case <-ctx.Done():
			return nil
		}
	}
}

// config checks the flags and returns the link's configuration.
func (f *proxyFlags) config(cmd *cobra.Command) (latency.Config, error) {
	if f.upstream == "" {
		return latency.Config{}, usagef("--upstream is required: the HOST:PORT of the server to forward to")
	}
	if err := f.lo.resolve(cmd); err != nil {
		return latency.Config{}, err
	}
	return f.lo.config()
}

// proxyCounters prints the link's counters, and the transactions observed so far.
func (a *app) proxyCounters(link *latency.Link, sess *observe.Session, prefix string) {
	st := link.Stats()
	a.info("%s%s (%d open, %d failed), %s, %s up, %s down", prefix, words.Count(int(st.Accepted), "connection"),
		st.Active, st.Failed, words.Count(int(st.Totals.RoundTrips), "round trip"), bytesSI(st.Totals.BytesUp), bytesSI(st.Totals.BytesDown))
	a.info("%slateness (how late the link released data): up %s; down %s", prefix,
		latenessText(st.LatenessUp), latenessText(st.LatenessDown))
	if sess != nil {
		a.info("%s%s observed", prefix, words.Count(int(sess.Transactions()), "transaction"))
	}
}
