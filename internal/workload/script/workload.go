package script

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/option"
	"github.com/dblat/dblat/internal/spec"
	"github.com/dblat/dblat/internal/workload"
)

// The workload "script" runs users' own transactions: each script (a file given with -f,
// or one of pgbench's built-in scripts given with -b) is one transaction type, named after
// its file and chosen at random in proportion to its weight, as pgbench chooses among its
// scripts. Its headline figure is TPS, one transaction being one run of a script whatever
// its SQL does (pgbench's count).

// OptionProtocol is the run option that says how statements travel (pgbench -M).
const OptionProtocol = "protocol"

// Protocols lists the values of OptionProtocol, pgbench's default first.
var Protocols = []string{"simple", "extended", "prepared"}

var protocolOption = option.Option{Name: OptionProtocol, Kind: option.String, Default: "simple", Values: Protocols,
	Usage: "pgbench -M: simple writes the variables' values into the SQL text; extended sends them as parameters, parsing each statement every time; prepared parses each once per connection"}

// Definition declares the script workload.
var Definition = &workload.Definition{
	Name:    "script",
	Summary: "your own transactions: pgbench scripts (-f FILE[@WEIGHT], -b tpcb-like|simple-update|select-only)",
	RunExample: `  dblat run script -f orders.sql@10 -f status.sql@1 --target pg1 --terminals 8 --rtt 5ms
  dblat run script -b tpcb-like --target fb1 --protocol prepared --max-tries 5
  dblat run script -f new_order.sql -D items=1000 --target 'mysql://bench@db:3306/shop' --scale 10`,
	Help: `Each script (-f FILE, -b NAME) is one transaction type, named after its file (orders.sql is
"orders"), chosen at random in proportion to its weight (FILE@WEIGHT) as pgbench chooses.
Where FILE.ENGINE.sql sits beside FILE.sql (orders.firebird.sql, orders.mariadb.sql), a run on
that engine runs it instead, as the same transaction type. The texts that ran are stored
with the run (hashed): dblat results show RUN --scripts prints them. \shell and \setshell
are refused: a benchmark script runs no shell commands.`,
	LoadExample: `  dblat load script --init schema.sql --target pg1 --scale 10
  dblat load script -b tpcb-like --target m1 --scale 4          # pgbench's tables, for -b`,
	Scale: workload.Scale{Name: "scale", Default: 1,
		Usage: "the scripts' :scale (pgbench -s); with -b, the pgbench scale of the loaded tables, with --init the scale it loaded"},
	Metric:     workload.Metric{Name: "TPS"},
	Options:    option.Set{protocolOption},
	Fields:     []string{"scripts", "builtins", "defines", "init"},
	LoadFields: []string{"init", "defines", "builtins"},
	Data:       "script",
	Load:       load,
	Loaded:     loaded,
	New: func(t workload.Target, cfg workload.Config) (workload.Workload, error) {
		return New(t, cfg)
	},
}

func init() { workload.Register(Definition) }

// Workload is a run's scripts, read and parsed for its engine; it implements
// workload.Workload and workload.Sourcer. New makes it without touching the database;
// Prepare readies it; it is then safe for concurrent use by its terminals.
type Workload struct {
	cfg      workload.Config
	eng      engine.Engine
	protocol string
	mode     Mode
	place    Placeholder
	// conns, when the engine has the capability, runs statements its own way; txs maps
	// transaction statements onto the driver's where the engine's SQL has none.
	conns   engine.ScriptConns
	txs     engine.TxStatements
	txOnly  bool
	locking sql.IsolationLevel
	// lower reports captured columns in lower case (engine.Dialect.FoldsUpper).
	lower bool
	// queryAll runs statements that return no rows as queries too: a script never reads
	// their row counts, which cost a round trip of their own (engine.Dialect.ExecCountsRows).
	queryAll bool

	// scripts are the transaction types (weight > 0), in the order given; total is the
	// sum of their weights.
	scripts []*entry
	total   int64
	sources []workload.Source

	scale  int64 // :scale, set by Prepare
	states sync.Map
	// id numbers the workload in the process: its statements' names carry it, so that two
	// workloads never prepare one name on a connection.
	id int64
}

// workloads counts the workloads made (Workload.id).
var workloads atomic.Int64

// entry is one transaction type: a parsed script and what the workload knows of its
// statements.
type entry struct {
	source
	kind   string // workload.SourceScript or SourceBuiltin
	weight int64
	s      *Script
	stmts  []stmtInfo
}

// stmtInfo is one SQL statement of a script as the workload runs it.
type stmtInfo struct {
	// name is the statement's name when prepared: unique to its text within the run.
	name string
	stmtTx
	// rows is set for a statement read as a query on the database/sql path.
	rows bool
	// pool is the statement prepared on the pool (the prepared protocol on an engine
	// whose driver begins transactions), which a transaction binds to its connection.
	pool *sql.Stmt
}

var _ workload.Sourcer = (*Workload)(nil)

