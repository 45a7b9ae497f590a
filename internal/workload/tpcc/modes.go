package tpcc

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/option"
)

// Round-trip modes (Config.Mode). Each runs the same transactions on the same inputs and
// leaves the same data behind (TestModesAgree); they differ in how often the terminal
// waits for the server, which is what latency costs.
const (
	// ModeClient sends one prepared statement per step of each profile and waits for each
	// (the default; go-tpc and BenchBase run TPC-C this way).
	ModeClient = "client"
	// ModeBatched keeps the logic on the client but sends the statements in a few batches
	// per transaction, through the engine's engine.Batcher: reads of many rows in one
	// statement (IN lists), and every statement that does not need an earlier one's result
	// in the same batch. No server-side code is installed.
	ModeBatched = "batched"
	// ModeProcedure calls one stored procedure per transaction, installed at load time (or
	// by Prepare on a database loaded before): the whole profile runs on the server, as in
	// HammerDB. Procedure sources exist per Dialect.ProcedureLanguage.
	ModeProcedure = "procedure"
)

// Modes lists the round-trip modes in order of decreasing round trips.
var Modes = []string{ModeClient, ModeBatched, ModeProcedure}

// mode is Config.Mode once checked.
type mode int

const (
	modeClient mode = iota
	modeBatched
	modeProcedure
)

func (m mode) String() string { return Modes[m] }

// checkMode resolves name ("" is ModeClient) for engine e and says, when e cannot run it,
// which capability it lacks. Capabilities, not engine names, decide: batched needs an
// engine.Batcher, Dialect.Concat and a locking read of one row (canLockOldest), procedure
// a Dialect.ProcedureLanguage this package has procedures in.
func checkMode(name string, e engine.Engine) (mode, error) {
	switch name {
	case "", ModeClient:
		return modeClient, nil
	case ModeBatched:
		if engine.Caps(e).Batcher == nil {
			return 0, option.Errorf(OptionMode, "%s cannot run on %s: it cannot send statements in batches (no engine.Batcher)", name, e.Name())
		}
		if e.Dialect().Concat == nil {
			return 0, option.Errorf(OptionMode, "%s cannot run on %s: its dialect cannot concatenate strings in SQL (no Dialect.Concat)", name, e.Name())
		}
		if !canLockOldest(e.Dialect()) {
			return 0, option.Errorf(OptionMode, "%s cannot run on %s: its dialect cannot read one row with a lock (Delivery needs Dialect.LimitOne and Dialect.ForUpdate)", name, e.Name())
		}
		return modeBatched, nil
	case ModeProcedure:
		lang := e.Dialect().ProcedureLanguage
		if procLanguages[lang] == nil {
			known := append(make([]string, 0, len(procLanguages)), procLanguageNames...)
			have := "none"
			if lang != "" {
				have = strconv.Quote(lang)
			}
			return 0, option.Errorf(OptionMode, "%s cannot run on %s: tpcc has stored procedures in %s, the engine's procedure language is %s",
				name, e.Name(), strings.Join(known, ", "), have)
		}
		return modeProcedure, nil
	}
	return 0, option.Errorf(OptionMode, "%q is not a mode of tpcc (want %s)", name, strings.Join(Modes, ", "))
}

// The dispatchers run one transaction in the workload's mode.

func (w *Workload) runNewOrder(ctx context.Context, conn *sql.Conn, in newOrderInput) (newOrderOutput, error) {
	switch w.mode {
	case modeBatched:
		return w.newOrderBatched(ctx, conn, in)
	case modeProcedure:
		return w.newOrderProc(ctx, conn, in)
	}
	return w.newOrder(ctx, conn, in)
}

func (w *Workload) runPayment(ctx context.Context, conn *sql.Conn, in paymentInput) (paymentOutput, error) {
	switch w.mode {
	case modeBatched:
		return w.paymentBatched(ctx, conn, in)
	case modeProcedure:
		return w.paymentProc(ctx, conn, in)
	}
	return w.payment(ctx, conn, in)
}

func (w *Workload) runOrderStatus(ctx context.Context, conn *sql.Conn, in orderStatusInput) (orderStatusOutput, error) {
	switch w.mode {
	case modeBatched:
		return w.orderStatusBatched(ctx, conn, in)
	case modeProcedure:
		return w.orderStatusProc(ctx, conn, in)
	}
	return w.orderStatus(ctx, conn, in)
}

func (w *Workload) runDelivery(ctx context.Context, conn *sql.Conn, in deliveryInput) (deliveryOutput, error) {
	switch w.mode {
	case modeBatched:
		return w.deliveryBatched(ctx, conn, in)
	case modeProcedure:
		return w.deliveryProc(ctx, conn, in)
	}
	return w.delivery(ctx, conn, in)
}

func (w *Workload) runStockLevel(ctx context.Context, conn *sql.Conn, in stockLevelInput) (int, error) {
	switch w.mode {
	case modeBatched:
		return w.stockLevelBatched(ctx, conn, in)
	case modeProcedure:
		return w.stockLevelProc(ctx, conn, in)
	}
	return w.stockLevel(ctx, conn, in)
}

// scanValues stores vals, one row as a driver or an engine.BatchStmt hands it over, in
// dest, converting as (*sql.Rows).Scan does for the destination types this package uses:
// sql.Scanner implementations (money, rate, displayTime, sql.NullInt64), *string, *int
// and *int64. Integers may arrive as text (Firebird batches return text).
func scanValues(vals []any, dest ...any) error {
	if len(vals) != len(dest) {
		return fmt.Errorf("tpcc: %d values for %d destinations", len(vals), len(dest))
	}
	for i, d := range dest {
		if err := assign(d, vals[i]); err != nil {
			return fmt.Errorf("tpcc: column %d: %w", i+1, err)
		}
	}
	return nil
}

func assign(dest, src any) error {
	switch d := dest.(type) {
	case sql.Scanner:
		return d.Scan(src)
	case *string:
		switch s := src.(type) {
		case string:
			*d = s
		case []byte:
			*d = string(s)
		case int64:
			*d = strconv.FormatInt(s, 10)
		case nil:
			return fmt.Errorf("NULL where text is required")
		default:
			*d = fmt.Sprint(s)
		}
		return nil
	case *int:
		n, err := asInt(src)
		*d = int(n)
		return err
	case *int64:
		n, err := asInt(src)
		*d = n
		return err
	}
	return fmt.Errorf("cannot scan into %T", dest)
}

func asInt(src any) (int64, error) {
	switch x := src.(type) {
	case int64:
		return x, nil
	case string:
		return strconv.ParseInt(strings.TrimSpace(x), 10, 64)
	case []byte:
		return strconv.ParseInt(strings.TrimSpace(string(x)), 10, 64)
	case float64:
		if x == float64(int64(x)) {
			return int64(x), nil
		}
	case nil:
		return 0, fmt.Errorf("NULL where an integer is required")
	}
	return 0, fmt.Errorf("cannot scan %T (%v) as an integer", src, src)
}
