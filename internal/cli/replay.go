package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/dblat/dblat/internal/capture"
	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/execution"
	"github.com/dblat/dblat/internal/latency"
	"github.com/dblat/dblat/internal/observe"
	"github.com/dblat/dblat/internal/replay"
	"github.com/dblat/dblat/internal/spec"
	"github.com/dblat/dblat/internal/words"
)

// replayFlags are dblat replay's flags.
type replayFlags struct {
	pcap, recording, target, out, order string
	servers                             []string
	ports                               []uint
	speed, thinkScale                   float64
	fast, restore, noStore, autoCorrect bool
	stall                               time.Duration
	link                                spec.Params
	lo                                  linkOptions
}

func (a *app) replayCommand() *cobra.Command {
	var f replayFlags
	cmd := &cobra.Command{
		Use:   "replay --pcap FILE | --recording FILE --target TARGET [--rtt D] [-o FILE]",
		Short: "Replay an application's sessions as they ran, against a restored copy, through any link",
		Long: `Replays what an application did, session by session, against a database: every connection
of the capture (--pcap, as tcpdump writes it; or --recording, as dblat proxy --capture and
dblat observe --capture write it) becomes a session, opened when it was opened, that resends
the client's own messages in order, with their values, each once the target has answered
what the captured server had answered when the client sent it, and after the client's pause:
so the target sees the application's statements, round trips, timing and concurrency.
--speed F divides every time (2: twice as fast), --think-scale F multiplies the pauses within
sessions, --fast leaves them out. A pause after an answer that took longer than the captured
server's answer (beyond the RTT the link adds) is shortened by the difference, as Oracle
Database Replay's think-time auto-correct does (--think-auto-correct=false keeps it whole):
the captured pause already holds the application's own wake-up for the answer. Pauses
shorter than a millisecond inside a transaction are carried to its end, so that a session
keeps them in sum without holding the transaction's locks longer. --order commits has each transaction wait until the commits
that preceded it in the capture have been replayed.

The link between the sessions and the target is dblat run's (--rtt, --up, --down, --jitter,
--distribution, --bandwidth, --loss, --profile): a replay at --rtt 5ms measures what a
database 5 ms farther costs the application, beside what dblat predict models.

The replay ASSUMES THE TARGET HOLDS WHAT THE CAPTURED SERVER HELD WHEN THE CAPTURE STARTED:
restore it first, or give --restore to restore a managed server's pristine copy (dblat load
keeps one). Where the target answers otherwise (rows returned or affected, an error), the
statement diverges: the divergences are counted per statement, listed, and written; a target
that was not restored gives divergences, not a failure. Each session authenticates as the
target's DSN says (the capture's own authentication cannot be replayed), with the other
start-up parameters the application asked for.

Sessions are replayed at the wire level: PostgreSQL (simple and extended protocol, cancel
requests with the target's keys), MariaDB/MySQL (server-side prepared statements with the
target's statement ids; the target's user needs mysql_native_password) and Firebird (an
attachment made by the driver with Srp, then the application's operations; the handles are
the target's own, and one that differs from the capture's is said). Each part not replayed
(TLS, a session followed from its middle, another protocol) is said in one line.

At the end it prints the replay against the capture per shape (round trips, server time,
response time, throughput) and the divergences, writes -o FILE (JSON: transactions,
divergences, duration_s, latency_ms_mean, per shape the observation's fields beside the
capture's), and stores the replay as a run of workload "observed" (unless --no-store), for
dblat report and results diff: two replays (RTT 0 and 5 ms, two server versions) compare
there.`,
		Example: `  tcpdump -i lo -w app.pcap port 5432          # while the application runs
  dblat replay --pcap app.pcap --target pg1 --restore --rtt 0 -o replay0.json
  dblat replay --pcap app.pcap --target pg1 --restore --rtt 5ms -o replay5.json
  dblat proxy --upstream 127.0.0.1:5432 --listen 127.0.0.1:6543 --rtt 0 --capture app.rec
  dblat replay --recording app.rec --target 'postgres://app@db2:5432/app' --fast`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.replay(cmd, &f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.pcap, "pcap", "", "replay the database connections of this capture file (pcap or pcapng)")
	fl.StringVar(&f.recording, "recording", "", "replay this recording (dblat proxy --capture, dblat observe --capture)")
	fl.StringVar(&f.target, "target", "", "managed server name or DSN to replay against (required)")
	fl.StringSliceVar(&f.servers, "server", nil, "with --pcap: HOST:PORT of the captured server (repeatable; default: any address on --port)")
	fl.UintSliceVar(&f.ports, "port", nil, "with --pcap: the captured server's TCP port (repeatable; default 5432, 3306, 3050)")
	fl.Float64Var(&f.speed, "speed", 1, "divide every time of the capture by F (2: twice as fast)")
	fl.Float64Var(&f.thinkScale, "think-scale", 1, "multiply the pauses within sessions by F")
	fl.BoolVar(&f.autoCorrect, "think-auto-correct", true, "shorten the pause after an answer that took longer than the captured server's (beyond the link's RTT) by the difference")
	fl.BoolVar(&f.fast, "fast", false, "no pauses within sessions: each message as soon as what it waited for has come")
	fl.StringVar(&f.order, "order", "none", "commits: a transaction waits until the commits before it in the capture are replayed; none")
	fl.BoolVar(&f.restore, "restore", false, "restore the managed target's pristine copy before replaying")
	fl.DurationVar(&f.stall, "stall-timeout", time.Minute, "a session waiting this long for an answer the captured server gave stops, and says so")
	fl.StringVarP(&f.out, "output", "o", "", "write the result to this JSON file (statements normalised: no value)")
	fl.BoolVar(&f.noStore, "no-store", false, "do not store the replay in the results store")
	f.link = spec.Defaults()
	f.lo.add(cmd, &f.link)
	return cmd
}

// check checks the flags that need nothing else.
func (f *replayFlags) check() error {
	switch {
	case f.pcap == "" && f.recording == "":
		return usagef("give --pcap FILE (a packet capture) or --recording FILE (dblat proxy --capture's)")
	case f.pcap != "" && f.recording != "":
		return usagef("--pcap and --recording: give one")
	case f.target == "":
		return usagef("--target is required: a managed server's name (see `dblat server list`) or a DSN such as postgres://user@host:5432/db")
	case f.speed <= 0:
		return usagef("--speed %g: give a positive factor (1: as captured)", f.speed)
	case f.thinkScale <= 0:
		return usagef("--think-scale %g: give a positive factor (1: as captured; --fast for no pauses)", f.thinkScale)
	case f.order != "none" && f.order != "commits":
		return usagef("--order %q: use commits or none", f.order)
	case f.stall <= 0:
		return usagef("--stall-timeout %s: give a positive time", f.stall)
	case f.recording != "" && (len(f.servers) > 0 || len(f.ports) > 0):
		return usagef("--server and --port pick a capture's servers: they go with --pcap")
	}
	if f.out != "" {
		if fi, err := os.Stat(filepath.Dir(f.out)); err != nil || !fi.IsDir() {
			return usagef("-o %s: its directory %s does not exist", f.out, filepath.Dir(f.out))
		}
	}
	return nil
}

// replay runs dblat replay.
func (a *app) replay(cmd *cobra.Command, f *replayFlags) error {
	if err := f.check(); err != nil {
		return err
	}
	if err := f.lo.resolve(cmd); err != nil {
		return err
	}
	var link *latency.Config
	if f.lo.enabled() {
		cfg, err := f.lo.config()
		if err != nil {
			return err
		}
		link = &cfg
	}
	ctx, stop := a.interruptCancels(cmd.Context(), "stopping the replay")
	defer stop()
	core, store, closeStore, err := a.core(ctx)
	if err != nil {
		return err
	}
	defer closeStore()
	target, err := core.Resolve(f.target)
	if err != nil {
		return err
	}
	rec, err := a.replayInput(ctx, f)
	if err != nil {
		return err
	}
	if err := a.restoreTarget(ctx, f, target); err != nil {
		return err
	}
	dial, up, down, closeLink := replayDialer(link)
	defer closeLink()
	if link != nil {
		defer a.holdCPUForLink(*link)()
	}
	how := "at the capture's pace"
	switch {
	case f.fast:
		how = "as fast as the target answers (--fast)"
	case f.speed != 1 || f.thinkScale != 1:
		how = fmt.Sprintf("at speed %g, pauses × %g", f.speed, f.thinkScale)
	}
	via := "directly"
	if link != nil {
		via = "through a link adding " + link.String()
	}
	a.info("replaying %s of %s against %s %s, %s; it assumes %s holds what the captured server held when the capture started",
		words.Count(len(rec.Conns), "connection"), recordingName(f), target.Label, via, how, target.Label)
	res, err := replay.Run(ctx, replay.Config{Recording: rec, Protocols: engine.WireProtocols(), DSN: target.DSN, Dial: dial,
		Up: up, Down: down, Target: target.Label, Speed: f.speed, ThinkScale: f.thinkScale, Fast: f.fast, AutoCorrect: f.autoCorrect,
		OrderCommits: f.order == "commits", StallTimeout: f.stall,
		OnNote: func(s string) { a.info("%s", s) }})
	if err != nil {
		if errors.Is(err, replay.ErrEmpty) {
			return usageError{fmt.Errorf("%s: %w", recordingName(f), err)}
		}
		return err
	}
	if ctx.Err() != nil {
		a.info("stopped: what was replayed so far follows")
	}
	a.printReplay(res)
	if f.out != "" {
		b, err := res.JSON()
		if err != nil {
			return err
		}
		if err := observe.WriteWhole(f.out, b, 0o644); err != nil {
			return fmt.Errorf("-o: %w", err)
		}
		a.info("wrote the replay's result to %s", f.out)
	}
	if f.noStore || res.Replay.Transactions == 0 {
		return nil
	}
	o := res.Replay
	o.Engine = target.Engine.Name()
	if doc, err := res.Stored(); err == nil {
		o.Replay = doc
	}
	r, err := core.StoreObserved(context.WithoutCancel(ctx), o)
	if err != nil {
		return err
	}
	a.info("stored as run %d in %s: dblat report %d; dblat results diff RUN %d", r.ID, store.Location(), r.ID, r.ID)
	return nil
}

// recordingName names the replay's input in messages.
func recordingName(f *replayFlags) string {
	if f.pcap != "" {
		return f.pcap
	}
	return f.recording
}

// replayInput reads the recording to replay: the file, or the capture followed into one.
func (a *app) replayInput(ctx context.Context, f *replayFlags) (*replay.Recording, error) {
	if f.recording != "" {
		rec, err := replay.ReadFile(f.recording)
		if err != nil {
			return nil, usageError{err}
		}
		return rec, nil
	}
	var cfg capture.Config
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
	rec, err := replay.ReadPcap(ctx, f.pcap, cfg, engine.WireProtocols())
	var se *replay.ServersError
	switch {
	case errors.As(err, &se) && len(se.Servers) == 0:
		return nil, usagef("--pcap %v (give --server HOST:PORT or --port N)", err)
	case errors.As(err, &se):
		return nil, usagef("--pcap %v: pick one with --server HOST:PORT", err)
	case err != nil:
		return nil, usageError{err}
	}
	return rec, nil
}

// restoreTarget restores the managed target's pristine copy when --restore asks.
func (a *app) restoreTarget(ctx context.Context, f *replayFlags, t *execution.Target) error {
	if !f.restore {
		return nil
	}
	rs := engine.Caps(t.Engine).Restorer
	switch {
	case t.Server == nil:
		return usagef("--restore: %s is not a managed server; restore it yourself, then replay without --restore", t.Label)
	case rs == nil || !rs.CanRestore(true):
		return usagef("--restore: dblat cannot restore %s databases; restore it yourself, then replay without --restore", t.Engine.Name())
	}
	has, err := rs.HasPristine(ctx, t.DSN)
	if err != nil {
		return err
	}
	if !has {
		return usagef("--restore: %s has no pristine copy (dblat load saves one); restore it yourself, then replay without --restore", t.Label)
	}
	start := time.Now()
	if err := rs.RestorePristine(ctx, t.DSN); err != nil {
		return fmt.Errorf("--restore: %w", err)
	}
	a.info("restored %s's pristine copy in %s", t.Label, time.Since(start).Round(time.Millisecond))
	return nil
}

// replayDialer returns how the sessions connect: through a link of cfg (one per server
// address, in process: Link.Dial), or directly when cfg is nil; and the link's one-way
// delays, and what closes the links.
func replayDialer(cfg *latency.Config) (func(context.Context, string, string) (net.Conn, error), time.Duration, time.Duration, func()) {
	if cfg == nil {
		var d net.Dialer
		return d.DialContext, 0, 0, func() {}
	}
	up, down := cfg.OneWay()
	var (
		mu    sync.Mutex
		links = map[string]*latency.Link{}
	)
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		mu.Lock()
		l, ok := links[addr]
		if !ok {
			var err error
			l, err = latency.Listen(context.Background(), "127.0.0.1:0", addr, *cfg)
			if err != nil {
				mu.Unlock()
				return nil, err
			}
			links[addr] = l
		}
		mu.Unlock()
		return l.Dial(ctx)
	}
	return dial, up, down, func() {
		mu.Lock()
		defer mu.Unlock()
		for _, l := range links {
			l.Close()
		}
	}
}

