package firebird

import (
	"database/sql"
	"fmt"
	"strings"

	"github.com/dblat/dblat/internal/engine"
)

var _ engine.TxStatements = Engine{}

// TxStatement implements engine.TxStatements. Firebird's DSQL has no statement that begins
// a transaction: the client starts one (isc_start_transaction, the driver's BeginTx), and
// COMMIT and ROLLBACK through the API end it. A script's transaction statements therefore
// become the driver's calls:
//
//   - BEGIN [WORK | TRANSACTION], START TRANSACTION and SET TRANSACTION begin one. Without
//     options it is READ COMMITTED READ WRITE with the run's transaction parameters (the
//     options lock_resolution and record_version: Dialect.LockingIsolation, as pgbench's
//     plain BEGIN is READ COMMITTED on PostgreSQL). ISOLATION LEVEL READ COMMITTED,
//     SNAPSHOT (or REPEATABLE READ), SNAPSHOT TABLE STABILITY (or SERIALIZABLE), and READ
//     ONLY or READ WRITE choose another; WAIT, NO WAIT and [NO] RECORD_VERSION are the
//     run's options, not the statement's (the driver takes them per connection), and a
//     statement that gives them is refused with the option to use.
//   - COMMIT [WORK] and END [WORK | TRANSACTION] commit it; ROLLBACK [WORK] and ABORT roll
//     it back. ROLLBACK TO SAVEPOINT is Firebird's own and goes to the server as written;
//     COMMIT and ROLLBACK RETAINING are refused (they keep the transaction open: scripts end
//     theirs).
func (Engine) TxStatement(query string) (engine.TxOp, *sql.TxOptions, error) {
	w := engine.LeadingWords(query, 12)
	if len(w) == 0 {
		return engine.TxNone, nil, nil
	}
	switch w[0] {
	case "BEGIN":
		// BEGIN alone: EXECUTE BLOCK and PSQL bodies never start with it.
		rest := w[1:]
		if len(rest) > 0 && (rest[0] == "WORK" || rest[0] == "TRANSACTION") {
			rest = rest[1:]
		}
		return beginOptions(query, rest)
	case "START":
		if len(w) > 1 && w[1] == "TRANSACTION" {
			return beginOptions(query, w[2:])
		}
	case "SET":
		if len(w) > 1 && w[1] == "TRANSACTION" {
			return beginOptions(query, w[2:])
		}
	case "COMMIT", "END":
		if len(w) > 1 && (w[1] == "WORK" || w[1] == "TRANSACTION") {
			w = w[1:]
		}
		if len(w) > 1 && w[1] == "RETAINING" {
			return engine.TxNone, nil, fmt.Errorf("%s RETAINING keeps the transaction open: end it with COMMIT", w[0])
		}
		if len(w) > 1 {
			return engine.TxNone, nil, fmt.Errorf("%q: COMMIT or END takes no options here", strings.TrimSpace(query))
		}
		return engine.TxCommit, nil, nil
	case "ROLLBACK", "ABORT":
		if len(w) > 1 && w[1] == "WORK" {
			w = w[1:]
		}
		switch {
		case len(w) > 1 && w[1] == "TO":
			return engine.TxNone, nil, nil // a savepoint: Firebird's own statement
		case len(w) > 1 && w[1] == "RETAINING":
			return engine.TxNone, nil, fmt.Errorf("ROLLBACK RETAINING keeps the transaction open: end it with ROLLBACK")
		case len(w) > 1:
			return engine.TxNone, nil, fmt.Errorf("%q: ROLLBACK takes no options here", strings.TrimSpace(query))
		}
		return engine.TxRollback, nil, nil
	}
	return engine.TxNone, nil, nil
}

// beginOptions reads the options after BEGIN, START TRANSACTION or SET TRANSACTION.
func beginOptions(query string, w []string) (engine.TxOp, *sql.TxOptions, error) {
	opts := &sql.TxOptions{Isolation: sql.LevelReadCommitted}
	refuse := func(what, option string) (engine.TxOp, *sql.TxOptions, error) {
		return engine.TxNone, nil, fmt.Errorf("%q: %s is a run option on Firebird (--%s), not a statement's", strings.TrimSpace(query), what, option)
	}
	for i := 0; i < len(w); i++ {
		next := func(k int) string {
			if i+k < len(w) {
				return w[i+k]
			}
			return ""
		}
		switch {
		case w[i] == "READ" && next(1) == "ONLY":
			opts.ReadOnly = true
			i++
		case w[i] == "READ" && next(1) == "WRITE":
			i++
		case w[i] == "WAIT", w[i] == "NOWAIT", w[i] == "NO" && next(1) == "WAIT":
			return refuse("the lock resolution", "lock-resolution")
		case w[i] == "RECORD_VERSION", w[i] == "NO" && next(1) == "RECORD_VERSION":
			return refuse("the record version", "record-version")
		case w[i] == "ISOLATION" && next(1) == "LEVEL":
			i += 2
			switch {
			case next(0) == "READ" && next(1) == "COMMITTED":
				opts.Isolation = sql.LevelReadCommitted
				i++
			case next(0) == "SNAPSHOT" && next(1) == "TABLE" && next(2) == "STABILITY":
				opts.Isolation = sql.LevelSerializable
				i += 2
			case next(0) == "SNAPSHOT":
				opts.Isolation = sql.LevelRepeatableRead
			case next(0) == "REPEATABLE" && next(1) == "READ":
				opts.Isolation = sql.LevelRepeatableRead
				i++
			case next(0) == "SERIALIZABLE":
				opts.Isolation = sql.LevelSerializable
			default:
				return engine.TxNone, nil, fmt.Errorf("%q: unknown isolation level (READ COMMITTED, SNAPSHOT, SNAPSHOT TABLE STABILITY)", strings.TrimSpace(query))
			}
		default:
			return engine.TxNone, nil, fmt.Errorf("%q: unknown transaction option %s (Firebird's driver takes READ ONLY, READ WRITE and ISOLATION LEVEL)", strings.TrimSpace(query), w[i])
		}
	}
	return engine.TxBegin, opts, nil
}
