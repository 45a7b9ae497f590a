package capture

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dblat/dblat/internal/observe"
)

// RunConfig is one capture from start to end (Run): where the packets come from, which
// servers' connections are followed, how each server's observation is made, and what the
// caller is told.
type RunConfig struct {
	// File is a capture file to read (ReadFile); Interface, in its place, a network
	// interface to capture on live (Live). One of them is set.
	File, Interface string
	// Duration, for a live capture, ends it after this long; 0: when Stop closes or ctx
	// ends.
	Duration time.Duration
	// Servers and Ports say which connections are followed (Config.Servers, Config.Ports).
	Servers []netip.AddrPort
	Ports   []uint16
	// Session is the observation session of each server, but for what the Follower sets
	// (Config.Session). The first server seen writes Session.File and Session.Script; any
	// other server writes files named after it beside them (PerServer), so that each server
	// is one observation. A live capture sets Host: what the machine did meanwhile
	// qualifies the times, where a file was captured some other time.
	Session observe.SessionConfig
	// Tape, when set, gives each server's session the Tape that keeps its conversations
	// whole (observe.SessionConfig.Tape), n counting the servers before it; a nil Tape
	// keeps none.
	Tape func(server netip.AddrPort, n int) observe.Tape
	// Stop, for a live capture, ends it as Duration does (the first Ctrl-C).
	Stop <-chan struct{}
	// Snapshots, for a live capture: each value received (SIGUSR1) takes a snapshot of every
	// session (observe.Session.Snapshot) and shows it to Observer.Snapshot.
	Snapshots <-chan os.Signal
	// Observer is told what happens; its nil fields are not called.
	Observer Observer
}

// Observer is what Run tells its caller, each on the goroutine that does it: Started and
// Snapshot on Run's, Session on the one that shows the packets. A capture prints nothing
// of its own; package cli prints what these say.
type Observer struct {
	// Started is called as the capture starts, with the Follower (its String describes the
	// servers it follows).
	Started func(f *Follower)
	// Session is called when a server's first packet made its Session; n counts the
	// servers before it (n ≥ 1: the capture holds several servers, this one's files named
	// after it).
	Session func(server netip.AddrPort, s *observe.Session, n int)
	// Snapshot is shown each session's snapshot, and its error, as Snapshots asks; an error
	// it returns ends the capture with that error.
	Snapshot func(snap *observe.Snapshot, err error) error
}

// Source is the observation's source: observe.SourceInterface for a live capture, else
// observe.SourcePcap.
func (c *RunConfig) Source() string {
	if c.Interface != "" {
		return observe.SourceInterface
	}
	return observe.SourcePcap
}

// RunResult is what Run read.
type RunResult struct {
	// Follower holds the Sessions, one per server, to stop, and the packet counts.
	Follower *Follower
	// File is what a capture file held (a file's capture only); Elapsed how long reading
	// it took.
	File    FileStats
	Elapsed time.Duration
	// Drops are the packets the kernel dropped (a live capture only).
	Drops int64
}

