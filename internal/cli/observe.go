package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/latency"
	"github.com/dblat/dblat/internal/observe"
	"github.com/dblat/dblat/internal/replay"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/wire"
	"github.com/dblat/dblat/internal/words"
)

// proxyObserve holds dblat proxy's observation flags.
type proxyObserve struct {
	observe, record, engine string
	// capture is where a recording for dblat replay goes (--capture).
	capture string
	noStore bool
	// storeAlways stores the observation without a file too (dblat observe: observing is
	// what the command is for; the proxy observes only when asked for a file).
	storeAlways bool
}

// proxyObserveHelp is what dblat proxy's help says of its observation flags.
const proxyObserveHelp = `--observe FILE follows the database protocol of every connection (PostgreSQL, MariaDB/MySQL,
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

--capture FILE writes, as they go, every connection's whole conversation (the client's
messages and the server's answers, with their times) as a recording for dblat replay
--recording FILE. Like --record, it HOLDS THE APPLICATION'S DATA as sent and answered: it is
created readable by its owner only.

--record FILE also writes, at the same moments, the captured transactions as a script
workload (pgbench's script language) that replays the application: dblat run script -f FILE.
It WRITES LITERAL AND PARAMETER VALUES as the application sent them, which may be sensitive
(personal data, credentials in SQL): keep the file where such data may be kept.`

func (po *proxyObserve) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&po.observe, "observe", "", "follow the database protocol and write the transactions' shapes and costs to this JSON file (on SIGUSR1 and at stop; never values)")
	cmd.Flags().StringVar(&po.record, "record", "", "also write the transactions as a replayable script to this file, WITH their literal and parameter values (may be sensitive)")
	cmd.Flags().StringVar(&po.capture, "capture", "", "write every connection's conversation, WITH the application's data, as a recording for dblat replay --recording FILE")
	cmd.Flags().StringVar(&po.engine, "engine", "", "the engine whose protocol the clients speak ("+strings.Join(engine.Names(), ", ")+"; default: told from each connection's first bytes)")
	cmd.Flags().BoolVar(&po.noStore, "no-store", false, "with --observe: do not store the observation in the results store at stop")
}

func (po proxyObserve) enabled() bool { return po.observe != "" || po.record != "" || po.capture != "" }

// observeSession returns the observation session the flags ask for, of the connections
// to upstream through a link of cfg, or nil when they ask for none.
func (a *app) observeSession(po proxyObserve, upstream string, cfg latency.Config) (*observe.Session, error) {
	if !po.enabled() {
		switch {
		case po.engine != "":
			return nil, usagef("--engine %s: it names the protocol to follow; give --observe FILE (or --record FILE) too", po.engine)
		case po.noStore:
			return nil, usagef("--no-store: nothing is stored without --observe FILE")
		}
		return nil, nil
	}
	up, down := cfg.OneWay()
	sc, err := a.observeConfig(po, "--observe", "a connection is forwarded and counted but not followed")
	if err != nil {
		return nil, err
	}
	sc.Upstream, sc.Up, sc.Down = upstream, up, down
	sc.Host = true // the proxy runs on the machine whose load the times include
	tape, err := a.createTape(po.capture, replay.Header{Source: observe.SourceProxy, Upstream: upstream, Engine: po.engine})
	if err != nil {
		return nil, err
	}
	if tape != nil {
		sc.Tape = tape
	}
	s := observe.NewSession(*sc)
	if tape != nil {
		a.tapes.Store(s, tape)
	}
	return s, nil
}

// createTape creates the recording --capture asks for (nil when path is ""), and says that
// it holds the application's data.
func (a *app) createTape(path string, h replay.Header) (*replay.Tape, error) {
	if path == "" {
		return nil, nil
	}
	h.Started = time.Now()
	t, err := replay.CreateFile(path, h)
	if err != nil {
		return nil, usagef("--capture %s: %v", path, err)
	}
	a.info("recording every conversation WITH the application's data (statements, values, answers: they may be sensitive) to %s, for dblat replay --recording", path)
	return t, nil
}

// flushTape writes out what the session's recording holds so far; closeTape ends it.
func (a *app) flushTape(s *observe.Session) error {
	if t, ok := a.tapes.Load(s); ok {
		if err := t.(*replay.Tape).Flush(); err != nil {
			return fmt.Errorf("--capture: %w", err)
		}
	}
	return nil
}

func (a *app) closeTape(s *observe.Session) error {
	if t, ok := a.tapes.LoadAndDelete(s); ok {
		if err := t.(*replay.Tape).Close(); err != nil {
			return fmt.Errorf("--capture: %w", err)
		}
	}
	return nil
}

// observeConfig checks the observation flags (outFlag names the flag of po.observe) and
// returns the session configuration they describe, without its upstream; unfollowed says
// how a line about a connection that is not followed starts.
func (a *app) observeConfig(po proxyObserve, outFlag, unfollowed string) (*observe.SessionConfig, error) {
	for _, f := range []struct{ flag, path string }{{outFlag, po.observe}, {"--record", po.record}, {"--capture", po.capture}} {
		if f.path == "" {
			continue
		}
		if fi, err := os.Stat(filepath.Dir(f.path)); err != nil || !fi.IsDir() {
			return nil, usagef("%s %s: its directory %s does not exist", f.flag, f.path, filepath.Dir(f.path))
		}
	}
	if po.observe != "" && po.observe == po.record {
		return nil, usagef("%s and --record name the same file %s: give each its own", outFlag, po.observe)
	}
	if po.capture != "" && (po.capture == po.observe || po.capture == po.record) {
		return nil, usagef("--capture %s names the same file as another flag: give each its own", po.capture)
	}
	protocols, err := wireProtocols(po.engine)
	if err != nil {
		return nil, err
	}
	return &observe.SessionConfig{File: po.observe, Script: po.record,
		Config: observe.Config{Protocols: protocols, Engine: po.engine,
			OnNote: func(note string, cannotFollow bool) {
				if cannotFollow {
					a.info("%s: %s", unfollowed, note)
					return
				}
				a.info("note: %s", note)
			}}}, nil
}

