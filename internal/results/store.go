package results

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// ErrNotFound is wrapped by the errors of Get, AddSamples and Finish when no run has the
// given id.
var ErrNotFound = errors.New("run not found")

// ErrSchemaTooNew is wrapped by Open's error when the database was written by a newer
// dblat whose schema this build does not know. The database is left untouched.
var ErrSchemaTooNew = errors.New("results schema newer than this dblat")

// busyTimeout is how long a statement waits for another connection or process holding the
// write lock before failing with "database is locked".
const busyTimeout = 10 * time.Second

// pathHint ends Open's errors: the one thing the user can do about most of them.
const pathHint = "choose another path with --results"

// Store is an open results database.
//
// A Store is safe for concurrent use by multiple goroutines, and several processes may
// open the same file: SQLite serialises writers (each write is one transaction), readers
// are never blocked by a writer (WAL mode). Every method blocks until its statements are
// done, waiting up to 10 s for a write lock held elsewhere, or until ctx ends.
type Store struct {
	db   *sql.DB
	path string // absolute
	host string // os.Hostname at Open, to recognise runs begun on this host
}

// Open opens the results database at path, creating it and its parent directories if
// needed, upgrading its schema if it is older than this build, and marking aborted the runs
// whose dblat process on this host has died (see MarkAbandoned).
//
// Open never discards stored data. It refuses, with a one-line error naming the path and
// what to do, a path that cannot be created or written, a file that is not a dblat results
// database, and a database from a newer dblat (wrapping ErrSchemaTooNew). Close the Store
// when done.
func Open(ctx context.Context, path string) (*Store, error) {
	if path == "" {
		return nil, fmt.Errorf("results database: no path given (choose one with --results)")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("results database %s: %w (%s)", path, err, pathHint)
	}
	if err := precreate(abs); err != nil {
		return nil, err
	}

	// SQLite URI: the path is escaped so that '?', '#' and '%' in it are literal. The
	// underscore parameters are the driver's; SQLite ignores them. _txlock=immediate makes
	// write transactions take the write lock at BEGIN, so they wait (busy_timeout) instead
	// of failing when two writers race; read-only transactions stay deferred.
	u := url.URL{Scheme: "file", Path: abs}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	// NORMAL in WAL mode cannot corrupt the file; a power cut may lose the last commits
	// but a process crash loses nothing, and the benchmark is spared an fsync per sample.
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", u.String()+"?"+q.Encode())
	if err != nil {
		return nil, openError(abs, err)
	}
	s := &Store{db: db, path: abs}
	s.host, _ = os.Hostname()

	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, openError(abs, err)
	}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	// WAL is a property of the file, set once it is known to be ours: readers never block
	// the writer, and the writer never blocks readers.
	if _, err := db.ExecContext(ctx, "PRAGMA journal_mode = WAL"); err != nil {
		db.Close()
		return nil, openError(abs, err)
	}
	if _, err := s.MarkAbandoned(ctx); err != nil {
		db.Close()
		return nil, openError(abs, err)
	}
	return s, nil
}

// precreate makes sure the file can be created and written before SQLite tries, because
// SQLite's own message for that ("unable to open database file") does not say why.
func precreate(abs string) error {
	fail := func(what string, err error) error {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the errno: "permission denied", "not a directory", ...
		}
		return fmt.Errorf("results database %s: %s: %w (%s)", abs, what, err, pathHint)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return fail("cannot create", err)
	}
	_, statErr := os.Stat(abs)
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		if statErr == nil {
			return fail("cannot open for writing", err)
		}
		return fail("cannot create", err)
	}
	return f.Close()
}

// openError turns a SQLite error met while opening into one line naming the path and
// what to do about it.
func openError(abs string, err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_NOTADB:
			return fmt.Errorf("results database %s: not a SQLite database (%s)", abs, pathHint)
		case sqlite3.SQLITE_CORRUPT:
			return fmt.Errorf("results database %s: database file is corrupt (%s)", abs, pathHint)
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return fmt.Errorf("results database %s: locked by another process for more than %s (try again, or %s)", abs, busyTimeout, pathHint)
		case sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM:
			return fmt.Errorf("results database %s: cannot write: %v (check the permissions of the file and its directory, or %s)", abs, err, pathHint)
		}
	}
	return fmt.Errorf("results database %s: %w (%s)", abs, err, pathHint)
}

// migrate brings the schema up to len(migrations) in one transaction, or leaves the
// database untouched and fails.
func (s *Store) migrate(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE: one migrator at a time
	if err != nil {
		return openError(s.path, err)
	}
	defer tx.Rollback()

	var version, appID, objects int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return openError(s.path, err)
	}
	if err := tx.QueryRowContext(ctx, "PRAGMA application_id").Scan(&appID); err != nil {
		return openError(s.path, err)
	}
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&objects); err != nil {
		return openError(s.path, err)
	}
	foreign := appID != applicationID && (appID != 0 || version != 0 || objects != 0)
	if foreign {
		return fmt.Errorf("results database %s: not a dblat results database (it belongs to another program; %s)", s.path, pathHint)
	}
	if version > len(migrations) {
		return fmt.Errorf("results database %s: %w (schema version %d, this dblat knows up to %d; upgrade dblat or %s)",
			s.path, ErrSchemaTooNew, version, len(migrations), pathHint)
	}
	if version == len(migrations) {
		return nil
	}
	for v := version; v < len(migrations); v++ {
		if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
			return fmt.Errorf("results database %s: upgrading schema to version %d: %w", s.path, v+1, err)
		}
		// PRAGMA takes no bound parameters; v is an int.
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", v+1)); err != nil {
			return openError(s.path, err)
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id = %d", applicationID)); err != nil {
		return openError(s.path, err)
	}
	if err := tx.Commit(); err != nil {
		return openError(s.path, err)
	}
	return nil
}

// Path returns the absolute path of the database file.
func (s *Store) Path() string { return s.path }

// SchemaVersion returns the schema version this build of dblat writes.
func SchemaVersion() int { return len(migrations) }

// Close closes the database, checkpointing its write-ahead log. Calls in progress on other
// goroutines finish first; the Store is unusable afterwards.
func (s *Store) Close() error { return s.db.Close() }
