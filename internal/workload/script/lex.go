package script

import (
	"bytes"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// scanner walks a script's source. SQL is split into statements as psql and pgbench do
// (src/fe_utils/psqlscan.l): a statement ends at a semicolon outside quotes, comments and
// parentheses, and a backslash outside quotes starts a meta-command that runs to the end of
// its line. Positions are byte offsets into src; lineCol turns them into the 1-based line
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

// isSQLSpace is psqlscan's {space}: whitespace between SQL tokens.
func isSQLSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }

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

// scanSQL collects SQL from s.pos up to the end of a statement, a meta-command or the end of
// the source, following psqlscan.l's lexical rules: '...' strings (standard conforming, a doubled
// quote inside), E'...' strings (backslash escapes), "..." identifiers, $tag$...$tag$ strings,
// -- and nested /* */ comments, parentheses (a semicolon inside them does not end the
// statement), and the BEGIN ... END bodies of CREATE FUNCTION/PROCEDURE (psql's heuristic,
// extended here to CREATE TRIGGER, CREATE OR ALTER, RECREATE and Firebird's EXECUTE BLOCK,
// whose declarations before its BEGIN end with semicolons too, as a Firebird routine's
// DECLARE ... before its BEGIN do). Beyond psql, MySQL's `...`
// identifiers are opaque too. \; puts a semicolon into the statement without ending it
// (pgbench's combined statements) and \: a colon that is never a variable reference. A
// :name outside quotes and comments is a variable reference; :: (a cast) and := are not.
func (s *scanner) scanSQL() (sqlText, stop, error) {
	var (
		b       strings.Builder
		out     sqlText
		started bool
		paren   int
		begin   int
		words   [4]string // the statement's first identifiers, for the BEGIN/END heuristic
		nwords  int
		routine bool
		block   bool // EXECUTE BLOCK before its BEGIN: its declarations end with semicolons
	)
	out.off = -1
	out.empty = true
	mark := func(off int) {
		if !started {
			started = true
			out.off = off
		}
	}
	for s.pos < len(s.src) {
		c := s.src[s.pos]
		start := s.pos
		switch {
		case isSQLSpace(c):
			s.pos++
			if started {
				b.WriteByte(c)
			}
		case c == '-' && s.peek(1) == '-':
			for s.pos < len(s.src) && s.src[s.pos] != '\n' && s.src[s.pos] != '\r' {
				s.pos++
			}
			if started {
				b.Write(s.src[start:s.pos])
			}
		case c == '/' && s.peek(1) == '*':
			mark(start)
			depth := 0
			s.pos += 2
			for {
				if s.pos >= len(s.src) {
					return out, stopEOF, s.errorf(start, "unterminated /* comment: close it with */")
				}
				if s.src[s.pos] == '/' && s.peek(1) == '*' {
					depth++
					s.pos += 2
				} else if s.src[s.pos] == '*' && s.peek(1) == '/' {
					s.pos += 2
					if depth == 0 {
						break
					}
					depth--
				} else {
					s.pos++
				}
			}
			b.Write(s.src[start:s.pos])
		case c == '\'':
			mark(start)
			if err := s.skipQuoted('\'', false); err != nil {
				return out, stopEOF, err
			}
			out.empty = false
			b.Write(s.src[start:s.pos])
		case c == '"' || c == '`':
			mark(start)
			if err := s.skipQuoted(c, false); err != nil {
				return out, stopEOF, err
			}
			out.empty = false
			b.Write(s.src[start:s.pos])
		case c == '$': // identifiers and numbers consumed theirs: this one starts a token
			mark(start)
			out.empty = false
			if tag := s.dollarTag(); tag != "" {
				end := bytes.Index(s.src[s.pos+len(tag):], []byte(tag))
				if end < 0 {
					return out, stopEOF, s.errorf(start, "unterminated dollar-quoted string: close it with %s", tag)
				}
				s.pos += len(tag) + end + len(tag)
			} else {
				s.pos++
			}
			b.Write(s.src[start:s.pos])
		case isIdentStart(c):
			mark(start)
			out.empty = false
			for s.pos < len(s.src) && (isIdentCont(s.src[s.pos]) || s.src[s.pos] == '$') {
				s.pos++
			}
			word := string(s.src[start:s.pos])
			if (word == "E" || word == "e") && s.peek(0) == '\'' {
				if err := s.skipQuoted('\'', true); err != nil {
					return out, stopEOF, err
				}
				b.Write(s.src[start:s.pos])
				break
			}
			b.WriteString(word)
			if nwords < len(words) {
				words[nwords] = strings.ToLower(word)
				nwords++
				routine = isRoutine(words[:nwords])
				if nwords == 2 && routine && words[0] == "execute" {
					block = true
				}
			}
			if routine && paren == 0 {
				switch {
				case begin == 0 && strings.EqualFold(word, "declare"):
					// Firebird's CREATE PROCEDURE ... AS DECLARE v type; BEGIN: its
					// declarations end with semicolons too.
					block = true
				case strings.EqualFold(word, "begin"):
					begin++
					block = false
				case strings.EqualFold(word, "case"):
					if begin > 0 {
						begin++
					}
				case strings.EqualFold(word, "end"):
					if begin > 0 {
						begin--
					}
				}
			}
		case isDigit(c):
			mark(start)
			out.empty = false
			for s.pos < len(s.src) && isIdentCont(s.src[s.pos]) {
				s.pos++
			}
			b.Write(s.src[start:s.pos])
		case c == '(' || c == ')':
			mark(start)
			out.empty = false
			if c == '(' {
				paren++
			} else if paren > 0 {
				paren--
			}
			s.pos++
			b.WriteByte(c)
		case c == ';':
			mark(start)
			s.pos++
			b.WriteByte(c)
			if paren == 0 && begin == 0 && !block {
				out.text, out.raw = b.String(), string(s.src[out.off:s.pos])
				return out, stopSemicolon, nil
			}
		case c == '\\' && (s.peek(1) == ';' || s.peek(1) == ':'):
			mark(start)
			s.pos += 2
			b.WriteByte(s.src[start+1])
			if s.src[start+1] == ';' {
				out.multi = true
				nwords, routine, block = 0, false, false
			} else {
				out.empty = false
			}
		case c == '\\':
			out.text = b.String()
			if started {
				out.raw = string(s.src[out.off:s.pos])
			}
			return out, stopBackslash, nil
		case c == ':':
			mark(start)
			out.empty = false
			if isIdentStart(s.peek(1)) {
				s.pos++
				for s.pos < len(s.src) && isIdentCont(s.src[s.pos]) {
					s.pos++
				}
				out.refs = append(out.refs, sqlRef{start: b.Len(), end: b.Len() + s.pos - start,
					name: string(s.src[start+1 : s.pos]), off: start})
			} else {
				for s.pos < len(s.src) && s.src[s.pos] == ':' {
					s.pos++
				}
			}
			b.Write(s.src[start:s.pos])
		default:
			mark(start)
			out.empty = false
			s.pos++
			b.WriteByte(c)
		}
	}
	out.text = b.String()
	if started {
		out.raw = string(s.src[out.off:])
	}
	return out, stopEOF, nil
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

// skipQuoted moves s.pos past the quoted token that starts at s.pos with quote q; a doubled
// quote stands for itself, and with escapes a backslash escapes the next character.
func (s *scanner) skipQuoted(q byte, escapes bool) error {
	start := s.pos
	if escapes { // E'...': s.pos is at the quote
		start--
	}
	s.pos++
	for s.pos < len(s.src) {
		c := s.src[s.pos]
		switch {
		case escapes && c == '\\':
			s.pos += 2
		case c == q && s.peek(1) == q:
			s.pos += 2
		case c == q:
			s.pos++
			return nil
		default:
			s.pos++
		}
	}
	s.pos = len(s.src)
	what := map[byte]string{'\'': "quoted string", '"': "quoted identifier", '`': "quoted identifier"}[q]
	return s.errorf(start, "unterminated %s: close it with %c", what, q)
}

// dollarTag returns the $tag$ delimiter at s.pos, or "" if there is none.
func (s *scanner) dollarTag() string {
	i := s.pos + 1
	if i < len(s.src) && isIdentStart(s.src[i]) {
		for i < len(s.src) && isIdentCont(s.src[i]) {
			i++
		}
	}
	if i < len(s.src) && s.src[i] == '$' {
		return string(s.src[s.pos : i+1])
	}
	return ""
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
