package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/latency"
	"github.com/dblat/dblat/internal/observe"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/sysinfo"
	"github.com/dblat/dblat/internal/wire"
)

// proxyObserve holds dblat proxy's observation flags.
type proxyObserve struct {
	observe, record, engine string
	noStore                 bool
}

func (po proxyObserve) enabled() bool { return po.observe != "" || po.record != "" }

// newProxyObserver returns the observer the flags ask for, or nil when they ask for none.
func (a *app) newProxyObserver(po proxyObserve, upstream string, cfg latency.Config) (*observe.Observer, error) {
	if !po.enabled() {
		switch {
		case po.engine != "":
			return nil, usagef("--engine %s: it names the protocol to follow; give --observe FILE (or --record FILE) too", po.engine)
		case po.noStore:
			return nil, usagef("--no-store: nothing is stored without --observe FILE")
		}
		return nil, nil
	}
	for _, f := range []struct{ flag, path string }{{"--observe", po.observe}, {"--record", po.record}} {
		if f.path == "" {
			continue
		}
		if fi, err := os.Stat(filepath.Dir(f.path)); err != nil || !fi.IsDir() {
			return nil, usagef("%s %s: its directory %s does not exist", f.flag, f.path, filepath.Dir(f.path))
		}
	}
	if po.observe != "" && po.observe == po.record {
		return nil, usagef("--observe and --record name the same file %s: give each its own", po.observe)
	}
	var protocols []wire.Protocol
	if po.engine != "" {
		e, err := engine.Lookup(po.engine)
		if err != nil {
			return nil, usagef("--engine %q: use one of %s", po.engine, strings.Join(engine.Names(), ", "))
		}
		wp, ok := e.(engine.WireProtocol)
		if !ok {
			return nil, usagef("--engine %s: dblat cannot follow its protocol; leave --engine out to count bytes and round trips only", po.engine)
		}
		protocols = []wire.Protocol{wp.WireProtocol()}
	} else {
		protocols = engine.WireProtocols()
	}
	up, down := cfg.OneWay()
	return observe.New(observe.Config{Protocols: protocols, Engine: po.engine, Upstream: upstream, Up: up, Down: down,
		Record: po.record != "",
		OnNote: func(note string, cannotFollow bool) {
			if cannotFollow {
				a.info("a connection is forwarded and counted but not followed: %s", note)
				return
			}
			a.info("note: %s", note)
		}}), nil
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

// writeObservation takes a snapshot and writes the --observe and --record files.
func (a *app) writeObservation(obs *observe.Observer, po proxyObserve, upstream string) (*observe.Observation, error) {
	o := obs.Snapshot()
	if po.observe != "" {
		if err := o.WriteFile(po.observe); err != nil {
			return nil, fmt.Errorf("--observe: %w", err)
		}
		a.info("wrote %s of %s to %s", plural(int(o.Transactions), "transaction"), plural(len(o.Shapes), "shape"), po.observe)
	}
	if po.record != "" {
		var b bytes.Buffer
		n, err := obs.Recorder().Script(&b, observe.ScriptInfo{Upstream: upstream, Started: o.Started})
		if err != nil {
			a.info("--record: %v", err)
			return o, nil
		}
		// The recording holds the application's values: readable by its owner only.
		if err := observe.WriteWhole(po.record, b.Bytes(), 0o600); err != nil {
			return nil, fmt.Errorf("--record: %w", err)
		}
		a.info("recorded %s as a script (with their values) to %s", plural(n, "shape"), po.record)
	}
	return o, nil
}

// storeObservation stores the observation as a run of workload "observed".
func (a *app) storeObservation(ctx context.Context, o *observe.Observation, po proxyObserve) error {
	if po.observe == "" || po.noStore {
		return nil
	}
	if o.Transactions == 0 {
		a.info("no transaction was observed: nothing stored")
		return nil
	}
	r, err := o.Run(engineOfProtocol(po.engine, o.Protocol))
	if err != nil {
		return err
	}
	r.Client = sysinfo.Client()
	store, err := a.openStore(ctx)
	if err != nil {
		return err
	}
	defer store.Close()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	status := r.Status
	if _, err := store.Begin(ctx, r); err != nil {
		return err
	}
	r.Status = status
	if err := store.Finish(ctx, r); err != nil {
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
	fmt.Fprintf(w, "observed through dblat proxy (%s, %.1f clients on average, at %s added RTT); shapes:\n", o.Protocol, o.Clients, fmtRTT(time.Duration(o.RTTNs)))
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
	fmt.Fprintf(w, "predicted with %s (dblat predict --observed %d --rtt D for more):", plural(o.ClientsDefault(), "client"), r.ID)
	for _, p := range curve {
		fmt.Fprintf(w, "  %s: %.1f TPS, %.2f ms;", fmtRTT(time.Duration(p.RTTNs)), p.TPS, p.LatencyMs)
	}
	fmt.Fprintln(w)
	return nil
}

// engineOfProtocol names the engine whose wire protocol is called proto ("PostgreSQL" is
// postgres's), or given when the proxy was told the engine.
func engineOfProtocol(given, proto string) string {
	if given != "" || proto == "" {
		return given
	}
	for _, n := range engine.Names() {
		e, err := engine.Lookup(n)
		if err != nil {
			continue
		}
		if w, ok := e.(engine.WireProtocol); ok && w.WireProtocol().Name() == proto {
			return n
		}
	}
	return ""
}
