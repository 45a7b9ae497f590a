package wire

// Lexicon says how a dialect of SQL writes the things Normalize removes or must skip:
// string literals, quoted identifiers and comments. The zero value is standard SQL
// (strings in single quotes, a quote doubled inside, identifiers in double quotes, -- and /* */ comments).
type Lexicon struct {
	// DoubleQuotedStrings: "..." is a string literal (MySQL's default sql_mode), not an
	// identifier.
	DoubleQuotedStrings bool
	// BackslashEscapes: a backslash escapes the next character inside '...' and "..."
	// strings (MySQL's default). PostgreSQL's E'...' strings take escapes regardless.
	BackslashEscapes bool
	// DollarQuotes: $tag$...$tag$ string constants (PostgreSQL).
	DollarQuotes bool
	// HashComments: # starts a comment to the end of the line (MySQL).
	HashComments bool
	// NestedComments: /* ... */ comments nest (PostgreSQL).
	NestedComments bool
	// QQuotes: q'<...>' string literals with a chosen delimiter (Firebird 3).
	QQuotes bool
	// Backticks: `...` is a quoted identifier (MySQL).
	Backticks bool
}

type tokKind uint8

const (
	tkEOF tokKind = iota
	tkSpace
	tkWord    // keyword or identifier, quoted or not
	tkString  // string literal
	tkNumber  // numeric literal
	tkParam   // placeholder: ? or $n
	tkSemi    // ;
	tkOther   // one byte of punctuation or operator
	tkOpenPar // (
	tkClose   // ) or ]
)

// lexer splits SQL text into tokens without allocating. It never fails: an unterminated
// string or comment runs to the end of the text.
type lexer struct {
	s  []byte
	i  int
	lx Lexicon
}

// Byte classes of the lexer, looked up in one table.
const (
	clSpace = 1 << iota
	clWordStart
	clWord
	clDigit
)

