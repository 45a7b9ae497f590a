package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
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
		fmt.Sprintf("CREATE DATABASE %s TEMPLATE %s", p, pgx.Identifier{db}.Sanitize()),
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
		fmt.Sprintf("CREATE DATABASE %s TEMPLATE %s", pgx.Identifier{db}.Sanitize(), pgx.Identifier{pristineName(db)}.Sanitize()),
	} {
		if _, err := c.Exec(ctx, q); err != nil {
			return fmt.Errorf("restore %s from its pristine copy: %w", db, oneLine(err))
		}
	}
	return nil
}
