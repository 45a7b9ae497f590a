package script

import (
	"bytes"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/dblat/dblat/internal/sqllex"
)

// scanner walks a script's source. SQL is split into statements as psql and pgbench do
// (src/fe_utils/psqlscan.l), on the tokens of package sqllex (scanSQL): a statement ends at
// a semicolon outside quotes, comments and parentheses, and a backslash outside quotes
// starts a meta-command that runs to the end of its line. Positions are byte offsets into src; lineCol turns them into the 1-based line
// and column (in bytes) of error messages.
type scanner struct {
	file  string
	src   []byte
	pos   int
	lines []int // offset of the start of each line
	ended bool  // the current meta-command's line has ended
	eol   int   // where it ended: its newline, or the end of the source
}

func newScanner(file string, src []byte) *scanner {
	s := &scanner{file: file, src: src, lines: []int{0}}
	for i, c := range src {
		if c == '\n' {
			s.lines = append(s.lines, i+1)
		}
	}
	return s
}

// lineCol returns the 1-based line and column of byte offset off.
func (s *scanner) lineCol(off int) (line, col int) {
	i := sort.Search(len(s.lines), func(i int) bool { return s.lines[i] > off }) - 1
	return i + 1, off - s.lines[i] + 1
}

// errorf returns a ParseError at byte offset off.
func (s *scanner) errorf(off int, format string, args ...any) *ParseError {
	line, col := s.lineCol(off)
	return &ParseError{File: s.file, Line: line, Col: col, Msg: fmt.Sprintf(format, args...)}
}

func (s *scanner) peek(i int) byte {
	if s.pos+i < len(s.src) {
		return s.src[s.pos+i]
	}
	return 0
}

// Character classes of psqlscan.l and pgbench.c: identifiers and variable names take ASCII
// letters, digits, underscore and any byte with the high bit set (the bytes of non-ASCII
// UTF-8 characters); psqlscan's identifiers may also contain '$'.
func isIdentStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80
}

func isIdentCont(c byte) bool { return isIdentStart(c) || isDigit(c) }

// isWordSpace is exprscan.l's {space}: what separates a meta-command's words (the newline
// ends the command instead).
func isWordSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v' }

// sqlText is one SQL statement as the scanner collected it.
type sqlText struct {
	off   int    // offset in the source of its first character
	text  string // as sent: from the first character that is not blank or in a -- comment
	raw   string // the same part of the source, escapes and all
	refs  []sqlRef
	multi bool // holds \; (several statements sent as one)
	empty bool // only comments and semicolons: nothing to send
}

// sqlRef is a :name variable reference in a statement's text.
type sqlRef struct {
	start, end int // text[start:end] is ":name"
	name       string
	off        int // offset in the source, for errors
}

// stop says why scanSQL returned.
type stop uint8

const (
	stopEOF       stop = iota
	stopSemicolon      // the statement ended with ;
	stopBackslash      // s.pos is at the backslash of a meta-command
)

// Dialect is the dialect of a script's SQL: psql's lexical rules (PostgreSQL 15's
// src/fe_utils/psqlscan.l: standard conforming '...' strings, E'...' strings, "..."
// identifiers, $tag$...$tag$ strings, -- comments that \r ends too, nested /* */ comments,
// numbers that take an identifier after them, no \v in white space), and MySQL's `...`
// identifiers beyond them.
var Dialect = sqllex.Dialect{DollarQuotes: true, NestedComments: true, Backticks: true, CRNewline: true,
	NumericJunk: true, VerticalTabText: true}

// scanSQL collects SQL from s.pos up to the end of a statement, a meta-command or the end of
// the source, on the tokens of package sqllex in the psql dialect: quoted strings,
// identifiers and comments are opaque, parentheses are counted (a semicolon inside them
// does not end the statement), and so are the BEGIN ... END bodies of CREATE
// FUNCTION/PROCEDURE (psql's heuristic, extended here to CREATE TRIGGER, CREATE OR ALTER,
// RECREATE and Firebird's EXECUTE BLOCK, whose declarations before its BEGIN end with
// semicolons too, as a Firebird routine's DECLARE ... before its BEGIN do). A backslash
// outside quotes starts a meta-command, except that \; puts a semicolon into the statement
// without ending it (pgbench's combined statements) and \: a colon that is never a variable
// reference. A :name outside quotes and comments is a variable reference; :: (a cast) and
// := are not. A quote or comment that the source ends inside is an error.
func (s *scanner) scanSQL() (sqlText, stop, error) {
	st := sqlScan{out: sqlText{off: -1, empty: true}}
	l := sqllex.New(s.src, Dialect)
	l.Seek(s.pos)
	for {
		t := l.Next()
		s.pos = t.End
		text := s.src[t.Start:t.End]
		switch {
		case t.Kind == sqllex.EOF:
			st.out.text = st.b.String()
			if st.started {
				st.out.raw = string(s.src[st.out.off:])
			}
			return st.out, stopEOF, nil
		case t.Kind == sqllex.Space || t.Kind == sqllex.LineComment:
			if st.started { // white space and -- comments before the statement are dropped
				st.b.Write(text)
			}
			continue
		case t.Unterminated:
			return st.out, stopEOF, s.unterminated(t)
		case t.Kind == sqllex.Other:
			if why, end := s.sqlByte(&st, t); end {
				return st.out, why, nil
			}
			l.Seek(s.pos) // past what sqlByte took
			continue
		}
		st.mark(t.Start)
		st.b.Write(text)
		if t.Kind != sqllex.BlockComment {
			st.out.empty = false
		}
		if t.Kind == sqllex.Word {
			st.word(text)
		}
	}
}

