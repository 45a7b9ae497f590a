package tpcc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/option"
	"github.com/dblat/dblat/internal/workload"
)

// Transaction type indexes, in the order of Workload.TxTypes.
const (
	txNewOrder = iota
	txPayment
	txOrderStatus
	txDelivery
	txStockLevel
	numTxTypes
)

// txNames are the transaction type names stored with each run.
var txNames = [numTxTypes]string{"new_order", "payment", "order_status", "delivery", "stock_level"}

// Mix is the relative weight of each transaction type; terminals choose each transaction
// at random with these weights (the weighted method of §5.2.4.1). Weights need not sum to
// 100. The zero Mix means DefaultMix.
type Mix struct {
	NewOrder, Payment, OrderStatus, Delivery, StockLevel float64
}

// DefaultMix is 45/43/4/4/4: the minimums of §5.2.3 (Payment 43 %, the others 4 %) with
// New-Order taking the remaining 45 %, which is what every kit runs.
var DefaultMix = Mix{NewOrder: 45, Payment: 43, OrderStatus: 4, Delivery: 4, StockLevel: 4}

func (m Mix) weights() [numTxTypes]float64 {
	return [numTxTypes]float64{m.NewOrder, m.Payment, m.OrderStatus, m.Delivery, m.StockLevel}
}

// String renders m as workload.ParseMix reads it: "new_order=45,payment=43,...".
func (m Mix) String() string {
	var b strings.Builder
	for i, w := range m.weights() {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(txNames[i])
		b.WriteByte('=')
		b.WriteString(strconv.FormatFloat(w, 'g', -1, 64))
	}
	return b.String()
}

// SpecViolation returns "" when m meets the minimum shares of §5.2.3 (Payment >= 43 %,
// Order-Status, Delivery and Stock-Level >= 4 % each, of all transactions), else a
// sentence saying which share is short. Runs with other mixes are legitimate experiments;
// they are just not TPC-C-like in their mix.
func (m Mix) SpecViolation() string {
	w := m.weights()
	var total float64
	for _, x := range w {
		total += x
	}
	if total <= 0 {
		return "the mix is empty"
	}
	minimum := [numTxTypes]float64{0, 43, 4, 4, 4}
	for i, x := range w {
		// A tiny tolerance, so that 43/100 computed in floating point still counts as 43 %.
		if share := 100 * x / total; share < minimum[i]-1e-9 {
			return fmt.Sprintf("%s is %.1f %% of the mix; §5.2.3 asks for at least %g %%", txNames[i], share, minimum[i])
		}
	}
	return ""
}

// Config says how a run drives the loaded database.
type Config struct {
	// Warehouses is the number of active warehouses W_a (§4.2.2 Comment): terminals use
	// warehouses 1..Warehouses. 0 means all loaded ones.
	Warehouses int
	// Seed seeds the run: the NURand C-Run constants (§2.1.6) and every terminal's inputs.
	Seed int64
	// Mix weighs the transaction types; the zero Mix is DefaultMix.
	Mix Mix
	// Think turns on the keying and think times of §5.2.5 (off by default, as in every
	// kit: with them on, a terminal runs a transaction about every 21 s).
	Think bool
	// Mode is how the transactions talk to the server: ModeClient (""), ModeBatched or
	// ModeProcedure. Every mode leaves the same data behind for the same inputs; they
	// differ in round trips per transaction.
	Mode string
	// HomeWarehouses, when set ({LO, HI}), gives the terminals home warehouses LO..HI
	// only (round-robin, as over all active ones otherwise); remote warehouses are still
	// drawn from all active ones (§2.4.1.5, §2.5.1.2). Agents that drive one run together
	// take disjoint ranges, so every warehouse has its terminals on one agent. The zero
	// value means all active warehouses.
	HomeWarehouses [2]int
	// Deck draws each terminal's transaction types from a deck of cards in the mix's
	// proportions, shuffled anew every time it is used up (§5.2.4.2, whose deck is the one
	// of the mix 10, 10, 1, 1, 1: 23 cards), instead of independently at random with its
	// weights (§5.2.4.1). Every deck then holds the mix exactly, so that the New-Orders a
	// window counts vary with the deck's order only, not with the luck of each draw: at a
	// few dozen transactions per terminal, independent draws alone make NOPM vary by
	// several per cent between seeds.
	Deck bool
}

