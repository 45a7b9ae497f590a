package script

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/dblat/dblat/internal/suggest"
)

// CommandKind says what a Command does.
type CommandKind uint8

// The kinds of commands.
const (
	CmdSQL           CommandKind = iota + 1 // an SQL statement
	CmdSet                                  // \set
	CmdSleep                                // \sleep
	CmdIf                                   // \if
	CmdElif                                 // \elif
	CmdElse                                 // \else
	CmdEndif                                // \endif
	CmdStartPipeline                        // \startpipeline
	CmdSyncPipeline                         // \syncpipeline
	CmdEndPipeline                          // \endpipeline
)

var metaNames = map[string]CommandKind{"set": CmdSet, "sleep": CmdSleep, "if": CmdIf, "elif": CmdElif,
	"else": CmdElse, "endif": CmdEndif, "startpipeline": CmdStartPipeline, "syncpipeline": CmdSyncPipeline,
	"endpipeline": CmdEndPipeline, "gset": 0, "aset": 0}

func (k CommandKind) String() string {
	if k == CmdSQL {
		return "SQL"
	}
	for name, kk := range metaNames {
		if kk == k && k != 0 {
			return `\` + name
		}
	}
	return "CommandKind(" + strconv.Itoa(int(k)) + ")"
}

// Capture says where a statement's result goes.
type Capture uint8

// The captures of a statement.
const (
	CaptureNone Capture = iota // rows are not read
	CaptureGset                // \gset: the last result must have exactly one row, stored into variables
	CaptureAset                // \aset: the last row of every result that has rows is stored
)

// Unit is the unit of a \sleep.
type Unit uint8

// The units of \sleep, us, ms and s; seconds when none is given.
const (
	Seconds Unit = iota
	Milliseconds
	Microseconds
)

// Command is one command of a script: an SQL statement or a meta-command.
type Command struct {
	Kind CommandKind
	// Line and Col locate the command's first character in the file (1-based; columns count
	// bytes).
	Line, Col int

	// SQL is the statement's text as it is sent in the literal mode: from its first
	// character that is neither blank nor in a leading -- comment, up to and including its
	// semicolon (or the start of a following meta-command, or the end of the file), with \;
	// and \: turned into ; and :.
	SQL string
	// Stmt numbers the script's SQL statements from 0 in order: an executor's key for the
	// statements it prepares.
	Stmt int
	// Multi is set when the statement holds \;: several statements sent as one.
	Multi bool
	// Capture and Prefix are set by a \gset or \aset after the statement: its columns are
	// stored into variables named Prefix + column name.
	Capture Capture
	Prefix  string

	// Var is the variable a \set assigns.
	Var string
	// Expr is the expression of \set, \if and \elif, as canonical text.
	Expr string

	// Sleep: a constant duration Amount, or the value of the variable AmountVar when it is
	// not empty, in Unit.
	Amount    int64
	AmountVar string
	Unit      Unit

	raw     string // SQL as written, for Format
	expr    *node
	refs    []sqlRef // variable references in SQL
	refVars []int    // their variables' indexes
	setVar  int      // \set: Var's index
	amtVar  int      // \sleep: AmountVar's index
	jump    int      // \if, \elif: the next \elif, \else or \endif of the same \if
	endif   int      // \elif, \else: the \endif of their \if
}

// Script is a parsed pgbench script: one transaction. It is immutable and safe for
// concurrent use by any number of clients.
type Script struct {
	name     string
	cmds     []Command
	vars     []string // every variable name the script refers to; expressions use indexes
	reads    []string
	sets     []string
	nstmts   int
	pipeline bool
	captures bool
}

// Name returns the file name the script was parsed from.
func (s *Script) Name() string { return s.name }

// Commands returns the script's commands in order; the slice must not be modified.
func (s *Script) Commands() []Command { return s.cmds }

// Statements returns the number of SQL statements (the range of Command.Stmt).
func (s *Script) Statements() int { return s.nstmts }

// UsesPipeline reports whether the script has \startpipeline: running it needs an executor
// that implements Pipeliner, in the parameter mode.
func (s *Script) UsesPipeline() bool { return s.pipeline }

// Captures reports whether the script stores results into variables (\gset or \aset): the
// executor must then return rows.
func (s *Script) Captures() bool { return s.captures }

// Reads returns the sorted names of the variables the script reads.
func (s *Script) Reads() []string { return s.reads }

// Sets returns the sorted names of the variables the script's \set commands assign.
func (s *Script) Sets() []string { return s.sets }

// ParseError is a script that cannot be parsed; Error gives "FILE:LINE:COL: message".
type ParseError struct {
	File      string
	Line, Col int
	Msg       string
}

func (e *ParseError) Error() string { return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg) }

// Position returns where the error is and what it says, for front ends that place errors
// in files themselves (a study plan's list of problems): the error's text is
// "FILE:LINE:COL: MSG".
func (e *ParseError) Position() (file string, line, col int, msg string) {
	return e.File, e.Line, e.Col, e.Msg
}

// Automatic lists the variables every client has without a \set (pgbench's, which -D
// overrides): client_id, default_seed, random_seed and scale.
var Automatic = []string{"client_id", "default_seed", "random_seed", "scale"}

// maxSQLVars is pgbench's limit on variable references in one statement (MAX_ARGS - 1).
const maxSQLVars = 255

// parser holds the state of one Parse.
type parser struct {
	s       *scanner
	script  *Script
	index   map[string]int
	reads   []varUse
	defined []string
}

// varUse is one read of a variable, for the static check.
type varUse struct {
	v, off, cmd int
}

// read records a read of variable name at source offset off (-1: implicit) and returns
// its index.
func (p *parser) read(name string, off int) int {
	v := p.varIndex(name)
	if off >= 0 {
		p.reads = append(p.reads, varUse{v: v, off: off, cmd: len(p.script.cmds)})
	}
	return v
}

func (p *parser) varIndex(name string) int {
	if i, ok := p.index[name]; ok {
		return i
	}
	p.index[name] = len(p.script.vars)
	p.script.vars = append(p.script.vars, name)
	return len(p.script.vars) - 1
}

// Parse parses a pgbench script; name is its file name, for positions in errors. defined
// names the variables the run defines with -D: reading a variable that no \set, \gset or
// \aset before the read sets, that is not automatic (see Automatic) and not defined is an
// error. Every error is a *ParseError.
//
// Beyond pgbench, Parse refuses \shell and \setshell (see the package documentation),
// \startpipeline, \syncpipeline and \endpipeline out of order in the text, constant
// arguments of the random functions outside their ranges, and more than 16 arguments to a
// function (pgbench's limit, which it checks at run time).
func Parse(name string, src []byte, defined ...string) (*Script, error) {
	p := &parser{s: newScanner(name, src), script: &Script{name: name}, index: map[string]int{}, defined: defined}
	if err := p.parse(); err != nil {
		return nil, err
	}
	if len(p.script.cmds) == 0 {
		return nil, &ParseError{File: name, Line: 1, Col: 1, Msg: "the script has no command: a transaction needs at least one SQL statement or meta-command"}
	}
	if err := p.check(); err != nil {
		return nil, err
	}
	return p.script, nil
}

func (p *parser) parse() error {
	s := p.s
	for {
		text, why, err := s.scanSQL()
		if err != nil {
			return err
		}
		if !text.empty {
			if err := p.addSQL(text); err != nil {
				return err
			}
		}
		switch why {
		case stopEOF:
			return nil
		case stopBackslash:
			if err := p.meta(); err != nil {
				return err
			}
		}
	}
}

func (p *parser) addSQL(t sqlText) error {
	line, col := p.s.lineCol(t.off)
	c := Command{Kind: CmdSQL, Line: line, Col: col, SQL: t.text, Stmt: p.script.nstmts, Multi: t.multi, refs: t.refs, raw: t.raw}
	if len(t.refs) > maxSQLVars {
		return p.s.errorf(t.refs[maxSQLVars].off, "statement refers to variables %d times; at most %d are allowed (pgbench's limit)", len(t.refs), maxSQLVars)
	}
	for _, r := range t.refs {
		c.refVars = append(c.refVars, p.read(r.name, r.off))
	}
	p.script.nstmts++
	p.script.cmds = append(p.script.cmds, c)
	return nil
}

// meta parses the meta-command whose backslash is at s.pos.
func (p *parser) meta() error {
	s := p.s
	start := s.pos
	s.pos++
	s.ended = false
	if s.pos >= len(s.src) || isWordSpace(s.src[s.pos]) || s.src[s.pos] == '\n' {
		return s.errorf(start, `a backslash must be followed by a meta-command name, such as \set`)
	}
	w, _ := s.nextWord()
	line, col := s.lineCol(start)
	c := Command{Line: line, Col: col}
	name := strings.ToLower(w.text)
	kind, known := metaNames[name]
	switch {
	case name == "shell" || name == "setshell":
		return s.errorf(start, `\%s is not supported: dblat does not run shell commands from a benchmark script (they would be timed as part of the transaction, and a stored script could run anything); compute the value with \set or in SQL`, name)
	case !known:
		hint := ""
		names := make([]string, 0, len(metaNames))
		for n := range metaNames {
			names = append(names, n)
		}
		if best := suggest.Closest(name, names, 3); best != "" {
			hint = fmt.Sprintf(` (did you mean \%s?)`, best)
		}
		return s.errorf(start, `unknown meta-command \%s%s`, w.text, hint)
	case name == "gset" || name == "aset":
		return p.capture(start, name)
	}
	c.Kind = kind
	switch kind {
	case CmdSet:
		v, ok := s.nextWord()
		if !ok {
			return s.errorf(start, `\set needs a variable name and an expression: \set name expression`)
		}
		if !validVarName(v.text) {
			return s.errorf(v.off, "invalid variable name %q: use letters, digits and underscores, not starting with a digit", v.text)
		}
		c.Var = v.text
		if err := p.expression(&c, start); err != nil {
			return err
		}
		p.script.sets = append(p.script.sets, c.Var)
		c.setVar = p.varIndex(c.Var)
	case CmdIf, CmdElif:
		if err := p.expression(&c, start); err != nil {
			return err
		}
	case CmdSleep:
		if err := p.sleep(&c, start); err != nil {
			return err
		}
	default:
		if w, ok := s.nextWord(); ok {
			return s.errorf(w.off, `\%s takes no argument`, name)
		}
		if kind == CmdStartPipeline {
			p.script.pipeline = true
		}
	}
	p.script.cmds = append(p.script.cmds, c)
	return nil
}

// expression parses the expression of a \set, \if or \elif up to the end of the line.
func (p *parser) expression(c *Command, start int) error {
	toks, err := p.s.exprTokens()
	if err != nil {
		return err
	}
	if toks[0].kind == tEOF {
		return p.s.errorf(start, `\%s needs an expression`, strings.ToLower(c.Kind.String()[1:]))
	}
	e := &exprParser{p: p, toks: toks}
	n, err := e.parse()
	if err != nil {
		return err
	}
	c.expr = n
	var b strings.Builder
	n.format(&b, p.script.vars, 0)
	c.Expr = b.String()
	return nil
}

// sleep parses \sleep's arguments: a number or :variable, then an optional unit, which may
// also follow the number without a space (\sleep 10ms).
func (p *parser) sleep(c *Command, start int) error {
	s := p.s
	a, ok := s.nextWord()
	if !ok {
		return s.errorf(start, `\sleep needs a duration: \sleep n [us|ms|s], n an integer or a :variable`)
	}
	var unit word
	haveUnit := false
	if a.text[0] == ':' {
		if !validVarName(a.text[1:]) {
			return s.errorf(a.off, "invalid variable name %q in \\sleep", a.text[1:])
		}
		c.AmountVar = a.text[1:]
		c.amtVar = p.read(c.AmountVar, a.off)
	} else {
		i := 0
		if a.text[0] == '+' || a.text[0] == '-' {
			i++
		}
		j := i
		for j < len(a.text) && isDigit(a.text[j]) {
			j++
		}
		if j == i {
			return s.errorf(a.off, "invalid sleep time %q: it must be an integer or a :variable", a.text)
		}
		n, err := strconv.ParseInt(a.text[:j], 10, 64)
		if err != nil {
			return s.errorf(a.off, "sleep time %q is out of range", a.text[:j])
		}
		c.Amount = n
		if j < len(a.text) {
			unit, haveUnit = word{text: a.text[j:], off: a.off + j}, true
		}
	}
	if u, ok := s.nextWord(); ok {
		if haveUnit {
			return s.errorf(u.off, `\sleep takes at most a duration and a unit`)
		}
		unit, haveUnit = u, true
	}
	if haveUnit {
		switch strings.ToLower(unit.text) {
		case "us":
			c.Unit = Microseconds
		case "ms":
			c.Unit = Milliseconds
		case "s":
			c.Unit = Seconds
		default:
			return s.errorf(unit.off, "unknown time unit %q: use us, ms or s", unit.text)
		}
		if w, ok := s.nextWord(); ok {
			return s.errorf(w.off, `\sleep takes at most a duration and a unit`)
		}
	}
	return nil
}

// capture attaches a \gset or \aset to the SQL statement before it.
func (p *parser) capture(start int, name string) error {
	s := p.s
	prefix, _ := s.nextWord()
	if w, ok := s.nextWord(); ok {
		return s.errorf(w.off, `\%s takes at most one argument, a prefix for the variables' names`, name)
	}
	n := len(p.script.cmds)
	if n == 0 || p.script.cmds[n-1].Kind != CmdSQL || p.script.cmds[n-1].Capture != CaptureNone {
		return s.errorf(start, `\%s must follow an SQL statement (and only one \gset or \aset per statement)`, name)
	}
	c := &p.script.cmds[n-1]
	c.Capture, c.Prefix = CaptureGset, prefix.text
	if name == "aset" {
		c.Capture = CaptureAset
	}
	if prefix.text != "" && !validVarName(prefix.text) {
		return s.errorf(prefix.off, "invalid variable prefix %q: use letters, digits and underscores, not starting with a digit", prefix.text)
	}
	p.script.captures = true
	return nil
}

// validVarName is pgbench's valid_variable_name: letters, digits, underscores and
// non-ASCII bytes, not starting with a digit.
func validVarName(name string) bool {
	if name == "" || !isIdentStart(name[0]) {
		return false
	}
	for i := 1; i < len(name); i++ {
		if !isIdentCont(name[i]) {
			return false
		}
	}
	return true
}

// checkConstArgs reports, at parse time, arguments of the random functions that are
// constants outside their ranges (pgbench fails at run time).
func (p *parser) checkConstArgs(n *node) error {
	switch n.fn {
	case fnRandom, fnRandomExponential, fnRandomGaussian, fnRandomZipfian:
	default:
		return nil
	}
	lo, okLo := constValue(n.args[0])
	hi, okHi := constValue(n.args[1])
	if okLo && okHi && lo.kind != KindNull && hi.kind != KindNull {
		l, err1 := toInt(lo)
		h, err2 := toInt(hi)
		if err1 == nil && err2 == nil && l > h {
			return p.s.errorf(n.off, "%s: empty range: the lower bound %d is above the upper bound %d", funcs[n.fn].name, l, h)
		}
	}
	if n.fn == fnRandom {
		return nil
	}
	if v, ok := constValue(n.args[2]); ok && v.kind != KindNull {
		d, err := toDouble(v)
		if err == nil {
			err = checkRandomParam(n.fn, d)
		}
		if err != nil {
			return p.s.errorf(n.args[2].off, "%s: %v", funcs[n.fn].name, err)
		}
	}
	return nil
}

// constValue evaluates an expression that depends on nothing (no variable, no random
// function, no debug); ok is false for any other or when it fails.
func constValue(n *node) (Value, bool) {
	v, err := evalNode(n, nil)
	return v, err == nil
}

// check runs the static checks: \if nesting, pipeline order, variables read before any
// command sets them.
func (p *parser) check() error {
	sc := p.script
	// \if ... \endif: link each branch to the next, and \elif and \else (which a branch
	// that ran falls through to) to the \endif.
	type block struct{ start, last int }
	var open []block
	for i := range sc.cmds {
		c := &sc.cmds[i]
		switch c.Kind {
		case CmdIf:
			open = append(open, block{i, i})
		case CmdElif, CmdElse:
			if len(open) == 0 {
				return p.errAt(c, `%s without a matching \if`, c.Kind)
			}
			b := &open[len(open)-1]
			if sc.cmds[b.last].Kind == CmdElse {
				return p.errAt(c, `%s after \else: \else must be the last branch of an \if`, c.Kind)
			}
			sc.cmds[b.last].jump = i
			b.last = i
		case CmdEndif:
			if len(open) == 0 {
				return p.errAt(c, `\endif without a matching \if`)
			}
			b := open[len(open)-1]
			sc.cmds[b.last].jump = i
			for j := b.start; j != i; j = sc.cmds[j].jump {
				sc.cmds[j].endif = i
			}
			open = open[:len(open)-1]
		}
	}
	if len(open) > 0 {
		return p.errAt(&sc.cmds[open[len(open)-1].start], `\if without a matching \endif`)
	}
	// Pipelines, in the text's order.
	in := false
	for i := range sc.cmds {
		c := &sc.cmds[i]
		switch {
		case c.Kind == CmdStartPipeline && in:
			return p.errAt(c, `\startpipeline inside a pipeline: end the first with \endpipeline`)
		case c.Kind == CmdStartPipeline:
			in = true
		case (c.Kind == CmdEndPipeline || c.Kind == CmdSyncPipeline) && !in:
			return p.errAt(c, `%s outside a pipeline: start one with \startpipeline`, c.Kind)
		case c.Kind == CmdEndPipeline:
			in = false
		case c.Kind == CmdSQL && in && c.Capture != CaptureNone:
			return p.errAt(c, `\gset and \aset are not allowed in a pipeline: move the statement out of it`)
		}
	}
	if in {
		i := slices.IndexFunc(sc.cmds, func(c Command) bool { return c.Kind == CmdStartPipeline })
		for j := i; j < len(sc.cmds); j++ {
			if sc.cmds[j].Kind == CmdStartPipeline {
				i = j
			}
		}
		return p.errAt(&sc.cmds[i], `\startpipeline without \endpipeline`)
	}
	// Variables read before anything sets them.
	known := map[string]bool{}
	for _, n := range Automatic {
		known[n] = true
	}
	for _, n := range p.defined {
		known[n] = true
	}
	var prefixes []string
	setBefore := func(name string) bool {
		if known[name] {
			return true
		}
		for _, pre := range prefixes {
			if strings.HasPrefix(name, pre) {
				return true
			}
		}
		return false
	}
	r := 0
	reads := map[string]bool{}
	for i := range sc.cmds {
		c := &sc.cmds[i]
		for ; r < len(p.reads) && p.reads[r].cmd == i; r++ {
			u := p.reads[r]
			name := sc.vars[u.v]
			reads[name] = true
			if !setBefore(name) {
				return p.s.errorf(u.off, "variable %q is read before any command sets it: set it first with \\set %s ..., a \\gset, or -D %s=VALUE", name, name, name)
			}
		}
		switch {
		case c.Kind == CmdSet:
			known[c.Var] = true
		case c.Kind == CmdSQL && c.Capture != CaptureNone:
			prefixes = append(prefixes, c.Prefix)
		}
	}
	sc.reads = slices.Sorted(maps.Keys(reads))
	sc.sets = slices.Compact(slices.Sorted(slices.Values(sc.sets)))
	return nil
}

func (p *parser) errAt(c *Command, format string, args ...any) error {
	return &ParseError{File: p.s.file, Line: c.Line, Col: c.Col, Msg: fmt.Sprintf(format, args...)}
}
