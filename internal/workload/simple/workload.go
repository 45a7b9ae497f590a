package simple

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/option"
	"github.com/dblat/dblat/internal/workload"
)

// Config says how a run drives the loaded database.
type Config struct {
	// Workload is "tpcb", "select-only", "blob" or "ping".
	Workload string
	// Scale is the pgbench scale the terminals use (tpcb, select-only): aid is drawn from
	// 1..100,000 × Scale, as pgbench's :scale does; 0 means the loaded scale, and more than
	// the loaded scale is an error.
	Scale int
	// Seed seeds every terminal's random inputs.
	Seed int64
	// Protocol is how statements travel where the engine has several protocols
	// (QueryProtocols): "prepared" (the default, also for ""), "simple" or "extended", as
	// pgbench -M. On engines without the capability only "" and "prepared" are accepted:
	// statements are prepared once per connection there.
	Protocol string
	// BlobsPerTx is how many blob rows a blob transaction reads or writes; 0 means 1. It
	// may not exceed the loaded rows.
	BlobsPerTx int
	// BlobWrite makes blob transactions replace the blobs with new random bytes of the same
	// size instead of reading them.
	BlobWrite bool
}

// Workload is one simple workload on a loaded database; it implements workload.Workload. New
// makes it, Prepare readies it, NewTerminal makes its terminals. After Prepare it is safe
// for concurrent use by the terminals.
type Workload struct {
	cfg    Config
	lead   []any             // the protocol's leading arguments (QueryProtocols)
	adHoc  bool              // statements go as text with lead; else prepared through database/sql
	raw    engine.RowQuerier // lean path for single-row statements run alone, when adHoc
	txOnly bool              // single statements too run in an explicit transaction (TxOnly)
	rw, ro *sql.TxOptions
	txName string

	// Set by Prepare.
	prepared                    bool
	accounts, tellers, branches int // pgbench rows the terminals pick from
	blobSize, blobRows          int
	st                          []*statement // every statement, for Prepare and Close
	// The statements, by workload.
	updAccount, selAccount, updTeller, updBranch, insHistory *statement
	selBlobs, updBlob                                        *statement
	ping                                                     *statement
}

var _ workload.Workload = (*Workload)(nil)

// New checks cfg against the engine of t and returns the workload. It does not touch the
// database; Prepare does.
func New(t workload.Target, cfg Config) (*Workload, error) {
	if t.Engine == nil {
		return nil, errors.New("simple: no engine")
	}
	ds, err := dataset(cfg.Workload)
	if err != nil {
		return nil, fmt.Errorf("simple: %w", err)
	}
	if cfg.Scale < 0 {
		return nil, fmt.Errorf("simple: scale must not be negative, got %d", cfg.Scale)
	}
	if cfg.BlobsPerTx < 0 {
		return nil, option.Errorf(OptionBlobsPerTx, "must not be negative, got %d", cfg.BlobsPerTx)
	}
	if cfg.BlobsPerTx == 0 {
		cfg.BlobsPerTx = 1
	}
	if cfg.Protocol == "" {
		cfg.Protocol = "prepared"
	}
	d := t.Engine.Dialect()
	w := &Workload{cfg: cfg,
		// tpcb and blob writes change rows they locked by writing them first, which is what
		// LockingIsolation is for (READ COMMITTED, as pgbench's plain BEGIN on PostgreSQL).
		rw: &sql.TxOptions{Isolation: d.LockingIsolation},
		ro: &sql.TxOptions{ReadOnly: true},
	}
	if !slices.Contains(Protocols, cfg.Protocol) {
		return nil, option.Errorf(OptionProtocol, "%q is not a protocol (known: %s)", cfg.Protocol, strings.Join(Protocols, ", "))
	}
	caps := engine.Caps(t.Engine)
	switch qp := caps.QueryProtocols; {
	case qp != nil:
		w.lead, err = qp.QueryArgs(cfg.Protocol)
		switch {
		case err == nil:
			w.adHoc = true
		case cfg.Protocol != "prepared":
			return nil, &option.Error{Name: OptionProtocol, Err: fmt.Errorf("%s on %s: %w", cfg.Protocol, t.Engine.Name(), err)}
		}
	case cfg.Protocol != "prepared":
		return nil, option.Errorf(OptionProtocol, "%s is for engines with several query protocols, such as PostgreSQL: %s has one (statements are prepared once per connection)",
			cfg.Protocol, t.Engine.Name())
	}
	if w.adHoc {
		w.raw = caps.RowQuerier
	}
	if caps.TxOnly != nil {
		w.txOnly = caps.TxOnly.TxOnly()
	}
	if ds == dsBlob && d.Blob == "" {
		return nil, fmt.Errorf("simple: engine %s has no blob column type (Dialect.Blob)", t.Engine.Name())
	}

	stmt := func(q string) *statement {
		s := &statement{sql: d.Rebind(q), lead: w.lead, raw: w.raw}
		w.st = append(w.st, s)
		return s
	}
	switch cfg.Workload {
	case "tpcb":
		w.txName = "tpcb"
		// pgbench's built-in "tpcb-like" script (PG 15 pgbench.c, builtin_script[0]).
		w.updAccount = stmt("UPDATE pgbench_accounts SET abalance = abalance + ? WHERE aid = ?")
		w.selAccount = stmt("SELECT abalance FROM pgbench_accounts WHERE aid = ?")
		w.updTeller = stmt("UPDATE pgbench_tellers SET tbalance = tbalance + ? WHERE tid = ?")
		w.updBranch = stmt("UPDATE pgbench_branches SET bbalance = bbalance + ? WHERE bid = ?")
		w.insHistory = stmt("INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP)")
	case "select-only":
		w.txName = "select"
		// pgbench's built-in "select-only" script (builtin_script[2]).
		w.selAccount = stmt("SELECT abalance FROM pgbench_accounts WHERE aid = ?")
	case "blob":
		w.txName = "blob_read"
		w.selBlobs = stmt("SELECT id, data FROM simple_blob WHERE id BETWEEN ? AND ?")
		if cfg.BlobWrite {
			w.txName = "blob_write"
			w.updBlob = stmt("UPDATE simple_blob SET data = ? WHERE id = ?")
		}
	case "ping":
		w.txName = "ping"
		w.ping = stmt("SELECT 1" + d.Dual)
	}
	return w, nil
}

