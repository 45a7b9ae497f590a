// Package postgres is dblat's PostgreSQL engine: it opens connections through pgx (via
// database/sql), classifies PostgreSQL errors, reads back the server's effective settings and
// statistics, bulk-loads with COPY, and runs private managed servers (server.go).
//
// It sits below the workloads and the runner, which reach it only through engine.Engine.
package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/dblat/dblat/internal/engine"
)

// Engine is the PostgreSQL engine. The zero value is ready to use.
type Engine struct{}

func init() {
	engine.Register(Engine{}, engine.Naming{Aliases: []string{"postgresql", "pg"}, Schemes: []string{"postgres", "postgresql"},
		KeyValueDSN: true})
}

// Name returns "postgres".
func (Engine) Name() string { return "postgres" }

// Dialect returns PostgreSQL's SQL spelling.
func (Engine) Dialect() engine.Dialect { return dialect() }

// Open parses dsn (URL or key=value form), installs opts.Dial, and pings the server. A
// password file the DSN names (passfile=, as managed servers' DSNs do) that cannot be read
// is an error of its own: pgx would go on without the password.
func (Engine) Open(ctx context.Context, dsn string, opts engine.OpenOptions) (*sql.DB, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres DSN: %w", err)
	}
	if f := passfileOf(dsn); f != "" && cfg.Password == "" {
		if _, err := os.ReadFile(f); err != nil {
			return nil, fmt.Errorf("postgres DSN %s: cannot read its passfile (%v): run as the user who owns it, or give the password another way (PGPASSWORD)", Engine{}.Redact(dsn), err)
		}
	}
	if cfg.ConnectTimeout == 0 { // the DSN's connect_timeout, or PGCONNECT_TIMEOUT, first
		cfg.ConnectTimeout = opts.ConnectTimeout
	}
	if opts.Dial != nil {
		cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
			return opts.Dial(ctx, network, addr)
		}
		cfg.LookupFunc = func(ctx context.Context, host string) ([]string, error) { return []string{host}, nil }
	}
	db := stdlib.OpenDB(*cfg)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("cannot connect to %s: %w", Engine{}.Redact(dsn), oneLine(err))
	}
	return db, nil
}

// passfileOf returns the passfile parameter of a URL or key=value DSN, "" when it has none.
func passfileOf(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.Scheme != "" {
		return u.Query().Get("passfile")
	}
	for _, f := range strings.Fields(dsn) {
		if v, ok := strings.CutPrefix(f, "passfile="); ok {
			return strings.Trim(v, "'")
		}
	}
	return ""
}

// oneLine trims pgx's wrapped connection errors to their cause.
func oneLine(err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return fmt.Errorf("%s (SQLSTATE %s)", pgErr.Message, pgErr.Code)
	}
	return err
}

// Classify sorts PostgreSQL errors: serialization failures and deadlocks are retryable,
// connection-class errors and broken sockets mean a lost connection.
func (Engine) Classify(err error) engine.ErrorClass {
	if err == nil {
		return engine.ClassOther
	}
	if engine.IsCanceled(err) {
		return engine.ClassCanceled
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case pgErr.Code == "40001", pgErr.Code == "40P01", pgErr.Code == "55P03":
			return engine.ClassRetryable
		case strings.HasPrefix(pgErr.Code, "08"), pgErr.Code == "57P01", pgErr.Code == "57P02", pgErr.Code == "57P03":
			return engine.ClassConnection
		}
		return engine.ClassOther
	}
	if engine.IsConnectionLost(err) || pgconn.SafeToRetry(err) ||
		strings.Contains(err.Error(), "conn closed") || strings.Contains(err.Error(), "unexpected EOF") {
		return engine.ClassConnection
	}
	return engine.ClassOther
}

// Inspect reads version() (and from it the build's word size and instruction set, as
// engine.SettingBits and SettingArch), every setting that is not at its built-in default
// (plus the ones that decide durability, caching and isolation), and the current
// database's size.
func (Engine) Inspect(ctx context.Context, db *sql.DB) (engine.Info, error) {
	info := engine.Info{Settings: map[string]string{}}
	if err := db.QueryRowContext(ctx, "SELECT version()").Scan(&info.Version); err != nil {
		return info, err
	}
	rows, err := db.QueryContext(ctx, `SELECT name, setting, coalesce(unit, '') FROM pg_settings
		WHERE source NOT IN ('default', 'client', 'session')
		   OR name IN ('shared_buffers', 'work_mem', 'effective_cache_size', 'fsync', 'synchronous_commit',
		               'full_page_writes', 'wal_level', 'max_connections', 'default_transaction_isolation',
		               'checkpoint_timeout', 'max_wal_size', 'block_size', 'server_version_num', 'jit')`)
	if err != nil {
		return info, err
	}
	defer rows.Close()
	for rows.Next() {
		var name, setting, unit string
		if err := rows.Scan(&name, &setting, &unit); err != nil {
			return info, err
		}
		if unit != "" {
			setting += " " + unit
		}
		info.Settings[name] = setting
	}
	if err := rows.Err(); err != nil {
		return info, err
	}
	if bits, arch := buildOf(info.Version); bits != "" {
		info.Settings[engine.SettingBits], info.Settings[engine.SettingArch] = bits, arch
	}
	err = db.QueryRowContext(ctx, "SELECT pg_database_size(current_database())").Scan(&info.DatabaseBytes)
	return info, err
}

