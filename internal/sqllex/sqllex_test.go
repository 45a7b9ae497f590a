package sqllex

import (
	"bytes"
	"strings"
	"testing"
)

// The dialects of dblat's callers: the engines' (package wire) and pgbench scripts'
// (package script: psql's rules, and MySQL's backticks).
var (
	pg       = Dialect{DollarQuotes: true, NestedComments: true}
	psql     = Dialect{DollarQuotes: true, NestedComments: true, Backticks: true, CRNewline: true, NumericJunk: true, VerticalTabText: true}
	mysql    = Dialect{DoubleQuotedStrings: true, BackslashEscapes: true, HashComments: true, Backticks: true}
	firebird = Dialect{QQuotes: true}
)

// lexAll renders the tokens of s as Kind(text), white space as _, an unterminated token
// with ! after its text.
func lexAll(s string, d Dialect) string {
	var b strings.Builder
	l := New([]byte(s), d)
	for {
		t := l.Next()
		if t.Kind == EOF {
			return b.String()
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		if t.Kind == Space {
			b.WriteByte('_')
			continue
		}
		b.WriteString(t.Kind.String() + "(" + s[t.Start:t.End])
		if t.Unterminated {
			b.WriteByte('!')
		}
		b.WriteByte(')')
	}
}

// TestTokens holds the lexical rules: psql's (src/fe_utils/psqlscan.l), which pgbench
// scripts follow, PostgreSQL's server's, MySQL's and Firebird's, as far as dblat needs
// them, with the cases of packages wire and script.
func TestTokens(t *testing.T) {
	for _, c := range []struct {
		d        Dialect
		in, want string
	}{
		// Words, numbers, parameter markers, punctuation.
		{pg, "SELECT * FROM t WHERE a = 5 AND b = $1;",
			"Word(SELECT) _ Other(*) _ Word(FROM) _ Word(t) _ Word(WHERE) _ Word(a) _ Other(=) _ Number(5) _ Word(AND) _ Word(b) _ Other(=) _ Param($1) Other(;)"},
		{pg, "a$b$c RDB$DATABASE _x é1", "Word(a$b$c) _ Word(RDB$DATABASE) _ Word(_x) _ Word(é1)"},
		{pg, "0x1F 1_000 .5 1.e3 3E+2 1.5e-3 0xe+5 1..10 7abc",
			"Number(0x1F) _ Number(1_000) _ Number(.5) _ Number(1.e3) _ Number(3E+2) _ Number(1.5e-3) _ Number(0xe) Other(+) Number(5) _ Number(1..10) _ Number(7abc)"},
		{pg, "a-5,-5,(-1)", "Word(a) Other(-) Number(5) Other(,) Other(-) Number(5) Other(,) Other(() Other(-) Number(1) Other())"},
		// PostgreSQL 15's numbers, with the identifier after them (psql's junk rules): the
		// cases pgbench shows in script.TestJunkMatchesPgbench, and the fail rules.
		// (psql lexes 1..10 as 1, .., 10: Other bytes are single.)
		{psql, "0x1F 1_000 .5 1.e3 3E+2 1.5e-3 0xe+5 1..10 7abc",
			"Number(0x1F) _ Number(1_000) _ Number(.5) _ Number(1.e3) _ Number(3E+2) _ Number(1.5e-3) _ Number(0xe) Other(+) Number(5) _ Number(1) Other(.) Number(.10) _ Number(7abc)"},
		{psql, "1a$$ 1.a$$ 1.E'x' 0é$$ 1.5e3a$b $1a$$ $1E'x' 1xE'y'",
			"Number(1a$$) _ Number(1.a$$) _ Number(1.E) String('x') _ Number(0é$$) _ Number(1.5e3a$b) _ Param($1a$$) _ Param($1E) String('x') _ Number(1xE) String('y')"},
		{psql, "1e 1e+ 1e+x 1ex 1.5.3 .5..", "Number(1e) _ Number(1e+) _ Number(1e+) Word(x) _ Number(1ex) _ Number(1.5) Number(.3) _ Number(.5) Other(.) Other(.)"},
		{psql, "1$$x$$ $1 1.end", "Number(1) String($$x$$) _ Param($1) _ Number(1.end)"},
		{pg, "? $10 $12x $ $a 1$$x$$", "Param(?) _ Param($10) _ Param($12) Word(x) _ Other($) _ Other($) Word(a) _ Number(1) String($$x$$)"},
		{pg, "x::int, y:=1, a[1:2], :v", "Word(x) Other(:) Other(:) Word(int) Other(,) _ Word(y) Other(:) Other(=) Number(1) Other(,) _ Word(a) Other([) Number(1) Other(:) Number(2) Other(]) Other(,) _ Other(:) Word(v)"},
		{psql, `SELECT 1\; SELECT 2 \gset`, `Word(SELECT) _ Number(1) Other(\) Other(;) _ Word(SELECT) _ Number(2) _ Other(\) Word(gset)`},
		// White space: psql of PostgreSQL 15 has no \v in it.
		{pg, " \t\n\r\f\v x", "_ Word(x)"},
		{psql, " \t\n\r\f\v x", "_ Other(\v) _ Word(x)"},
		// Comments.
		{pg, "a -- c;\nb", "Word(a) _ LineComment(-- c;) _ Word(b)"},
		{pg, "x--1\n", "Word(x) LineComment(--1) _"},
		{pg, "--x\rSELECT", "LineComment(--x\rSELECT)"},
		{psql, "--x\rSELECT", "LineComment(--x) _ Word(SELECT)"},
		{pg, "/* c /* nested */ still */ t", "BlockComment(/* c /* nested */ still */) _ Word(t)"},
		{firebird, "/* c /* not nested */ t */", "BlockComment(/* c /* not nested */) _ Word(t) _ Other(*) Other(/)"},
		{pg, "/**/ /*/ x */ a*/b /", "BlockComment(/**/) _ BlockComment(/*/ x */) _ Word(a) Other(*) Other(/) Word(b) _ Other(/)"},
		{pg, "SELECT 1 /* ; /* ; */ ; */ ;", "Word(SELECT) _ Number(1) _ BlockComment(/* ; /* ; */ ; */) _ Other(;)"},
		{pg, "/* c /* d */", "BlockComment(/* c /* d */!)"},
		{pg, "# x", "Other(#) _ Word(x)"},
		{mysql, "a # x;\nb", "Word(a) _ LineComment(# x;) _ Word(b)"},
		// Strings and quoted identifiers, standard conforming.
		{pg, `'it''s' 'a\' 'b'`, `String('it''s') _ String('a\') _ String('b')`},
		{pg, `E'it\'s' e'\\' E'a\'' E'b\'`, `String(E'it\'s') _ String(e'\\') _ String(E'a\'') _ String(E'b\'!)`},
		{pg, `U&'d\0061t' X'1F' B'101' N'x' U&"x" u&`, `String(U&'d\0061t') _ String(X'1F') _ String(B'101') _ String(N'x') _ Word(U) Other(&) QuotedIdent("x") _ Word(u) Other(&)`},
		{pg, `"col ""q""" "a;:b"`, `QuotedIdent("col ""q""") _ QuotedIdent("a;:b")`},
		{pg, "`a`", "Other(`) Word(a) Other(`)"},
		{psql, "SELECT `a;:b` FROM t", "Word(SELECT) _ QuotedIdent(`a;:b`) _ Word(FROM) _ Word(t)"},
		{pg, "'abc;\n", "String('abc;\n!)"},
		{pg, `"abc;`, `QuotedIdent("abc;!)`},
		{pg, "1E'a' xE'b' 1.E'c'", "Number(1E) String('a') _ Word(xE) String('b') _ Number(1.E) String('c')"},
		// Dollar quotes.
		{pg, "$$a;b$$ $fn$ x $fn$ $t$ :w $x$ $t$", "String($$a;b$$) _ String($fn$ x $fn$) _ String($t$ :w $x$ $t$)"},
		{pg, "$a$ $ab$ $a$b", "String($a$ $ab$ $a$) Word(b)"},
		{pg, "$é$x$é$ $_1$y$_1$", "String($é$x$é$) _ String($_1$y$_1$)"},
		{pg, "$f$ ab $g$;", "String($f$ ab $g$;!)"},
		{firebird, "$$x$$", "Other($) Other($) Word(x$$)"},
		// MySQL.
		{mysql, `"str" 'it\'s' "a\"b" _utf8mb4'x\'y' N'\'' ` + "`c``d`",
			`String("str") _ String('it\'s') _ String("a\"b") _ String(_utf8mb4'x\'y') _ String(N'\'') _ QuotedIdent(` + "`c``d`)"},
		{mysql, `'a\`, `String('a\!)`},
		{pg, `_utf8mb4'x\'`, `Word(_utf8mb4) String('x\')`},
		// Firebird.
		{firebird, "q'{it's}' Q'(a)' q'xabcx' q'<a>>' 'a' \"b\"", `String(q'{it's}') _ String(Q'(a)') _ String(q'xabcx') _ String(q'<a>>') _ String('a') _ QuotedIdent("b")`},
		{firebird, "q'{x", "String(q'{x!)"},
		{firebird, "q'", "Word(q) String('!)"},
		{pg, "q'{x}'", "Word(q) String('{x}')"},
		{firebird, `E'a\'b'`, `String(E'a\'b')`},
	} {
		if got := lexAll(c.in, c.d); got != c.want {
			t.Errorf("%q (%+v):\n got %s\nwant %s", c.in, c.d, got, c.want)
		}
	}
}

func TestLexer(t *testing.T) {
	var zero Lexer
	if tok := zero.Next(); tok != (Token{}) {
		t.Errorf("zero Lexer: %+v", tok)
	}
	l := New([]byte("a :b c"), pg)
	for _, want := range []Token{{Word, 0, 1, false}, {Space, 1, 2, false}, {Other, 2, 3, false}} {
		if tok := l.Next(); tok != want {
			t.Fatalf("got %+v, want %+v", tok, want)
		}
	}
	l.Seek(4) // a caller took the variable's name
	if tok := l.Next(); tok != (Token{Space, 4, 5, false}) || l.Pos() != 5 {
		t.Fatalf("after Seek: %+v at %d", tok, l.Pos())
	}
	l.Next()
	for range 2 {
		if tok := l.Next(); tok != (Token{EOF, 6, 6, false}) {
			t.Fatalf("at the end: %+v", tok)
		}
	}
	// The normaliser lexes every statement a proxy sees: a Lexer stays off the heap.
	src := []byte("SELECT a, 'b' FROM t /* c */ WHERE d = $1 AND e = $$f$$ -- g")
	if n := testing.AllocsPerRun(100, func() {
		l := New(src, pg)
		for l.Next().Kind != EOF {
		}
	}); n != 0 {
		t.Errorf("lexing allocates %v times", n)
	}
	if Kind(200).String() != "Kind(200)" || !LineComment.Blank() || Word.Blank() {
		t.Error("Kind methods")
	}
	if !IsWordByte('$') || !IsWordByte('9') || !IsWordByte(0xc3) || IsWordByte('-') {
		t.Error("IsWordByte")
	}
}

// knobs are the Dialect's switches, each with the bytes without which it changes no token.
var knobs = []struct {
	set     func(*Dialect, bool)
	trigger func(s string) bool
}{
	{func(d *Dialect, v bool) { d.DoubleQuotedStrings = v }, func(s string) bool { return strings.Contains(s, `"`) }},
	{func(d *Dialect, v bool) { d.BackslashEscapes = v }, func(s string) bool { return strings.ContainsAny(s, `\_`) }},
	{func(d *Dialect, v bool) { d.DollarQuotes = v }, func(s string) bool { return strings.Contains(s, "$") }},
	{func(d *Dialect, v bool) { d.HashComments = v }, func(s string) bool { return strings.Contains(s, "#") }},
	{func(d *Dialect, v bool) { d.NestedComments = v }, func(s string) bool { return strings.Count(s, "/*") > 1 }},
	{func(d *Dialect, v bool) { d.QQuotes = v }, func(s string) bool { return strings.Contains(strings.ToLower(s), "q'") }},
	{func(d *Dialect, v bool) { d.Backticks = v }, func(s string) bool { return strings.Contains(s, "`") }},
	{func(d *Dialect, v bool) { d.CRNewline = v }, func(s string) bool { return strings.Contains(s, "\r") }},
	{func(d *Dialect, v bool) { d.NumericJunk = v }, func(s string) bool { return strings.ContainsAny(s, "0123456789") }},
	{func(d *Dialect, v bool) { d.VerticalTabText = v }, func(s string) bool { return strings.Contains(s, "\v") }},
}

// FuzzLex checks, for any text and dialect, that the tokens tile the text; that each token
// lexes alone to itself, so that lexing can resume at any token (Seek); that a terminated
// quoted token or comment ends with its closing delimiter and an unterminated one runs to
// the end; and that the dialects agree: a switch of Dialect changes no token of a text
// without the bytes it acts on.
func FuzzLex(f *testing.F) {
	for _, s := range []string{
		"SELECT 'a;:b', \"c;:d\", $q$ ; $q$, E'\\';' /* ; /* ; */ */ -- ;\n;",
		"SELECT \"str\", 'it\\'s', _utf8mb4'x', `col` FROM t # comment", "q'{it's}' Q'<a>'",
		"0x1e+5 .5 1.e3 $1 ? U&'x' N'y'", "--x\rSELECT \v", "/* /*", "$$x", "E'\\", "1.E'a\\'b'",
	} {
		f.Add(s, uint16(0b011011))
		f.Add(s, uint16(0b11111000111))
	}
	f.Fuzz(func(t *testing.T, s string, flags uint16) {
		var d Dialect
		for i, k := range knobs {
			k.set(&d, flags&(1<<i) != 0)
		}
		toks := checkTiling(t, s, d)
		for i, tok := range toks {
			text := s[tok.Start:tok.End]
			alone := New([]byte(text), d)
			if a := alone.Next(); a.Kind != tok.Kind || a.End != len(text) || a.Unterminated != tok.Unterminated {
				t.Fatalf("%q: token %d %+v %q lexes alone to %+v", s, i, tok, text, a)
			}
			checkDelimiters(t, s, tok)
		}
		if len(toks) > 0 { // resume in the middle, as after a caller's Seek
			k := int(flags>>10) % len(toks)
			l := New([]byte(s), d)
			l.Seek(toks[k].Start)
			for _, want := range toks[k:] {
				if got := l.Next(); got != want {
					t.Fatalf("%q: after Seek(%d) got %+v, want %+v", s, toks[k].Start, got, want)
				}
			}
		}
		for i, k := range knobs {
			if k.trigger(s) {
				continue
			}
			other := d
			k.set(&other, flags&(1<<i) == 0)
			if a, b := lexAll(s, d), lexAll(s, other); a != b {
				t.Fatalf("%q: knob %d changes the tokens without its bytes:\n%s\n%s", s, i, a, b)
			}
		}
	})
}

// checkTiling lexes s and checks that its tokens are non-empty and follow each other from
// the start of s to its end; it returns them.
func checkTiling(t *testing.T, s string, d Dialect) []Token {
	t.Helper()
	var toks []Token
	l := New([]byte(s), d)
	at := 0
	for {
		tok := l.Next()
		if tok.Start != at || l.Pos() != tok.End {
			t.Fatalf("%q: token %+v after offset %d, lexer at %d", s, tok, at, l.Pos())
		}
		if tok.Kind == EOF {
			if at != len(s) || tok.End != len(s) {
				t.Fatalf("%q: EOF at %d", s, at)
			}
			return toks
		}
		if tok.End <= tok.Start || tok.Unterminated && tok.End != len(s) {
			t.Fatalf("%q: token %+v", s, tok)
		}
		toks = append(toks, tok)
		at = tok.End
	}
}

// checkDelimiters checks the bytes a token of s ends with, and that white space and line
// comments hold no newline they should end at.
func checkDelimiters(t *testing.T, s string, tok Token) {
	t.Helper()
	text := s[tok.Start:tok.End]
	ok := true
	switch tok.Kind {
	case Space:
		ok = strings.Trim(text, " \t\n\r\f\v") == ""
	case LineComment:
		ok = !strings.Contains(text, "\n")
	case BlockComment:
		ok = tok.Unterminated || len(text) >= 4 && strings.HasSuffix(text, "*/")
	case String, QuotedIdent:
		last := text[len(text)-1]
		ok = tok.Unterminated || len(text) >= 2 && bytes.IndexByte([]byte(`'"`+"`$"), last) >= 0
	case Other, Param:
		ok = len(text) == 1 || tok.Kind == Param && text[0] == '$'
	}
	if !ok {
		t.Fatalf("%q: token %+v %q", s, tok, text)
	}
}
