package firebird

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/dblat/dblat/internal/engine"
)

// Settings keys Inspect reports. The names of settings a managed server can be asked for
// (firebird.conf keys and dblat's own, see server.go) are used where the value read back is
// that setting's effect, so that requested and effective values line up.
const (
	// KeyPageSize is MON$PAGE_SIZE, the database's page size in bytes (dblat setting PageSize).
	KeyPageSize = "PageSize"
	// KeyPageBuffers is MON$PAGE_BUFFERS, the page cache in pages: the header's value if
	// gfix -buffers set one, else DefaultDbCachePages; per attachment in SuperClassic and
	// Classic.
	KeyPageBuffers = "DefaultDbCachePages"
	// KeyForcedWrites is MON$FORCED_WRITES as "on" or "off" (dblat setting ForcedWrites).
	KeyForcedWrites = "ForcedWrites"
	// KeyServerMode is the architecture the server runs as, Super, SuperClassic or Classic,
	// inferred from the attachments (see Inspect).
	KeyServerMode = "ServerMode"
	// KeyWireEncrypted is RDB$GET_CONTEXT('SYSTEM', 'WIRE_ENCRYPTED') of the inspecting
	// connection, "TRUE" or "FALSE": the effect of WireCrypt together with the client's wish.
	KeyWireEncrypted = "wire_encrypted"
)

// queryer is what *sql.Tx and *sql.Conn have in common.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// readOnly runs fn in a fresh READ COMMITTED READ ONLY transaction: the MON$ tables are a
// snapshot taken at their first use in a transaction and kept until it ends, so every call
// must start a new one; and a read-only READ COMMITTED transaction pins neither the oldest
// active nor the oldest snapshot transaction.
func readOnly(ctx context.Context, db *sql.DB, fn func(tx *sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// row reads the single row of query into a map from lower-cased column name to value
// (nil for NULL).
func row(ctx context.Context, q queryer, query string) (map[string]any, error) {
	rows, err := q.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, err
		}
		return nil, sql.ErrNoRows
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return nil, err
	}
	m := make(map[string]any, len(cols))
	for i, c := range cols {
		m[strings.ToLower(c)] = vals[i]
	}
	return m, rows.Close()
}

// text renders a value read from Firebird for Info.Settings.
func text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case []byte:
		return strings.TrimSpace(string(x))
	case string:
		return strings.TrimSpace(x)
	}
	return strings.TrimSpace(fmt.Sprint(v))
}

// number converts a value read from Firebird to float64 (0 for NULL or non-numbers).
func number(v any) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case int32:
		return float64(x)
	case int16:
		return float64(x)
	case int:
		return float64(x)
	case float64:
		return x
	case float32:
		return float64(x)
	case string:
		f, _ := strconv.ParseFloat(strings.TrimSpace(x), 64)
		return f
	case []byte:
		f, _ := strconv.ParseFloat(strings.TrimSpace(string(x)), 64)
		return f
	}
	if s, ok := v.(fmt.Stringer); ok { // decimal.Decimal for NUMERIC sums
		f, _ := strconv.ParseFloat(s.String(), 64)
		return f
	}
	return 0
}

func onOff(v any) string {
	if number(v) != 0 {
		return "on"
	}
	return "off"
}

