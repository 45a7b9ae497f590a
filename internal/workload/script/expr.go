package script

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/dblat/dblat/internal/suggest"
)

// opcode is the operation of an expression node.
type opcode uint8

const (
	opConst opcode = iota
	opVar
	opNeg    // -x, evaluated as 0 - x (exprparse.y)
	opBitNot // ~x, evaluated as -1 # x
	opNot
	opAdd
	opSub
	opMul
	opDiv
	opMod
	opEq
	opNe
	opLt
	opLe
	opGt // a > b is evaluated as b < a: b first, which matters for random draws
	opGe // a >= b as b <= a
	opBitAnd
	opBitOr
	opBitXor
	opShl
	opShr
	opAnd
	opOr
	opIs   // args[0] IS val (NULL, TRUE or FALSE); neg for IS NOT
	opCase // args: when1, then1, when2, then2, ..., else
	opCall
)

// node is an expression's syntax tree. Trees are built by Parse and never change after;
// clients evaluate them concurrently.
type node struct {
	op   opcode
	neg  bool   // opIs: IS NOT
	fn   funcID // opCall
	val  Value  // opConst; opIs: the right-hand constant
	v    int    // opVar: index into Script.vars; opCall of hash*/permute: default_seed's index
	args []*node
	off  int // source offset, for errors
}

// Precedence levels, lowest first (exprparse.y, after PostgreSQL's SQL grammar).
const (
	lvOr = 1 + iota
	lvAnd
	lvNot
	lvIs // IS, ISNULL, NOTNULL: postfix
	lvCmp
	lvBit
	lvAdd
	lvMul
	lvUnary
	lvPrimary
)

var infixOps = map[tokKind]struct {
	level    int
	op       opcode
	nonassoc bool
}{
	tOr: {lvOr, opOr, false}, tAnd: {lvAnd, opAnd, false},
	tEq: {lvCmp, opEq, true}, tNe: {lvCmp, opNe, true}, tLt: {lvCmp, opLt, true}, tLe: {lvCmp, opLe, true},
	tGt: {lvCmp, opGt, true}, tGe: {lvCmp, opGe, true},
	tBitOr: {lvBit, opBitOr, false}, tHash: {lvBit, opBitXor, false}, tBitAnd: {lvBit, opBitAnd, false},
	tShl: {lvBit, opShl, false}, tShr: {lvBit, opShr, false},
	tPlus: {lvAdd, opAdd, false}, tMinus: {lvAdd, opSub, false},
	tStar: {lvMul, opMul, false}, tSlash: {lvMul, opDiv, false}, tPercent: {lvMul, opMod, false},
}

// exprParser parses one meta-command's expression with precedence climbing, accepting
// exactly exprparse.y's language: comparisons do not chain (a < b < c is an error), IS and
// its postfix forms do, NOT takes everything above AND, ~ everything above the bitwise
// operators, unary minus and plus only a primary.
type exprParser struct {
	p    *parser
	toks []token
	i    int
}

func (e *exprParser) peek() token { return e.toks[e.i] }

func (e *exprParser) next() token {
	t := e.toks[e.i]
	if t.kind != tEOF {
		e.i++
	}
	return t
}

func (e *exprParser) syntaxError(t token, hint string) error {
	what := fmt.Sprintf("%q", t.text)
	switch {
	case t.kind == tEOF:
		what = "end of line"
	case t.text == "":
		what = fmt.Sprintf("%q", tokNames[t.kind])
	}
	if hint != "" {
		hint = ": " + hint
	}
	return e.p.s.errorf(t.off, "syntax error at %s%s", what, hint)
}

func (e *exprParser) expect(k tokKind, hint string) (token, error) {
	t := e.next()
	if t.kind != k {
		return t, e.syntaxError(t, hint)
	}
	return t, nil
}

// parse parses a whole expression: up to the end of the line.
func (e *exprParser) parse() (*node, error) {
	n, err := e.expr(0)
	if err != nil {
		return nil, err
	}
	if t := e.peek(); t.kind != tEOF {
		hint := "expected an operator or the end of the line"
		if op, ok := infixOps[t.kind]; ok && op.nonassoc {
			hint = "comparisons do not chain; combine them with AND"
		}
		return nil, e.syntaxError(t, hint)
	}
	return n, nil
}