// Workload is TPC-C on one loaded database; it implements workload.Workload. New makes
// it, Prepare readies it, NewTerminal makes its terminals. After Prepare it is safe for
// concurrent use by the terminals.
type Workload struct {
	cfg     Config
	mix     [numTxTypes]float64
	engine  engine.Engine
	d       engine.Dialect
	mode    mode
	batcher engine.Batcher // ModeBatched
	proc    *procLanguage  // ModeProcedure
	rw, ro  *sql.TxOptions
	w       int          // active warehouses, set by Prepare
	c       runConstants // set by Prepare
	st      *statements  // set by Prepare
	calls   *driverStmts // ModeProcedure's calls outside transactions, set by Prepare
}

var _ workload.Workload = (*Workload)(nil)

// New checks cfg and returns the workload for t. It does not touch the database; Prepare
// does. A Mode the engine cannot run is an error that names the engine, the mode and the
// capability it lacks.
func New(t workload.Target, cfg Config) (*Workload, error) {
	if t.Engine == nil {
		return nil, errors.New("tpcc: no engine")
	}
	if cfg.Warehouses < 0 {
		return nil, fmt.Errorf("tpcc: warehouses must not be negative, got %d", cfg.Warehouses)
	}
	if h := cfg.HomeWarehouses; h != [2]int{} && (h[0] < 1 || h[1] < h[0]) {
		return nil, fmt.Errorf("tpcc: home warehouses %d-%d: want 1 ≤ LO ≤ HI", h[0], h[1])
	}
	if cfg.Mix == (Mix{}) {
		cfg.Mix = DefaultMix
	}
	mix := cfg.Mix.weights()
	var total float64
	for _, x := range mix {
		if x < 0 || math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("tpcc: invalid mix %v", cfg.Mix)
		}
		total += x
	}
	if total <= 0 {
		return nil, errors.New("tpcc: the mix is empty")
	}
	m, err := checkMode(cfg.Mode, t.Engine)
	if err != nil {
		return nil, err
	}
	d := t.Engine.Dialect()
	batcher := engine.Caps(t.Engine).Batcher
	return &Workload{
		cfg: cfg, mix: mix, engine: t.Engine, d: d, mode: m, batcher: batcher, proc: procLanguages[d.ProcedureLanguage],
		// See doc.go, "Isolation".
		rw: &sql.TxOptions{Isolation: d.LockingIsolation},
		ro: &sql.TxOptions{Isolation: d.SnapshotIsolation, ReadOnly: true},
	}, nil
}

// Mode returns the round-trip mode the workload runs in (ModeClient, ModeBatched or
// ModeProcedure).
func (w *Workload) Mode() string { return w.mode.String() }

// Name returns "tpcc".
func (w *Workload) Name() string { return "tpcc" }

// TxTypes lists new_order, payment, order_status, delivery and stock_level with their
// weights; Terminal.Next returns indexes into this list.
func (w *Workload) TxTypes() []workload.TxType {
	t := make([]workload.TxType, numTxTypes)
	for i := range t {
		t[i] = workload.TxType{Name: txNames[i], Weight: w.mix[i]}
	}
	return t
}

// Warehouses returns the number of active warehouses; valid after Prepare.
func (w *Workload) Warehouses() int { return w.w }

// Prepare reads tpcc_meta (an error wrapping workload.ErrNotLoaded if the database holds
// no completed load), checks that the configured warehouses are loaded, draws the run's
// NURand constants and prepares every statement on db. Terminals must run their
// transactions on connections of db: statements prepared here are re-prepared once per
// connection by (*sql.Tx).StmtContext and then reused. In ModeProcedure it installs the
// stored procedures when they are missing or from another version.
func (w *Workload) Prepare(ctx context.Context, db *sql.DB) error {
	m, err := readMeta(ctx, db)
	if err != nil {
		if errors.Is(err, workload.ErrNotLoaded) {
			return fmt.Errorf("tpcc: %w; run `dblat load tpcc` first", err)
		}
		return fmt.Errorf("tpcc: %w", err)
	}
	if w.cfg.Warehouses > m.warehouses {
		return fmt.Errorf("tpcc: asked for %d warehouses, %d loaded", w.cfg.Warehouses, m.warehouses)
	}
	w.w = w.cfg.Warehouses
	if w.w == 0 {
		w.w = m.warehouses
	}
	if hi := w.cfg.HomeWarehouses[1]; hi > w.w {
		active := fmt.Sprintf("%d warehouses are active", w.w)
		if w.w == 1 {
			active = "only 1 warehouse is active"
		}
		return option.Errorf(OptionHomeWarehouses, "goes up to warehouse %d, but %s", hi, active)
	}
	w.c = newRunConstants(w.cfg.Seed, m.cLoad)
	if w.st != nil {
		w.st.close()
	}
	if w.st, err = prepareStatements(ctx, db, w.d); err != nil {
		return err
	}
	if w.mode == modeProcedure {
		return w.prepareProcedures(ctx, db)
	}
	return nil
}

