package tpcc

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/runner"
	"github.com/dblat/dblat/internal/spec"
)

// deliveryHeavyMix is 4,4,4,80,8: Deliveries of one warehouse fight for each district's
// oldest NEW-ORDER row, and the few New-Orders and Payments meet them on the customer and
// district rows. It is the mix under which the batched and procedure modes once deadlocked
// or lost rows where the client mode did not.
var deliveryHeavyMix = Mix{NewOrder: 4, Payment: 4, OrderStatus: 4, Delivery: 80, StockLevel: 8}

// contentionWarmup and contentionWindow are each mode's warm-up and measurement window in
// TestModesUnderContention. A lock cycle among Deliveries forms within the first few
// Deliveries and, on Firebird, which looks for deadlocks after 10 s at best, then holds
// every terminal: the warm-up lets it form, so that the window has no commits. The window
// is long enough for some hundred Deliveries to queue for the same rows on each engine,
// short enough that nine runs, three loads and six copies take under a minute on a quiet
// machine (the engines in parallel; about two with others' tests running).
const (
	contentionWarmup = time.Second
	contentionWindow = 3 * time.Second
)

// contentionTries is how often TestModesUnderContention tries a transaction that failed
// with a retryable error (a lost race for a hot row), as `dblat run --max-tries` does.
const contentionTries = 3

// modeRun is what one mode's run under contention did: the runner's figures per
// transaction type and the orders its Deliveries delivered (counted in the database, since
// a Delivery of a district without undelivered orders commits too).
type modeRun struct {
	tx        map[string]results.TxSummary
	examples  map[string][]string
	delivered int64
}

// TestModesUnderContention runs the Delivery-heavy mix with 16 terminals on one warehouse,
// through the runner, in every mode on every engine, each mode on its own copy of one
// load. Every mode must commit Deliveries in the window and deliver orders, and no mode may
// fail a transaction, with one exception: on an engine whose writes can lose races
// (modeEngine.conflicts), New-Order and Payment may lose some for their hot rows, in every
// mode alike, after contentionTries tries each. The client mode has no other error (its Deliveries queue on their locking
// read); a deadlock, a vanished row or a lost race in another mode is an error it does
// not have.
func TestModesUnderContention(t *testing.T) {
	for _, e := range modeEngines {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			src := e.empty(t)
			tg := open(t, e.eng, src, engine.OpenOptions{})
			if err := Load(ctx, tg, LoadConfig{Warehouses: 1, Seed: 7}); err != nil {
				t.Fatal(err)
			}
			tg.DB.Close()
			dsns := map[string]string{ModeClient: src}
			for _, m := range Modes[1:] {
				dsns[m] = e.clone(t, src)
			}
			for _, m := range Modes {
				r := runUnderContention(t, e.eng, dsns[m], m)
				t.Logf("%s mode: %d orders delivered by %d Deliveries; errors %s", m, r.delivered, r.tx[txNames[txDelivery]].Committed, errorSummary(r))
				if d := r.tx[txNames[txDelivery]]; d.Committed == 0 || r.delivered == 0 {
					t.Errorf("%s mode: %d Deliveries committed, %d orders delivered in %v; want some (a stall?)", m, d.Committed, r.delivered, contentionWindow)
				}
				for typ, name := range txNames {
					tx := r.tx[name]
					for class, n := range tx.Errors {
						if n == 0 {
							continue
						}
						if e.conflicts && hotRow[typ] && class == engine.ClassRetryable.String() {
							// Lost races for a hot row, in every mode on this engine: how many
							// depends on how fast the server turns transactions over, so only
							// that each was tried contentionTries times is checked. Every
							// transaction that ended with a retryable error in the window was
							// (no latency limit, the run not canceled), and Retries counts
							// the tries beyond the first of all that ended in the window.
							if want := (contentionTries - 1) * n; tx.Retries < want || tx.Retried < n {
								t.Errorf("%s mode: %d %s transactions lost a race for a row after %d tries each; counted %d retries of %d transactions, want at least %d of %d",
									m, n, name, contentionTries, tx.Retries, tx.Retried, want, n)
							}
							continue
						}
						t.Errorf("%s mode, %s: %d errors of class %s (e.g. %v)", m, name, n, class, r.examples[class])
					}
				}
			}
		})
	}
}

// runUnderContention runs the Delivery-heavy mix in mode on the loaded database dsn and
// returns what it did: the runner's figures of the window, the orders delivered from the
// start of the warm-up to the end of the run.
func runUnderContention(t *testing.T, e engine.Engine, dsn, mode string) modeRun {
	t.Helper()
	ctx := context.Background()
	tg := open(t, e, dsn, engine.OpenOptions{})
	defer tg.DB.Close()
	// In a transaction of its own: Firebird's driver runs a statement outside one in a
	// long-lived transaction, whose snapshot may be older than the run.
	delivered := func() int64 {
		tx, err := tg.DB.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		var n int64
		if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM orders WHERE o_carrier_id IS NOT NULL").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := delivered()
	w, err := New(tg, Config{Seed: 8, Mix: deliveryHeavyMix, Mode: mode})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	res, err := runner.Run(ctx, tg, w, runner.Config{Drive: spec.Drive{Terminals: 16, Warmup: contentionWarmup,
		Duration: contentionWindow, MaxTries: contentionTries}})
	if err != nil {
		t.Fatalf("%s mode: %v", mode, err)
	}
	r := modeRun{tx: map[string]results.TxSummary{}, examples: res.Summary.ErrorExamples, delivered: delivered() - before}
	for _, s := range res.Tx {
		r.tx[s.Type] = s
	}
	return r
}

// errorSummary renders a run's errors as "delivery retryable 3, ..." or "none".
func errorSummary(r modeRun) string {
	var parts []string
	for _, typ := range txNames {
		for class, n := range r.tx[typ].Errors {
			if n > 0 {
				parts = append(parts, fmt.Sprintf("%s %s %d", typ, class, n))
			}
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
