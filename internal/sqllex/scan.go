package sqllex

import "bytes"

// Byte classes, looked up in one table: what a byte can be inside a token.
const (
	clSpace     = 1 << iota // space, \t, \n, \r, \f
	clVTab                  // \v: white space unless Dialect.VerticalTabText
	clWordStart             // starts a Word: ASCII letter, _, non-ASCII byte
	clWord                  // continues a Word: those, digits and $
	clDigit                 // 0-9
)

var class = func() (t [256]uint8) {
	for c := range 256 {
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			t[c] = clSpace
		case c == '\v':
			t[c] = clVTab
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80:
			t[c] = clWordStart | clWord
		case c >= '0' && c <= '9':
			t[c] = clDigit | clWord
		case c == '$':
			t[c] = clWord
		}
	}
	return t
}()

func isDigit(c byte) bool { return class[c]&clDigit != 0 }

// A scanner lexes the token that starts at l.src[i], a byte that selected it, and returns
// the token's kind, its end and whether it is unterminated. Where the dialect gives the
// byte no meaning of its own, the scanner returns it as one Other byte.
//
// The scanners, named by the bytes that start their tokens:
const (
	scOther       uint8 = iota // scanOther: any byte that starts no other token
	scSpace                    // scanSpace
	scWord                     // scanWord: ASCII letter, _, non-ASCII byte
	scDigit                    // scanNumber
	scDash                     // scanDash: -
	scHash                     // scanHash: #
	scSlash                    // scanSlash: /
	scQuote                    // scanQuote: '
	scDoubleQuote              // scanDoubleQuote: "
	scBacktick                 // scanBacktick: `
	scDot                      // scanDot: .
	scQuestion                 // scanQuestion: ?
	scDollar                   // scanDollar: $
)

// starts holds, for each byte, the scanner of the tokens that start with it: the lexer's
// transitions from its one state between tokens.
var starts = func() (t [256]uint8) {
	for c := range 256 {
		switch {
		case class[c]&(clSpace|clVTab) != 0:
			t[c] = scSpace
		case class[c]&clWordStart != 0:
			t[c] = scWord
		case class[c]&clDigit != 0:
			t[c] = scDigit
		}
	}
	t['-'], t['#'], t['/'] = scDash, scHash, scSlash
	t['\''], t['"'], t['`'] = scQuote, scDoubleQuote, scBacktick
	t['.'], t['?'], t['$'] = scDot, scQuestion, scDollar
	return t
}()

func scanOther(_ *Lexer, i int) (Kind, int, bool) { return Other, i + 1, false }

func scanSpace(l *Lexer, i int) (Kind, int, bool) {
	s := l.src
	if class[s[i]]&l.space == 0 { // \v where it is not white space
		return Other, i + 1, false
	}
	for i++; i < len(s) && class[s[i]]&l.space != 0; i++ {
	}
	return Space, i, false
}

// scanDash: -- starts a line comment; a lone - is an operator.
func scanDash(l *Lexer, i int) (Kind, int, bool) {
	if i+1 < len(l.src) && l.src[i+1] == '-' {
		return LineComment, l.lineEnd(i + 2), false
	}
	return Other, i + 1, false
}

func scanHash(l *Lexer, i int) (Kind, int, bool) {
	if l.d.HashComments {
		return LineComment, l.lineEnd(i + 1), false
	}
	return Other, i + 1, false
}

// lineEnd returns the end of the line comment whose text goes on at i: its newline, or the
// end of the text.
func (l *Lexer) lineEnd(i int) int {
	s := l.src
	if !l.d.CRNewline {
		if n := bytes.IndexByte(s[i:], '\n'); n >= 0 {
			return i + n
		}
		return len(s)
	}
	for i < len(s) && s[i] != '\n' && s[i] != '\r' {
		i++
	}
	return i
}