// Close releases the prepared statements. The workload must not be used afterwards.
func (w *Workload) Close() error {
	if w.st != nil {
		w.st.close()
		w.st = nil
	}
	w.calls = nil
	return nil
}

// NewTerminal returns terminal id (0-based), seeded from the run seed and id. Its home
// warehouse is id % W + 1 (§2.4.1.1, §2.5.1.1, ...; terminals spread round-robin, so with
// 10 terminals per warehouse each warehouse has 10), and its Stock-Level district is
// (id / W) % 10 + 1, unique per (warehouse, district) for the first 10·W terminals
// (§2.8.1.1). With Config.HomeWarehouses, W is the range's size and homes start at its LO.
// It must be called after Prepare.
func (w *Workload) NewTerminal(id int) workload.Terminal {
	if w.st == nil {
		panic("tpcc: NewTerminal before Prepare")
	}
	return w.newTerminal(id)
}

// preparer prepares statements until the first error.
type preparer struct {
	ctx context.Context
	db  *sql.DB
	d   engine.Dialect
	err error
	all []*sql.Stmt
}

// prep prepares q, written with "?" placeholders.
func (p *preparer) prep(q string) *sql.Stmt {
	if p.err != nil {
		return nil
	}
	s, err := p.db.PrepareContext(p.ctx, p.d.Rebind(q))
	if err != nil {
		p.err = fmt.Errorf("tpcc: prepare %s: %w", q, err)
		return nil
	}
	p.all = append(p.all, s)
	return s
}

// statements holds every prepared statement of the five transactions.
type statements struct {
	all []*sql.Stmt
	newOrderStmts
	paymentStmts
	orderStatusStmts
	deliveryStmts
	stockLevelStmts
	// procCall calls each transaction's procedure, when the client must begin and end the
	// transaction around it (ModeProcedure in PSQL).
	procCall [numTxTypes]*sql.Stmt
}

func prepareStatements(ctx context.Context, db *sql.DB, d engine.Dialect) (*statements, error) {
	p := &preparer{ctx: ctx, db: db, d: d}
	st := &statements{}
	st.newOrderStmts.prepare(p)
	st.paymentStmts.prepare(p)
	st.orderStatusStmts.prepare(p)
	st.deliveryStmts.prepare(p)
	st.stockLevelStmts.prepare(p)
	st.all = p.all
	if p.err != nil {
		st.close()
		return nil, p.err
	}
	return st, nil
}

func (s *statements) close() {
	for _, x := range s.all {
		_ = x.Close()
	}
}

// errRollback is returned inside a transaction body to roll back by design.
var errRollback = errors.New("rollback by design")

// inTx runs body in a transaction on conn with opts, commits it, and rolls it back when
// body fails. body returning errRollback makes inTx roll back and return
// workload.ErrExpectedRollback.
func inTx(ctx context.Context, conn *sql.Conn, opts *sql.TxOptions, body func(tx *sql.Tx) error) error {
	tx, err := conn.BeginTx(ctx, opts)
	if err != nil {
		return err
	}
	if err := body(tx); err != nil {
		rbErr := tx.Rollback()
		if errors.Is(err, errRollback) {
			if rbErr != nil {
				return rbErr
			}
			return workload.ErrExpectedRollback
		}
		return err
	}
	return tx.Commit()
}

// returning reports whether the dialect reads back updated rows with UPDATE ... RETURNING;
// without it every such update is followed by a SELECT of the (now locked) row.
func (w *Workload) returning() bool { return w.d.SupportsReturning }
