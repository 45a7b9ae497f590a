package wire

import (
	"strings"
	"testing"
)

var (
	pgLex    = Lexicon{DollarQuotes: true, NestedComments: true}
	mysqlLex = Lexicon{DoubleQuotedStrings: true, BackslashEscapes: true, HashComments: true, Backticks: true}
	fbLex    = Lexicon{QQuotes: true}
)

func TestNormalize(t *testing.T) {
	for _, c := range []struct {
		lx       Lexicon
		in, want string
		literals bool
	}{
		{pgLex, "SELECT * FROM t WHERE a = 5 AND b = 'x'", "SELECT * FROM t WHERE a = ? AND b = ?", true},
		{pgLex, "select x from t where a in (1,2,3)", "select x from t where a IN (...)", true},
		{pgLex, "SELECT 1 WHERE a IN ( $1, $2 ) AND b in($3)", "SELECT ? WHERE a IN (...) AND b IN (...)", true},
		{pgLex, "UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2;",
			"UPDATE pgbench_accounts SET abalance = abalance + ? WHERE aid = ?", false},
		{pgLex, "  SELECT\n\t a,   b -- comment\n FROM /* c /* nested */ still */ t  ;  ", "SELECT a, b FROM t", false},
		{pgLex, "SELECT a - 5, -5, a = -5.5e-3, (-1), x--1\n", "SELECT a - ?, ?, a = ?, (?), x", true},
		{pgLex, "SELECT E'it\\'s', 'it''s', $$a;b$$, $fn$ x $fn$, U&'d\\0061t', X'1F', B'101'", "SELECT ?, ?, ?, ?, ?, ?, ?", true},
		{pgLex, `SELECT "col ""q""" FROM "T" WHERE x::int = $10`, `SELECT "col ""q""" FROM "T" WHERE x::int = ?`, false},
		{pgLex, "SELECT 0x1F, 1_000, .5, 1.e3, 3E+2", "SELECT ?, ?, ?, ?, ?", true},
		{pgLex, "INSERT INTO t (a, b) VALUES (1, 'x'), (2, 'y'), (3,'z')", "INSERT INTO t (a, b) VALUES (?, ?), ...", true},
		{pgLex, "INSERT INTO t (a, b) VALUES ($1, $2)", "INSERT INTO t (a, b) VALUES (?, ?)", false},
		{pgLex, "INSERT INTO t VALUES (1, now()), (2, now())", "INSERT INTO t VALUES (?, now()), (?, now())", true},
		{pgLex, "INSERT INTO t VALUES ( 1 , 'v' ),( 2,'w' )", "INSERT INTO t VALUES (?, ?), ...", true},
		{pgLex, "SELECT f(a,b) , g( c )", "SELECT f(a, b), g(c)", false},
		{pgLex, "SELECT a$b, $1", "SELECT a$b, ?", false},
		{pgLex, "SELECT 'unterminated", "SELECT ?", true},
		{pgLex, "SELECT * FROM tin (1)", "SELECT * FROM tin (?)", true},
		{mysqlLex, `SELECT "str", 'it\'s', _utf8mb4'x', ` + "`col`" + ` FROM t # comment`, "SELECT ?, ?, ?, `col` FROM t", true},
		{mysqlLex, "SELECT * FROM t WHERE id = ? AND s IN (?, ?)", "SELECT * FROM t WHERE id = ? AND s IN (...)", false},
		{fbLex, "SELECT q'{it's}', 'a' FROM RDB$DATABASE", "SELECT ?, ? FROM RDB$DATABASE", true},
		{fbLex, `SELECT "a" FROM t`, `SELECT "a" FROM t`, false},
	} {
		got, lit := Normalize(nil, []byte(c.in), c.lx)
		if string(got) != c.want || lit != c.literals {
			t.Errorf("Normalize(%q) = %q, %v; want %q, %v", c.in, got, lit, c.want, c.literals)
		}
	}
}

func TestNormalizeAppends(t *testing.T) {
	dst := []byte("prefix|")
	got, _ := Normalize(dst, []byte("SELECT 1 ;"), pgLex)
	if string(got) != "prefix|SELECT ?" {
		t.Fatalf("got %q", got)
	}
	if got, _ := Normalize(nil, []byte(" -- only a comment\n"), pgLex); len(got) != 0 {
		t.Fatalf("comment only: got %q", got)
	}
}

