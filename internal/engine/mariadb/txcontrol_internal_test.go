package mariadb

import (
	"testing"

	"github.com/dblat/dblat/internal/wire"
)

// TestTxControl: a compound statement (BEGIN [NOT] ATOMIC ... END) ends a transaction by
// the COMMIT or ROLLBACK in its body; ATOMIC in a comment or string makes no compound
// statement of a plain BEGIN.
func TestTxControl(t *testing.T) {
	lex := myWire{}.Lexicon()
	for stmt, want := range map[string]wire.End{
		"BEGIN NOT ATOMIC UPDATE t SET a = 1; COMMIT; END": wire.EndCommit,
		"begin atomic rollback; end":                       wire.EndRollback,
		"BEGIN NOT ATOMIC SELECT 'COMMIT'; END":            wire.EndNone,
		"BEGIN /* ATOMIC */ WORK":                          wire.TxControl([]byte("BEGIN WORK"), lex),
		"BEGIN -- ATOMIC COMMIT\n":                         wire.TxControl([]byte("BEGIN"), lex),
		"COMMIT":                                           wire.EndCommit,
	} {
		if got := txControl([]byte(stmt), lex); got != want {
			t.Errorf("txControl(%q) = %v, want %v", stmt, got, want)
		}
	}
}
