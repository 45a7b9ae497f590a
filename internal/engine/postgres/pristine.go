package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/dblat/dblat/internal/managed"
)

// pristineName is the template database holding the pristine copy of db.
func pristineName(db string) string { return db + "_pristine" }

// admin connects to the "postgres" maintenance database of the server dsn points at, and
// returns the name of dsn's own database.
func admin(ctx context.Context, dsn string) (*pgx.Conn, string, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, "", err
	}
	db := cfg.Database
	cfg.Database = "postgres"
	c, err := pgx.ConnectConfig(ctx, cfg)
	return c, db, err
}

// copyFrom is the CREATE DATABASE statement that makes db a copy of template. From
// PostgreSQL 15 it asks for STRATEGY FILE_COPY, the only strategy before 15: the default
// there, WAL_LOG, writes the whole database into the WAL and left ~120 MB of a 2-warehouse
// copy dirty in the OS's page cache, written back 30 s later in the middle of a later run
// (and it took 1 s where a file copy takes 0.3 s). A file copy is checkpointed and synced
// before the statement returns.
func copyFrom(ctx context.Context, c *pgx.Conn, db, template string) string {
	q := fmt.Sprintf("CREATE DATABASE %s TEMPLATE %s", pgx.Identifier{db}.Sanitize(), pgx.Identifier{template}.Sanitize())
	var v int
	if err := c.QueryRow(ctx, "SELECT current_setting('server_version_num')::int").Scan(&v); err == nil && v >= 150000 {
		q += " STRATEGY FILE_COPY"
	}
	return q
}

// SavePristine implements engine.Restorer with CREATE DATABASE … TEMPLATE, a file-level copy.
func (Engine) SavePristine(ctx context.Context, dsn string) error {
	c, db, err := admin(ctx, dsn)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	p := pgx.Identifier{pristineName(db)}.Sanitize()
	// CHECKPOINT first: it makes the copy (which reads the files) faster and complete.
	for _, q := range []string{
		"CHECKPOINT",
		"DROP DATABASE IF EXISTS " + p,
		copyFrom(ctx, c, pristineName(db), db),
	} {
		if _, err := c.Exec(ctx, q); err != nil {
			return fmt.Errorf("save pristine copy of %s: %w", db, oneLine(err))
		}
	}
	return nil
}

// HasPristine implements engine.Restorer.
func (Engine) HasPristine(ctx context.Context, dsn string) (bool, error) {
	c, db, err := admin(ctx, dsn)
	if err != nil {
		return false, err
	}
	defer c.Close(ctx)
	var n int
	err = c.QueryRow(ctx, "SELECT count(*) FROM pg_database WHERE datname = $1", pristineName(db)).Scan(&n)
	return n > 0, err
}

// RestorePristine implements engine.Restorer: drop the database and copy it from the template.
func (Engine) RestorePristine(ctx context.Context, dsn string) error {
	c, db, err := admin(ctx, dsn)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	for _, q := range []string{
		"DROP DATABASE IF EXISTS " + pgx.Identifier{db}.Sanitize() + " WITH (FORCE)",
		copyFrom(ctx, c, db, pristineName(db)),
	} {
		if _, err := c.Exec(ctx, q); err != nil {
			return fmt.Errorf("restore %s from its pristine copy: %w", db, oneLine(err))
		}
	}
	return nil
}

// templateDBFile names, in a template's directory, the database that holds the template.
const templateDBFile = "database"

// TemplateKey implements engine.Templater. A PostgreSQL database is copied with CREATE
// DATABASE … TEMPLATE, which copies within one cluster only: a template is a database of
// the managed server it was loaded on (its data directory is part of the key), which later
// studies on that server restore; its content is fixed by the server's version, block size,
// encoding and collation besides what was loaded.
func (Engine) TemplateKey(ctx context.Context, dsn string, inst *managed.Instance) (map[string]string, bool, error) {
	if inst == nil {
		return nil, false, nil
	}
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, false, err
	}
	defer c.Close(ctx)
	var version, block, encoding, collate string
	if err := c.QueryRow(ctx, `SELECT current_setting('server_version_num'), current_setting('block_size'),
		pg_encoding_to_char(encoding), datcollate FROM pg_database WHERE datname = current_database()`).
		Scan(&version, &block, &encoding, &collate); err != nil {
		return nil, false, err
	}
	return map[string]string{"version": version, "block_size": block, "encoding": encoding, "collate": collate,
		"cluster": inst.Dir}, true, nil
}

// SaveTemplate implements engine.Templater: a template database copied from dsn's, named
// in dir.
func (Engine) SaveTemplate(ctx context.Context, dsn, dir string) error {
	c, db, err := admin(ctx, dsn)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		return err
	}
	tpl := "dblat_template_" + hex.EncodeToString(b)
	for _, q := range []string{"CHECKPOINT", copyFrom(ctx, c, tpl, db)} {
		if _, err := c.Exec(ctx, q); err != nil {
			return fmt.Errorf("save template of %s: %w", db, oneLine(err))
		}
	}
	return os.WriteFile(filepath.Join(dir, templateDBFile), []byte(tpl+"\n"), 0o644)
}

// RestoreTemplate implements engine.Templater: dsn's database and its pristine copy are
// made anew from the template database.
func (Engine) RestoreTemplate(ctx context.Context, dsn, dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, templateDBFile))
	if err != nil {
		return err
	}
	tpl := strings.TrimSpace(string(b))
	c, db, err := admin(ctx, dsn)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	for _, q := range []string{
		"DROP DATABASE IF EXISTS " + pgx.Identifier{db}.Sanitize() + " WITH (FORCE)",
		copyFrom(ctx, c, db, tpl),
		"DROP DATABASE IF EXISTS " + pgx.Identifier{pristineName(db)}.Sanitize(),
		copyFrom(ctx, c, pristineName(db), tpl),
	} {
		if _, err := c.Exec(ctx, q); err != nil {
			return fmt.Errorf("restore %s from template %s: %w", db, tpl, oneLine(err))
		}
	}
	return nil
}