// Run captures as cfg says until the capture ends: the file's end, or ctx (a file's capture
// keeps what it read before ctx ended, and returns no error for it); for a live capture
// Duration, Stop or ctx. Every connection has then ended (Follower.Close); the sessions are
// left running for the caller to stop (observe.Session.Stop), which writes and returns each
// server's observation. A file that cannot be read, or a live capture that cannot start,
// is an error.
func Run(ctx context.Context, cfg RunConfig) (*RunResult, error) {
	switch {
	case (cfg.File == "") == (cfg.Interface == ""):
		return nil, errors.New("capture: give a file or an interface, one of them")
	case cfg.Duration < 0:
		return nil, fmt.Errorf("capture: duration %s: give a positive time", cfg.Duration)
	}
	fcfg := Config{Servers: cfg.Servers, Ports: cfg.Ports, Source: cfg.Source()}
	var mu sync.Mutex
	n := 0
	fcfg.Session = func(server netip.AddrPort) *observe.SessionConfig {
		mu.Lock()
		defer mu.Unlock()
		sc := cfg.Session
		sc.Host = cfg.Interface != ""
		if n > 0 {
			sc.File, sc.Script = PerServer(sc.File, server), PerServer(sc.Script, server)
		}
		if cfg.Tape != nil {
			sc.Tape = cfg.Tape(server, n)
		}
		n++
		return &sc
	}
	fcfg.OnSession = func(server netip.AddrPort, s *observe.Session) {
		if cfg.Observer.Session == nil {
			return
		}
		mu.Lock()
		k := n - 1
		mu.Unlock()
		cfg.Observer.Session(server, s, k)
	}
	res := &RunResult{Follower: New(fcfg)}
	if cfg.Observer.Started != nil {
		cfg.Observer.Started(res.Follower)
	}
	if cfg.File != "" {
		start := time.Now()
		st, err := ReadFile(ctx, cfg.File, res.Follower)
		res.File, res.Elapsed = st, time.Since(start)
		if err != nil && ctx.Err() == nil {
			return res, err
		}
		return res, nil
	}
	return res, runLive(ctx, &cfg, res)
}

// runLive captures on cfg.Interface until cfg.Duration, cfg.Stop or ctx, taking snapshots
// as cfg.Snapshots asks.
func runLive(ctx context.Context, cfg *RunConfig, res *RunResult) error {
	live, cancel := context.WithCancel(ctx)
	var (
		wg  sync.WaitGroup
		err error
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		res.Drops, err = Live(live, cfg.Interface, res.Follower)
		cancel()
	}()
	var timeout <-chan time.Time
	if cfg.Duration > 0 {
		t := time.NewTimer(cfg.Duration)
		defer t.Stop()
		timeout = t.C
	}
	serr := watch(live, cfg, timeout, res.Follower)
	cancel()
	wg.Wait()
	if serr != nil {
		return serr
	}
	return err
}

// watch waits for the end of a live capture (ctx, timeout, cfg.Stop), taking snapshots
// as cfg.Snapshots asks; it returns the first error of Observer.Snapshot.
func watch(ctx context.Context, cfg *RunConfig, timeout <-chan time.Time, f *Follower) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-timeout:
			return nil
		case <-cfg.Stop:
			return nil
		case <-cfg.Snapshots:
			if err := snapshots(f, cfg.Observer.Snapshot); err != nil {
				return err
			}
		}
	}
}

// snapshots shows a snapshot of each session to show.
func snapshots(f *Follower, show func(*observe.Snapshot, error) error) error {
	for _, s := range f.Sessions() {
		snap, err := s.Snapshot()
		if show == nil {
			continue
		}
		if err := show(snap, err); err != nil {
			return err
		}
	}
	return nil
}

// PerServer names a server's own file beside path: app.json → app-10.0.0.5_5432.json; ""
// stays "".
func PerServer(path string, server netip.AddrPort) string {
	if path == "" {
		return ""
	}
	ext := filepath.Ext(path)
	name := strings.NewReplacer(":", "_", "[", "", "]", "").Replace(server.String())
	return strings.TrimSuffix(path, ext) + "-" + name + ext
}

// ResolveServer reads a server's address as users write it, HOST:PORT (an IP address or a
// name, which may resolve to several addresses), into the addresses Config.Servers takes.
// Its errors read after the text: "give HOST:PORT".
func ResolveServer(s string) ([]netip.AddrPort, error) {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return []netip.AddrPort{netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())}, nil
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return nil, errors.New("give HOST:PORT")
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil || p == 0 {
		return nil, fmt.Errorf("%q is not a TCP port", port)
	}
	ips, err := net.LookupIP(host)
	if err != nil || len(ips) == 0 {
		return nil, fmt.Errorf("%s does not resolve: %v", host, err)
	}
	var out []netip.AddrPort
	for _, ip := range ips {
		if a, ok := netip.AddrFromSlice(ip); ok {
			out = append(out, netip.AddrPortFrom(a.Unmap(), uint16(p)))
		}
	}
	return out, nil
}