// Name returns the workload's name: "tpcb", "select-only", "blob" or "ping".
func (w *Workload) Name() string { return w.cfg.Workload }

// TxTypes lists the workload's single transaction type: "tpcb", "select", "blob_read",
// "blob_write" or "ping".
func (w *Workload) TxTypes() []workload.TxType {
	return []workload.TxType{{Name: w.txName, Weight: 1}}
}

// Protocol returns the protocol statements travel with: "prepared", "simple" or "extended".
func (w *Workload) Protocol() string { return w.cfg.Protocol }

// ExplicitTx reports whether single statements (select-only, ping, blob reads) run in an
// explicit read-only transaction, because the engine's autocommit is unsafe (TxOnly),
// rather than alone as pgbench runs them.
func (w *Workload) ExplicitTx() bool { return w.txOnly }

// Scale returns the pgbench scale the terminals use; valid after Prepare.
func (w *Workload) Scale() int { return w.accounts / accountsPerScale }

// Prepare checks that the workload's data is loaded (an error wrapping workload.ErrNotLoaded
// if not) and large enough for cfg, and, with the prepared protocol on an engine that leaves
// preparing to this package, prepares every statement on db. Terminals must run on connections of db. Calling Prepare again re-reads
// the load and re-prepares.
func (w *Workload) Prepare(ctx context.Context, db *sql.DB) error {
	info, err := Loaded(ctx, db, w.cfg.Workload)
	if err != nil {
		if errors.Is(err, workload.ErrNotLoaded) {
			return fmt.Errorf("simple %s: %w; run `dblat load simple --workload %s` first", w.cfg.Workload, err, w.cfg.Workload)
		}
		return fmt.Errorf("simple %s: %w", w.cfg.Workload, err)
	}
	switch w.cfg.Workload {
	case "tpcb", "select-only":
		scale := w.cfg.Scale
		if scale == 0 {
			scale = info.Scale
		}
		if scale > info.Scale {
			return fmt.Errorf("simple %s: asked for scale %d, %d loaded", w.cfg.Workload, scale, info.Scale)
		}
		w.accounts, w.tellers, w.branches = scale*accountsPerScale, scale*tellersPerScale, scale*branchesPerScale
	case "blob":
		if w.cfg.BlobsPerTx > info.BlobRows {
			return option.Errorf(OptionBlobsPerTx, "%d is more than the %d rows of blobs loaded (load more with --blob-rows)", w.cfg.BlobsPerTx, info.BlobRows)
		}
		w.blobSize, w.blobRows = info.BlobSize, info.BlobRows
	case "ping":
		if err := db.PingContext(ctx); err != nil {
			return fmt.Errorf("simple ping: %w", err)
		}
	}
	w.prepared = false
	for _, s := range w.st {
		s.close()
		if !w.adHoc {
			if err := s.prepare(ctx, db); err != nil {
				w.Close()
				return fmt.Errorf("simple %s: %w", w.cfg.Workload, err)
			}
		}
	}
	w.prepared = true
	return nil
}