// sqlScan is scanSQL's state within one statement.
type sqlScan struct {
	b       strings.Builder // the statement's text as sent
	out     sqlText
	started bool
	paren   int       // depth in parentheses
	begin   int       // depth in a routine's BEGIN ... END (and CASE ... END inside it)
	words   [4]string // the statement's first words, in lower case, for isRoutine
	nwords  int
	routine bool // the first words open a routine body
	block   bool // EXECUTE BLOCK or a routine's DECLAREs before its BEGIN: semicolons do not end the statement
}

// mark notes that the statement starts at offset off unless it started before.
func (st *sqlScan) mark(off int) {
	if !st.started {
		st.started = true
		st.out.off = off
	}
}

// word follows the statement's words for psql's heuristic: the first ones tell a routine,
// and in a routine's body BEGIN, CASE and END (outside parentheses) nest.
func (st *sqlScan) word(w []byte) {
	if st.nwords < len(st.words) {
		st.words[st.nwords] = strings.ToLower(string(w))
		st.nwords++
		st.routine = isRoutine(st.words[:st.nwords])
		if st.nwords == 2 && st.routine && st.words[0] == "execute" {
			st.block = true
		}
	}
	if !st.routine || st.paren > 0 {
		return
	}
	switch {
	case st.begin == 0 && bytes.EqualFold(w, []byte("declare")):
		// Firebird's CREATE PROCEDURE ... AS DECLARE v type; BEGIN: its declarations end
		// with semicolons too.
		st.block = true
	case bytes.EqualFold(w, []byte("begin")):
		st.begin++
		st.block = false
	case bytes.EqualFold(w, []byte("case")):
		if st.begin > 0 {
			st.begin++
		}
	case bytes.EqualFold(w, []byte("end")):
		if st.begin > 0 {
			st.begin--
		}
	}
}

// sqlByte takes the Other byte t of the statement in st, and what pgbench's language makes
// of the bytes after it (\; \: and :name), moving s.pos past them. It reports whether the
// statement ends there (at a semicolon outside parentheses and routine bodies, or at the
// backslash of a meta-command, where s.pos is left), and why.
func (s *scanner) sqlByte(st *sqlScan, t sqllex.Token) (why stop, end bool) {
	c := s.src[t.Start]
	if c == '\\' && s.peek(0) != ';' && s.peek(0) != ':' {
		st.out.text = st.b.String()
		if st.started {
			st.out.raw = string(s.src[st.out.off:t.Start])
		}
		s.pos = t.Start
		return stopBackslash, true
	}
	st.mark(t.Start)
	switch c {
	case ';':
		st.b.WriteByte(c)
		if st.paren == 0 && st.begin == 0 && !st.block {
			st.out.text, st.out.raw = st.b.String(), string(s.src[st.out.off:s.pos])
			return stopSemicolon, true
		}
		return 0, false
	case '\\': // \; or \:
		n := s.src[s.pos]
		s.pos++
		st.b.WriteByte(n)
		if n == ';' {
			st.out.multi = true
			st.nwords, st.routine, st.block = 0, false, false
		} else {
			st.out.empty = false
		}
		return 0, false
	case ':':
		if isIdentStart(s.peek(0)) {
			for s.pos < len(s.src) && isIdentCont(s.src[s.pos]) {
				s.pos++
			}
			st.out.refs = append(st.out.refs, sqlRef{start: st.b.Len(), end: st.b.Len() + s.pos - t.Start,
				name: string(s.src[t.Start+1 : s.pos]), off: t.Start})
		} else {
			for s.pos < len(s.src) && s.src[s.pos] == ':' {
				s.pos++
			}
		}
	case '(':
		st.paren++
	case ')':
		if st.paren > 0 {
			st.paren--
		}
	}
	st.out.empty = false
	st.b.Write(s.src[t.Start:s.pos])
	return 0, false
}

