package results

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"
)

// ErrNotFound is wrapped by the errors of Get, AddSamples, Finish and Study when no run or
// study has the given id or name.
var ErrNotFound = errors.New("run not found")

// ErrSchemaTooNew is wrapped by Open's error when the store was written by a newer dblat
// whose schema this build does not know. The store is left untouched.
var ErrSchemaTooNew = errors.New("results schema newer than this dblat")

// pathHint ends Open's errors: the one thing the user can do about most of them.
const pathHint = "choose another path with --results"

// Store is an open results store: a SQLite file or a PostgreSQL database, as Open chose.
//
// Every implementation Open returns is safe for concurrent use by multiple goroutines, and
// several processes (on several machines, for PostgreSQL) may write to one store at once:
// each write is one transaction, nothing is lost and no run is stored twice. Reads see one
// consistent snapshot and never block writers. Every method blocks until its statements are
// done or ctx ends.
type Store interface {
	// Begin records r as a run that has started: it inserts it with StatusRunning and sets
	// r.ID, r.Status and, when empty, r.UID (a new random UUID). If r.Started is zero it is
	// set to now; if r.Client.PID or r.Client.Hostname are unset they are set to this
	// process's, since they are how MarkAbandoned recognises a run whose process died. r.Tx
	// and r.Samples are ignored (see AddSamples and Finish). A UID already stored is an
	// error. Non-finite floats (NaN, ±Inf) are stored as 0, here and in Finish.
	Begin(ctx context.Context, r *Run) (int64, error)
	// AddSamples appends interval samples to a running run, in one transaction; they are
	// read back in the order added. It fails, storing nothing, if the run does not exist
	// (wrapping ErrNotFound) or has already ended. An empty slice is a no-op.
	AddSamples(ctx context.Context, runID int64, samples []Sample) error
	// Finish records the end of a running run in one transaction: every field of r except
	// ID, UID, Started and Samples is written (status, reason, ended, params, server,
	// client, stats, summary, disturbances, set-aside), r.Tx replaces the run's per-type
	// rows and r.Signals are added. r.Status must be
	// finished, failed or aborted; r.Ended is set to now if zero; tx types must be unique.
	// Finish fails, changing nothing, if the run does not exist (wrapping ErrNotFound) or
	// has already ended, so a run ends exactly once. Pass a context that is still live: if
	// the run ended because its context was cancelled, use a fresh one (with a timeout).
	Finish(ctx context.Context, r *Run) error
	// Get returns run id with its Tx rows and, if withSamples, its Samples in the order
	// added and its Signals by offset and name. A missing id is an error wrapping
	// ErrNotFound.
	Get(ctx context.Context, id int64, withSamples bool) (*Run, error)
	// List returns the runs matching f, newest first (by Started, then ID), each with its
	// Tx rows but without Samples. No match is an empty result, not an error.
	List(ctx context.Context, f Filter) ([]Run, error)
	// MarkAbandoned marks aborted every run still running that was begun on this host by a
	// process that no longer exists, and returns how many it marked. Runs whose process is
	// alive, whose PID is unknown, or that were begun on another host are left alone. Open
	// calls it; long-lived readers may call it again.
	MarkAbandoned(ctx context.Context) (int, error)
	// SaveStudy records st, replacing the definition stored under its name (the cells
	// already run keep their runs: cell keys, not definitions, tie runs to cells). Created
	// and Updated are set by the store, to the microsecond.
	SaveStudy(ctx context.Context, st Study) error
	// Study returns the study stored under name, or an error wrapping ErrNotFound.
	Study(ctx context.Context, name string) (*Study, error)
	// Studies lists the stored studies by name (byte order).
	Studies(ctx context.Context) ([]Study, error)
	// CellCounts returns, for each cell key of study, how many of its runs ended in each
	// status (running runs counted as StatusRunning).
	CellCounts(ctx context.Context, study string) (map[string]map[Status]int, error)

	// The methods below coordinate a run driven by several agents (`dblat agent`): the
	// store is their only channel. Agents join and heart-beat; a coordinator assigns one
	// part of a running run to each of N idle agents; each agent moves its part forward
	// (ready, running, done or failed); the coordinator announces one start time and,
	// when every part is done, finishes the run with their merge.

	// Clock returns the store's current time: PostgreSQL's clock_timestamp(), or this
	// machine's clock for a SQLite file. Coordination times are on this clock.
	Clock(ctx context.Context) (time.Time, error)
	// JoinAgent registers agent a.Name (its Hostname and PID as given) as idle, with a
	// heartbeat now; an agent already known under that name is replaced, and any part it
	// held is no longer its (the coordinator fails that part when its heartbeat stops).
	JoinAgent(ctx context.Context, a Agent) error
	// Heartbeat sets the agent's heartbeat to now; an unknown agent wraps ErrNotFound.
	Heartbeat(ctx context.Context, agent string) error
	// LeaveAgent removes the agent; unknown agents are not an error.
	LeaveAgent(ctx context.Context, agent string) error
	// Agents lists the agents by name.
	Agents(ctx context.Context) ([]Agent, error)
	// AssignParts gives parts[i] (Agent and Assignment are read) to its agent as part i of
	// the running run runID, in one transaction: each agent must be idle with a heartbeat
	// no older than stale, or nothing is assigned and the error wraps ErrAgentBusy.
	AssignParts(ctx context.Context, runID int64, parts []Part, stale time.Duration) error
	// Parts returns the parts of run runID by index (none for a run of one process).
	Parts(ctx context.Context, runID int64) ([]Part, error)
	// AgentPart returns the part the agent has to work on (assigned, ready or running), or
	// nil when it has none.
	AgentPart(ctx context.Context, agent string) (*Part, error)
	// AdvancePart moves part (p.RunID, p.Agent) forward to p.State and stores what that
	// state carries: ClockOffset (ready), Started (running), Result (done) or Reason
	// (failed). A part moves forward only, and done and failed are final: a call that
	// would not move it forward changes nothing and returns false, so an agent that retries
	// writes its part once. Done and failed free the agent for another run.
	AdvancePart(ctx context.Context, p Part) (bool, error)
	// AnnounceStart sets the start time of every part of the running run runID; every
	// part must be ready.
	AnnounceStart(ctx context.Context, runID int64, at time.Time) error

	// Location names the store for messages: the absolute path of a SQLite file, or a
	// PostgreSQL DSN with its password removed.
	Location() string
	// Close closes the store. Calls in progress on other goroutines finish first; the Store
	// is unusable afterwards.
	Close() error
}

