package script

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/dblat/dblat/internal/workload"
)

// Executor runs a client's SQL statements on one database connection; the interpreter
// calls it from one goroutine at a time.
type Executor interface {
	// Exec runs st and returns the driver's error, if any. When st.Capture is not
	// CaptureNone it must report every result set of the statement, in order, through
	// st.Result (CaptureRows does that for database/sql); otherwise it may discard the
	// rows. st and everything it holds are valid only during the call: an executor that
	// keeps a statement (a pipeline) copies st.Args.
	Exec(ctx context.Context, st *Stmt) error
}

// Pipeliner is implemented by executors that can pipeline (PostgreSQL's pipeline mode,
// pgbench's \startpipeline). Between StartPipeline and EndPipeline, Exec may only queue a
// statement; errors may surface at SyncPipeline or EndPipeline.
type Pipeliner interface {
	StartPipeline(ctx context.Context) error
	// SyncPipeline sends a synchronization point (\syncpipeline) and stays in the pipeline.
	SyncPipeline(ctx context.Context) error
	// EndPipeline synchronizes, reads every pending result and leaves pipeline mode.
	EndPipeline(ctx context.Context) error
	// AbortPipeline leaves pipeline mode without running what is queued. The interpreter
	// calls it when a transaction fails inside a pipeline.
	AbortPipeline()
}

// Mode is how variables reach SQL.
type Mode uint8

const (
	// Literal substitutes each :name with the variable's text (pgbench -M simple).
	Literal Mode = iota
	// Params replaces each :name with a placeholder and passes the values as Stmt.Args
	// (pgbench -M extended and prepared); a pipeline needs this mode.
	Params
)

// Placeholder appends the placeholder of a statement's n-th parameter (from 1) to dst.
type Placeholder func(dst []byte, n int) []byte

// Dollar writes PostgreSQL's placeholders: $1, $2, ...
func Dollar(dst []byte, n int) []byte { return strconv.AppendInt(append(dst, '$'), int64(n), 10) }

// Question writes the ? placeholders of MySQL, MariaDB and Firebird.
func Question(dst []byte, _ int) []byte { return append(dst, '?') }

// Stmt is one SQL statement for an Executor to run.
type Stmt struct {
	// Script and Index identify the statement (Index is Command.Stmt): its SQL with
	// placeholders is the same every time, so an executor may prepare it once per
	// connection under this key.
	Script *Script
	Index  int
	// SQL is the text to send: with the values substituted (Literal) or with placeholders
	// (Params).
	SQL string
	// Args are the values of the placeholders, in order (Params); one per :name in the text,
	// a variable read twice being passed twice. Value.Any converts them.
	Args []Value
	// Capture says whether the rows are wanted (see Executor.Exec).
	Capture Capture
	// Multi is set when SQL holds several statements (\;).
	Multi bool
	// Line is the statement's line in the script.
	Line int

	c   *Client
	cmd *Command
}

// Result reports one result set of the statement to the interpreter: its column names,
// its number of rows and its last row's values as text, nil standing for SQL NULL (which,
// as in pgbench, stores an empty string). A statement without a result set (an UPDATE)
// reports no columns and 0 rows. The interpreter copies what it keeps: the executor may
// reuse columns and last after Result returns.
func (st *Stmt) Result(columns []string, rows int, last [][]byte) error {
	c := st.c
	if len(last) != len(columns) && rows > 0 {
		return fmt.Errorf("result has %d columns but %d values", len(columns), len(last))
	}
	switch st.Capture {
	case CaptureGset: // only the last result counts: keep a copy until Exec returns
		c.pend.results++
		c.pend.rows = rows
		c.pend.cols = append(c.pend.cols[:0], columns...)
		c.pend.buf = c.pend.buf[:0]
		c.pend.ends = c.pend.ends[:0]
		c.pend.null = c.pend.null[:0]
		if rows > 0 {
			for _, v := range last {
				c.pend.buf = append(c.pend.buf, v...)
				c.pend.ends = append(c.pend.ends, len(c.pend.buf))
				c.pend.null = append(c.pend.null, v == nil)
			}
		}
	case CaptureAset:
		if rows > 0 {
			return c.store(st.cmd, columns, last)
		}
	}
	return nil
}

