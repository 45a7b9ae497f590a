package results

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// pgConnectTimeout bounds each connection attempt when the DSN sets no connect_timeout:
// a results store that cannot be reached should fail a command in seconds, not minutes.
const pgConnectTimeout = 10 * time.Second

// pgMaxConns caps the connections one process holds to a shared store: a process writes
// one run at a time plus its samples, and many processes may share one server.
const pgMaxConns = 8

// pgMigrationLock is the advisory lock key under which Open checks and upgrades a
// PostgreSQL store's schema, so that processes opening a new store at once create it once.
const pgMigrationLock = 0x64626c74 // "dblt"

// pgHint ends PostgreSQL Open errors.
const pgHint = "check the URL and the server, or choose another store with --results"

// openPostgres opens the PostgreSQL store at dsn (see Open). The database must exist.
func openPostgres(ctx context.Context, dsn string) (*sqlStore, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		// pgx's parse errors quote the DSN with its password masked.
		return nil, fmt.Errorf("results store: %s (%s)", oneLine(err), pgHint)
	}
	loc := redactDSN(dsn, cfg)
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = pgConnectTimeout
	}
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(pgMaxConns)
	db.SetMaxIdleConns(pgMaxConns)
	s := newSQLStore(db, postgresDialect, loc)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("results store %s: cannot connect: %s (%s)", loc, pgMessage(err), pgHint)
	}
	if err := s.migratePostgres(ctx); err != nil {
		db.Close()
		return nil, err
	}
	if _, err := s.MarkAbandoned(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("results store %s: %s (%s)", loc, oneLine(err), pgHint)
	}
	return s, nil
}

// migratePostgres brings the schema up to SchemaVersion in one transaction under an
// advisory lock, or leaves the database untouched and fails. The version is the one row of
// dblat_schema; a database with a runs table but no dblat_schema belongs to something else.
func (s *sqlStore) migratePostgres(ctx context.Context) error {
	fail := func(what string, err error) error {
		return fmt.Errorf("results store %s: %s: %s (%s)", s.loc, what, pgMessage(err), pgHint)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fail("cannot start a transaction", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", pgMigrationLock); err != nil {
		return fail("waiting for another dblat's schema upgrade", err)
	}
	var schema sql.NullString
	var ours, runs bool
	if err := tx.QueryRowContext(ctx, `SELECT current_schema(),
		to_regclass('dblat_schema') IS NOT NULL, to_regclass('runs') IS NOT NULL`).
		Scan(&schema, &ours, &runs); err != nil {
		return fail("reading the schema", err)
	}
	if !schema.Valid {
		return fmt.Errorf("results store %s: no schema of the search_path exists (create one, or set search_path in the URL to one that exists)", s.loc)
	}
	version := 0
	if ours {
		if err := tx.QueryRowContext(ctx, "SELECT version FROM dblat_schema").Scan(&version); err != nil {
			return fmt.Errorf("results store %s: table dblat_schema has no version row (%v): not a dblat results store, or a damaged one (%s)", s.loc, err, pgHint)
		}
	} else if runs {
		return fmt.Errorf("results store %s: schema %s has a table runs that is not dblat's (choose another database, or a schema with search_path in the URL)", s.loc, schema.String)
	}
	if version > SchemaVersion() {
		return fmt.Errorf("results store %s: %w (schema version %d, this dblat knows up to %d; upgrade dblat or %s)",
			s.loc, ErrSchemaTooNew, version, SchemaVersion(), "choose another store with --results")
	}
	if version == SchemaVersion() {
		return nil
	}
	if !ours {
		if _, err := tx.ExecContext(ctx, `CREATE TABLE dblat_schema (version integer NOT NULL);
			INSERT INTO dblat_schema (version) VALUES (0)`); err != nil {
			return fmt.Errorf("results store %s: cannot create tables in schema %s: %s (grant the user CREATE on it, or choose another store with --results)",
				s.loc, schema.String, pgMessage(err))
		}
	}
	for _, st := range postgresSteps {
		if st.version <= version {
			continue
		}
		if err := st.apply(ctx, tx); err != nil {
			return fail(fmt.Sprintf("upgrading schema to version %d", st.version), err)
		}
		if _, err := tx.ExecContext(ctx, "UPDATE dblat_schema SET version = $1", st.version); err != nil {
			return fail("recording the schema version", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fail("committing the schema upgrade", err)
	}
	return nil
}

// redactDSN returns dsn without its password, for Location and messages: a URL keeps its
// form with the password dropped from the user info and the query; a key=value DSN is
// written back from the parsed host, port, database and user.
func redactDSN(dsn string, cfg *pgx.ConnConfig) string {
	if u, err := url.Parse(dsn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		if u.User != nil {
			u.User = url.User(u.User.Username())
		}
		if q := u.Query(); q.Has("password") {
			q.Del("password")
			u.RawQuery = q.Encode()
		}
		return u.String()
	}
	return fmt.Sprintf("host=%s port=%d dbname=%s user=%s", cfg.Host, cfg.Port, cfg.Database, cfg.User)
}

// pgMessage is err in one line: a server error's message and SQLSTATE, or the driver's
// text with its newlines folded.
func pgMessage(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return fmt.Sprintf("%s (SQLSTATE %s)", pe.Message, pe.Code)
	}
	return oneLine(err)
}

func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