// scanSlash: /* starts a block comment, which ends at the */ that closes it, counting the
// /* inside where comments nest.
func scanSlash(l *Lexer, i int) (Kind, int, bool) {
	s := l.src
	if i+1 >= len(s) || s[i+1] != '*' {
		return Other, i + 1, false
	}
	depth := 0
	for i < len(s) {
		if s[i] == '/' && i+1 < len(s) && s[i+1] == '*' {
			if depth == 0 || l.d.NestedComments {
				depth++
			}
			i += 2
			continue
		}
		if s[i] == '*' && i+1 < len(s) && s[i+1] == '/' {
			depth--
			i += 2
			if depth == 0 {
				return BlockComment, i, false
			}
			continue
		}
		i++
	}
	return BlockComment, len(s), true
}

func scanQuote(l *Lexer, i int) (Kind, int, bool) {
	end, open := l.quoted(i, '\'', l.d.BackslashEscapes)
	return String, end, open
}

func scanDoubleQuote(l *Lexer, i int) (Kind, int, bool) {
	if l.d.DoubleQuotedStrings {
		end, open := l.quoted(i, '"', l.d.BackslashEscapes)
		return String, end, open
	}
	end, open := l.quoted(i, '"', false)
	return QuotedIdent, end, open
}

func scanBacktick(l *Lexer, i int) (Kind, int, bool) {
	if !l.d.Backticks {
		return Other, i + 1, false
	}
	end, open := l.quoted(i, '`', false)
	return QuotedIdent, end, open
}

// quoted returns the end of the token quoted with q that starts at l.src[i] == q: a
// doubled q stands for itself and, with esc, a backslash escapes the next byte. open is
// true when the text ends inside it.
func (l *Lexer) quoted(i int, q byte, esc bool) (end int, open bool) {
	s := l.src
	for i++; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if esc {
				i++
			}
		case q:
			if i+1 < len(s) && s[i+1] == q {
				i++
				continue
			}
			return i + 1, false
		}
	}
	return len(s), true
}

func scanNumber(l *Lexer, i int) (Kind, int, bool) {
	if l.d.NumericJunk {
		return Number, l.junkNumber(i), false
	}
	return Number, l.number(i), false
}

// scanDot: a . before a digit starts a number (.5); otherwise it is punctuation.
func scanDot(l *Lexer, i int) (Kind, int, bool) {
	if i+1 < len(l.src) && isDigit(l.src[i+1]) {
		return scanNumber(l, i)
	}
	return Other, i + 1, false
}

// number returns the end of the numeric constant at l.src[i]: digits, a fraction, an
// exponent with its sign, and the letters of hexadecimal, octal and binary forms and
// PostgreSQL 16's digit separators.
func (l *Lexer) number(i int) int {
	s := l.src
	for i < len(s) {
		c := s[i]
		if (c == 'e' || c == 'E') && i+2 < len(s) && (s[i+1] == '+' || s[i+1] == '-') && isDigit(s[i+2]) &&
			s[i-1] != 'x' && s[i-1] != 'X' { // i > the token's start, a digit or a dot
			i += 3
			continue
		}
		if isDigit(c) || c == '.' || c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			i++
			continue
		}
		break
	}
	return i
}

// junkNumber returns the end of the numeric constant at l.src[i] by PostgreSQL 15's rules
// (psqlscan.l's integer, decimal, decimalfail, real, realfail1 and realfail2: the longest
// wins), with the identifier directly after it (integer_junk, decimal_junk, real_junk).
func (l *Lexer) junkNumber(i int) int {
	s := l.src
	j := digits(s, i)
	if j < len(s) && s[j] == '.' {
		if j > i && j+1 < len(s) && s[j+1] == '.' { // 1..10 is 1, then ..
			return j
		}
		j = digits(s, j+1)
	}
	if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
		k := j + 1
		if k < len(s) && (s[k] == '+' || s[k] == '-') {
			k++
		}
		switch {
		case k < len(s) && isDigit(s[k]):
			j = digits(s, k)
		case k > j+1: // 1e+ is longer than 1e with the identifier e after it
			return k
		}
	}
	return l.identEnd(j)
}

func digits(s []byte, i int) int {
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}

// identEnd returns the end of the identifier at l.src[i], or i if none starts there.
func (l *Lexer) identEnd(i int) int {
	s := l.src
	if i < len(s) && class[s[i]]&clWordStart != 0 {
		for i++; i < len(s) && class[s[i]]&clWord != 0; i++ {
		}
	}
	return i
}