// Config is what a client needs besides its script.
type Config struct {
	// ID is :client_id, the client's number from 0.
	ID int
	// Scale is :scale (pgbench: -s, or 1).
	Scale int64
	// RandomSeed is :random_seed, DefaultSeed :default_seed (the seed of hash() and
	// permute() when none is given); see PgbenchSeeds.
	RandomSeed  int64
	DefaultSeed int64
	// Seed seeds the client's generator for the random functions (see PgbenchSeeds).
	Seed uint64
	// Defines are the -D NAME=VALUE variables, kept as text; they override the automatic
	// ones of the same name, as in pgbench.
	Defines map[string]string
	// Mode and Placeholder say how variables reach SQL; Placeholder defaults to Dollar.
	Mode        Mode
	Placeholder Placeholder
	// Debug receives debug()'s lines; nil means os.Stderr, as pgbench.
	Debug io.Writer
	// Sleep waits for \sleep; nil means a timer that ctx interrupts.
	Sleep func(ctx context.Context, d time.Duration) error
}

// slot is one variable of a client.
type slot struct {
	name  string
	val   Value // as set: typed by \set, text from -D and \gset; KindNone: unset
	typed Value // val read as a typed value, once an expression has needed it
}

// binding is a script prepared for one client: its variables' slots and, in Params mode,
// its statements' text with placeholders.
type binding struct {
	s      *Script
	slots  []int
	params []string
	caps   []capCache // per statement: the slots of its captured columns
}

type capCache struct {
	cols  []string
	slots []int
}

// Client runs scripts for one emulated client, as a pgbench client: its variables (which
// outlive a transaction, as in pgbench) and its random generator. A Client is used by one
// goroutine at a time; any number of clients share a Script.
//
// Begin starts a transaction: it remembers the generator's state and the variables. Run
// executes the transaction; called again after a failure (a retry, pgbench's --max-tries)
// it starts from the same state, so the retry draws the same random values and sees the
// same variables (pgbench 15 restores only the generator, so there a \gset of the failed
// try stays visible). When Run fails, the variables are put back as Begin found them,
// while the generator keeps its advance, as in pgbench: the next transaction draws new
// values.
type Client struct {
	cfg    Config
	rng    PRNG
	vars   []slot
	byName map[string]int
	binds  []*binding

	cur      *binding
	begun    bool
	fresh    bool // nothing ran since Begin
	savedRNG PRNG
	saved    []slot
	inPipe   bool
	line     int // the command being run, for debug()
	debugFn  func(Value)

	stmt Stmt
	buf  []byte
	args []Value
	pend struct { // a \gset's last result
		results, rows int
		cols          []string
		buf           []byte
		ends          []int
		null          []bool
		vals          [][]byte
	}
	timer *time.Timer
	scan  struct { // CaptureRows' buffers
		raw  []sql.RawBytes
		dest []any
		last [][]byte
		buf  []byte
	}
}

// NewClient returns a client with the automatic variables and the defines set.
func NewClient(cfg Config) (*Client, error) {
	if cfg.Placeholder == nil {
		cfg.Placeholder = Dollar
	}
	if cfg.Debug == nil {
		cfg.Debug = os.Stderr
	}
	c := &Client{cfg: cfg, rng: NewPRNG(cfg.Seed), byName: map[string]int{}}
	c.debugFn = c.debug
	c.stmt.c = c
	for name, v := range cfg.Defines {
		if !validVarName(name) {
			return nil, fmt.Errorf("invalid variable name %q in a define: use letters, digits and underscores, not starting with a digit", name)
		}
		c.vars[c.slot(name)].val = Text(v)
	}
	for _, a := range []struct {
		name string
		v    int64
	}{{"scale", cfg.Scale}, {"client_id", int64(cfg.ID)}, {"default_seed", cfg.DefaultSeed}, {"random_seed", cfg.RandomSeed}} {
		if _, ok := cfg.Defines[a.name]; !ok {
			sl := &c.vars[c.slot(a.name)]
			sl.val, sl.typed = Int(a.v), Int(a.v)
		}
	}
	return c, nil
}