// New reads, resolves for t's engine and parses the run's scripts and its init script, and
// checks them against the engine: a pipeline where the engine cannot pipeline, a
// transaction statement its driver cannot honour, a transaction left open at a script's
// end. Errors of the files' contents are *ParseError naming file, line and column; errors
// of the run's parameters are option.Error naming the parameter.
func New(t workload.Target, cfg workload.Config) (*Workload, error) {
	if t.Engine == nil {
		return nil, errors.New("script: no engine")
	}
	if cfg.Think {
		return nil, errors.New("script: scripts have no think times (pace them with \\sleep, or open-loop with --rate)")
	}
	w, err := newWorkload(t.Engine, cfg.Options.String(OptionProtocol, protocolOption.Default))
	if err != nil {
		return nil, err
	}
	w.cfg = cfg
	if len(cfg.Scripts) == 0 && len(cfg.Builtins) == 0 {
		return nil, option.Errorf("scripts", "are missing: give a script file with -f FILE[@WEIGHT] (scripts: in a study), or pgbench's built-in scripts with -b NAME")
	}
	defined := slices.Sorted(maps.Keys(cfg.Defines))
	names := map[string]string{}
	for _, list := range []struct {
		field, kind string
		entries     []string
	}{{"scripts", workload.SourceScript, cfg.Scripts}, {"builtins", workload.SourceBuiltin, cfg.Builtins}} {
		for _, given := range list.entries {
			path, weight, err := spec.SplitWeight(given)
			if err != nil {
				return nil, option.Errorf(list.field, "%v", err)
			}
			var src source
			if list.kind == workload.SourceBuiltin {
				src, err = resolveBuiltin(path, t.Engine.Name())
			} else {
				src, err = resolve(cfg.Files, list.field, path, t.Engine.Name())
			}
			if err != nil {
				return nil, err
			}
			e, err := w.parse(src, list.kind, int64(weight), defined)
			if err != nil {
				return nil, err
			}
			if prev, dup := names[e.name]; dup {
				return nil, option.Errorf(list.field, "%s and %s are both transaction type %s: a script's type is its file's name; rename one", prev, e.where, e.name)
			}
			names[e.name] = e.where
			if weight > 0 {
				w.scripts = append(w.scripts, e)
				w.total += e.weight
				w.sources = append(w.sources, workload.Source{Kind: list.kind, Name: e.name, Path: e.path, Weight: float64(weight), Text: string(e.text)})
			}
		}
	}
	if cfg.Init != "" {
		src, err := resolve(cfg.Files, "init", cfg.Init, t.Engine.Name())
		if err != nil {
			return nil, err
		}
		// Checked as the load runs it: one client of the simple protocol.
		iw, err := newWorkload(t.Engine, "simple")
		if err != nil {
			return nil, err
		}
		if _, err := iw.parse(src, workload.SourceInit, 1, defined); err != nil {
			return nil, err
		}
		w.sources = append(w.sources, workload.Source{Kind: workload.SourceInit, Name: "init", Path: src.path, Text: string(src.text)})
	}
	return w, nil
}

// newWorkload returns a workload without scripts that runs statements on eng with
// protocol.
func newWorkload(eng engine.Engine, protocol string) (*Workload, error) {
	w := &Workload{eng: eng, protocol: protocol, id: workloads.Add(1)}
	d := eng.Dialect()
	w.locking, w.lower, w.queryAll = d.LockingIsolation, d.FoldsUpper, d.ExecCountsRows
	caps := engine.Caps(eng)
	if caps.TxOnly != nil {
		w.txOnly = caps.TxOnly.TxOnly()
	}
	w.txs = caps.TxStatements
	if sc := caps.ScriptConns; sc != nil {
		if !slices.Contains(sc.ScriptProtocols(), protocol) {
			return nil, option.Errorf(OptionProtocol, "%q is not a protocol of %s (%v)", protocol, eng.Name(), sc.ScriptProtocols())
		}
		w.conns = sc
	} else if !slices.Contains(Protocols, protocol) {
		return nil, option.Errorf(OptionProtocol, "%q is not a protocol (%v)", protocol, Protocols)
	}
	w.mode, w.place = Params, Question
	switch {
	case protocol == "simple":
		w.mode = Literal
	case d.Placeholder != nil && d.Placeholder(1) != "?":
		w.place = func(dst []byte, n int) []byte { return append(dst, d.Placeholder(n)...) }
	}
	return w, nil
}