// expr parses an expression whose operators bind at least as tightly as level min.
func (e *exprParser) expr(min int) (*node, error) {
	left, err := e.prefix()
	if err != nil {
		return nil, err
	}
	lastNonassoc := 0
	for {
		t := e.peek()
		switch t.kind {
		case tIsNull, tNotNull, tIs:
			if lvIs < min {
				return left, nil
			}
			e.next()
			n := &node{op: opIs, val: Null(), neg: t.kind == tNotNull, args: []*node{left}, off: left.off}
			if t.kind == tIs {
				r := e.next()
				if r.kind == tNot {
					n.neg = true
					r = e.next()
				}
				switch r.kind {
				case tNull:
				case tTrue, tFalse:
					n.val = Bool(r.kind == tTrue)
				default:
					return nil, e.syntaxError(r, "IS must be followed by [NOT] NULL, TRUE or FALSE")
				}
			}
			left, lastNonassoc = n, 0
			continue
		}
		op, ok := infixOps[t.kind]
		if !ok || op.level < min {
			return left, nil
		}
		if lastNonassoc == op.level {
			return nil, e.syntaxError(t, "comparisons do not chain; combine them with AND")
		}
		e.next()
		right, err := e.expr(op.level + 1)
		if err != nil {
			return nil, err
		}
		left = &node{op: op.op, args: []*node{left, right}, off: left.off}
		lastNonassoc = 0
		if op.nonassoc {
			lastNonassoc = op.level
		}
	}
}

// prefix parses a primary expression or a prefix operator and its operand.
func (e *exprParser) prefix() (*node, error) {
	t := e.next()
	switch t.kind {
	case tLParen:
		n, err := e.expr(0)
		if err != nil {
			return nil, err
		}
		if _, err := e.expect(tRParen, "expected )"); err != nil {
			return nil, err
		}
		return n, nil
	case tPlus:
		return e.expr(lvPrimary)
	case tMinus:
		if e.peek().kind == tMaxIntPlusOne {
			e.next()
			return &node{op: opConst, val: Int(math.MinInt64), off: t.off}, nil
		}
		x, err := e.expr(lvPrimary)
		if err != nil {
			return nil, err
		}
		return &node{op: opNeg, args: []*node{x}, off: t.off}, nil
	case tTilde:
		x, err := e.expr(lvBit + 1)
		if err != nil {
			return nil, err
		}
		return &node{op: opBitNot, args: []*node{x}, off: t.off}, nil
	case tNot:
		x, err := e.expr(lvNot + 1)
		if err != nil {
			return nil, err
		}
		return &node{op: opNot, args: []*node{x}, off: t.off}, nil
	case tNull:
		return &node{op: opConst, val: Null(), off: t.off}, nil
	case tTrue, tFalse:
		return &node{op: opConst, val: Bool(t.kind == tTrue), off: t.off}, nil
	case tInt:
		return &node{op: opConst, val: Int(t.i), off: t.off}, nil
	case tDouble:
		return &node{op: opConst, val: Double(t.f), off: t.off}, nil
	case tMaxIntPlusOne:
		return nil, e.p.s.errorf(t.off, "integer constant %s is out of range: it must lie within ±9223372036854775807", t.text)
	case tVar:
		return &node{op: opVar, v: e.p.read(t.text, t.off), off: t.off}, nil
	case tIdent:
		return e.call(t)
	case tCase:
		return e.caseExpr(t)
	}
	return nil, e.syntaxError(t, "expected an operand")
}

// call parses a function call whose name is t.
func (e *exprParser) call(t token) (*node, error) {
	f, ok := funcByName[strings.ToLower(t.text)]
	if !ok {
		hint := ""
		if s := suggest.Closest(t.text, funcNames(), 3); s != "" {
			hint = fmt.Sprintf(" (did you mean %s?)", s)
		}
		return nil, e.p.s.errorf(t.off, "unknown function %q%s", t.text, hint)
	}
	if _, err := e.expect(tLParen, fmt.Sprintf("expected ( after the function name %s", t.text)); err != nil {
		return nil, err
	}
	n := &node{op: opCall, fn: f, off: t.off}
	if e.peek().kind != tRParen {
		for {
			a, err := e.expr(0)
			if err != nil {
				return nil, err
			}
			n.args = append(n.args, a)
			if e.peek().kind != tComma {
				break
			}
			e.next()
		}
	}
	if _, err := e.expect(tRParen, "expected , or ) in the argument list"); err != nil {
		return nil, err
	}
	d := &funcs[f]
	if len(n.args) < d.min || d.max >= 0 && len(n.args) > d.max {
		return nil, e.p.s.errorf(t.off, "%s takes %s, not %d", t.text, d.arity(), len(n.args))
	}
	if len(n.args) > maxFuncArgs {
		return nil, e.p.s.errorf(t.off, "%s takes at most %d arguments, not %d", t.text, maxFuncArgs, len(n.args))
	}
	if d.seeded && len(n.args) < d.max {
		n.v = e.p.read("default_seed", -1)
	}
	if err := e.p.checkConstArgs(n); err != nil {
		return nil, err
	}
	return n, nil
}

