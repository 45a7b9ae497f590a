package script

import (
	"database/sql"
	"strings"

	"github.com/dblat/dblat/internal/engine"
)

// txOf returns what an SQL statement does to the transaction, as the SQL of PostgreSQL and
// MariaDB says it (pgbench's scripts' own BEGIN and END included): BEGIN [WORK |
// TRANSACTION] and START TRANSACTION begin one; COMMIT, END and ROLLBACK [WORK |
// TRANSACTION] and ABORT end it; ROLLBACK TO a savepoint, MariaDB's BEGIN NOT ATOMIC and
// anything else are other statements. Engines whose SQL cannot begin a transaction say it
// themselves (engine.TxStatements).
func txOf(query string) engine.TxOp {
	w := engine.LeadingWords(query, 3)
	if len(w) == 0 {
		return engine.TxNone
	}
	next := ""
	if len(w) > 1 {
		next = w[1]
	}
	switch w[0] {
	case "BEGIN":
		switch next {
		case "", "WORK", "TRANSACTION", "ISOLATION", "READ", "DEFERRABLE", "NOT": // NOT DEFERRABLE; NOT ATOMIC below
			if next == "NOT" && len(w) > 2 && w[2] == "ATOMIC" {
				return engine.TxNone
			}
			return engine.TxBegin
		}
	case "START":
		if next == "TRANSACTION" {
			return engine.TxBegin
		}
	case "COMMIT", "END":
		if next != "PREPARED" {
			return engine.TxCommit
		}
	case "ROLLBACK", "ABORT":
		if next == "TO" || (len(w) > 2 && w[2] == "TO") || next == "PREPARED" {
			return engine.TxNone
		}
		return engine.TxRollback
	}
	return engine.TxNone
}

// returnsRows reports whether a statement returns rows by its first word (or RETURNING),
// so that the database/sql path reads them as a query (a Firebird SELECT does its work
// only as its rows are fetched; EXECUTE PROCEDURE with output parameters answers in the
// same round trip as a query).
func returnsRows(query string) bool {
	w := engine.LeadingWords(query, 1)
	if len(w) == 0 {
		return false
	}
	switch w[0] {
	case "SELECT", "WITH", "VALUES", "SHOW", "EXPLAIN", "DESCRIBE", "DESC", "CALL", "EXECUTE", "TABLE", "FETCH":
		return true
	}
	return containsWord(query, "RETURNING")
}

// containsWord reports whether word (upper case) appears in s as a whole word, in any case.
func containsWord(s, word string) bool {
	u := strings.ToUpper(s)
	for i := 0; ; {
		j := strings.Index(u[i:], word)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(word)
		if (j == 0 || !isIdentCont(u[j-1])) && (end == len(u) || !isIdentCont(u[end])) {
			return true
		}
		i = end
	}
}

// stmtTx is what one SQL statement of a script does to the transaction.
type stmtTx struct {
	op   engine.TxOp
	opts *sql.TxOptions // TxBegin on an engine whose driver begins transactions
}

// leftOpen finds, in the statements of s outside any \if, a transaction begun and never
// ended before the script's end: the command that began it, or nil. A script that begins
// or ends transactions inside an \if is left to the check at run time.
func leftOpen(s *Script, txs []stmtTx) *Command {
	depth := 0
	var open *Command
	cmds := s.Commands()
	for i := range cmds {
		c := &cmds[i]
		switch c.Kind {
		case CmdIf:
			depth++
		case CmdEndif:
			depth--
		case CmdSQL:
			op := txs[c.Stmt].op
			if op == engine.TxNone {
				continue
			}
			if depth > 0 {
				return nil
			}
			if op == engine.TxBegin {
				if open == nil {
					open = c
				}
			} else {
				open = nil
			}
		}
	}
	return open
}