// printReplay prints a replay's result: the capture against the replay per shape, the
// divergences per statement, and the summary.
func (a *app) printReplay(res *replay.Result) {
	w := a.st.Stdout
	fmt.Fprintf(w, "%-4s %-46s %15s %15s %17s %17s %15s\n", "", "shape", "transactions", "round trips", "server ms", "response ms", "TPS")
	fmt.Fprintf(w, "%-4s %-46s %15s %15s %17s %17s %15s\n", "", "", "capture replay", "capture replay", "capture  replay", "capture  replay", "capture replay")
	for i, s := range res.Shapes {
		if i == 20 {
			fmt.Fprintf(w, "… and %d more shapes (-o FILE has them all)\n", len(res.Shapes)-i)
			break
		}
		c := s.Capture
		if c == nil {
			c = &replay.ShapeFigures{}
		}
		fmt.Fprintf(w, "#%-3d %-46s %7d %7d %7.2f %7.2f %8.3f %8.3f %8.3f %8.3f %7.1f %7.1f\n", i+1, clipRunes(s.Shape.Shape, 46),
			c.Count, s.Count, c.RoundTripsMean, s.RoundTripsMean, c.ServerMsMean, s.ServerMsMean, c.LatencyMsMean, s.LatencyMsMean, c.TPS, s.TPS)
	}
	if res.Divergences > 0 {
		fmt.Fprintf(w, "\n%s (the target answered otherwise than the captured server):\n", words.Count(int(res.Divergences), "divergence"))
		for i, d := range res.DivergedStatements {
			if i == 10 {
				fmt.Fprintf(w, "  … and %d more statements (-o FILE lists them)\n", len(res.DivergedStatements)-i)
				break
			}
			fmt.Fprintf(w, "  %6d × %s\n           e.g. session %d request %d: captured %s, replayed %s\n", d.Count, clipRunes(d.Statement, 90),
				d.Example.Session, d.Example.Request, d.Example.Captured, d.Example.Replayed)
		}
	}
	fmt.Fprintf(w, "\n%s\n", res.Summary())
}

// clipRunes shortens s to n characters.
func clipRunes(s string, n int) string {
	r := []rune(strings.Join(strings.Fields(s), " "))
	if len(r) <= n {
		return string(r)
	}
	return string(r[:n-1]) + "…"
}
