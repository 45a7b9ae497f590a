package wire

import "github.com/dblat/dblat/internal/sqllex"

// Lexicon says how a protocol's dialect of SQL writes the things Normalize removes or must
// skip: string literals, quoted identifiers and comments. It is the dialect of package
// sqllex, which lexes for Normalize, Spans, NextStatement, FirstWord and TxControl; the zero
// value is standard SQL.
type Lexicon = sqllex.Dialect

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
	l := sqllex.New(stmt, lx)
	base := len(dst)
	out = dst
	space := false
	signAt := -1     // index in out of a '-' that would be the sign of a number after it
	operand := false // the previous token ends an operand: a '-' after it is an operator
	lists := false   // an IN or VALUES keyword was seen: collapseLists has work
	for {
		t := l.Next()
		k, a, b := t.Kind, t.Start, t.End
		if k == sqllex.EOF {
			break
		}
		if k.Blank() {
			space = len(out) > base
			continue
		}
		if k == sqllex.Number && signAt >= 0 && !space {
			out = out[:signAt] // the minus sign is part of the literal
		}
		// Spacing is made canonical around lists, so that (a,b) and ( a , b ) are one
		// text: no space after ( or before , ) ], one space after a comma.
		if k == sqllex.Other && (stmt[a] == ',' || isClose(stmt[a])) ||
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
		case sqllex.String, sqllex.Number:
			literals = true
			out = append(out, '?')
		case sqllex.Param:
			out = append(out, '?')
		default:
			if k == sqllex.Word && !lists && (b-a == 2 && equalFold(stmt[a:b], "IN") || b-a == 6 && equalFold(stmt[a:b], "VALUES")) {
				lists = true
			}
			if k == sqllex.Other && stmt[a] == '-' && !operand {
				sign = len(out)
			}
			out = append(out, stmt[a:b]...)
		}
		signAt = sign
		operand = endsOperand(t, stmt)
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
	l := sqllex.New(stmt, lx)
	space := false
	signAt := -1     // start of a '-' that would be the sign of a number right after it
	operand := false // the previous token ends an operand: a '-' after it is an operator
	for {
		t := l.Next()
		k, a, b := t.Kind, t.Start, t.End
		if k == sqllex.EOF {
			return dst
		}
		if k.Blank() {
			space = true
			continue
		}
		start := a
		if k == sqllex.Number && signAt >= 0 && !space {
			start = signAt
		}
		space = false
		sign := -1
		switch k {
		case sqllex.String:
			dst = append(dst, Span{start, b, SpanString})
		case sqllex.Number:
			dst = append(dst, Span{start, b, SpanNumber})
		case sqllex.Param:
			dst = append(dst, Span{start, b, SpanParam})
		case sqllex.Other:
			if stmt[a] == '-' && !operand {
				sign = a
			}
		}
		signAt = sign
		operand = endsOperand(t, stmt)
	}
}

// endsOperand reports whether token t of stmt ends an operand, so that a minus sign after
// it is an operator and not the sign of a number: a word, a literal, a parameter marker, a
// closing parenthesis or bracket.
func endsOperand(t sqllex.Token, stmt []byte) bool {
	switch t.Kind {
	case sqllex.Word, sqllex.QuotedIdent, sqllex.String, sqllex.Number, sqllex.Param:
		return true
	case sqllex.Other:
		return isClose(stmt[t.Start])
	}
	return false
}

func isClose(c byte) bool { return c == ')' || c == ']' }

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
	if i+len(kw) > len(out) || i > base && sqllex.IsWordByte(out[i-1]) {
		return false
	}
	for j := 0; j < len(kw); j++ {
		if out[i+j]&^0x20 != kw[j] {
			return false
		}
	}
	return i+len(kw) == len(out) || !sqllex.IsWordByte(out[i+len(kw)])
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
	l := sqllex.New(sql, lx)
	start, end := -1, -1
	whole := false
	for {
		t := l.Next()
		switch {
		case t.Kind == sqllex.EOF:
			if start < 0 {
				return nil, nil
			}
			return sql[start:end], nil
		case t.Kind.Blank():
			continue
		case t.Kind == sqllex.Other && sql[t.Start] == ';':
			if whole {
				end = t.End
				continue
			}
			if start >= 0 {
				return sql[start:end], sql[t.End:]
			}
			continue
		}
		if start < 0 {
			start = t.Start
			whole = t.Kind == sqllex.Word && wholeStatement(sql[t.Start:], lx)
		}
		end = t.End
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

// Blank reports whether sql holds nothing but white space and comments. It lexes no
// further than its first token unless sql starts with a comment, so it costs little on a
// statement's text.
func Blank(sql []byte, lx Lexicon) bool {
	l := sqllex.New(sql, lx)
	t := l.Next()
	if t.Kind == sqllex.Space {
		t = l.Next()
	}
	switch t.Kind {
	case sqllex.EOF:
		return true
	case sqllex.LineComment, sqllex.BlockComment:
		st, _ := NextStatement(sql[t.Start:], lx)
		return st == nil
	}
	return false
}

// FirstWord returns the first keyword or identifier of sql, skipping white space and
// comments, or nil when sql starts with anything else.
func FirstWord(sql []byte, lx Lexicon) []byte {
	w, _ := words2(sql, lx)
	return w
}

// words2 returns the first two tokens of sql, skipping white space and comments, while
// they are words or quoted identifiers.
func words2(sql []byte, lx Lexicon) (first, second []byte) {
	l := sqllex.New(sql, lx)
	for {
		t := l.Next()
		switch {
		case t.Kind.Blank():
			continue
		case isWord(t.Kind):
			if first == nil {
				first = sql[t.Start:t.End]
				continue
			}
			return first, sql[t.Start:t.End]
		}
		return first, nil
	}
}

func isWord(k sqllex.Kind) bool { return k == sqllex.Word || k == sqllex.QuotedIdent }

// TxControl reports whether the statement ends the transaction it runs in: COMMIT, END
// (PostgreSQL), COMMIT RETAIN (Firebird) and COMMIT AND CHAIN (MySQL) commit; ROLLBACK and
// ABORT roll back, but not ROLLBACK TO a savepoint; COMMIT PREPARED and ROLLBACK PREPARED
// end a prepared transaction, not the current one.
func TxControl(stmt []byte, lx Lexicon) End {
	w1, w2 := words2(stmt, lx)
	if equalFold(w2, "WORK") || equalFold(w2, "TRANSACTION") {
		// COMMIT WORK, ROLLBACK TRANSACTION TO ...: look one word further.
		l := sqllex.New(stmt, lx)
		n := 0
		for {
			t := l.Next()
			if t.Kind.Blank() {
				continue
			}
			if !isWord(t.Kind) {
				w2 = nil
				break
			}
			n++
			if n == 3 {
				w2 = stmt[t.Start:t.End]
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
