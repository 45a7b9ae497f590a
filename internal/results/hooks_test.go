package results

// This file gives the external tests (package results_test, which can use storetest without
// an import cycle) the few internals they check.

import (
	"context"
	"database/sql"
	"fmt"
)

// CSVHeader is the header row of the CSV export.
var CSVHeader = csvHeader

// IsPostgres is isPostgres: whether Open takes location for PostgreSQL.
var IsPostgres = isPostgres

// DBOf returns the database handle of a store opened by Open.
func DBOf(s Store) *sql.DB { return s.(*sqlStore).db }

// Rebind rewrites '?' placeholders for s's backend.
func Rebind(s Store, query string) string { return s.(*sqlStore).d.q(query) }

// IsPostgresStore reports whether s is a PostgreSQL store.
func IsPostgresStore(s Store) bool { return s.(*sqlStore).d.pg }

// SetSchemaVersion records v as the schema version of s, as a newer dblat would.
func SetSchemaVersion(ctx context.Context, s Store, v int) error {
	st := s.(*sqlStore)
	q := fmt.Sprintf("PRAGMA user_version = %d", v)
	if st.d.pg {
		q = fmt.Sprintf("UPDATE dblat_schema SET version = %d", v)
	}
	_, err := st.db.ExecContext(ctx, q)
	return err
}

// StepVersions returns the versions of the SQLite and the PostgreSQL schema steps.
func StepVersions() (sqlite, postgres []int) {
	for _, s := range sqliteSteps {
		sqlite = append(sqlite, s.version)
	}
	for _, s := range postgresSteps {
		postgres = append(postgres, s.version)
	}
	return sqlite, postgres
}

// CreateSQLiteAt creates a SQLite results file at path with the schema of an older
// version, as that dblat left it.
func CreateSQLiteAt(ctx context.Context, path string, version int) error {
	db, err := sql.Open("sqlite", path)
	if err != nil {
		return err
	}
	defer db.Close()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, st := range sqliteSteps[:version] {
		if err := st.apply(ctx, tx); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d; PRAGMA application_id = %d", version, applicationID)); err != nil {
		return err
	}
	return tx.Commit()
}

// FillLinkShape runs schema step 12's fill on s again: the link's shape of runs whose
// shape columns are at their defaults, taken from their link column.
func FillLinkShape(ctx context.Context, s Store) error {
	st := s.(*sqlStore)
	tx, err := st.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fillLinkShape(st.d.pg)(ctx, tx); err != nil {
		return err
	}
	return tx.Commit()
}
