package firebird

import (
	"database/sql"
	"strings"
	"testing"

	"github.com/dblat/dblat/internal/engine"
)

// TestTxStatement pins how a script's transaction statements map onto the driver's
// transaction: what begins one (and with which options), ends it, is Firebird's own, or is
// refused with the option to use instead.
func TestTxStatement(t *testing.T) {
	rc := &sql.TxOptions{Isolation: sql.LevelReadCommitted}
	for _, tc := range []struct {
		sql  string
		op   engine.TxOp
		opts *sql.TxOptions
		err  string
	}{
		{"BEGIN;", engine.TxBegin, rc, ""},
		{"begin work", engine.TxBegin, rc, ""},
		{"START TRANSACTION;", engine.TxBegin, rc, ""},
		{"SET TRANSACTION READ ONLY ISOLATION LEVEL SNAPSHOT;", engine.TxBegin, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}, ""},
		{"SET TRANSACTION ISOLATION LEVEL SNAPSHOT TABLE STABILITY", engine.TxBegin, &sql.TxOptions{Isolation: sql.LevelSerializable}, ""},
		{"BEGIN ISOLATION LEVEL REPEATABLE READ;", engine.TxBegin, &sql.TxOptions{Isolation: sql.LevelRepeatableRead}, ""},
		{"START TRANSACTION READ WRITE ISOLATION LEVEL READ COMMITTED", engine.TxBegin, rc, ""},
		{"-- a comment\nCOMMIT;", engine.TxCommit, nil, ""},
		{"END;", engine.TxCommit, nil, ""},
		{"end transaction", engine.TxCommit, nil, ""},
		{"ROLLBACK;", engine.TxRollback, nil, ""},
		{"ROLLBACK WORK", engine.TxRollback, nil, ""},
		{"ROLLBACK TO SAVEPOINT s1;", engine.TxNone, nil, ""},
		{"EXECUTE BLOCK AS BEGIN END", engine.TxNone, nil, ""},
		{"SELECT 1 FROM RDB$DATABASE;", engine.TxNone, nil, ""},
		{"SET TRANSACTION NO WAIT;", engine.TxNone, nil, "lock resolution is a run option on Firebird (--lock-resolution)"},
		{"SET TRANSACTION ISOLATION LEVEL READ COMMITTED NO RECORD_VERSION", engine.TxNone, nil, "record version is a run option"},
		{"COMMIT RETAINING;", engine.TxNone, nil, "COMMIT RETAINING keeps the transaction open"},
		{"SET TRANSACTION ISOLATION LEVEL CHAOS", engine.TxNone, nil, "unknown isolation level"},
	} {
		op, opts, err := Engine{}.TxStatement(tc.sql)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%q: error %v, want %q", tc.sql, err, tc.err)
		case tc.err == "" && err != nil:
			t.Errorf("%q: %v", tc.sql, err)
		case op != tc.op || (tc.opts == nil) != (opts == nil) || (opts != nil && *opts != *tc.opts):
			t.Errorf("%q: %v %+v, want %v %+v", tc.sql, op, opts, tc.op, tc.opts)
		}
	}
}