// Open opens the results store at location, creating it if needed, upgrading its schema
// if it is older than this build, and marking aborted the runs whose dblat process on this
// host has died (see Store.MarkAbandoned).
//
// A location starting with postgres:// or postgresql://, or a libpq key=value DSN naming a
// host or dbname ("host=db dbname=results user=bench"), opens a PostgreSQL database, which
// must exist; dblat creates its tables there (see docs/results-schema.md). Anything else is
// the path of a SQLite file, created with its parent directories if missing. A location
// that looks like a URL but is neither ("postgres:db", "mysql://…") is refused rather than
// taken for a file name.
//
// Open never discards stored data. It refuses, with a one-line error naming the store and
// what to do, a location that cannot be created, written or reached, a database that is
// not a dblat results store, and a store from a newer dblat (wrapping ErrSchemaTooNew).
// Close the Store when done.
func Open(ctx context.Context, location string) (Store, error) {
	if location == "" {
		return nil, errors.New("results database: no path or URL given (choose one with --results)")
	}
	pg, err := isPostgres(location)
	if err != nil {
		return nil, err
	}
	var s *sqlStore
	if pg {
		s, err = openPostgres(ctx, location)
	} else {
		s, err = openSQLite(ctx, location)
	}
	if err != nil {
		return nil, err // not a nil *sqlStore in a non-nil Store
	}
	return s, nil
}

var (
	// urlScheme matches the start of a URL, which is never taken for a file name.
	urlScheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*://`)
	// keyValueDSN matches a libpq key=value connection string naming a host or a database.
	keyValueDSN = regexp.MustCompile(`^\s*[A-Za-z_]+\s*=`)
	dsnHostOrDB = regexp.MustCompile(`(^|\s)(host|hostaddr|dbname)\s*=`)
)

// isPostgres tells a PostgreSQL location from a SQLite path, and refuses locations that
// look like a URL of neither kind.
func isPostgres(location string) (bool, error) {
	lower := strings.ToLower(location)
	for _, scheme := range []string{"postgres", "postgresql"} {
		if strings.HasPrefix(lower, scheme+"://") {
			return true, nil
		}
		if strings.HasPrefix(lower, scheme+":") {
			return false, fmt.Errorf("results store %q: a PostgreSQL store is written postgres://user@host:port/dbname (a file whose name starts with %q needs ./ before it)",
				location, scheme+":")
		}
	}
	if m := urlScheme.FindString(location); m != "" {
		return false, fmt.Errorf("results store %q: unknown scheme %q: --results takes a SQLite file path or a postgres:// URL",
			location, strings.TrimSuffix(m, "://"))
	}
	return keyValueDSN.MatchString(location) && dsnHostOrDB.MatchString(location), nil
}

// sqlStore is the Store of both backends: the same queries through database/sql, with the
// differences in its dialect.
type sqlStore struct {
	db   *sql.DB
	d    *dialect
	loc  string // Location
	host string // os.Hostname at Open, to recognise runs begun on this host
	// runSelect reads the runs columns in the order scanRun expects.
	runSelect string
}

func newSQLStore(db *sql.DB, d *dialect, loc string) *sqlStore {
	s := &sqlStore{db: db, d: d, loc: loc, runSelect: runSelect(d)}
	s.host, _ = os.Hostname()
	return s
}

// Location returns the absolute path of a SQLite file or the DSN of a PostgreSQL database
// without its password.
func (s *sqlStore) Location() string { return s.loc }

// Close closes the database (for SQLite, checkpointing its write-ahead log).
func (s *sqlStore) Close() error { return s.db.Close() }

// apply runs the step's SQL and then its fill in tx.
func (st step) apply(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, st.sql); err != nil {
		return err
	}
	if st.fill != nil {
		return st.fill(ctx, tx)
	}
	return nil
}