var class = func() (t [256]uint8) {
	for c := range 256 {
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			t[c] = clSpace
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

func isSpace(c byte) bool     { return class[c]&clSpace != 0 }
func isWordStart(c byte) bool { return class[c]&clWordStart != 0 }
func isWordByte(c byte) bool  { return class[c]&clWord != 0 }
func isDigit(c byte) bool     { return class[c]&clDigit != 0 }

// next returns the next token's kind and extent s[start:end].
func (l *lexer) next() (k tokKind, start, end int) {
	s, i := l.s, l.i
	if i >= len(s) {
		return tkEOF, i, i
	}
	start = i
	c := s[i]
	switch {
	case isSpace(c):
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		k = tkSpace
	case c == '-' && i+1 < len(s) && s[i+1] == '-', c == '#' && l.lx.HashComments:
		for i < len(s) && s[i] != '\n' {
			i++
		}
		k = tkSpace
	case c == '/' && i+1 < len(s) && s[i+1] == '*':
		i = l.comment(i)
		k = tkSpace
	case c == '\'':
		i = l.quoted(i, '\'', l.lx.BackslashEscapes)
		k = tkString
	case c == '"':
		i = l.quoted(i, '"', l.lx.DoubleQuotedStrings && l.lx.BackslashEscapes)
		if l.lx.DoubleQuotedStrings {
			k = tkString
		} else {
			k = tkWord
		}
	case c == '`' && l.lx.Backticks:
		i = l.quoted(i, '`', false)
		k = tkWord
	case isDigit(c) || c == '.' && i+1 < len(s) && isDigit(s[i+1]):
		i = l.number(i)
		k = tkNumber
	case c == '?':
		i++
		k = tkParam
	case c == '$':
		switch {
		case i+1 < len(s) && isDigit(s[i+1]):
			i += 2
			for i < len(s) && isDigit(s[i]) {
				i++
			}
			k = tkParam
		case l.lx.DollarQuotes:
			if e, ok := l.dollar(i); ok {
				i, k = e, tkString
			} else {
				i, k = i+1, tkOther
			}
		default:
			i, k = i+1, tkOther
		}
	case isWordStart(c):
		for i < len(s) && isWordByte(s[i]) {
			i++
		}
		k = tkWord
		if e, ok := l.prefixed(start, i); ok {
			i, k = e, tkString
		}
	case c == ';':
		i, k = i+1, tkSemi
	case c == '(':
		i, k = i+1, tkOpenPar
	case c == ')' || c == ']':
		i, k = i+1, tkClose
	default:
		i, k = i+1, tkOther
	}
	l.i = i
	return k, start, i
}

// comment skips a /* */ comment starting at i, nested where the dialect nests them.
func (l *lexer) comment(i int) int {
	s := l.s
	depth := 0
	for i < len(s) {
		if i+1 < len(s) && s[i] == '/' && s[i+1] == '*' {
			if depth == 0 || l.lx.NestedComments {
				depth++
			}
			i += 2
			continue
		}
		if i+1 < len(s) && s[i] == '*' && s[i+1] == '/' {
			depth--
			i += 2
			if depth == 0 {
				return i
			}
			continue
		}
		i++
	}
	return i
}

// quoted skips a q-quoted token starting at i (s[i] == q) with q doubling and, where esc
// is set, backslash escapes; it returns the index after the closing quote.
func (l *lexer) quoted(i int, q byte, esc bool) int {
	s := l.s
	i++
	for i < len(s) {
		switch s[i] {
		case '\\':
			if esc {
				i += 2
				continue
			}
		case q:
			if i+1 < len(s) && s[i+1] == q {
				i += 2
				continue
			}
			return i + 1
		}
		i++
	}
	return len(s)
}

// number skips a numeric literal: digits, a fraction, an exponent with its sign, and the
// letters of hexadecimal, octal and binary forms and PostgreSQL 16's digit separators.
func (l *lexer) number(i int) int {
	s := l.s
	for i < len(s) {
		c := s[i]
		if (c == 'e' || c == 'E') && i+2 < len(s) && (s[i+1] == '+' || s[i+1] == '-') && isDigit(s[i+2]) &&
			!(i > 0 && (s[i-1] == 'x' || s[i-1] == 'X')) {
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

// dollar skips a PostgreSQL dollar-quoted string starting at i ($$...$$ or $tag$...$tag$).
func (l *lexer) dollar(i int) (int, bool) {
	s := l.s
	j := i + 1
	for j < len(s) && s[j] != '$' {
		if !isWordByte(s[j]) || s[j] == '$' || j == i+1 && isDigit(s[j]) {
			return 0, false
		}
		j++
	}
	if j >= len(s) {
		return 0, false
	}
	tag := s[i : j+1]
	for k := j + 1; k+len(tag) <= len(s); k++ {
		if s[k] == '$' && string(s[k:k+len(tag)]) == string(tag) {
			return k + len(tag), true
		}
	}
	return len(s), true
}

// prefixed recognises a string literal with a prefix, the word s[start:end] followed by a
// quote: E'..' (escapes), N'..', X'..', B'..', U&'..', MySQL's charset introducers
// (_utf8mb4'..') and Firebird's q'{..}'. It returns the end of the literal.
func (l *lexer) prefixed(start, end int) (int, bool) {
	s := l.s
	if end >= len(s) {
		return 0, false
	}
	w := s[start:end]
	if s[end] == '&' && len(w) == 1 && (w[0] == 'u' || w[0] == 'U') && end+1 < len(s) && s[end+1] == '\'' {
		return l.quoted(end+1, '\'', false), true
	}
	if s[end] != '\'' {
		return 0, false
	}
	if len(w) == 1 {
		switch w[0] {
		case 'e', 'E':
			return l.quoted(end, '\'', true), true
		case 'n', 'N', 'x', 'X', 'b', 'B':
			return l.quoted(end, '\'', l.lx.BackslashEscapes), true
		case 'q', 'Q':
			if l.lx.QQuotes && end+1 < len(s) {
				open := s[end+1]
				closer := open
				switch open {
				case '(':
					closer = ')'
				case '{':
					closer = '}'
				case '[':
					closer = ']'
				case '<':
					closer = '>'
				}
				for k := end + 2; k+1 < len(s); k++ {
					if s[k] == closer && s[k+1] == '\'' {
						return k + 2, true
					}
				}
				return len(s), true
			}
		}
		return 0, false
	}
	if w[0] == '_' && l.lx.BackslashEscapes { // MySQL charset introducer
		return l.quoted(end, '\'', true), true
	}
	return 0, false
}

// Normalize appends to dst the text of stmt (one statement) with its literals and
// parameter markers replaced by ?, as pg_stat_statements shows statements: comments
// removed, each run of white space made one space, a trailing semicolon dropped, a minus
// sign that belongs to a number kept with it (a = -5 gives a = ?), identifiers and
// keywords as written, no space after an opening parenthesis or before a comma or a closing
// one, and one space after a comma. A list that holds only literals after IN becomes IN (...), and the
// rows of a multi-row VALUES list of literals after the first become "...", so that lists
// of different lengths give one text: WHERE a = 5 AND b = 'x' AND c IN (1,2,3) gives
// WHERE a = ? AND b = ? AND c IN (...). literals reports whether stmt had literals
// (not only parameter markers): such texts tend to differ on every execution.
func Normalize(dst, stmt []byte, lx Lexicon) (out []byte, literals bool) {
	l := lexer{s: stmt, lx: lx}
	base := len(dst)
	out = dst
	space := false
	signAt := -1    // index in out of a '-' that would be the sign of a number after it
	prev := tkSpace // previous non-space token
	lists := false  // an IN or VALUES keyword was seen: collapseLists has work
	for {
		k, a, b := l.next()
		if k == tkEOF {
			break
		}
		if k == tkSpace {
			space = len(out) > base
			continue
		}
		if k == tkNumber && signAt >= 0 && !space {
			out = out[:signAt] // the minus sign is part of the literal
		}
		// Spacing is made canonical around lists, so that (a,b) and ( a , b ) are one
		// text: no space after ( or before , ) ], one space after a comma.
		if k == tkOther && b-a == 1 && stmt[a] == ',' || k == tkClose ||
			len(out) > base && out[len(out)-1] == '(' {
			space = false
		} else if len(out) > base && out[len(out)-1] == ',' {
			space = true
		}
		if space {
			out = append(out, ' ')
			space = false
		}
		sign := -1
		switch k {
		case tkString, tkNumber:
			literals = true
			out = append(out, '?')
		case tkParam:
			out = append(out, '?')
		default:
			if k == tkWord && !lists && (b-a == 2 && equalFold(stmt[a:b], "IN") || b-a == 6 && equalFold(stmt[a:b], "VALUES")) {
				lists = true
			}
			if k == tkOther && b-a == 1 && stmt[a] == '-' &&
				prev != tkWord && prev != tkString && prev != tkNumber && prev != tkParam && prev != tkClose {
				sign = len(out)
			}
			out = append(out, stmt[a:b]...)
		}
		signAt = sign
		prev = k
	}
	for len(out) > base && (out[len(out)-1] == ';' || out[len(out)-1] == ' ') {
		out = out[:len(out)-1]
	}
	if !lists {
		return out, literals
	}
	return collapseLists(out, base), literals
}

// SpanKind says what a Span of a statement's text is.
type SpanKind uint8

const (
	// SpanString is a string literal, with its prefix and quotes ('x', E'x', $$x$$).
	SpanString SpanKind = iota + 1
	// SpanNumber is a numeric literal, with the minus sign that belongs to it.
	SpanNumber
	// SpanParam is a parameter marker: ? or $n.
	SpanParam
)

// Span is one literal or parameter marker of a statement: its text is stmt[Start:End].
type Span struct {
	Start, End int
	Kind       SpanKind
}

// Spans appends to dst the literals and parameter markers of stmt, in order: exactly the
// tokens Normalize replaces by ?, a minus sign included where Normalize takes it as the
// number's (a recording turns them into variables; see package observe).
func Spans(dst []Span, stmt []byte, lx Lexicon) []Span {
	l := lexer{s: stmt, lx: lx}
	space := false
	signAt := -1    // start of a '-' that would be the sign of a number right after it
	prev := tkSpace // previous non-space token
	for {
		k, a, b := l.next()
		if k == tkEOF {
			return dst
		}
		if k == tkSpace {
			space = true
			continue
		}
		start := a
		if k == tkNumber && signAt >= 0 && !space {
			start = signAt
		}
		space = false
		sign := -1
		switch k {
		case tkString:
			dst = append(dst, Span{start, b, SpanString})
		case tkNumber:
			dst = append(dst, Span{start, b, SpanNumber})
		case tkParam:
			dst = append(dst, Span{start, b, SpanParam})
		case tkOther:
			if b-a == 1 && stmt[a] == '-' &&
				prev != tkWord && prev != tkString && prev != tkNumber && prev != tkParam && prev != tkClose {
				sign = a
			}
		}
		signAt = sign
		prev = k
	}
}

// collapseLists rewrites, in out[base:], IN (?, ?) into IN (...) and VALUES (?, ?), (?, ?)
// into VALUES (?, ?), ... (lists of markers only; see Normalize). The rewritten text is
// built after the original, which may be shorter than it (IN(?)), then moved down.
func collapseLists(out []byte, base int) []byte {
	end := len(out)
	for r := base; r < end; {
		if wordAt(out[:end], base, r, "IN") {
			if e, ok := markerTuple(out[:end], skipSpace(out[:end], r+2)); ok {
				out = append(out, "IN (...)"...)
				r = e
				continue
			}
		}
		if wordAt(out[:end], base, r, "VALUES") {
			p := skipSpace(out[:end], r+6)
			if e, ok := markerTuple(out[:end], p); ok {
				n, more := e, false
				for {
					q := skipSpace(out[:end], n)
					if q >= end || out[q] != ',' {
						break
					}
					e2, ok := markerTuple(out[:end], skipSpace(out[:end], q+1))
					if !ok {
						break
					}
					n, more = e2, true
				}
				if more {
					out = append(out, "VALUES "...)
					out = append(out, out[p:e]...)
					out = append(out, ", ..."...)
					r = n
					continue
				}
			}
		}
		out = append(out, out[r])
		r++
	}
	n := copy(out[base:], out[end:])
	return out[:base+n]
}

// wordAt reports whether the word kw (upper case) starts at out[i], case-insensitively, as a
// whole word.
func wordAt(out []byte, base, i int, kw string) bool {
	if i+len(kw) > len(out) || i > base && isWordByte(out[i-1]) {
		return false
	}
	for j := 0; j < len(kw); j++ {
		if out[i+j]&^0x20 != kw[j] {
			return false
		}
	}
	return i+len(kw) == len(out) || !isWordByte(out[i+len(kw)])
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && b[i] == ' ' {
		i++
	}
	return i
}

// markerTuple reports whether b[i:] starts with a parenthesised list of ? only, and where
// it ends.
func markerTuple(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '(' {
		return 0, false
	}
	n := 0
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '?':
			n++
		case ' ', ',':
		case ')':
			return j + 1, n > 0
		default:
			return 0, false
		}
	}
	return 0, false
}

// NextStatement returns the first statement of sql (without its semicolon and surrounding
// white space) and the text after it, splitting at semicolons outside literals and
// comments. A statement that starts with CREATE, BEGIN NOT ATOMIC or EXECUTE BLOCK is
// never split, since the bodies of procedures, triggers and compound statements hold
// semicolons. Statements with nothing but white space and comments are
// skipped; stmt is empty when none is left.
func NextStatement(sql []byte, lx Lexicon) (stmt, rest []byte) {
	l := lexer{s: sql, lx: lx}
	first, start, end := true, -1, -1
	whole := false
	for {
		k, a, b := l.next()
		switch k {
		case tkEOF:
			if start < 0 {
				return nil, nil
			}
			return sql[start:end], nil
		case tkSpace:
			continue
		case tkSemi:
			if whole {
				end = b
				continue
			}
			if start >= 0 {
				return sql[start:end], sql[b:]
			}
			continue
		}
		if first {
			first = false
			start = a
			whole = k == tkWord && wholeStatement(sql[a:], lx)
		}
		end = b
	}
}

// wholeStatement reports whether a statement holds statements of its own, separated by
// semicolons that do not end it: CREATE (procedures, functions, triggers), MariaDB's
// compound statement BEGIN NOT ATOMIC ... END, Firebird's EXECUTE BLOCK.
func wholeStatement(sql []byte, lx Lexicon) bool {
	w1, w2 := words2(sql, lx)
	return equalFold(w1, "CREATE") || equalFold(w1, "BEGIN") && equalFold(w2, "NOT") ||
		equalFold(w1, "EXECUTE") && equalFold(w2, "BLOCK")
}

// Blank reports whether sql holds nothing but white space and comments. It lexes sql only
// when it starts with a comment, so it costs little on a statement's text.
func Blank(sql []byte, lx Lexicon) bool {
	for i, c := range sql {
		if isSpace(c) {
			continue
		}
		if c == '-' || c == '/' || c == '#' && lx.HashComments {
			st, _ := NextStatement(sql[i:], lx)
			return st == nil
		}
		return false
	}
	return true
}

// FirstWord returns the first keyword or identifier of sql, skipping white space and
// comments, or nil when sql starts with anything else.
func FirstWord(sql []byte, lx Lexicon) []byte {
	w, _ := words2(sql, lx)
	return w
}

func words2(sql []byte, lx Lexicon) (first, second []byte) {
	l := lexer{s: sql, lx: lx}
	for {
		k, a, b := l.next()
		switch k {
		case tkSpace:
			continue
		case tkWord:
			if first == nil {
				first = sql[a:b]
				continue
			}
			return first, sql[a:b]
		}
		return first, nil
	}
}

// TxControl reports whether the statement ends the transaction it runs in: COMMIT, END
// (PostgreSQL), COMMIT RETAIN (Firebird) and COMMIT AND CHAIN (MySQL) commit; ROLLBACK and
// ABORT roll back, but not ROLLBACK TO a savepoint; COMMIT PREPARED and ROLLBACK PREPARED
// end a prepared transaction, not the current one.
func TxControl(stmt []byte, lx Lexicon) End {
	w1, w2 := words2(stmt, lx)
	if equalFold(w2, "WORK") || equalFold(w2, "TRANSACTION") {
		// COMMIT WORK, ROLLBACK TRANSACTION TO ...: look one word further.
		l := lexer{s: stmt, lx: lx}
		n := 0
		for {
			k, a, b := l.next()
			if k == tkSpace {
				continue
			}
			if k != tkWord {
				w2 = nil
				break
			}
			n++
			if n == 3 {
				w2 = stmt[a:b]
				break
			}
		}
	}
	switch {
	case equalFold(w1, "COMMIT") || equalFold(w1, "END"):
		if equalFold(w2, "PREPARED") {
			return EndNone
		}
		return EndCommit
	case equalFold(w1, "ROLLBACK") || equalFold(w1, "ABORT"):
		if equalFold(w2, "TO") || equalFold(w2, "PREPARED") {
			return EndNone
		}
		return EndRollback
	}
	return EndNone
}

// equalFold compares an ASCII word with an upper-case keyword.
func equalFold(w []byte, kw string) bool {
	if len(w) != len(kw) {
		return false
	}
	for i := range w {
		if w[i]&^0x20 != kw[i] {
			return false
		}
	}
	return true
}