// wireProtocols returns the protocols --engine names: that engine's, or every engine's
// (each connection's first bytes tell) when it is "".
func wireProtocols(name string) ([]wire.Protocol, error) {
	if name == "" {
		return engine.WireProtocols(), nil
	}
	e, err := engine.Lookup(name)
	if err != nil {
		return nil, usagef("--engine %q: use one of %s", name, strings.Join(engine.Names(), ", "))
	}
	wp := engine.Caps(e).WireProtocol
	if wp == nil {
		return nil, usagef("--engine %s: dblat cannot follow its protocol; leave --engine out to count bytes and round trips only", name)
	}
	return []wire.Protocol{wp.WireProtocol()}, nil
}

// proxyObserving says what the proxy observes and where it writes it.
func (a *app) proxyObserving(po proxyObserve) {
	what := "PostgreSQL, MariaDB/MySQL and Firebird, told apart by each connection's first bytes"
	if po.engine != "" {
		what = "the " + po.engine + " protocol"
	}
	if po.observe != "" {
		a.info("observing transactions (%s); their shapes and costs go to %s on SIGUSR1 and at stop, without values", what, po.observe)
	}
	if po.record != "" {
		a.info("recording the statements WITH their literal and parameter values (they may be sensitive) to %s, a script for dblat run script -f", po.record)
	}
}

// printSnapshot says what a snapshot of the session wrote, and returns its error with the
// flag of the file it could not write.
func (a *app) printSnapshot(snap *observe.Snapshot, err error) error {
	if snap != nil {
		o := snap.Observation
		if snap.File != "" {
			a.info("wrote %s of %s to %s", words.Count(int(o.Transactions), "transaction"), words.Count(len(o.Shapes), "shape"), snap.File)
		}
		if snap.NotRecorded != nil {
			a.info("--record: %v", snap.NotRecorded)
		}
		if snap.Script != "" {
			a.info("recorded %s as a script (with their values) to %s", words.Count(snap.Shapes, "shape"), snap.Script)
		}
	}
	var we *observe.WriteError
	if errors.As(err, &we) {
		flag := "--observe"
		if we.Recording {
			flag = "--record"
		}
		return fmt.Errorf("%s: %w", flag, we.Err)
	}
	return err
}

// stopObserving stops the session (which closes the link first, so that every
// connection's last transactions are counted), prints the observation and stores it.
func (a *app) stopObserving(ctx context.Context, sess *observe.Session, po proxyObserve) error {
	snap, err := sess.Stop()
	if err := a.closeTape(sess); err != nil {
		return err
	}
	if po.capture != "" {
		a.info("recorded every conversation (with the application's data) for dblat replay --recording")
	}
	if err := a.printSnapshot(snap, err); err != nil {
		return err
	}
	o := snap.Observation
	if err := o.WriteText(a.st.Stdout); err != nil {
		return err
	}
	if po.observe == "" && !po.storeAlways || po.noStore {
		return nil
	}
	if o.Transactions == 0 {
		a.info("no transaction was observed: nothing stored")
		return nil
	}
	core, store, closeStore, err := a.core(ctx)
	if err != nil {
		return err
	}
	defer closeStore()
	r, err := core.StoreObserved(ctx, o)
	if err != nil {
		return err
	}
	a.info("stored as run %d in %s: dblat predict --observed %d --rtt 20ms; dblat report %d", r.ID, store.Location(), r.ID, r.ID)
	return nil
}

// printObservation prints what `results show` adds for an observed application: its
// shapes' statements, and its predicted throughput and response time at a few RTTs.
func printObservation(w io.Writer, r *results.Run) error {
	o, err := observe.FromRun(r)
	if err != nil {
		return err
	}
	how := fmt.Sprintf("at %s added RTT", fmtRTT(time.Duration(o.RTTNs)))
	if o.Network != nil {
		how = fmt.Sprintf("with a network RTT of %s already in its times", fmtRTT(time.Duration(o.Network.RTTNs).Round(time.Microsecond)))
	}
	fmt.Fprintf(w, "observed through %s (%s, %.1f clients on average, %s); shapes:\n", observe.RunSourceOf(o.Source).SeenBy, o.Protocol, o.Clients, how)
	for i, s := range o.Shapes {
		if i == 20 {
			fmt.Fprintf(w, "  … and %d more\n", len(o.Shapes)-i)
			break
		}
		fmt.Fprintf(w, "  #%d  %s\n", i+1, s.Shape)
		if s.Serial != nil {
			fmt.Fprintf(w, "       one at a time from round trip %d to the end (%d round trips held): a lock all of them take\n",
				s.Serial.FromRoundTrip, s.Serial.RoundTripsHeld)
		}
	}
	if o.Transactions == 0 {
		return nil
	}
	rtts := []time.Duration{time.Millisecond, 5 * time.Millisecond, 20 * time.Millisecond}
	curve, err := observe.Curve(o, rtts, 0)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "predicted with %s (dblat predict --observed %d --rtt D for more):", words.Count(o.ClientsDefault(), "client"), r.ID)
	for _, p := range curve {
		fmt.Fprintf(w, "  %s: %.1f TPS, %.2f ms;", fmtRTT(time.Duration(p.RTTNs)), p.TPS, p.LatencyMs)
	}
	fmt.Fprintln(w)
	return nil
}