// Inspect reads back, in one read-only transaction: the engine version
// (RDB$GET_CONTEXT('SYSTEM', 'ENGINE_VERSION')), the wire's encryption, compression and
// protocol as this connection got them, MON$DATABASE's page size, page buffers, forced
// writes, sweep interval, ODS version, SQL dialect and size (MON$PAGES × MON$PAGE_SIZE, which
// is the database file's size), the default character set, and the architecture; from 4.0
// on also ReadConsistency and the file-system cache settings, from RDB$CONFIG (versions.go).
//
// Firebird 3.0 cannot report its firebird.conf (RDB$CONFIG is 4.0+), so ServerMode is
// inferred: a "Cache Writer" system attachment exists only in Super (the one shared page
// cache); otherwise two attachments served by different server processes
// (MON$SERVER_PID) mean Classic and by the same process SuperClassic. When the pool has only
// one attachment to the database, Inspect opens a second one for the comparison (with the
// same DSN and Dial; closed before it returns) if db came from Open, and otherwise reports
// "SuperClassic|Classic".
func (Engine) Inspect(ctx context.Context, db *sql.DB) (engine.Info, error) {
	info := engine.Info{Settings: map[string]string{}}
	var myPID int64
	var pids map[int64]bool
	var cacheWriter bool
	err := readOnly(ctx, db, func(tx *sql.Tx) error {
		ctxVars, err := row(ctx, tx, `SELECT rdb$get_context('SYSTEM', 'ENGINE_VERSION') AS engine_version,
			rdb$get_context('SYSTEM', 'WIRE_ENCRYPTED') AS wire_encrypted,
			rdb$get_context('SYSTEM', 'WIRE_COMPRESSED') AS wire_compressed,
			rdb$get_context('SYSTEM', 'NETWORK_PROTOCOL') AS network_protocol,
			TRIM(RDB$CHARACTER_SET_NAME) AS character_set FROM RDB$DATABASE`)
		if err != nil {
			return err
		}
		info.Version = "Firebird " + text(ctxVars["engine_version"])
		for _, k := range []string{"wire_encrypted", "wire_compressed", "network_protocol", "character_set"} {
			info.Settings[k] = text(ctxVars[k])
		}
		d, err := row(ctx, tx, `SELECT MON$PAGE_SIZE AS page_size, MON$PAGE_BUFFERS AS page_buffers, MON$PAGES AS pages,
			MON$FORCED_WRITES AS forced_writes, MON$SWEEP_INTERVAL AS sweep_interval, MON$ODS_MAJOR AS ods_major,
			MON$ODS_MINOR AS ods_minor, MON$SQL_DIALECT AS sql_dialect, MON$READ_ONLY AS read_only,
			MON$RESERVE_SPACE AS reserve_space FROM MON$DATABASE`)
		if err != nil {
			return err
		}
		info.Settings[KeyPageSize] = text(d["page_size"])
		info.Settings[KeyPageBuffers] = text(d["page_buffers"])
		info.Settings[KeyForcedWrites] = onOff(d["forced_writes"])
		info.Settings["sweep_interval"] = text(d["sweep_interval"])
		info.Settings["ods_version"] = text(d["ods_major"]) + "." + text(d["ods_minor"])
		info.Settings["sql_dialect"] = text(d["sql_dialect"])
		info.Settings["read_only"] = onOff(d["read_only"])
		info.Settings["reserve_space"] = onOff(d["reserve_space"])
		info.DatabaseBytes = int64(number(d["pages"]) * number(d["page_size"]))

		me, err := row(ctx, tx, `SELECT MON$SERVER_PID AS pid FROM MON$ATTACHMENTS WHERE MON$ATTACHMENT_ID = CURRENT_CONNECTION`)
		if err != nil {
			return err
		}
		myPID = int64(number(me["pid"]))
		rows, err := tx.QueryContext(ctx, `SELECT MON$SERVER_PID, MON$SYSTEM_FLAG, TRIM(MON$USER) FROM MON$ATTACHMENTS`)
		if err != nil {
			return err
		}
		defer rows.Close()
		pids = map[int64]bool{}
		for rows.Next() {
			var pid, system int64
			var user sql.NullString
			if err := rows.Scan(&pid, &system, &user); err != nil {
				return err
			}
			pids[pid] = true
			if system != 0 && user.String == "Cache Writer" {
				cacheWriter = true
			}
		}
		return rows.Err()
	})
	if err != nil {
		return info, err
	}
	if err := inspectConfig(ctx, db, info.Version, info.Settings); err != nil {
		return info, err
	}
	switch {
	case cacheWriter:
		info.Settings[KeyServerMode] = "Super"
	case len(pids) > 1:
		info.Settings[KeyServerMode] = "Classic"
	default:
		info.Settings[KeyServerMode] = "SuperClassic|Classic"
		if other, ok := otherServerPID(ctx, db); ok {
			if other == myPID {
				info.Settings[KeyServerMode] = "SuperClassic"
			} else {
				info.Settings[KeyServerMode] = "Classic"
			}
		}
	}
	return info, nil
}

// otherServerPID opens one more attachment with db's connector and returns the server
// process serving it, or false when db did not come from Open or the attachment failed.
func otherServerPID(ctx context.Context, db *sql.DB) (int64, bool) {
	d, ok := db.Driver().(connDriver)
	if !ok {
		return 0, false
	}
	extra := sql.OpenDB(d.c)
	defer extra.Close()
	var pid int64
	err := readOnly(ctx, extra, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `SELECT MON$SERVER_PID FROM MON$ATTACHMENTS WHERE MON$ATTACHMENT_ID = CURRENT_CONNECTION`).Scan(&pid)
	})
	return pid, err == nil
}

