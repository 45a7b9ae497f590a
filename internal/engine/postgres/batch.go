package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/dblat/dblat/internal/engine"
)

// BeginBatch implements engine.Batcher with pgx pipelines: every batch is one
// pgx.Batch, sent as one stream of extended-protocol messages ending in a single Sync and
// answered in one flight, so a batch costs one round trip whatever it holds (two the first
// time a connection sees one of its statements in pgx's default cache_statement mode: the
// uncached statements are prepared in a pipelined round first). The begin is folded into
// the first batch (pgx.Batch.BeginTx, new in pgx 5.12.0), and Commit and Rollback add
// COMMIT or ROLLBACK to the last one, so a transaction of n batches costs n round trips and
// BeginBatch itself sends nothing.
//
// conn must be a connection of a pool opened by Engine.Open (pgx's database/sql driver):
// each batch reaches the pgx connection through (*sql.Conn).Raw. database/sql does not
// know about the transaction, so it must end (Commit, Rollback, or a failed batch, which
// rolls back) before conn is used otherwise; a connection left inside a transaction is
// discarded by the driver when it returns to the pool.
func (Engine) BeginBatch(ctx context.Context, conn *sql.Conn, opts *sql.TxOptions) (engine.BatchTx, error) {
	var o pgx.TxOptions
	if opts != nil {
		switch opts.Isolation {
		case sql.LevelDefault:
		case sql.LevelReadUncommitted:
			o.IsoLevel = pgx.ReadUncommitted
		case sql.LevelReadCommitted:
			o.IsoLevel = pgx.ReadCommitted
		case sql.LevelRepeatableRead, sql.LevelSnapshot:
			o.IsoLevel = pgx.RepeatableRead
		case sql.LevelSerializable:
			o.IsoLevel = pgx.Serializable
		default:
			return nil, fmt.Errorf("postgres: isolation level %v not supported", opts.Isolation)
		}
		if opts.ReadOnly {
			o.AccessMode = pgx.ReadOnly
		}
	}
	return engine.FoldedBatchTx((&batchTx{conn: conn, opts: o}).send), nil
}

var _ engine.Batcher = Engine{}

// batchTx sends the batches of one transaction (engine.FoldedBatchTx) as pgx pipelines.
type batchTx struct {
	conn *sql.Conn
	opts pgx.TxOptions
}

// send sends stmts, preceded by the BEGIN when begin and followed by end ("", COMMIT or
// ROLLBACK), as one pgx.Batch.
func (t *batchTx) send(ctx context.Context, begin bool, stmts []*engine.BatchStmt, end string) error {
	return t.conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("postgres: batch on a %T, not a connection opened by the postgres engine", dc)
		}
		pc := sc.Conn()
		b := &pgx.Batch{}
		if begin {
			b.BeginTx(t.opts)
		}
		for _, s := range stmts {
			b.Queue(s.SQL, s.Args...)
		}
		if end != "" {
			b.Queue(end)
		}
		err := readBatch(pc.SendBatch(ctx, b), begin, stmts, end != "")
		if err != nil {
			// A failed statement leaves the transaction aborted (the rest of the pipeline
			// was skipped up to its Sync): roll it back, one more round trip on this rare
			// path, so that the connection is clean for its next user.
			if !pc.IsClosed() && pc.PgConn().TxStatus() != 'I' {
				_, _ = pc.Exec(context.WithoutCancel(ctx), "ROLLBACK")
			}
		}
		return err
	})
}

// readBatch reads the results of a batch: the BEGIN's when begin, one per statement, and
// the COMMIT's or ROLLBACK's when end; then closes it. The first error is returned.
func readBatch(br pgx.BatchResults, begin bool, stmts []*engine.BatchStmt, end bool) (err error) {
	defer func() {
		if cerr := br.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	if begin {
		if _, err := br.Exec(); err != nil {
			return fmt.Errorf("begin: %w", err)
		}
	}
	for i, s := range stmts {
		if err := readStmt(br, s); err != nil {
			return fmt.Errorf("batch statement %d (%.60s): %w", i+1, s.SQL, err)
		}
	}
	if end {
		if _, err := br.Exec(); err != nil {
			return err
		}
	}
	return nil
}

// readStmt reads one statement's rows, as database/sql values, or its row count.
func readStmt(br pgx.BatchResults, s *engine.BatchStmt) error {
	rows, err := br.Query()
	if err != nil {
		return err
	}
	defer rows.Close()
	s.Rows = s.Rows[:0]
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return err
		}
		if s.Columns > 0 && len(vals) != s.Columns {
			return fmt.Errorf("%d columns, the statement declares %d", len(vals), s.Columns)
		}
		for i, v := range vals {
			if vals[i], err = driverValue(v); err != nil {
				return err
			}
		}
		s.Rows = append(s.Rows, vals)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	s.RowsAffected = rows.CommandTag().RowsAffected()
	return nil
}

// driverValue turns a value of pgx's Rows.Values into what the database/sql driver would
// hand over: integers as int64, numeric as its decimal text (pgtype.Numeric's Value), and
// so on.
func driverValue(v any) (any, error) {
	switch x := v.(type) {
	case nil, int64, float64, bool, string, []byte:
		return x, nil
	case int16:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case float32:
		return float64(x), nil
	case driver.Valuer:
		return x.Value()
	}
	dv, err := driver.DefaultParameterConverter.ConvertValue(v)
	if err != nil {
		return nil, errors.New("postgres: cannot convert " + fmt.Sprintf("%T", v) + " to a database/sql value")
	}
	return dv, nil
}