// slot returns the index of variable name's slot, making one if needed.
func (c *Client) slot(name string) int {
	if i, ok := c.byName[name]; ok {
		return i
	}
	c.vars = append(c.vars, slot{name: name})
	c.byName[name] = len(c.vars) - 1
	return len(c.vars) - 1
}

// Var returns variable name's value (KindNone if it is not set): the typed value of \set,
// the text of -D and \gset.
func (c *Client) Var(name string) Value {
	if i, ok := c.byName[name]; ok {
		return c.vars[i].val
	}
	return Value{}
}

// bind returns s prepared for this client.
func (c *Client) bind(s *Script) *binding {
	for _, b := range c.binds {
		if b.s == s {
			return b
		}
	}
	b := &binding{s: s, slots: make([]int, len(s.vars)), caps: make([]capCache, s.nstmts)}
	for i, name := range s.vars {
		b.slots[i] = c.slot(name)
	}
	if c.cfg.Mode == Params {
		b.params = make([]string, s.nstmts)
		for _, cmd := range s.cmds {
			if cmd.Kind != CmdSQL {
				continue
			}
			var t []byte
			prev := 0
			for i, r := range cmd.refs {
				t = append(t, cmd.SQL[prev:r.start]...)
				t = c.cfg.Placeholder(t, i+1)
				prev = r.end
			}
			b.params[cmd.Stmt] = string(append(t, cmd.SQL[prev:]...))
		}
	}
	c.binds = append(c.binds, b)
	return b
}

// Begin starts a new transaction of s: Run runs it, as often as it is retried.
func (c *Client) Begin(s *Script) {
	c.cur = c.bind(s)
	c.begun, c.fresh = true, true
	c.savedRNG = c.rng
	c.saved = append(c.saved[:0], c.vars...)
}

// restoreVars puts the variables back as Begin found them; slots made since are unset.
func (c *Client) restoreVars() {
	copy(c.vars, c.saved)
	for i := len(c.saved); i < len(c.vars); i++ {
		c.vars[i].val, c.vars[i].typed = Value{}, Value{}
	}
}

// Run runs the transaction Begin started, on ex. Errors are *RunError naming the script's
// file and line; they wrap the executor's errors (errors.As finds the driver's error) and
// ctx's.
func (c *Client) Run(ctx context.Context, ex Executor) error {
	if !c.begun {
		return errors.New("script: Run before Begin")
	}
	if !c.fresh {
		c.rng = c.savedRNG
		c.restoreVars()
	}
	c.fresh = false
	err := c.run(ctx, ex)
	if err != nil {
		c.restoreVars()
		if c.inPipe {
			c.inPipe = false
			if p, ok := ex.(Pipeliner); ok {
				p.AbortPipeline()
			}
		}
	}
	return err
}

// RunError is a failure while running a script: a command's evaluation or the
// executor's error. Error gives "FILE:LINE: message".
type RunError struct {
	File string
	Line int
	Err  error
}

func (e *RunError) Error() string { return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err) }

func (e *RunError) Unwrap() error { return e.Err }

func (c *Client) fail(cmd *Command, format string, args ...any) error {
	return &RunError{File: c.cur.s.name, Line: cmd.Line, Err: fmt.Errorf(format, args...)}
}

func (c *Client) run(ctx context.Context, ex Executor) error {
	cmds := c.cur.s.cmds
	for pc := 0; pc < len(cmds); {
		cmd := &cmds[pc]
		c.line = cmd.Line
		switch cmd.Kind {
		case CmdSQL:
			if err := c.execSQL(ctx, ex, cmd); err != nil {
				return err
			}
			pc++
		case CmdSet:
			v, err := evalNode(cmd.expr, c)
			if err != nil {
				return c.fail(cmd, `\set %s: %w`, cmd.Var, err)
			}
			sl := &c.vars[c.cur.slots[cmd.setVar]]
			sl.val, sl.typed = v, v
			pc++
		case CmdIf:
			next, err := c.branch(cmds, pc)
			if err != nil {
				return err
			}
			pc = next
		case CmdElif, CmdElse: // the branch before ran: skip to the \endif
			pc = cmd.endif + 1
		case CmdEndif:
			pc++
		case CmdSleep:
			if err := c.sleep(ctx, cmd); err != nil {
				return err
			}
			pc++
		default:
			if err := c.pipeline(ctx, ex, cmd); err != nil {
				return err
			}
			pc++
		}
	}
	return nil
}