// unterminated returns the error for the quoted token or comment t that the source ends
// inside.
func (s *scanner) unterminated(t sqllex.Token) error {
	text := s.src[t.Start:t.End]
	switch {
	case t.Kind == sqllex.BlockComment:
		return s.errorf(t.Start, "unterminated /* comment: close it with */")
	case t.Kind == sqllex.QuotedIdent:
		return s.errorf(t.Start, "unterminated quoted identifier: close it with %c", text[0])
	case text[0] == '$':
		tag := text[:bytes.IndexByte(text[1:], '$')+2]
		return s.errorf(t.Start, "unterminated dollar-quoted string: close it with %s", tag)
	}
	return s.errorf(t.Start, "unterminated quoted string: close it with '")
}

// isRoutine reports whether a statement's first words open a routine body whose BEGIN ...
// END may hold semicolons: CREATE [OR REPLACE|OR ALTER] FUNCTION|PROCEDURE|TRIGGER,
// RECREATE FUNCTION|PROCEDURE|TRIGGER, EXECUTE BLOCK.
func isRoutine(w []string) bool {
	kind := func(i int) bool {
		return i < len(w) && (w[i] == "function" || w[i] == "procedure" || w[i] == "trigger")
	}
	switch {
	case len(w) < 2:
		return false
	case w[0] == "create":
		return kind(1) || w[1] == "or" && len(w) > 2 && (w[2] == "replace" || w[2] == "alter") && kind(3)
	case w[0] == "recreate":
		return kind(1)
	case w[0] == "execute":
		return w[1] == "block"
	}
	return false
}

// word is one whitespace-separated word of a meta-command.
type word struct {
	text string
	off  int
}

// skipWordSpace skips blanks and line continuations (a backslash at the end of a line)
// inside a meta-command, and reports whether the command goes on (false at its newline,
// which it consumes, or at the end of the source).
func (s *scanner) skipWordSpace() bool {
	if s.ended {
		return false
	}
	for s.pos < len(s.src) {
		c := s.src[s.pos]
		switch {
		case isWordSpace(c):
			s.pos++
		case c == '\\' && s.peek(1) == '\n':
			s.pos += 2
		case c == '\\' && s.peek(1) == '\r' && s.peek(2) == '\n':
			s.pos += 3
		case c == '\n':
			s.eol = s.pos
			s.pos++
			s.ended = true
			return false
		default:
			return true
		}
	}
	s.eol = s.pos
	s.ended = true
	return false
}

// nextWord returns the meta-command's next word, or false at the end of the command.
func (s *scanner) nextWord() (word, bool) {
	if !s.skipWordSpace() {
		return word{}, false
	}
	start := s.pos
	for s.pos < len(s.src) && !isWordSpace(s.src[s.pos]) && s.src[s.pos] != '\n' {
		if s.src[s.pos] == '\\' && (s.peek(1) == '\n' || s.peek(1) == '\r' && s.peek(2) == '\n') {
			break // a continuation right after the word
		}
		s.pos++
	}
	return word{text: string(s.src[start:s.pos]), off: start}, true
}

// Expression tokens (exprscan.l's EXPR state).
type tokKind uint8

const (
	tEOF tokKind = iota
	tInt
	tMaxIntPlusOne // 9223372036854775808, which is only valid after a unary minus
	tDouble
	tVar
	tIdent
	tAnd
	tOr
	tNot
	tIs
	tIsNull
	tNotNull
	tCase
	tWhen
	tThen
	tElse
	tEnd
	tNull
	tTrue
	tFalse
	tPlus
	tMinus
	tStar
	tSlash
	tPercent
	tEq
	tNe
	tLt
	tLe
	tGt
	tGe
	tShl
	tShr
	tBitOr
	tBitAnd
	tHash
	tTilde
	tLParen
	tRParen
	tComma
)

var tokNames = [...]string{tEOF: "end of line", tInt: "integer", tMaxIntPlusOne: "integer", tDouble: "number",
	tVar: "variable", tIdent: "name", tAnd: "AND", tOr: "OR", tNot: "NOT", tIs: "IS", tIsNull: "ISNULL",
	tNotNull: "NOTNULL", tCase: "CASE", tWhen: "WHEN", tThen: "THEN", tElse: "ELSE", tEnd: "END",
	tNull: "NULL", tTrue: "TRUE", tFalse: "FALSE", tPlus: "+", tMinus: "-", tStar: "*", tSlash: "/",
	tPercent: "%", tEq: "=", tNe: "<>", tLt: "<", tLe: "<=", tGt: ">", tGe: ">=", tShl: "<<", tShr: ">>",
	tBitOr: "|", tBitAnd: "&", tHash: "#", tTilde: "~", tLParen: "(", tRParen: ")", tComma: ","}

