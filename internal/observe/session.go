package observe

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/dblat/dblat/internal/latency"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/signals"
)

// SessionConfig says what a Session follows and which files it writes.
type SessionConfig struct {
	// Config is what the Session's Observer follows and how it reports. Upstream, Up and
	// Down describe where the bytes were seen: the server's address and the one-way delays
	// the source added (a proxy's link; 0 for a source that adds none). Record is set when
	// Script is.
	Config
	// File, when not "", is where each snapshot writes its Observation as JSON
	// (Observation.WriteFile; `dblat proxy --observe FILE`).
	File string
	// Script, when not "", is where each snapshot writes the recorded transactions as a
	// script (Recorder.Script; `dblat proxy --record FILE`), readable by its owner only:
	// it holds the application's literal and parameter values.
	Script string
	// Host, when set, samples the machine's signals from the start (package signals), so
	// that each snapshot says what the host was doing meanwhile (Observation.Host): for a
	// source that sees the connections live on this machine.
	Host bool
}

// Session is one observation of an application's connections, from its start to its stop,
// whatever shows it the bytes. It owns the Observer that follows the connections (a
// wire.Tracker each, with the protocols of its Config) and the files it writes; sources
// feed it: Listen attaches the latency link (`dblat proxy`), and any other source of a
// connection's chunks (a packet capture) shows them to Observer and is attached so that
// Stop closes it. Snapshot takes what was seen so far and writes the files (`dblat proxy`
// does on SIGUSR1); Stop closes the sources, so that every connection ends and its last
// transactions are counted, and takes the last snapshot.
//
// A Session prints nothing and stores nothing: each snapshot is handed back for the caller
// to print, and to store as a run (package execution, Core.StoreObserved). All its methods
// are safe for concurrent use; snapshots are taken one at a time.
type Session struct {
	cfg     SessionConfig
	obs     *Observer
	sampler *signals.Sampler // nil unless cfg.Host

	mu      sync.Mutex // serialises snapshots and Stop; guards what follows
	sources []io.Closer
	stopped bool
}

// Snapshot is what one snapshot of a Session gave: the observation so far, and the files
// written from it.
type Snapshot struct {
	// Observation is what the Observer had seen (Observer.Snapshot).
	Observation *Observation
	// File is where Observation was written; "" when the Session writes no file.
	File string
	// Script is where the recording was written and Shapes how many shapes it replays;
	// "" and 0 when none was written.
	Script string
	Shapes int
	// NotRecorded says why no recording was written though the Session records (no
	// transaction recorded yet); nil otherwise. The observation is written all the same.
	NotRecorded error
}

// WriteError is a Session's failure to write one of its files.
type WriteError struct {
	// Path is the file; Recording is true for SessionConfig.Script, false for
	// SessionConfig.File.
	Path      string
	Recording bool
	Err       error
}

func (e *WriteError) Error() string {
	what := "observation"
	if e.Recording {
		what = "recording"
	}
	return fmt.Sprintf("write the %s to %s: %v", what, e.Path, e.Err)
}

// Unwrap returns the cause.
func (e *WriteError) Unwrap() error { return e.Err }

// errStopped is the error of attaching a source to a stopped Session.
var errStopped = errors.New("observe: the session has stopped")

// NewSession returns a Session with no source yet; its observation starts now.
func NewSession(cfg SessionConfig) *Session {
	cfg.Record = cfg.Script != ""
	s := &Session{cfg: cfg, obs: New(cfg.Config)}
	if cfg.Host {
		s.sampler = signals.Start(signals.Config{})
	}
	return s
}

// Observer returns the Observer a source shows its connections to (latency.Observer: Open
// for each connection, then its chunks and its end).
func (s *Session) Observer() *Observer { return s.obs }

// Transactions returns how many transactions the Session has seen end so far: cheap, for
// progress lines.
func (s *Session) Transactions() int64 { return s.obs.Transactions() }

