package firebird

import (
	"context"
	"database/sql"

	"github.com/dblat/dblat/internal/engine"
)

var _ engine.Signaler = Engine{}

// SignalReader implements engine.Signaler: once a second, in a fresh read-only transaction
// (a MON$ snapshot lasts as long as its transaction), the page reads, writes, fetches and
// marks of MON$IO_STATS (counters: the database's, or in SuperClassic and Classic, whose
// database-level counters stay zero, the sum over the attachments present, as Stats reads
// them; an attachment that leaves takes its counts with it, which the sampler reads as a
// reset), the record waits and conflicts of MON$RECORD_STATS (counters, likewise), and the
// statements running and stalled (MON$STATEMENTS' states 1 and 2: gauges).
func (Engine) SignalReader(ctx context.Context, db *sql.DB) (func(context.Context) ([]engine.Signal, error), error) {
	return func(ctx context.Context) ([]engine.Signal, error) {
		var out []engine.Signal
		err := readOnly(ctx, db, func(tx *sql.Tx) error {
			const io = `SUM(io.MON$PAGE_READS) AS page_reads, SUM(io.MON$PAGE_WRITES) AS page_writes,
				SUM(io.MON$PAGE_FETCHES) AS page_fetches, SUM(io.MON$PAGE_MARKS) AS page_marks,
				SUM(r.MON$RECORD_WAITS) AS record_waits, SUM(r.MON$RECORD_CONFLICTS) AS record_conflicts`
			dbLevel, err := row(ctx, tx, `SELECT `+io+` FROM MON$DATABASE d
				JOIN MON$IO_STATS io ON io.MON$STAT_ID = d.MON$STAT_ID
				JOIN MON$RECORD_STATS r ON r.MON$STAT_ID = d.MON$STAT_ID`)
			if err != nil {
				return err
			}
			src := dbLevel
			if number(dbLevel["page_fetches"]) == 0 {
				if src, err = row(ctx, tx, `SELECT `+io+` FROM MON$ATTACHMENTS a
					JOIN MON$IO_STATS io ON io.MON$STAT_ID = a.MON$STAT_ID
					JOIN MON$RECORD_STATS r ON r.MON$STAT_ID = a.MON$STAT_ID`); err != nil {
					return err
				}
			}
			for _, c := range []string{"page_reads", "page_writes", "page_fetches", "page_marks", "record_waits", "record_conflicts"} {
				out = append(out, engine.Signal{Name: c, Value: number(src[c]), Counter: true})
			}
			states, err := row(ctx, tx, `SELECT
				(SELECT COUNT(*) FROM MON$STATEMENTS WHERE MON$STATE = 1) AS statements_running,
				(SELECT COUNT(*) FROM MON$STATEMENTS WHERE MON$STATE = 2) AS statements_stalled FROM RDB$DATABASE`)
			if err != nil {
				return err
			}
			for _, c := range []string{"statements_running", "statements_stalled"} {
				out = append(out, engine.Signal{Name: c, Value: number(states[c])})
			}
			return nil
		})
		return out, err
	}, nil
}