// ioColumns and recordColumns are the counters of MON$IO_STATS and MON$RECORD_STATS
// (Firebird 3.0 columns, without the MON$ prefix).
var (
	ioColumns     = []string{"page_reads", "page_writes", "page_fetches", "page_marks"}
	recordColumns = []string{"record_seq_reads", "record_idx_reads", "record_inserts", "record_updates",
		"record_deletes", "record_backouts", "record_purges", "record_expunges", "record_locks", "record_waits",
		"record_conflicts", "backversion_reads", "fragment_reads", "record_rpt_reads"}
)

// Stats reads, in a fresh read-only transaction (MON$ snapshots last as long as the
// transaction), the transaction markers of MON$DATABASE (mon$database.oldest_transaction =
// OIT, .oldest_active = OAT, .oldest_snapshot = OST, .next_transaction = Next, .pages), the
// page I/O counters (mon$io_stats.page_reads, _writes, _fetches, _marks) and the record
// counters (mon$record_stats.record_seq_reads, ..._idx_reads, _inserts, _updates, _deletes,
// _backouts, _purges, _expunges, _locks, _waits, _conflicts, backversion_reads,
// fragment_reads, record_rpt_reads), the number of attachments (mon$attachments.count, user
// attachments only) and active transactions (mon$transactions.count), and
// stats.database_level.
//
// Where the counters come from is what stats.database_level says. In Super (1) they are the
// database's own (MON$STAT_GROUP 0), which accumulate over every attachment while the
// database stays open. In SuperClassic and Classic the database-level counters are always
// zero, so Stats sums the attachment-level counters of the attachments present at the time
// (0): the counters of an attachment vanish when it disconnects, so a before/after delta
// covers only work done by connections that are still open at the "after" reading; read it
// before the pool closes. The inspecting connection's own reads are included either way.
func (Engine) Stats(ctx context.Context, db *sql.DB) (engine.Stats, error) {
	st := engine.Stats{}
	err := readOnly(ctx, db, func(tx *sql.Tx) error {
		d, err := row(ctx, tx, `SELECT MON$OLDEST_TRANSACTION AS oldest_transaction, MON$OLDEST_ACTIVE AS oldest_active,
			MON$OLDEST_SNAPSHOT AS oldest_snapshot, MON$NEXT_TRANSACTION AS next_transaction, MON$PAGES AS pages
			FROM MON$DATABASE`)
		if err != nil {
			return err
		}
		for k, v := range d {
			st["mon$database."+k] = number(v)
		}
		sums := func(prefix string) string {
			var b strings.Builder
			for i, c := range ioColumns {
				if i > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "%s(io.MON$%s) AS %s", prefix, c, c)
			}
			for _, c := range recordColumns {
				fmt.Fprintf(&b, ", %s(r.MON$%s) AS %s", prefix, c, c)
			}
			return b.String()
		}
		dbLevel, err := row(ctx, tx, `SELECT `+sums("")+` FROM MON$DATABASE d
			JOIN MON$IO_STATS io ON io.MON$STAT_ID = d.MON$STAT_ID
			JOIN MON$RECORD_STATS r ON r.MON$STAT_ID = d.MON$STAT_ID`)
		if err != nil {
			return err
		}
		attLevel, err := row(ctx, tx, `SELECT `+sums("SUM")+` FROM MON$ATTACHMENTS a
			JOIN MON$IO_STATS io ON io.MON$STAT_ID = a.MON$STAT_ID
			JOIN MON$RECORD_STATS r ON r.MON$STAT_ID = a.MON$STAT_ID`)
		if err != nil {
			return err
		}
		src, level := attLevel, 0.0
		if number(dbLevel["page_fetches"]) > 0 {
			src, level = dbLevel, 1
		}
		st["stats.database_level"] = level
		for _, c := range ioColumns {
			st["mon$io_stats."+c] = number(src[c])
		}
		for _, c := range recordColumns {
			st["mon$record_stats."+c] = number(src[c])
		}
		counts, err := row(ctx, tx, `SELECT
			(SELECT COUNT(*) FROM MON$ATTACHMENTS WHERE MON$SYSTEM_FLAG = 0) AS attachments,
			(SELECT COUNT(*) FROM MON$TRANSACTIONS) AS transactions FROM RDB$DATABASE`)
		if err != nil {
			return err
		}
		st["mon$attachments.count"] = number(counts["attachments"])
		st["mon$transactions.count"] = number(counts["transactions"])
		return nil
	})
	if err != nil {
		return nil, err
	}
	return st, nil
}