// Attach has Stop close src, a source that feeds Observer, before the last snapshot:
// closing it must end the connections it showed (latency.ConnObserver's Close). After Stop
// it closes src at once and returns an error.
func (s *Session) Attach(src io.Closer) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		src.Close()
		return errStopped
	}
	s.sources = append(s.sources, src)
	return nil
}

// Listen starts the latency link as a source of the Session (latency.Listen with the
// Observer attached): it listens on addr and forwards every connection to Config.Upstream
// through link's delay lines, and the Observer follows each one. link must add the one-way
// delays Config.Up and Config.Down, which the Observation reports as the RTT its times
// contain. The caller reads the link's counters as it likes and may close it; Stop closes
// it in any case. ctx bounds the start-up only, as latency.Listen's does.
func (s *Session) Listen(ctx context.Context, addr string, link latency.Config) (*latency.Link, error) {
	if up, down := link.OneWay(); up != s.cfg.Up || down != s.cfg.Down {
		return nil, fmt.Errorf("observe: the link adds %v up and %v down, the session says %v and %v", up, down, s.cfg.Up, s.cfg.Down)
	}
	l, err := latency.Listen(ctx, addr, s.cfg.Upstream, link, latency.WithObserver(s.obs))
	if err != nil {
		return nil, err
	}
	if err := s.Attach(l); err != nil {
		return nil, err
	}
	return l, nil
}

// Snapshot takes what the Session has seen so far (the transactions that ended; those open
// are not counted yet) and writes it to its files: the Observation to SessionConfig.File,
// the recording to SessionConfig.Script, each replaced whole. It returns what it wrote even
// when a write fails, with that failure as a *WriteError.
func (s *Session) Snapshot() (*Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snapshot()
}

// Stop ends the Session: it closes every source attached (the first error is returned
// after the snapshot), so that each connection ends and its last transactions are counted
// or abandoned, and then takes the last snapshot as Snapshot does. Sources cannot be
// attached after it; Snapshot still works.
func (s *Session) Stop() (*Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = true
	var closeErr error
	for _, src := range s.sources {
		if err := src.Close(); err != nil && closeErr == nil {
			closeErr = err
		}
	}
	s.sources = nil
	var sigs []results.Signal
	if s.sampler != nil {
		sigs, _ = s.sampler.Stop(time.Time{})
		s.sampler = nil
	}
	snap, err := s.snapshot()
	if sigs != nil {
		s.host(snap.Observation, sigs)
	}
	if err == nil {
		err = closeErr
	}
	return snap, err
}

// host sets o's Host and Signals from the host's signals over the observation.
func (s *Session) host(o *Observation, sigs []results.Signal) {
	o.Signals = sigs
	if load, ok := signals.LoadOf(sigs); ok {
		o.Host = &load
	}
}

// snapshot is Snapshot under s.mu.
func (s *Session) snapshot() (*Snapshot, error) {
	o := s.obs.Snapshot()
	if s.sampler != nil {
		s.host(o, s.sampler.Peek(time.Time{}))
	}
	snap := &Snapshot{Observation: o}
	if s.cfg.File != "" {
		if err := o.WriteFile(s.cfg.File); err != nil {
			return snap, &WriteError{Path: s.cfg.File, Err: err}
		}
		snap.File = s.cfg.File
	}
	if s.cfg.Script == "" {
		return snap, nil
	}
	var b bytes.Buffer
	n, err := s.obs.Recorder().Script(&b, ScriptInfo{Upstream: s.cfg.Upstream, Started: o.Started})
	if err != nil {
		snap.NotRecorded = err
		return snap, nil //nolint:nilerr // said in the snapshot: the observation is written all the same
	}
	// The recording holds the application's values: readable by its owner only.
	if err := WriteWhole(s.cfg.Script, b.Bytes(), 0o600); err != nil {
		return snap, &WriteError{Path: s.cfg.Script, Recording: true, Err: err}
	}
	snap.Script, snap.Shapes = s.cfg.Script, n
	return snap, nil
}