// parse parses a resolved script and checks it against the engine.
func (w *Workload) parse(src source, kind string, weight int64, defined []string) (*entry, error) {
	s, err := Parse(src.where, src.text, defined...)
	if err != nil {
		return nil, err
	}
	e := &entry{source: src, kind: kind, weight: weight, s: s, stmts: make([]stmtInfo, s.Statements())}
	pipelines := w.conns != nil && w.conns.ScriptPipelines(w.protocol)
	txs := make([]stmtTx, s.Statements())
	cmds := s.Commands()
	for i := range cmds {
		c := &cmds[i]
		errAt := func(format string, args ...any) error {
			return &ParseError{File: src.where, Line: c.Line, Col: c.Col, Msg: fmt.Sprintf(format, args...)}
		}
		switch {
		case c.Kind == CmdStartPipeline && w.conns == nil:
			return nil, errAt(`\startpipeline: %s cannot pipeline statements (pipelines are PostgreSQL's, with the extended or prepared protocol)`, w.eng.Name())
		case c.Kind == CmdStartPipeline && !pipelines:
			return nil, &option.Error{Name: OptionProtocol, Err: errAt(`\startpipeline needs the extended or prepared protocol, not %s (pgbench -M)`, w.protocol)}
		case c.Kind != CmdSQL:
			continue
		}
		info := &e.stmts[c.Stmt]
		info.name = "dblat" + strconv.FormatInt(w.id, 36) + "_" + e.name + "_" + strconv.Itoa(c.Stmt)
		if w.txs != nil {
			op, opts, err := w.txs.TxStatement(c.SQL)
			if err != nil {
				return nil, errAt("%v", err)
			}
			info.stmtTx = stmtTx{op: op, opts: opts}
		} else {
			info.stmtTx = stmtTx{op: txOf(c.SQL)}
		}
		if info.op != engine.TxNone && c.Multi {
			return nil, errAt("a transaction statement cannot be sent with others (\\;) here: write it on its own")
		}
		info.rows = returnsRows(c.SQL)
		txs[c.Stmt] = info.stmtTx
	}
	if c := leftOpen(s, txs); c != nil {
		return nil, &ParseError{File: src.where, Line: c.Line, Col: c.Col,
			Msg: "the transaction this begins is still open at the script's end: end it with COMMIT or END (a script is one transaction)"}
	}
	return e, nil
}

// Name returns "script".
func (w *Workload) Name() string { return Definition.Name }

// TxTypes lists the scripts with a positive weight, in the order given, weighted.
func (w *Workload) TxTypes() []workload.TxType {
	out := make([]workload.TxType, len(w.scripts))
	for i, e := range w.scripts {
		out[i] = workload.TxType{Name: e.name, Weight: float64(e.weight)}
	}
	return out
}

// Sources implements workload.Sourcer: every script that runs, as it runs on the engine,
// and the init script the run names.
func (w *Workload) Sources() []workload.Source { return w.sources }

// Protocol returns the protocol statements travel with.
func (w *Workload) Protocol() string { return w.protocol }

// Prepare finds :scale (the scale asked for, else the loaded one: Definition.Loaded) and,
// with the prepared protocol on an engine whose driver begins transactions, prepares every
// statement on db, so that a transaction binds it to its connection.
func (w *Workload) Prepare(ctx context.Context, db *sql.DB) error {
	w.scale = int64(w.cfg.Scale)
	if w.scale == 0 {
		n, err := loaded(ctx, workload.Target{Engine: w.eng, DB: db}, w.cfg)
		if err != nil {
			return err
		}
		w.scale = int64(n)
	}
	if w.conns != nil || w.protocol != "prepared" || (w.txs == nil && !w.txOnly) {
		return nil
	}
	for _, e := range w.scripts {
		cmds := e.s.Commands()
		for i := range cmds {
			c := &cmds[i]
			if c.Kind != CmdSQL {
				continue
			}
			info := &e.stmts[c.Stmt]
			if info.op != engine.TxNone || info.pool != nil {
				continue
			}
			st, err := db.PrepareContext(ctx, bindSQL(c, w.place))
			if err != nil {
				return fmt.Errorf("%s:%d: prepare: %w", e.where, c.Line, err)
			}
			info.pool = st
		}
	}
	return nil
}

// bindSQL is a statement's text with placeholders, as the Params mode sends it.
func bindSQL(c *Command, place Placeholder) string {
	var b []byte
	prev := 0
	for i, r := range c.refs {
		b = append(b, c.SQL[prev:r.start]...)
		b = place(b, i+1)
		prev = r.end
	}
	return string(append(b, c.SQL[prev:]...))
}

// Close releases the prepared statements. The workload must not be used afterwards.
func (w *Workload) Close() error {
	for _, e := range w.scripts {
		for i := range e.stmts {
			if st := e.stmts[i].pool; st != nil {
				_ = st.Close()
				e.stmts[i].pool = nil
			}
		}
	}
	w.states.Range(func(k, v any) bool {
		v.(*connState).close()
		w.states.Delete(k)
		return true
	})
	return nil
}

// state returns what the workload keeps for one pool connection.
func (w *Workload) state(conn *sql.Conn) (*connState, error) {
	if v, ok := w.states.Load(conn); ok {
		return v.(*connState), nil
	}
	cs := &connState{}
	if w.conns != nil {
		sc, err := w.conns.NewScriptConn(w.protocol)
		if err != nil {
			return nil, err
		}
		cs.sc = sc
	}
	v, _ := w.states.LoadOrStore(conn, cs)
	return v.(*connState), nil
}

// connState is what the workload keeps for one pool connection: the engine's executor, or
// on the database/sql path the statements prepared on it.
type connState struct {
	sc    engine.ScriptConn
	stmts map[string]*sql.Stmt
}

func (cs *connState) close() {
	for _, st := range cs.stmts {
		_ = st.Close()
	}
	cs.stmts = nil
}
