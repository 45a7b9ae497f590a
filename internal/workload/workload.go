// Package workload is the seam for what a benchmark runs. A workload knows its schema, how to
// load it, and how one terminal chooses and executes its next transaction. Each workload
// package registers a Definition (registry.go): its name, scale, transaction types, default
// mix, headline metric and options, and its load, loaded, new and check hooks; the execution
// core and the command line work from those declarations alone, and workload/all imports
// every workload package. Options are declared in package option's vocabulary; a run's own
// parameters come from package spec, whose types Config and LoadConfig embed rather than
// copy (spec.ScriptParams). It does not time, count or store anything: package runner does
// that around Terminal.Run, and package results stores what the runner measured.
package workload

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/dblat/dblat/internal/engine"
)

// ErrExpectedRollback is returned by Terminal.Run when the transaction rolled back by design
// (TPC-C New-Order's 1 % unused item, clause 2.4.2.3). The runner counts it as a completed,
// rolled-back transaction, never as an error.
var ErrExpectedRollback = errors.New("expected rollback")

// ErrNotLoaded is wrapped by Check/Prepare errors when the database holds no data for the
// workload, so the CLI can say "run `dblat load` first".
var ErrNotLoaded = errors.New("workload not loaded")

// Target is an open database together with the engine that speaks to it.
type Target struct {
	Engine engine.Engine
	DB     *sql.DB
}

// TxType names one kind of transaction of a workload and its share of the mix.
type TxType struct {
	Name   string
	Weight float64
}

// Pause is the keying and think time around one transaction (TPC-C 5.2.5); zero when pacing is off.
type Pause struct {
	Keying, Think time.Duration
}

// Workload is a loaded benchmark ready to run: its transaction types and its terminals.
type Workload interface {
	// Name is the workload's name as stored with each run ("tpcc").
	Name() string
	// TxTypes lists the transaction types in a fixed order; Terminal.Next returns indexes into it.
	TxTypes() []TxType
	// Prepare checks that the data is there (wrapping ErrNotLoaded if not) and prepares
	// statements on db. It is called once, before any terminal runs; statements prepared on
	// db (not on a *sql.Conn) are reused per connection by (*sql.Tx).StmtContext.
	Prepare(ctx context.Context, db *sql.DB) error
	// NewTerminal returns terminal number id (0-based). Terminals are seeded from the run's
	// seed and id, so a run is reproducible up to timing.
	NewTerminal(id int) Terminal
}

// Describer is an optional Workload capability: facts about how the workload runs on its
// engine, stored with the run's options ("mode" = "client", "explicit_tx" = "true"). It is
// called after Prepare.
type Describer interface {
	Describe() map[string]string
}

// Sourcer is an optional Workload capability: the text of what the workload runs, stored
// with the run so that a report says exactly what ran (the script workload: each script as
// the run's engine runs it, and the init script that made its data). It is called after
// New.
type Sourcer interface {
	Sources() []Source
}

// Source is one text a run runs.
type Source struct {
	// Kind is SourceScript (a transaction type's script file), SourceBuiltin (a built-in
	// script) or SourceInit (the script that creates and fills the data).
	Kind string
	// Name is the transaction type the script is ("orders"), or "init".
	Name string
	// Path is the file as the run names it (the engine's variant when it ran one), or the
	// built-in script's name.
	Path string
	// Weight is the script's weight in the mix; 0 for an init script.
	Weight float64
	Text   string
}

// The kinds of Source.
const (
	SourceScript  = "script"
	SourceBuiltin = "builtin"
	SourceInit    = "init"
)

// Terminal is one emulated user. A terminal is used by one goroutine at a time.
//
// The runner calls Next to draw a transaction — its type, its input and the pauses around
// it — and then Run to execute it. A transaction that fails with a retryable error
// (engine.ClassRetryable: a serialization failure, a deadlock, an update conflict) may be run
// again, up to the run's maximum number of tries: the runner then calls Run again without a
// Next in between, and Run must execute the same input (pgbench's --max-tries semantics).
// Run therefore draws nothing at random: every random choice of a transaction, down to the
// bytes a write stores, is made by Next.
type Terminal interface {
	// Next draws the next transaction: it chooses its type (an index into the workload's
	// TxTypes) and its input, which the terminal keeps for Run, and returns the type and
	// the pauses around it.
	Next() (txType int, pause Pause)
	// Run executes the transaction the last Next drew on conn, which the runner has checked
	// out of its pool for this transaction only. It returns nil on commit,
	// ErrExpectedRollback for a designed rollback, or the driver's error after rolling
	// back. Called again before the next Next, it runs the same input again (a retry).
	//
	// ctx may never be canceled itself: the runner stops a transaction in flight by closing
	// its connection, and carries its own cancellation as Stopping(ctx) for what Run waits
	// on other than the server (a script's \sleep).
	Run(ctx context.Context, conn *sql.Conn) error
}

type stoppingKey struct{}

// WithStopping returns a context that is never canceled (context.WithoutCancel(ctx)) but
// carries ctx's cancellation, for Stopping: database drivers watch every statement's
// cancelable context (a goroutine or a callback per statement), and a transaction run on
// this one costs them nothing.
func WithStopping(ctx context.Context) context.Context {
	return context.WithValue(context.WithoutCancel(ctx), stoppingKey{}, ctx.Done())
}

// Stopping returns the cancellation WithStopping put in ctx, or ctx.Done() where there is
// none: a wait that is not on the server selects on it.
func Stopping(ctx context.Context) <-chan struct{} {
	if ch, ok := ctx.Value(stoppingKey{}).(<-chan struct{}); ok {
		return ch
	}
	return ctx.Done()
}
