package cli

import (
	"context"
	"net"
	"net/netip"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/dblat/dblat/internal/capture"
	"github.com/dblat/dblat/internal/observe"
	"github.com/dblat/dblat/internal/replay"
	"github.com/dblat/dblat/internal/words"
)

// observeFlags are dblat observe's flags.
type observeFlags struct {
	pcap, iface string
	servers     []string
	ports       []uint
	duration    time.Duration
	po          proxyObserve
}

func (a *app) observeCommand() *cobra.Command {
	f := observeFlags{po: proxyObserve{storeAlways: true}}
	cmd := &cobra.Command{
		Use:   "observe --pcap FILE | --interface IFACE [--server HOST:PORT | --port N] -o FILE",
		Short: "Observe an application's transactions from captured packets, without touching it",
		Long: `Follows the database connections in a packet capture as dblat proxy --observe follows the
connections it forwards, and writes the same observation: --pcap reads a file (pcap or pcapng,
as tcpdump -w and dumpcap write them: Ethernet, Linux cooked capture v1 and v2, loopback);
--interface captures live (Linux; root or CAP_NET_RAW) until --duration has passed or Ctrl-C,
writing a snapshot on SIGUSR1, and reports the packets the kernel dropped.

The servers are --server HOST:PORT (repeatable), or any address on --port (repeatable;
default 5432, 3306 and 3050); the side that answers a handshake is the server. Each server's
connections are one observation: -o FILE for the first server seen, FILE with the server's
address added for any other. Each connection is reassembled in both directions and followed
(PostgreSQL, MariaDB/MySQL, Firebird: --engine names one, else each connection's first bytes
tell), its transactions grouped into shapes; times come from the packets' timestamps. At the
end the observation is written (JSON, with "source": "pcap" or "interface"), printed as a
table and stored as a run of workload "observed" (unless --no-store), for dblat predict
--observed RUN, report, results show and results diff.

Where the capture was taken decides what the server time holds: the network RTT already in
the times is estimated from the TCP handshakes (SYN → SYN-ACK is the way from the capture
point to the server and back, SYN-ACK → ACK to the application and back; TCP timestamps
where no handshake was seen), printed and stored; dblat predict --rtt D adds D to it.

What a capture cannot show is counted and said in one line each: connections already open
when it started (PostgreSQL's are followed from their next ReadyForQuery outside a
transaction, MySQL's from their next OK packet outside one; Firebird's are not followed), bytes it lost (a gap: the transaction open there is
abandoned, never counted), TLS (a capture cannot decline it as the proxy does: connect
without TLS to be observed), Firebird's wire encryption. The observation never holds literal
or parameter values.

--record FILE also writes the transactions as a script (dblat run script -f FILE), which
WRITES LITERAL AND PARAMETER VALUES as the application sent them: they may be sensitive.

--capture FILE writes every connection's whole conversation (messages and answers, with
their times) as a recording for dblat replay --recording FILE (dblat replay --pcap reads the
capture itself); it HOLDS THE APPLICATION'S DATA and is created readable by its owner only.`,
		Example: `  tcpdump -i lo -w app.pcap port 5432      # as long as the application runs, then:
  dblat observe --pcap app.pcap -o app.json
  dblat predict --observed app.json --rtt 20ms
  dblat observe --interface eth0 --port 5432 --duration 60s -o app.json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.observeCapture(cmd, &f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.pcap, "pcap", "", "read this capture file (pcap or pcapng)")
	fl.StringVar(&f.iface, "interface", "", "capture live on this network interface (Linux; root or CAP_NET_RAW)")
	fl.StringSliceVar(&f.servers, "server", nil, "HOST:PORT of a database server (repeatable; default: any address on --port)")
	fl.UintSliceVar(&f.ports, "port", nil, "a database server's TCP port (repeatable; default 5432, 3306, 3050)")
	fl.DurationVar(&f.duration, "duration", 0, "with --interface: stop after this long (default: at Ctrl-C)")
	fl.StringVarP(&f.po.observe, "output", "o", "", "write the observation to this JSON file (never values)")
	fl.StringVar(&f.po.record, "record", "", "also write the transactions as a replayable script to this file, WITH their literal and parameter values (may be sensitive)")
	fl.StringVar(&f.po.capture, "capture", "", "also write every connection's conversation, WITH the application's data, as a recording for dblat replay --recording FILE")
	fl.StringVar(&f.po.engine, "engine", "", "the engine whose protocol the clients speak (default: told from each connection's first bytes)")
	fl.BoolVar(&f.po.noStore, "no-store", false, "do not store the observations in the results store")
	return cmd
}

// observeCapture runs dblat observe: a capture (a file, or live: capture.Run), one
// observation session per server, each stopped, printed and stored at the end.
func (a *app) observeCapture(cmd *cobra.Command, f *observeFlags) error {
	cfg, err := a.captureConfig(f)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	if f.po.record != "" {
		a.info("recording the statements WITH their literal and parameter values (they may be sensitive) to %s, a script for dblat run script -f", f.po.record)
	}
	res, err := a.capture(ctx, cfg)
	if err != nil {
		if cfg.File != "" {
			return usageError{err}
		}
		return err
	}
	fol := res.Follower
	all, other := fol.Packets()
	if cfg.File != "" {
		st, el := res.File, res.Elapsed
		a.info("read %s (%s, %s) in %s (%.0f MB/s)", words.Count(int(st.Packets), "packet"), st.Format, bytesSI(st.Bytes),
			el.Round(time.Millisecond), float64(st.Bytes)/1e6/max(el.Seconds(), 1e-9))
		if st.Truncated {
			a.info("the file ends inside a packet (cut short, or still being written): what came before it was read")
		}
	} else {
		a.info("captured %s (%s not of a followed connection); the kernel dropped %s", words.Count(int(all), "packet"),
			strconv.FormatInt(other, 10), words.Count(int(res.Drops), "packet"))
	}
	sessions := fol.Sessions()
	if len(sessions) == 0 {
		a.info("no TCP connection to a database server on %s among %s: nothing observed (give --server HOST:PORT or --port N)",
			fol, words.Count(int(all), "packet"))
		return nil
	}
	for i, s := range sessions {
		if i > 0 {
			a.printf("\n")
		}
		if err := a.stopObserving(ctx, s, f.po); err != nil {
			return err
		}
	}
	return nil
}

// capture runs cfg's capture, with Ctrl-C stopping a file's reading, and a live capture as
// its first Ctrl-C (the second stops at once) or SIGUSR1's snapshots ask.
func (a *app) capture(ctx context.Context, cfg *capture.RunConfig) (*capture.RunResult, error) {
	if cfg.File != "" {
		ctx, stop := a.interruptCancels(ctx, "stopping the reading")
		defer stop()
		return capture.Run(ctx, *cfg)
	}
	ctx, drain, stop := a.interrupts(ctx, "stopping the capture")
	defer stop()
	cfg.Stop, cfg.Snapshots = drain, a.st.Report
	return capture.Run(ctx, *cfg)
}

// captureConfig checks dblat observe's flags and returns the capture they describe, with
// what it says printed.
func (a *app) captureConfig(f *observeFlags) (*capture.RunConfig, error) {
	switch {
	case f.pcap == "" && f.iface == "":
		return nil, usagef("give --pcap FILE (a capture file) or --interface IFACE (a live capture)")
	case f.pcap != "" && f.iface != "":
		return nil, usagef("--pcap and --interface: give one")
	case f.duration != 0 && f.iface == "":
		return nil, usagef("--duration: only a live capture (--interface) runs for a time")
	case f.duration < 0:
		return nil, usagef("--duration %s: give a positive time", f.duration)
	}
	cfg := &capture.RunConfig{File: f.pcap, Interface: f.iface, Duration: f.duration}
	if f.iface != "" {
		if _, err := net.InterfaceByName(f.iface); err != nil {
			return nil, usagef("--interface %s: no such network interface here (ip link lists them)", f.iface)
		}
	}
	for _, s := range f.servers {
		aps, err := capture.ResolveServer(s)
		if err != nil {
			return nil, usagef("--server %s: %v", s, err)
		}
		cfg.Servers = append(cfg.Servers, aps...)
	}
	for _, p := range f.ports {
		if p == 0 || p > 65535 {
			return nil, usagef("--port %d: give a TCP port, 1 to 65535", p)
		}
		cfg.Ports = append(cfg.Ports, uint16(p))
	}
	if len(cfg.Servers) > 0 && len(cfg.Ports) > 0 {
		return nil, usagef("--server and --port: give one (--server names the port too)")
	}
	base, err := a.observeConfig(f.po, "--output", "a connection is counted but not followed")
	if err != nil {
		return nil, err
	}
	cfg.Session = *base
	if f.po.capture != "" {
		cfg.Tape = a.captureTapes(f.po, cfg.Source())
	}
	cfg.Observer = capture.Observer{
		Started: func(fol *capture.Follower) {
			if f.pcap != "" {
				a.info("reading %s, following the database connections on %s", f.pcap, fol)
			} else {
				a.info("capturing on %s, following the database connections on %s (Ctrl-C to stop)", f.iface, fol)
			}
		},
		Session: func(server netip.AddrPort, s *observe.Session, n int) {
			if t, ok := a.tapes.LoadAndDelete(server); ok {
				a.tapes.Store(s, t) // closed once the session has stopped (closeTape)
			}
			if n == 1 {
				a.info("the capture holds connections to several servers: one observation each (--server HOST:PORT picks one)")
			}
			a.info("server %s: following its connections", server)
		},
		Snapshot: a.printSnapshot,
	}
	return cfg, nil
}

// captureTapes makes the recording --capture asks for of each server's conversations: the
// first server's in the file named, any other's beside it (capture.PerServer). A recording
// that cannot be created is said, and its server observed without one.
func (a *app) captureTapes(po proxyObserve, source string) func(netip.AddrPort, int) observe.Tape {
	return func(server netip.AddrPort, n int) observe.Tape {
		path := po.capture
		if n > 0 {
			path = capture.PerServer(path, server)
		}
		t, err := a.createTape(path, replay.Header{Source: source, Upstream: server.String(), Engine: po.engine})
		if err != nil {
			a.info("%v", err)
			return nil
		}
		a.tapes.Store(server, t) // until the server's Session is made
		return t
	}
}