// branch evaluates the \if at pc and, while they are false, the \elif after it, and returns
// the index of the first command to run.
func (c *Client) branch(cmds []Command, pc int) (int, error) {
	for {
		cmd := &cmds[pc]
		c.line = cmd.Line
		v, err := evalNode(cmd.expr, c)
		if err != nil {
			return 0, c.fail(cmd, `%s: %w`, cmd.Kind, err)
		}
		if truth(v) {
			return pc + 1, nil
		}
		pc = cmd.jump
		if cmds[pc].Kind != CmdElif {
			return pc + 1, nil // past the \else or \endif
		}
	}
}

// value returns script variable v as a typed value.
func (c *Client) value(v int) (Value, error) {
	sl := &c.vars[c.cur.slots[v]]
	switch {
	case sl.typed.kind != KindNone:
		return sl.typed, nil
	case sl.val.kind == KindNone:
		return Value{}, evalErrorf("undefined variable %q", sl.name)
	}
	t, err := interpret(sl.val.s)
	if err != nil {
		return Value{}, evalErrorf("malformed variable %q value %q: %v", sl.name, sl.val.s, err)
	}
	sl.typed = t
	return t, nil
}

func (c *Client) debug(v Value) {
	var b []byte
	b = fmt.Appendf(b, "%s:%d: client %d: debug: %s", c.cur.s.name, c.line, c.cfg.ID, v.kind)
	if v.kind != KindNull {
		b = append(b, ' ')
		b = v.AppendText(b)
	}
	_, _ = c.cfg.Debug.Write(append(b, '\n'))
}

func (c *Client) execSQL(ctx context.Context, ex Executor, cmd *Command) error {
	b := c.cur
	st := &c.stmt
	st.Script, st.Index, st.Capture, st.Multi, st.Line, st.cmd = b.s, cmd.Stmt, cmd.Capture, cmd.Multi, cmd.Line, cmd
	st.Args = nil
	if c.cfg.Mode == Literal {
		if len(cmd.refs) == 0 {
			st.SQL = cmd.SQL
		} else {
			buf := c.buf[:0]
			prev := 0
			for i, r := range cmd.refs {
				sl := &c.vars[b.slots[cmd.refVars[i]]]
				if sl.val.kind == KindNone {
					return c.fail(cmd, "undefined variable %q", sl.name)
				}
				buf = append(buf, cmd.SQL[prev:r.start]...)
				buf = sl.val.AppendText(buf)
				prev = r.end
			}
			buf = append(buf, cmd.SQL[prev:]...)
			st.SQL = string(buf)
			c.buf = buf
		}
	} else {
		st.SQL = b.params[cmd.Stmt]
		args := c.args[:0]
		for _, v := range cmd.refVars {
			sl := &c.vars[b.slots[v]]
			if sl.val.kind == KindNone {
				return c.fail(cmd, "undefined variable %q", sl.name)
			}
			args = append(args, sl.val)
		}
		st.Args, c.args = args, args
	}
	c.pend.results = 0
	if err := ex.Exec(ctx, st); err != nil {
		return &RunError{File: b.s.name, Line: cmd.Line, Err: err}
	}
	if cmd.Capture != CaptureGset {
		return nil
	}
	if c.pend.results == 0 || c.pend.rows != 1 {
		rows := 0
		if c.pend.results > 0 {
			rows = c.pend.rows
		}
		return c.fail(cmd, `\gset expects one row, got %d`, rows)
	}
	vals := c.pend.vals[:0]
	start := 0
	for i, end := range c.pend.ends {
		if c.pend.null[i] {
			vals = append(vals, nil)
		} else {
			vals = append(vals, c.pend.buf[start:end])
		}
		start = end
	}
	c.pend.vals = vals
	return c.store(cmd, c.pend.cols, vals)
}

