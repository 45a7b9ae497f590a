package script

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/workload"
)

// ErrLeftOpen is wrapped by a transaction's error when its script ended with its
// transaction still open: the transaction was rolled back and counts as failed.
var ErrLeftOpen = errors.New("the script ends with its transaction still open (rolled back): end it with COMMIT or END; a script is one transaction")

// NewTerminal returns terminal id (0-based), one pgbench client: its variables and random
// functions are client id's of pgbench --random-seed=SEED (PgbenchSeeds: the same seed
// draws pgbench's values), :client_id is id, :random_seed the run's seed, and :scale the
// scale Prepare found. :default_seed, which pgbench derives after seeding its -c clients,
// is derived here as for one client, so that it does not depend on how many terminals the
// run has. Each terminal chooses its scripts with a generator of its own, seeded by the
// run's seed and id. It must be called after Prepare.
func (w *Workload) NewTerminal(id int) workload.Terminal {
	seeds, _ := PgbenchSeeds(uint64(w.cfg.Seed), id+1)
	_, defaultSeed := PgbenchSeeds(uint64(w.cfg.Seed), 1)
	c, err := NewClient(Config{ID: id, Scale: w.scale, RandomSeed: w.cfg.Seed, DefaultSeed: defaultSeed,
		Seed: seeds[id], Defines: w.cfg.Defines, Mode: w.mode, Placeholder: w.place})
	if err != nil {
		// Defines are checked when the run is read (spec): a name that passed cannot fail.
		panic(fmt.Sprintf("script: client %d: %v", id, err))
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "script-choice %d %d", w.cfg.Seed, id)
	return w.terminal(c, rand.New(rand.NewPCG(h.Sum64(), uint64(id))))
}

// terminal returns a terminal that runs c's transactions.
func (w *Workload) terminal(c *Client, choose *rand.Rand) *terminal {
	t := &terminal{w: w, c: c, choose: choose}
	t.sqlx.w, t.engx.w = w, w
	t.engx.rows = func(cols []string, n int, last [][]byte) error { return t.engx.st.Result(cols, n, last) }
	t.runFn = func() error { return t.c.Run(t.ctx, &t.engx) }
	return t
}

// terminal is one pgbench client; it implements workload.Terminal.
type terminal struct {
	w      *Workload
	c      *Client
	choose *rand.Rand
	cur    *entry

	sqlx  sqlExec
	engx  engineExec
	ctx   context.Context
	runFn func() error
}

// Next chooses the next script at random in proportion to the weights (pgbench's
// chooseScript) and begins its transaction; the script's own random draws happen as it
// runs, and a retry draws them again from the same state.
func (t *terminal) Next() (int, workload.Pause) {
	i := 0
	if len(t.w.scripts) > 1 {
		r := t.choose.Int64N(t.w.total)
		for r >= t.w.scripts[i].weight {
			r -= t.w.scripts[i].weight
			i++
		}
	}
	t.cur = t.w.scripts[i]
	t.c.Begin(t.cur.s)
	return i, workload.Pause{}
}

// Run runs the transaction Next began on conn (again, with the same draws, when called
// again: a retry). A transaction the script left open at its end is rolled back and
// fails with ErrLeftOpen; one that failed is rolled back before Run returns.
func (t *terminal) Run(ctx context.Context, conn *sql.Conn) error {
	cs, err := t.w.state(conn)
	if err != nil {
		return err
	}
	var open bool
	if cs.sc != nil {
		t.engx.sc, t.engx.cur, t.ctx = cs.sc, t.cur, ctx
		open, err = cs.sc.Do(ctx, conn, t.runFn)
		t.ctx = nil
	} else {
		t.sqlx.begin(conn, cs, t.cur)
		err = t.c.Run(ctx, &t.sqlx)
		open, err = t.sqlx.end(ctx, err)
	}
	if open && err == nil {
		return fmt.Errorf("%s: %w", t.cur.where, ErrLeftOpen)
	}
	return err
}

// engineExec runs a client's statements through the engine's own executor
// (engine.ScriptConns); it implements Executor and Pipeliner.
type engineExec struct {
	w    *Workload
	sc   engine.ScriptConn
	cur  *entry
	est  engine.ScriptStmt
	st   *Stmt
	rows func([]string, int, [][]byte) error
	buf  []byte
	ends []int
	args [][]byte
}

// Exec implements Executor: the values as pgbench's text, NULL as nil.
func (e *engineExec) Exec(ctx context.Context, st *Stmt) error {
	e.est.Name, e.est.SQL, e.est.Rows = e.cur.stmts[st.Index].name, st.SQL, nil
	e.buf, e.ends, e.args = e.buf[:0], e.ends[:0], e.args[:0]
	for _, v := range st.Args {
		if v.Kind() != KindNull && v.Kind() != KindNone {
			e.buf = v.AppendText(e.buf)
		}
		e.ends = append(e.ends, len(e.buf))
	}
	start := 0
	for i, end := range e.ends {
		if k := st.Args[i].Kind(); k == KindNull || k == KindNone {
			e.args = append(e.args, nil)
		} else {
			e.args = append(e.args, e.buf[start:end:end])
		}
		start = end
	}
	e.est.Args = e.args
	if st.Capture != CaptureNone {
		e.st, e.est.Rows = st, e.rows
	}
	return e.sc.Exec(ctx, &e.est)
}

// StartPipeline implements Pipeliner.
func (e *engineExec) StartPipeline(ctx context.Context) error { return e.sc.StartPipeline(ctx) }