var keywords = map[string]tokKind{"and": tAnd, "or": tOr, "not": tNot, "is": tIs, "isnull": tIsNull,
	"notnull": tNotNull, "case": tCase, "when": tWhen, "then": tThen, "else": tElse, "end": tEnd,
	"null": tNull, "true": tTrue, "false": tFalse}

type token struct {
	kind tokKind
	off  int
	text string // tVar: the name; tIdent: the name; numbers: as written
	i    int64
	f    float64
}

// exprTokens lexes an expression from s.pos to the end of the meta-command's line (which
// it consumes), as exprscan.l does: keywords in any case, :name variables, integer and
// double constants (an integer that overflows int64 is an error, but see tMaxIntPlusOne),
// operators, and names, which the parser takes for functions.
func (s *scanner) exprTokens() ([]token, error) {
	var toks []token
	for {
		if !s.skipWordSpace() {
			toks = append(toks, token{kind: tEOF, off: s.eol})
			return toks, nil
		}
		start := s.pos
		c := s.src[s.pos]
		t := token{off: start}
		two := ""
		if s.pos+1 < len(s.src) {
			two = string(s.src[s.pos : s.pos+2])
		}
		switch {
		case two == "<>" || two == "!=":
			t.kind, s.pos = tNe, s.pos+2
		case two == "<=":
			t.kind, s.pos = tLe, s.pos+2
		case two == ">=":
			t.kind, s.pos = tGe, s.pos+2
		case two == "<<":
			t.kind, s.pos = tShl, s.pos+2
		case two == ">>":
			t.kind, s.pos = tShr, s.pos+2
		case strings.IndexByte("+-*/%=<>|&#~(),", c) >= 0:
			t.kind = [...]tokKind{tPlus, tMinus, tStar, tSlash, tPercent, tEq, tLt, tGt, tBitOr, tBitAnd,
				tHash, tTilde, tLParen, tRParen, tComma}[strings.IndexByte("+-*/%=<>|&#~(),", c)]
			s.pos++
		case c == ':' && isIdentCont(s.peek(1)):
			s.pos++
			for s.pos < len(s.src) && isIdentCont(s.src[s.pos]) {
				s.pos++
			}
			t.kind, t.text = tVar, string(s.src[start+1:s.pos])
		case isDigit(c) || c == '.' && isDigit(s.peek(1)):
			if err := s.number(&t); err != nil {
				return nil, err
			}
		case isIdentStart(c):
			for s.pos < len(s.src) && isIdentCont(s.src[s.pos]) {
				s.pos++
			}
			t.text = string(s.src[start:s.pos])
			if k, ok := keywords[strings.ToLower(t.text)]; ok {
				t.kind = k
			} else {
				t.kind = tIdent
			}
		default:
			return nil, s.errorf(start, "unexpected character %q in expression", rune(c))
		}
		toks = append(toks, t)
	}
}

// number lexes an integer or double constant at s.pos.
func (s *scanner) number(t *token) error {
	start := s.pos
	isDouble := false
	for s.pos < len(s.src) && isDigit(s.src[s.pos]) {
		s.pos++
	}
	if s.pos < len(s.src) && s.src[s.pos] == '.' {
		isDouble = true
		s.pos++
		for s.pos < len(s.src) && isDigit(s.src[s.pos]) {
			s.pos++
		}
	}
	if c := s.peek(0); c == 'e' || c == 'E' {
		i := 1
		if c := s.peek(1); c == '+' || c == '-' {
			i++
		}
		if isDigit(s.peek(i)) {
			isDouble = true
			s.pos += i
			for s.pos < len(s.src) && isDigit(s.src[s.pos]) {
				s.pos++
			}
		}
	}
	t.text = string(s.src[start:s.pos])
	if !isDouble {
		if t.text == "9223372036854775808" {
			t.kind = tMaxIntPlusOne
			return nil
		}
		i, err := strconv.ParseInt(t.text, 10, 64)
		if err != nil {
			return s.errorf(start, "integer constant %s is out of range: it must lie within ±9223372036854775807", t.text)
		}
		t.kind, t.i = tInt, i
		return nil
	}
	f, err := strconv.ParseFloat(t.text, 64)
	if err != nil || math.IsInf(f, 0) || f != 0 && math.Abs(f) < 0x1p-1022 || f == 0 && hasNonZeroMantissa(t.text) {
		return s.errorf(start, "double constant %s is out of range", t.text)
	}
	t.kind, t.f = tDouble, f
	return nil
}