func scanQuestion(_ *Lexer, i int) (Kind, int, bool) { return Param, i + 1, false }

// scanDollar: $n is a parameter marker; $tag$ starts a dollar-quoted string where the
// dialect has them; any other $ is one byte.
func scanDollar(l *Lexer, i int) (Kind, int, bool) {
	s := l.src
	if i+1 < len(s) && isDigit(s[i+1]) {
		j := digits(s, i+2)
		if l.d.NumericJunk {
			j = l.identEnd(j)
		}
		return Param, j, false
	}
	if l.d.DollarQuotes {
		if end, open, ok := l.dollar(i); ok {
			return String, end, open
		}
	}
	return Other, i + 1, false
}

// dollar returns the end of the dollar-quoted string at l.src[i] == '$', which runs from
// its tag ($$, or $ and a name without $, then $) to the same tag; ok is false when no tag
// starts at i.
func (l *Lexer) dollar(i int) (end int, open, ok bool) {
	s := l.src
	j := i + 1
	if j < len(s) && class[s[j]]&clWordStart != 0 {
		for j++; j < len(s) && s[j] != '$' && class[s[j]]&clWord != 0; j++ {
		}
	}
	if j >= len(s) || s[j] != '$' {
		return 0, false, false
	}
	tag := s[i : j+1]
	if k := bytes.Index(s[j+1:], tag); k >= 0 {
		return j + 1 + k + len(tag), false, true
	}
	return len(s), true, true
}

// scanWord lexes a word, or the string constant it is the prefix of.
func scanWord(l *Lexer, i int) (Kind, int, bool) {
	s := l.src
	end := i + 1
	for end < len(s) && class[s[end]]&clWord != 0 {
		end++
	}
	if end < len(s) && (s[end] == '\'' || s[end] == '&') {
		return l.prefixed(i, end)
	}
	return Word, end, false
}

// prefixed lexes the word l.src[start:end], which a quote or & follows: the string
// constant it is the prefix of, E'..' (escapes), N'..', X'..', B'..', U&'..', MySQL's
// charset introducers (_utf8mb4'..') and Firebird's q'{..}', or else the word alone.
func (l *Lexer) prefixed(start, end int) (Kind, int, bool) {
	s := l.src
	w := s[start:end]
	var e int
	var open bool
	switch {
	case s[end] == '&':
		if len(w) != 1 || w[0] != 'u' && w[0] != 'U' || end+1 >= len(s) || s[end+1] != '\'' {
			return Word, end, false
		}
		e, open = l.quoted(end+1, '\'', false)
	case len(w) > 1:
		if w[0] != '_' || !l.d.BackslashEscapes { // MySQL's charset introducer
			return Word, end, false
		}
		e, open = l.quoted(end, '\'', true)
	case w[0] == 'e' || w[0] == 'E':
		e, open = l.quoted(end, '\'', true)
	case w[0] == 'n' || w[0] == 'N' || w[0] == 'x' || w[0] == 'X' || w[0] == 'b' || w[0] == 'B':
		e, open = l.quoted(end, '\'', l.d.BackslashEscapes)
	case (w[0] == 'q' || w[0] == 'Q') && l.d.QQuotes && end+1 < len(s):
		e, open = l.qQuoted(end)
	default:
		return Word, end, false
	}
	return String, e, open
}

// qQuoted returns the end of Firebird's q'<delimiter>...<delimiter>' whose quote is at
// l.src[i]: the delimiter is the byte after the quote, and an opening bracket's mate
// closes it.
func (l *Lexer) qQuoted(i int) (end int, open bool) {
	s := l.src
	closer := s[i+1]
	switch closer {
	case '(':
		closer = ')'
	case '{':
		closer = '}'
	case '[':
		closer = ']'
	case '<':
		closer = '>'
	}
	for k := i + 2; k+1 < len(s); k++ {
		if s[k] == closer && s[k+1] == '\'' {
			return k + 2, false
		}
	}
	return len(s), true
}