// Close releases the prepared statements. The workload must not be used afterwards.
func (w *Workload) Close() error {
	for _, s := range w.st {
		s.close()
	}
	return nil
}

// NewTerminal returns terminal id (0-based), seeded from the run seed and id. It must be
// called after Prepare.
func (w *Workload) NewTerminal(id int) workload.Terminal {
	if !w.prepared {
		panic("simple: NewTerminal before Prepare")
	}
	t := &terminal{w: w, r: workload.NewRand(w.cfg.Seed, "terminal", id)}
	if w.updBlob != nil {
		// Writes take BlobSize bytes at a random offset of a random buffer twice as long:
		// fresh-looking, incompressible values without generating BlobSize random bytes per
		// write.
		t.blobBuf = make([]byte, 2*w.blobSize)
		var key [32]byte
		for i := range key {
			key[i] = byte(t.r.Uint32())
		}
		_, _ = rand.NewChaCha8(key).Read(t.blobBuf)
	}
	return t
}

// terminal is one pgbench client. It implements workload.Terminal and is used by one
// goroutine at a time.
type terminal struct {
	w       *Workload
	r       *rand.Rand
	blobBuf []byte
	args    [4]any // reused argument slots
	in      input  // the transaction the last Next drew
}

// input is one transaction's random choices, drawn by Next and used by every try of Run:
// pgbench's \set variables (aid, bid, tid, delta), a blob transaction's first and last id,
// and where in the random buffer each blob write takes its bytes.
type input struct {
	aid, bid, tid, delta int64
	lo, hi               int64
	offsets              []int
}

// Next draws the inputs of the workload's only transaction (the \set lines of pgbench's
// scripts, or a blob transaction's rows) and returns it, with no pauses (pgbench without
// -R).
func (t *terminal) Next() (int, workload.Pause) {
	w := t.w
	switch {
	case w.updAccount != nil: // tpcb, in the order of pgbench's script
		t.in.aid = t.random(1, w.accounts)
		t.in.bid = t.random(1, w.branches)
		t.in.tid = t.random(1, w.tellers)
		t.in.delta = t.random(-5000, 5000)
	case w.selAccount != nil: // select-only
		t.in.aid = t.random(1, w.accounts)
	case w.selBlobs != nil:
		t.in.lo, t.in.hi = t.blobRange()
		if w.updBlob != nil {
			t.in.offsets = t.in.offsets[:0]
			for range t.in.hi - t.in.lo + 1 {
				t.in.offsets = append(t.in.offsets, t.r.IntN(w.blobSize+1))
			}
		}
	}
	return 0, workload.Pause{}
}

// Run executes the transaction the last Next drew on conn, again with the same input when
// called again, and returns nil on commit or the error, after rolling back.
func (t *terminal) Run(ctx context.Context, conn *sql.Conn) error {
	switch {
	case t.w.selAccount != nil && t.w.updAccount == nil:
		return t.selectOnly(ctx, conn)
	case t.w.updAccount != nil:
		return t.tpcb(ctx, conn)
	case t.w.updBlob != nil:
		return t.blobWrite(ctx, conn)
	case t.w.selBlobs != nil:
		return t.blobRead(ctx, conn)
	}
	return t.ping(ctx, conn)
}

// random is pgbench's random(lo, hi): uniform over lo..hi inclusive.
func (t *terminal) random(lo, hi int) int64 { return int64(lo + t.r.IntN(hi-lo+1)) }

// single runs body, a single statement, alone on conn (tx nil), as pgbench does, or in a
// read-only transaction where the engine's autocommit is unsafe.
func (t *terminal) single(ctx context.Context, conn *sql.Conn, body func(tx *sql.Tx) error) error {
	if !t.w.txOnly {
		return body(nil)
	}
	return inTx(ctx, conn, t.w.ro, body)
}

// inTx runs body in a transaction on conn with opts, commits it, and rolls it back when
// body fails.
func inTx(ctx context.Context, conn *sql.Conn, opts *sql.TxOptions, body func(tx *sql.Tx) error) error {
	tx, err := conn.BeginTx(ctx, opts)
	if err != nil {
		return err
	}
	if err := body(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}