func TestNextStatement(t *testing.T) {
	split := func(lx Lexicon, s string) []string {
		var out []string
		rest := []byte(s)
		for {
			var st []byte
			st, rest = NextStatement(rest, lx)
			if st == nil {
				return out
			}
			out = append(out, string(st))
		}
	}
	for _, c := range []struct {
		lx   Lexicon
		in   string
		want []string
	}{
		{pgLex, "BEGIN; UPDATE t SET a = ';' WHERE b = $$;$$;COMMIT;", []string{"BEGIN", "UPDATE t SET a = ';' WHERE b = $$;$$", "COMMIT"}},
		{pgLex, " ; ;-- c;\n; SELECT 1 ", []string{"SELECT 1"}},
		{pgLex, "", nil},
		{pgLex, "CREATE FUNCTION f() RETURNS int BEGIN ATOMIC SELECT 1; END; SELECT 2", []string{"CREATE FUNCTION f() RETURNS int BEGIN ATOMIC SELECT 1; END; SELECT 2"}},
		{mysqlLex, "SELECT 'a;b' ; SELECT \"c;d\" # x;y\n;", []string{"SELECT 'a;b'", "SELECT \"c;d\""}},
		{mysqlLex, "BEGIN NOT ATOMIC SELECT 1; SELECT 2; END", []string{"BEGIN NOT ATOMIC SELECT 1; SELECT 2; END"}},
		{mysqlLex, "BEGIN; SELECT 2", []string{"BEGIN", "SELECT 2"}},
	} {
		got := split(c.lx, c.in)
		if strings.Join(got, "|") != strings.Join(c.want, "|") || len(got) != len(c.want) {
			t.Errorf("split %q = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestTxControl(t *testing.T) {
	for in, want := range map[string]End{
		"COMMIT": EndCommit, "commit work": EndCommit, "END": EndCommit, "COMMIT AND CHAIN": EndCommit,
		"COMMIT RETAIN": EndCommit, "ROLLBACK": EndRollback, "abort": EndRollback, "ROLLBACK WORK": EndRollback,
		"ROLLBACK TO SAVEPOINT s": EndNone, "ROLLBACK WORK TO s": EndNone, "ROLLBACK PREPARED 'x'": EndNone,
		"COMMIT PREPARED 'x'": EndNone, "BEGIN": EndNone, "SELECT 1": EndNone, "/* c */ commit": EndCommit,
		"": EndNone, "COMMITTED": EndNone,
	} {
		if got := TxControl([]byte(in), pgLex); got != want {
			t.Errorf("TxControl(%q) = %v, want %v", in, got, want)
		}
	}
	for in, want := range map[string]bool{"": true, "  \n": true, "-- c\n /* d */": true, "SELECT 1": false, " -- c\nSELECT": false, "# x": false} {
		if got := Blank([]byte(in), pgLex); got != want {
			t.Errorf("Blank(%q) = %v", in, got)
		}
	}
	if w := FirstWord([]byte("  /* x */ Select 1"), pgLex); string(w) != "Select" {
		t.Errorf("FirstWord = %q", w)
	}
}

// FuzzNormalize checks that any text normalises without panicking, to text no longer
// than itself plus a space per comma and the few bytes the list forms can add, and that
// NextStatement comes to an end.
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"SELECT 1", "a IN (1,2)", "VALUES (1),(2)", "$$x", "q'{", "E'\\", "-5", "/* /*"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, lx := range []Lexicon{pgLex, mysqlLex, fbLex} {
			out, _ := Normalize(nil, []byte(s), lx)
			// A space after each comma and the list forms' few bytes are all it can add.
			if len(out) > len(s)+strings.Count(s, ",")+8 {
				t.Fatalf("Normalize(%q) grew to %q", s, out)
			}
			rest := []byte(s)
			for i := 0; ; i++ {
				var st []byte
				st, rest = NextStatement(rest, lx)
				if st == nil {
					break
				}
				if i > len(s) {
					t.Fatalf("NextStatement(%q) does not end", s)
				}
			}
		}
	})
}

// BenchmarkNormalize measures the normaliser on a pgbench statement with literals, the text
// a simple-protocol client sends anew for every execution.
func BenchmarkNormalize(b *testing.B) {
	stmt := []byte("UPDATE pgbench_accounts SET abalance = abalance + -4213 WHERE aid = 84123;")
	var out []byte
	b.SetBytes(int64(len(stmt)))
	for b.Loop() {
		out, _ = Normalize(out[:0], stmt, pgLex)
	}
}

// BenchmarkNormalizeMixed measures the normaliser on a statement that goes through most of
// the lexer's token kinds: comments, quoted identifiers, strings with a prefix and a doubled
// quote, a dollar-quoted string, a parameter, numbers and an IN list.
func BenchmarkNormalizeMixed(b *testing.B) {
	stmt := []byte("/* app:orders */ SELECT \"o\".id, o.total -- the order\n" +
		"FROM orders o WHERE o.status IN ('new', 'paid', E'it\\'s') AND o.note <> 'a''b' " +
		"AND o.body = $$x;y$$ AND o.total > 1.5e3 AND o.w_id = $1 LIMIT 20;")
	var out []byte
	b.SetBytes(int64(len(stmt)))
	for b.Loop() {
		out, _ = Normalize(out[:0], stmt, pgLex)
	}
}

// TestSpans: the spans are the tokens Normalize replaces, so replacing each by ? and
// normalising gives Normalize's text.
func TestSpans(t *testing.T) {
	for _, c := range []struct {
		lx   Lexicon
		in   string
		want []string
	}{
		{pgLex, "UPDATE a SET b = b + -4066 WHERE aid = 7 AND c = 'x''y' AND d - 5 > $1", []string{"-4066", "7", "'x''y'", "5", "$1"}},
		{pgLex, "SELECT 1, -5, (-1), x--1\n, E'a\\'b', $$q$$", []string{"1", "-5", "-1", "E'a\\'b'", "$$q$$"}},
		{mysqlLex, `SELECT "s", ? FROM t WHERE a IN (1, 2)`, []string{`"s"`, "?", "1", "2"}},
	} {
		var got []string
		for _, sp := range Spans(nil, []byte(c.in), c.lx) {
			got = append(got, c.in[sp.Start:sp.End])
		}
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("Spans(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	for _, in := range []string{
		"UPDATE a SET b = b + -4066 WHERE aid = 7 AND c = 'x' AND d - 5 > $1",
		"INSERT INTO t VALUES (1, 'a'), (2, 'b')", "SELECT a-1, -1, 1.5e-3 FROM t WHERE x = ?",
	} {
		var b strings.Builder
		last := 0
		for _, sp := range Spans(nil, []byte(in), pgLex) {
			b.WriteString(in[last:sp.Start])
			b.WriteString("?")
			last = sp.End
		}
		b.WriteString(in[last:])
		n1, _ := Normalize(nil, []byte(in), pgLex)
		n2, _ := Normalize(nil, []byte(b.String()), pgLex)
		if string(n1) != string(n2) {
			t.Errorf("%q: spans replaced normalise to %q, Normalize gives %q", in, n2, n1)
		}
	}
}