// caseExpr parses CASE WHEN c THEN v [WHEN c THEN v ...] [ELSE v] END; t is the CASE.
func (e *exprParser) caseExpr(t token) (*node, error) {
	n := &node{op: opCase, off: t.off}
	if _, err := e.expect(tWhen, "CASE must be followed by WHEN"); err != nil {
		return nil, err
	}
	for {
		c, err := e.expr(0)
		if err != nil {
			return nil, err
		}
		if _, err := e.expect(tThen, "expected THEN"); err != nil {
			return nil, err
		}
		v, err := e.expr(0)
		if err != nil {
			return nil, err
		}
		n.args = append(n.args, c, v)
		switch k := e.next(); k.kind {
		case tWhen:
			continue
		case tElse:
			v, err := e.expr(0)
			if err != nil {
				return nil, err
			}
			n.args = append(n.args, v)
			if _, err := e.expect(tEnd, "expected END"); err != nil {
				return nil, err
			}
			return n, nil
		case tEnd:
			n.args = append(n.args, &node{op: opConst, val: Null(), off: k.off})
			return n, nil
		default:
			return nil, e.syntaxError(k, "expected WHEN, ELSE or END")
		}
	}
}

// level returns the precedence level of n's outermost operator, for printing.
func (n *node) level() int {
	switch n.op {
	case opConst:
		if n.val.kind == KindInt && n.val.AsInt() < 0 {
			return lvUnary
		}
		return lvPrimary
	case opVar, opCase, opCall:
		return lvPrimary
	case opNeg:
		return lvUnary
	case opBitNot:
		return lvBit
	case opNot:
		return lvNot
	case opIs:
		return lvIs
	case opAnd:
		return lvAnd
	case opOr:
		return lvOr
	case opEq, opNe, opLt, opLe, opGt, opGe:
		return lvCmp
	case opBitAnd, opBitOr, opBitXor, opShl, opShr:
		return lvBit
	case opAdd, opSub:
		return lvAdd
	}
	return lvMul
}

var opText = map[opcode]string{opAdd: "+", opSub: "-", opMul: "*", opDiv: "/", opMod: "%", opEq: "=",
	opNe: "<>", opLt: "<", opLe: "<=", opGt: ">", opGe: ">=", opBitAnd: "&", opBitOr: "|", opBitXor: "#",
	opShl: "<<", opShr: ">>", opAnd: "AND", opOr: "OR"}

// format appends n in the language's syntax, with the parentheses that parsing it back to
// the same tree needs; names are the script's variable names.
func (n *node) format(b *strings.Builder, names []string, min int) {
	if n.level() < min {
		b.WriteByte('(')
		n.format(b, names, 0)
		b.WriteByte(')')
		return
	}
	switch n.op {
	case opConst:
		b.WriteString(formatConst(n.val))
	case opVar:
		b.WriteString(":" + names[n.v])
	case opNeg:
		b.WriteByte('-')
		n.args[0].format(b, names, lvPrimary)
	case opBitNot:
		b.WriteByte('~')
		n.args[0].format(b, names, lvBit+1)
	case opNot:
		b.WriteString("NOT ")
		n.args[0].format(b, names, lvNot+1)
	case opIs:
		n.args[0].format(b, names, lvIs)
		b.WriteString(" IS ")
		if n.neg {
			b.WriteString("NOT ")
		}
		b.WriteString(strings.ToUpper(n.val.String()))
	case opCase:
		b.WriteString("CASE")
		for i := 0; i+1 < len(n.args); i += 2 {
			b.WriteString(" WHEN ")
			n.args[i].format(b, names, 0)
			b.WriteString(" THEN ")
			n.args[i+1].format(b, names, 0)
		}
		b.WriteString(" ELSE ")
		n.args[len(n.args)-1].format(b, names, 0)
		b.WriteString(" END")
	case opCall:
		b.WriteString(funcs[n.fn].name)
		b.WriteByte('(')
		for i, a := range n.args {
			if i > 0 {
				b.WriteString(", ")
			}
			a.format(b, names, 0)
		}
		b.WriteByte(')')
	default:
		lv := n.level()
		right := lv + 1
		left := lv
		if lv == lvCmp {
			left = lv + 1
		}
		n.args[0].format(b, names, left)
		b.WriteString(" " + opText[n.op] + " ")
		n.args[1].format(b, names, right)
	}
}

// formatConst writes a constant so that it lexes back to the same value: doubles always
// with a point or an exponent.
func formatConst(v Value) string {
	switch v.kind {
	case KindDouble:
		s := strconv.FormatFloat(v.AsDouble(), 'g', -1, 64)
		if !strings.ContainsAny(s, ".eEIN") {
			s += ".0"
		}
		return s
	case KindBool, KindNull:
		return strings.ToUpper(v.String())
	}
	return v.String()
}
