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

// busyTimeout is how long a statement waits for another connection or process holding the
// write lock before failing with "database is locked".
const busyTimeout = 10 * time.Second

// openSQLite opens the SQLite store at path (see Open), creating it and its parent
// directories if needed.
func openSQLite(ctx context.Context, path string) (*sqlStore, error) {
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
	s := newSQLStore(db, sqliteDialect, abs)

	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, openError(abs, err)
	}
	if err := s.migrateSQLite(ctx); err != nil {
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
func (s *sqlStore) migrateSQLite(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE: one migrator at a time
	if err != nil {
		return openError(s.loc, err)
	}
	defer tx.Rollback()

	var version, appID, objects int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return openError(s.loc, err)
	}
	if err := tx.QueryRowContext(ctx, "PRAGMA application_id").Scan(&appID); err != nil {
		return openError(s.loc, err)
	}
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&objects); err != nil {
		return openError(s.loc, err)
	}
	foreign := appID != applicationID && (appID != 0 || version != 0 || objects != 0)
	if foreign {
		return fmt.Errorf("results database %s: not a dblat results database (it belongs to another program; %s)", s.loc, pathHint)
	}
	if version > SchemaVersion() {
		return fmt.Errorf("results database %s: %w (schema version %d, this dblat knows up to %d; upgrade dblat or %s)",
			s.loc, ErrSchemaTooNew, version, SchemaVersion(), pathHint)
	}
	if version == SchemaVersion() {
		return nil
	}
	for _, st := range sqliteSteps[version:] {
		if err := st.apply(ctx, tx); err != nil {
			return fmt.Errorf("results database %s: upgrading schema to version %d: %w", s.loc, st.version, err)
		}
		// PRAGMA takes no bound parameters; the version is an int.
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", st.version)); err != nil {
			return openError(s.loc, err)
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id = %d", applicationID)); err != nil {
		return openError(s.loc, err)
	}
	if err := tx.Commit(); err != nil {
		return openError(s.loc, err)
	}
	return nil
}