// store sets the variables named by a captured result's columns (with the statement's
// prefix) to its values as text.
func (c *Client) store(cmd *Command, cols []string, vals [][]byte) error {
	cc := &c.cur.caps[cmd.Stmt]
	if !equalStrings(cc.cols, cols) {
		cc.cols = append(cc.cols[:0], cols...)
		cc.slots = cc.slots[:0]
		for _, col := range cols {
			name := cmd.Prefix + col
			if !validVarName(name) {
				cc.cols = cc.cols[:0]
				return c.fail(cmd, "%s cannot store column %q: variable name %q is invalid (name the column with AS, using letters, digits and underscores)", captureName(cmd.Capture), col, name)
			}
			cc.slots = append(cc.slots, c.slot(name))
		}
	}
	for i, s := range cc.slots {
		v := vals[i]
		sl := &c.vars[s]
		if sl.val.kind == KindText && sl.val.s == string(v) {
			continue // unchanged: keep the string (and its parsed value)
		}
		sl.val, sl.typed = Text(string(v)), Value{}
	}
	return nil
}

func captureName(c Capture) string {
	if c == CaptureAset {
		return `\aset`
	}
	return `\gset`
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// sleep runs a \sleep. A variable's value is read as C's atoi reads its text, as pgbench
// does; a negative duration does not wait.
func (c *Client) sleep(ctx context.Context, cmd *Command) error {
	n := cmd.Amount
	if cmd.AmountVar != "" {
		sl := &c.vars[c.cur.slots[cmd.amtVar]]
		if sl.val.kind == KindNone {
			return c.fail(cmd, `\sleep: undefined variable %q`, sl.name)
		}
		var tmp [32]byte
		text := sl.val.AppendText(tmp[:0])
		var ok bool
		if n, ok = atoi(text); !ok {
			return c.fail(cmd, `\sleep: invalid sleep time %q in variable %q: it must be an integer`, text, sl.name)
		}
	}
	d := time.Duration(n)
	switch cmd.Unit {
	case Seconds:
		d *= time.Second
	case Milliseconds:
		d *= time.Millisecond
	default:
		d *= time.Microsecond
	}
	if d <= 0 {
		return nil
	}
	if c.cfg.Sleep != nil {
		if err := c.cfg.Sleep(ctx, d); err != nil {
			return &RunError{File: c.cur.s.name, Line: cmd.Line, Err: err}
		}
		return nil
	}
	if c.timer == nil {
		c.timer = time.NewTimer(d)
	} else {
		c.timer.Reset(d)
	}
	select {
	case <-c.timer.C:
		return nil
	case <-workload.Stopping(ctx):
		c.timer.Stop()
		err := ctx.Err()
		if err == nil { // the run's cancellation, carried by a context never canceled
			err = context.Canceled
		}
		return &RunError{File: c.cur.s.name, Line: cmd.Line, Err: err}
	}
}

// atoi reads text as C's atoi (leading C spaces, a sign, digits, anything after ignored)
// and reports whether pgbench accepts it: a result of 0 whose text does not start with a
// digit is refused.
func atoi(text []byte) (int64, bool) {
	i := 0
	for i < len(text) && isCSpace(text[i]) {
		i++
	}
	neg := false
	if i < len(text) && (text[i] == '+' || text[i] == '-') {
		neg = text[i] == '-'
		i++
	}
	var n int64
	for ; i < len(text) && isDigit(text[i]); i++ {
		if n < (1<<62)/10 {
			n = n*10 + int64(text[i]-'0')
		}
	}
	if neg {
		n = -n
	}
	if n == 0 && (len(text) == 0 || !isDigit(text[0])) {
		return 0, false
	}
	return n, true
}

// pipeline runs \startpipeline, \syncpipeline and \endpipeline.
func (c *Client) pipeline(ctx context.Context, ex Executor, cmd *Command) error {
	p, ok := ex.(Pipeliner)
	switch {
	case c.cfg.Mode == Literal:
		return c.fail(cmd, "%s: pipelines need the parameter mode (extended or prepared protocol), not the literal one", cmd.Kind)
	case !ok:
		return c.fail(cmd, "%s: this executor cannot pipeline statements", cmd.Kind)
	}
	var err error
	switch cmd.Kind {
	case CmdStartPipeline:
		if err = p.StartPipeline(ctx); err == nil {
			c.inPipe = true
		}
	case CmdSyncPipeline:
		err = p.SyncPipeline(ctx)
	case CmdEndPipeline:
		err = p.EndPipeline(ctx)
		c.inPipe = false
	}
	if err != nil {
		return &RunError{File: c.cur.s.name, Line: cmd.Line, Err: err}
	}
	return nil
}

// evalNode evaluates n for client c, or, with c nil, as a constant (errNoClient when it
// depends on variables, random functions or debug). Like pgbench, functions and operators
// evaluate all their arguments left to right (> and >= right first), then return NULL if
// any is NULL; AND, OR and CASE evaluate lazily.
func evalNode(n *node, c *Client) (Value, error) {
	switch n.op {
	case opConst:
		return n.val, nil
	case opVar:
		if c == nil {
			return Value{}, errNoClient
		}
		return c.value(n.v)
	case opNeg, opBitNot, opNot:
		x, err := evalNode(n.args[0], c)
		if err != nil || x.kind == KindNull {
			return x, err
		}
		switch n.op {
		case opNeg:
			return arith(opSub, Int(0), x)
		case opBitNot:
			return bitwise(opBitXor, Int(-1), x)
		}
		b, err := toBool(x)
		return Bool(!b), err
	case opAnd, opOr:
		return evalLogic(n, c)
	case opIs:
		x, err := evalNode(n.args[0], c)
		if err != nil {
			return x, err
		}
		is := x.kind == n.val.kind && (x.kind != KindBool || x.AsBool() == n.val.AsBool())
		return Bool(is != n.neg), nil
	case opCase:
		for i := 0; i+1 < len(n.args); i += 2 {
			w, err := evalNode(n.args[i], c)
			if err != nil {
				return w, err
			}
			if truth(w) {
				return evalNode(n.args[i+1], c)
			}
		}
		return evalNode(n.args[len(n.args)-1], c)
	case opCall:
		return evalCall(n, c)
	}
	first, second := n.args[0], n.args[1]
	if n.op == opGt || n.op == opGe {
		first, second = second, first
	}
	l, err := evalNode(first, c)
	if err != nil {
		return l, err
	}
	r, err := evalNode(second, c)
	if err != nil {
		return r, err
	}
	if l.kind == KindNull || r.kind == KindNull {
		return Null(), nil
	}
	switch n.op {
	case opGt:
		return arith(opLt, l, r)
	case opGe:
		return arith(opLe, l, r)
	case opBitAnd, opBitOr, opBitXor, opShl, opShr:
		return bitwise(n.op, l, r)
	}
	return arith(n.op, l, r)
}

// evalLogic is AND and OR as pgbench evaluates them: a NULL left side gives NULL without
// evaluating the right one.
func evalLogic(n *node, c *Client) (Value, error) {
	l, err := evalNode(n.args[0], c)
	if err != nil || l.kind == KindNull {
		return l, err
	}
	lb, err := toBool(l)
	if err != nil {
		return Value{}, err
	}
	if lb == (n.op == opOr) {
		return Bool(lb), nil
	}
	r, err := evalNode(n.args[1], c)
	if err != nil || r.kind == KindNull {
		return r, err
	}
	rb, err := toBool(r)
	return Bool(rb), err
}

func evalCall(n *node, c *Client) (Value, error) {
	var buf [maxFuncArgs]Value
	args := buf[:0]
	for _, a := range n.args {
		v, err := evalNode(a, c)
		if err != nil {
			return v, err
		}
		args = append(args, v)
	}
	if d := &funcs[n.fn]; d.seeded && len(args) < d.max {
		if c == nil {
			return Value{}, errNoClient
		}
		v, err := c.value(n.v)
		if err != nil {
			return v, err
		}
		args = append(args, v)
	}
	if c == nil {
		return callFunc(n.fn, args, nil, nil)
	}
	return callFunc(n.fn, args, &c.rng, c.debugFn)
}
