package engine

import (
	"context"
	"database/sql"
)

// Users' own scripts (the script workload: pgbench's language) run through database/sql
// on any engine. The two optional capabilities below are where an engine does it its own
// way: ScriptConns runs them on the wire protocol's connection itself (PostgreSQL:
// pgbench's three protocols and its pipelines), TxStatements maps the statements that
// begin and end a transaction onto the driver's calls where the engine's SQL has none
// (Firebird's DSQL).

// ScriptConns is an optional Engine capability: the engine runs a script's statements on
// its driver's own connection rather than through database/sql, with the protocols it
// names (pgbench -M) and, where it can, in pipelines.
type ScriptConns interface {
	// ScriptProtocols lists the protocols NewScriptConn takes, pgbench's default first.
	ScriptProtocols() []string
	// ScriptPipelines reports whether a script's pipelines (\startpipeline) can run with
	// protocol.
	ScriptPipelines(protocol string) bool
	// NewScriptConn returns the executor of one pool connection for protocol. It keeps
	// what the engine keeps per connection (the statements it prepared): the caller keeps
	// one per connection, for as long as the connection lives.
	NewScriptConn(protocol string) (ScriptConn, error)
}

// ScriptConn runs a script's statements on one connection (ScriptConns.NewScriptConn). It
// is used by one goroutine at a time.
type ScriptConn interface {
	// Do runs fn with the executor bound to conn, the pool connection it belongs to: Exec
	// and the pipeline methods may only be called inside fn. When fn returns, Do ends a
	// transaction the script left open by rolling it back, and reports it: open is true
	// when there was one. err is fn's error, else the rollback's.
	Do(ctx context.Context, conn *sql.Conn, fn func() error) (open bool, err error)
	// Exec runs st (in a pipeline: queues it). Errors are the driver's.
	Exec(ctx context.Context, st *ScriptStmt) error
	// StartPipeline, SyncPipeline and EndPipeline are pgbench's \startpipeline,
	// \syncpipeline and \endpipeline; errors of queued statements surface at the sync
	// points. AbortPipeline leaves a pipeline after a failure without running what is
	// queued.
	StartPipeline(ctx context.Context) error
	SyncPipeline(ctx context.Context) error
	EndPipeline(ctx context.Context) error
	AbortPipeline()
}

// ScriptStmt is one SQL statement of a script for a ScriptConn.
type ScriptStmt struct {
	// Name identifies SQL within the run: the same name always comes with the same SQL,
	// so that a connection prepares it once under it.
	Name string
	// SQL is the statement: with its variables' values written in (the simple protocol),
	// else with the dialect's placeholders.
	SQL string
	// Args are the placeholders' values as text, nil for NULL: pgbench sends every
	// parameter as text and lets the server infer its type.
	Args [][]byte
	// Rows, when set, receives each result set of the statement: its columns, its number
	// of rows and its last row as text (nil for NULL). Without it the rows are read and
	// dropped.
	Rows func(columns []string, rows int, last [][]byte) error
}

// TxOp is what a statement does to the transaction (TxStatements).
type TxOp uint8

// The transaction operations of TxStatements.
const (
	TxNone     TxOp = iota // any other statement
	TxBegin                // begin a transaction (with options)
	TxCommit               // commit it
	TxRollback             // roll it back
)

// TxStatements is an optional Engine capability: the engine's SQL cannot begin a
// transaction by a statement (Firebird's DSQL: its driver starts transactions), so a
// script's BEGIN, START TRANSACTION, COMMIT, END and ROLLBACK become the driver's
// BeginTx, Commit and Rollback.
type TxStatements interface {
	// TxStatement returns what the statement sql does to the transaction, with, for
	// TxBegin, the options to begin it with. An error names a transaction statement the
	// engine cannot honour.
	TxStatement(sql string) (op TxOp, opts *sql.TxOptions, err error)
}