// SyncPipeline implements Pipeliner.
func (e *engineExec) SyncPipeline(ctx context.Context) error { return e.sc.SyncPipeline(ctx) }

// EndPipeline implements Pipeliner.
func (e *engineExec) EndPipeline(ctx context.Context) error { return e.sc.EndPipeline(ctx) }

// AbortPipeline implements Pipeliner.
func (e *engineExec) AbortPipeline() { e.sc.AbortPipeline() }

// sqlExec runs a client's statements through database/sql on one pool connection; it
// implements Executor. Transaction statements go as text (MariaDB cannot prepare them all),
// or, on an engine whose driver begins transactions (engine.TxStatements), become its
// BeginTx, Commit and Rollback; outside a transaction, an engine whose autocommit is unsafe
// (engine.TxOnly) runs each statement in a transaction of its own.
type sqlExec struct {
	w    *Workload
	conn *sql.Conn
	cs   *connState
	cur  *entry
	tx   *sql.Tx // the driver's transaction a script's BEGIN began
	open bool    // a transaction begun by a statement is open (no TxStatements)
	args []any
}

type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func (e *sqlExec) begin(conn *sql.Conn, cs *connState, cur *entry) {
	e.conn, e.cs, e.cur, e.tx, e.open = conn, cs, cur, nil, false
}

// end ends a transaction the script left open by rolling it back: open reports one left
// by a script that ran to its end (runErr nil). It returns runErr, else the rollback's
// error.
func (e *sqlExec) end(ctx context.Context, runErr error) (open bool, err error) {
	ctx = context.WithoutCancel(ctx)
	switch {
	case e.tx != nil:
		err = e.tx.Rollback()
		e.tx, open = nil, true
	case e.open:
		_, err = e.conn.ExecContext(ctx, "ROLLBACK")
		e.open = false
		open = true
	}
	if runErr != nil {
		return false, runErr
	}
	return open, err
}

// Exec implements Executor.
func (e *sqlExec) Exec(ctx context.Context, st *Stmt) error {
	w, info := e.w, &e.cur.stmts[st.Index]
	if w.txs != nil {
		switch info.op {
		case engine.TxBegin:
			if e.tx != nil {
				return errors.New("a transaction is already open: end it with COMMIT before the next BEGIN")
			}
			tx, err := e.conn.BeginTx(ctx, info.opts)
			e.tx = tx
			return err
		case engine.TxCommit, engine.TxRollback:
			tx := e.tx
			if tx == nil {
				return nil // as PostgreSQL: no transaction in progress is a warning
			}
			e.tx = nil
			if info.op == engine.TxCommit {
				return tx.Commit()
			}
			return tx.Rollback()
		}
		if e.tx == nil && w.txOnly {
			// Autocommit, as a transaction of the statement's own.
			tx, err := e.conn.BeginTx(ctx, &sql.TxOptions{Isolation: w.locking})
			if err != nil {
				return err
			}
			if err := e.run(ctx, tx, st, info); err != nil {
				_ = tx.Rollback()
				return err
			}
			return tx.Commit()
		}
	} else if info.op != engine.TxNone {
		_, err := e.conn.ExecContext(ctx, st.SQL)
		if info.op != engine.TxBegin {
			e.open = false
		} else if err == nil {
			e.open = true
		}
		return err
	}
	if e.tx != nil {
		return e.run(ctx, e.tx, st, info)
	}
	return e.run(ctx, e.conn, st, info)
}

// run runs an ordinary statement on q: as text (Literal), with its arguments (extended),
// or prepared once per connection (prepared: database/sql keeps the pool statement's
// copy per connection inside a transaction; outside one, connState does).
func (e *sqlExec) run(ctx context.Context, q querier, st *Stmt, info *stmtInfo) error {
	e.args = AppendArgs(e.args[:0], st.Args)
	var stmt *sql.Stmt
	if e.w.mode == Params && e.w.protocol == "prepared" {
		var err error
		if stmt, err = e.prepared(ctx, q, st, info); err != nil {
			return err
		}
	}
	if !info.rows && st.Capture == CaptureNone && !e.w.queryAll {
		var err error
		if stmt != nil {
			_, err = stmt.ExecContext(ctx, e.args...)
		} else {
			_, err = q.ExecContext(ctx, st.SQL, e.args...)
		}
		return err
	}
	var rows *sql.Rows
	var err error
	if stmt != nil {
		rows, err = stmt.QueryContext(ctx, e.args...)
	} else {
		rows, err = q.QueryContext(ctx, st.SQL, e.args...)
	}
	if err != nil {
		return err
	}
	if st.Capture != CaptureNone {
		return captureRows(rows, st, e.w.lower)
	}
	return drain(rows)
}

// prepared returns the statement prepared for q's connection.
func (e *sqlExec) prepared(ctx context.Context, q querier, st *Stmt, info *stmtInfo) (*sql.Stmt, error) {
	if tx, ok := q.(*sql.Tx); ok && info.pool != nil {
		return tx.StmtContext(ctx, info.pool), nil
	}
	if s, ok := e.cs.stmts[info.name]; ok {
		return s, nil
	}
	s, err := e.conn.PrepareContext(ctx, st.SQL)
	if err != nil {
		return nil, err
	}
	if e.cs.stmts == nil {
		e.cs.stmts = map[string]*sql.Stmt{}
	}
	e.cs.stmts[info.name] = s
	return s, nil
}

// drain reads every row of every result set and closes rows.
func drain(rows *sql.Rows) error {
	defer rows.Close()
	for {
		for rows.Next() {
		}
		if !rows.NextResultSet() {
			return rows.Err()
		}
	}
}
