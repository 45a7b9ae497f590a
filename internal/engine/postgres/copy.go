package postgres

import (
	"context"
	"database/sql"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// CopyRows loads rows with COPY FROM STDIN (pgx CopyFrom); it implements engine.BulkLoader.
func (Engine) CopyRows(ctx context.Context, db *sql.DB, table string, cols []string, next func(row []any) bool) (int64, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	var n int64
	err = conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return errors.New("postgres: not a pgx connection")
		}
		src := &rowSource{row: make([]any, len(cols)), next: next}
		n, err = sc.Conn().CopyFrom(ctx, pgx.Identifier{table}, cols, src)
		return err
	})
	return n, err
}

type rowSource struct {
	row  []any
	next func([]any) bool
}

func (r *rowSource) Next() bool             { return r.next(r.row) }
func (r *rowSource) Values() ([]any, error) { return r.row, nil }
func (r *rowSource) Err() error             { return nil }