// buildOf reads the build's word size and instruction set from version(): "PostgreSQL
// 13.21 on x86_64-pc-linux-gnu, compiled by gcc (GCC) 8.5.0, 64-bit" gives "64" and
// "x86_64"; "" when version() does not say.
func buildOf(version string) (bits, arch string) {
	_, rest, ok := strings.Cut(version, " on ")
	if !ok {
		return "", ""
	}
	target, _, _ := strings.Cut(rest, ",")
	arch, _, _ = strings.Cut(strings.TrimSpace(target), "-")
	if i := strings.LastIndex(version, ", "); i >= 0 {
		if b, ok := strings.CutSuffix(strings.TrimSpace(version[i+2:]), "-bit"); ok {
			bits = b
		}
	}
	if bits == "" {
		if n := engine.ArchBits(arch); n > 0 {
			bits = strconv.Itoa(n)
		}
	}
	return bits, arch
}

// Stats reads pg_stat_database for the current database, pg_stat_wal, pg_stat_bgwriter
// (and pg_stat_checkpointer from 17 on: statsQueries) and the dead tuples summed over user
// tables. Counters are flushed by backends with a delay, so
// callers reading "after" values should let ~1 s pass after the load stops.
func (Engine) Stats(ctx context.Context, db *sql.DB) (engine.Stats, error) {
	st := engine.Stats{}
	var num int
	if err := db.QueryRowContext(ctx, "SELECT current_setting('server_version_num')::int").Scan(&num); err != nil {
		return nil, err
	}
	if _, err := db.ExecContext(ctx, "SELECT pg_stat_clear_snapshot()"); err != nil {
		return nil, err
	}
	for _, q := range statsQueries(num) {
		rows, err := db.QueryContext(ctx, q.sql)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", strings.TrimSuffix(q.prefix, "."), err)
		}
		cols, _ := rows.Columns()
		vals := make([]sql.NullFloat64, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				rows.Close()
				return nil, err
			}
			for i, c := range cols {
				if vals[i].Valid {
					st[q.prefix+c] = vals[i].Float64
				}
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// statsQueries are Stats' queries for a server of version num (server_version_num), each
// with the prefix of its counters. The views moved between the versions dblat runs:
// pg_stat_wal came with 14, and lost wal_write and wal_sync to pg_stat_io in 18;
// checkpoints left pg_stat_bgwriter for pg_stat_checkpointer in 17, and buffers_backend
// went to pg_stat_io. Each counter keeps the name its view gives it.
func statsQueries(num int) []struct{ prefix, sql string } {
	qs := []struct{ prefix, sql string }{
		{"pg_stat_database.", `SELECT xact_commit, xact_rollback, blks_read, blks_hit, tup_returned, tup_fetched,
			tup_inserted, tup_updated, tup_deleted, conflicts, temp_files, temp_bytes, deadlocks
			FROM pg_stat_database WHERE datname = current_database()`},
		{"pg_stat_user_tables.", `SELECT coalesce(sum(n_dead_tup), 0) AS n_dead_tup, coalesce(sum(n_live_tup), 0) AS n_live_tup,
			coalesce(sum(n_tup_hot_upd), 0) AS n_tup_hot_upd FROM pg_stat_user_tables`},
	}
	switch {
	case num >= 180000:
		qs = append(qs, struct{ prefix, sql string }{"pg_stat_wal.", `SELECT wal_records, wal_fpi, wal_bytes, wal_buffers_full FROM pg_stat_wal`})
	case num >= 140000:
		qs = append(qs, struct{ prefix, sql string }{"pg_stat_wal.", `SELECT wal_records, wal_fpi, wal_bytes, wal_buffers_full, wal_write, wal_sync FROM pg_stat_wal`})
	}
	if num >= 170000 {
		qs = append(qs,
			struct{ prefix, sql string }{"pg_stat_checkpointer.", `SELECT num_timed, num_requested, buffers_written FROM pg_stat_checkpointer`},
			struct{ prefix, sql string }{"pg_stat_bgwriter.", `SELECT buffers_clean FROM pg_stat_bgwriter`})
	} else {
		qs = append(qs, struct{ prefix, sql string }{"pg_stat_bgwriter.",
			`SELECT checkpoints_timed, checkpoints_req, buffers_checkpoint, buffers_clean, buffers_backend FROM pg_stat_bgwriter`})
	}
	return qs
}

// Redact removes any password from a URL or key=value DSN.
func (Engine) Redact(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.Scheme != "" && u.Host != "" {
		if u.User != nil {
			if _, has := u.User.Password(); has {
				u.User = url.UserPassword(u.User.Username(), "xxxxx")
			}
		}
		q := u.Query()
		if q.Has("password") {
			q.Set("password", "xxxxx")
			u.RawQuery = q.Encode()
		}
		return u.String()
	}
	fields := strings.Fields(dsn)
	for i, f := range fields {
		if strings.HasPrefix(f, "password=") {
			fields[i] = "password=xxxxx"
		}
	}
	return strings.Join(fields, " ")
}
