package firebird

import (
	"database/sql"
	"fmt"
	"strings"

	"github.com/dblat/dblat/internal/engine"
)

// lockSuffix locks the rows a SELECT returns. Firebird's FOR UPDATE alone locks nothing (it
// only names a cursor for positioned updates, and makes the server send rows one at a time);
// WITH LOCK takes the locks, as an UPDATE of each row would.
const lockSuffix = " WITH LOCK"

// dialect is Firebird 3.0's SQL spelling. Caveats the workloads must know:
//
//   - There is no LIMIT: a SELECT takes FIRST n after the keyword, or ROWS n (or OFFSET/FETCH,
//     new in 3.0) after ORDER BY and before WITH LOCK. LimitOne appends ROWS 1, keeping a
//     trailing WITH LOCK last.
//   - SELECT ... WITH LOCK (ForUpdate) works only on a single table without joins, DISTINCT,
//     GROUP BY or aggregates, and behaves like an UPDATE of each row: in READ COMMITTED WAIT
//     it waits for a concurrent writer and, if that writer commits, fails with an update
//     conflict (retryable); in SNAPSHOT it fails if the row changed since the snapshot.
//   - UPDATE ... RETURNING works on 3.0 only when the statement changes at most one row
//     (DSQL treats it as a singleton; more rows fail with "multiple rows in singleton
//     select"). It returns the new values; OLD.col gives the old ones. Prepared and run with
//     QueryRow it costs one round trip with this driver.
//   - LockingIsolation is READ COMMITTED, started with the DSN's transaction parameters
//     (txparams.go; by default NO_RECORD_VERSION, WAIT). 3.0 has no statement restart
//     (ReadConsistency is 4.0+): with RECORD_VERSION an UPDATE that waited for a concurrent
//     writer which then committed fails with an update conflict instead of applying to the
//     new version; with NO_RECORD_VERSION its read waits for the writer instead, and
//     conflicts are rare. Workloads see conflicts as engine.ClassRetryable errors.
//   - SnapshotIsolation is SNAPSHOT (sql.LevelRepeatableRead), which the driver gives only to
//     read-write transactions: TxOptions.ReadOnly always yields READ COMMITTED READ ONLY.
//   - NUMERIC precision is at most 18 on 3.0 (a 64-bit integer; 4.0 goes to 38 with INT128);
//     wider types fail at CREATE TABLE.
//   - There is no DROP TABLE IF EXISTS and no ANALYZE; DropTable and Analyze are EXECUTE
//     BLOCKs that look the table up in the system tables. Unquoted names are upper-cased,
//     as Firebird does with unquoted identifiers.
//   - There are no multi-row VALUES lists; bulk loads go through the BulkLoader.
//   - DDL is transactional but objects a statement creates can be used only after Commit.
func dialect() engine.Dialect {
	return engine.Dialect{
		Placeholder:       func(int) string { return "?" },
		ForUpdate:         lockSuffix,
		SupportsReturning: true,
		LimitOne:          limitOne,
		Decimal: func(p, s int) string {
			return fmt.Sprintf("numeric(%d,%d)", p, s)
		},
		Timestamp:         "timestamp",
		Varchar:           func(n int) string { return fmt.Sprintf("varchar(%d)", n) },
		Char:              func(n int) string { return fmt.Sprintf("char(%d)", n) },
		LockingIsolation:  sql.LevelReadCommitted,
		SnapshotIsolation: sql.LevelRepeatableRead,
		DropTable:         dropTable,
		Analyze:           analyze,
		MaxInsertRows:     1,
		Blob:              "blob sub_type binary",
		Dual:              " FROM RDB$DATABASE",
		Concat:            func(e ...string) string { return "(" + strings.Join(e, " || ") + ")" },
		// PSQL: procedures and EXECUTE BLOCK cannot COMMIT or ROLLBACK the transaction they
		// run in (only IN AUTONOMOUS TRANSACTION blocks commit, separately).
		ProcedureLanguage: "psql",
		FoldsUpper:        true,
		// github.com/nakagami/firebirdsql's Exec asks for the row count after executing.
		ExecCountsRows: true,
	}
}

// limitOne appends ROWS 1, before a trailing WITH LOCK if there is one.
func limitOne(q string) string {
	trimmed := strings.TrimRight(q, " \t\n;")
	if strings.HasSuffix(strings.ToUpper(trimmed), strings.TrimSpace(lockSuffix)) {
		base := trimmed[:len(trimmed)-len(strings.TrimSpace(lockSuffix))]
		return strings.TrimRight(base, " \t\n") + " ROWS 1" + lockSuffix
	}
	return trimmed + " ROWS 1"
}

// systemName is how Firebird stores an identifier in the system tables: upper-cased when
// unquoted, verbatim when quoted.
func systemName(ident string) string {
	if len(ident) >= 2 && ident[0] == '"' && ident[len(ident)-1] == '"' {
		return strings.ReplaceAll(ident[1:len(ident)-1], `""`, `"`)
	}
	return strings.ToUpper(ident)
}

// quoteIdent quotes name as stored in the system tables (see systemName).
func quoteIdent(name string) string {
	return `"` + strings.ReplaceAll(systemName(name), `"`, `""`) + `"`
}

func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// dropTable drops table if it exists. The statement's EXECUTE STATEMENT runs in the
// caller's transaction.
func dropTable(table string) string {
	return "EXECUTE BLOCK AS BEGIN IF (EXISTS(SELECT 1 FROM RDB$RELATIONS WHERE RDB$RELATION_NAME = " +
		sqlString(systemName(table)) + ")) THEN EXECUTE STATEMENT " +
		sqlString("DROP TABLE "+quoteIdent(table)) + "; END"
}

// analyze recomputes the selectivity of the indexes on table (SET STATISTICS INDEX), the
// only optimizer statistics Firebird keeps: all of them, or when cols is given those with a
// segment on one of cols. Indexes created before a bulk load keep the selectivity of the
// empty table until this runs.
func analyze(table string, cols []string) string {
	where := "RDB$RELATION_NAME = " + sqlString(systemName(table))
	if len(cols) > 0 {
		names := make([]string, len(cols))
		for i, c := range cols {
			names[i] = sqlString(systemName(c))
		}
		where += " AND RDB$INDEX_NAME IN (SELECT RDB$INDEX_NAME FROM RDB$INDEX_SEGMENTS WHERE RDB$FIELD_NAME IN (" +
			strings.Join(names, ", ") + "))"
	}
	return "EXECUTE BLOCK AS DECLARE i VARCHAR(63); BEGIN FOR SELECT TRIM(RDB$INDEX_NAME) FROM RDB$INDICES WHERE " +
		where + ` INTO :i DO EXECUTE STATEMENT 'SET STATISTICS INDEX "' || REPLACE(i, '"', '""') || '"'; END`
}
