package script

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseErrors(t *testing.T) {
	many := strings.Repeat(":aid, ", 256)
	for _, c := range []struct{ src, want string }{
		{"", `t.sql:1:1: the script has no command: a transaction needs at least one SQL statement or meta-command`},
		{"-- only a comment\n;\n", `t.sql:1:1: the script has no command: a transaction needs at least one SQL statement or meta-command`},
		{`\sett x 1`, `t.sql:1:1: unknown meta-command \sett (did you mean \set?)`},
		{"SELECT 1;\n  \\slep 1", `t.sql:2:3: unknown meta-command \slep (did you mean \sleep?)`},
		{`\frobnicate`, `t.sql:1:1: unknown meta-command \frobnicate`},
		{`\shell ls -l`, `t.sql:1:1: \shell is not supported: dblat does not run shell commands from a benchmark script (they would be timed as part of the transaction, and a stored script could run anything); compute the value with \set or in SQL`},
		{`\setshell x echo 1`, `t.sql:1:1: \setshell is not supported: dblat does not run shell commands from a benchmark script (they would be timed as part of the transaction, and a stored script could run anything); compute the value with \set or in SQL`},
		{`\`, `t.sql:1:1: a backslash must be followed by a meta-command name, such as \set`},
		{`\set`, `t.sql:1:1: \set needs a variable name and an expression: \set name expression`},
		{`\set x`, `t.sql:1:1: \set needs an expression`},
		{`\set 1x 5`, `t.sql:1:6: invalid variable name "1x": use letters, digits and underscores, not starting with a digit`},
		{`\set x 1 +`, `t.sql:1:11: syntax error at end of line: expected an operand`},
		{`\set x 1 + 2 3`, `t.sql:1:14: syntax error at "3": expected an operator or the end of the line`},
		{`\set x 1 < 2 < 3`, `t.sql:1:14: syntax error at "<": comparisons do not chain; combine them with AND`},
		{`\set x 3 > 2 = true`, `t.sql:1:14: syntax error at "=": comparisons do not chain; combine them with AND`},
		{`\set x (1 + 2`, `t.sql:1:14: syntax error at end of line: expected )`},
		{`\set x 1 @ 2`, `t.sql:1:10: unexpected character '@' in expression`},
		{`\set x 1 IS 5`, `t.sql:1:13: syntax error at "5": IS must be followed by [NOT] NULL, TRUE or FALSE`},
		{`\set x CASE 1 WHEN 1 THEN 2 END`, `t.sql:1:13: syntax error at "1": CASE must be followed by WHEN`},
		{`\set x CASE WHEN true THEN 1`, `t.sql:1:29: syntax error at end of line: expected WHEN, ELSE or END`},
		{`\set x pi`, `t.sql:1:10: syntax error at end of line: expected ( after the function name pi`},
		{`\set x random(1)`, `t.sql:1:8: random takes 2 arguments, not 1`},
		{`\set x Random(1, 2, 3)`, `t.sql:1:8: Random takes 2 arguments, not 3`},
		{`\set x hash(1, 2, 3)`, `t.sql:1:8: hash takes 1 or 2 arguments, not 3`},
		{`\set x permute(1)`, `t.sql:1:8: permute takes 2 or 3 arguments, not 1`},
		{`\set x least()`, `t.sql:1:8: least takes at least 1 argument, not 0`},
		{`\set x pi(1)`, `t.sql:1:8: pi takes 0 arguments, not 1`},
		{`\set x greatest(1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17)`, `t.sql:1:8: greatest takes at most 16 arguments, not 17`},
		{`\set x rand(1, 2)`, `t.sql:1:8: unknown function "rand" (did you mean random?)`},
		{`\set x frobnicate(1)`, `t.sql:1:8: unknown function "frobnicate"`},
		{`\set x random(1,`, `t.sql:1:17: syntax error at end of line: expected an operand`},
		{`\set x random(10, 1)`, `t.sql:1:8: random: empty range: the lower bound 10 is above the upper bound 1`},
		{`\set x random_zipfian(1, 10, 0.5)`, `t.sql:1:30: random_zipfian: zipfian parameter must be in range [1.001, 1000] (not 0.5)`},
		{`\set x random_zipfian(1, :scale, 1000 + 1)`, `t.sql:1:34: random_zipfian: zipfian parameter must be in range [1.001, 1000] (not 1001)`},
		{`\set x random_gaussian(1, 10, 1.5)`, `t.sql:1:31: random_gaussian: gaussian parameter must be at least 2.0 (not 1.5)`},
		{`\set x random_exponential(1, 10, -1)`, `t.sql:1:34: random_exponential: exponential parameter must be greater than zero (not -1)`},
		{`\set x 9223372036854775808`, `t.sql:1:8: integer constant 9223372036854775808 is out of range: it must lie within ±9223372036854775807`},
		{`\set x 5 - 9223372036854775808`, `t.sql:1:12: integer constant 9223372036854775808 is out of range: it must lie within ±9223372036854775807`},
		{`\set x 99999999999999999999`, `t.sql:1:8: integer constant 99999999999999999999 is out of range: it must lie within ±9223372036854775807`},
		{`\set x 1e400`, `t.sql:1:8: double constant 1e400 is out of range`},
		{"\\if true\nSELECT 1;", `t.sql:1:1: \if without a matching \endif`},
		{"\\if true\n\\if false\n\\endif", `t.sql:1:1: \if without a matching \endif`},
		{`\endif`, `t.sql:1:1: \endif without a matching \if`},
		{`\else`, `t.sql:1:1: \else without a matching \if`},
		{"\\if 1\n\\else\n\\else\n\\endif", `t.sql:3:1: \else after \else: \else must be the last branch of an \if`},
		{"\\if 1\n\\else\n\\elif 2\n\\endif", `t.sql:3:1: \elif after \else: \else must be the last branch of an \if`},
		{`\else x`, `t.sql:1:7: \else takes no argument`},
		{"SELECT :x;", `t.sql:1:8: variable "x" is read before any command sets it: set it first with \set x ..., a \gset, or -D x=VALUE`},
		{"\\set y 1\n\\set z :y + :x * 2", `t.sql:2:13: variable "x" is read before any command sets it: set it first with \set x ..., a \gset, or -D x=VALUE`},
		{"\\set x :x + 1", `t.sql:1:8: variable "x" is read before any command sets it: set it first with \set x ..., a \gset, or -D x=VALUE`},
		{"SELECT 1 AS a \\gset p_\nSELECT :a;", `t.sql:2:8: variable "a" is read before any command sets it: set it first with \set a ..., a \gset, or -D a=VALUE`},
		{`\sleep :t ms`, `t.sql:1:8: variable "t" is read before any command sets it: set it first with \set t ..., a \gset, or -D t=VALUE`},
		{`\sleep`, `t.sql:1:1: \sleep needs a duration: \sleep n [us|ms|s], n an integer or a :variable`},
		{`\sleep abc`, `t.sql:1:8: invalid sleep time "abc": it must be an integer or a :variable`},
		{`\sleep 10 minutes`, `t.sql:1:11: unknown time unit "minutes": use us, ms or s`},
		{`\sleep 10min`, `t.sql:1:10: unknown time unit "min": use us, ms or s`},
		{`\sleep 1 ms 2`, `t.sql:1:13: \sleep takes at most a duration and a unit`},
		{`\sleep 1ms ms`, `t.sql:1:12: \sleep takes at most a duration and a unit`},
		{`\gset`, `t.sql:1:1: \gset must follow an SQL statement (and only one \gset or \aset per statement)`},
		{"\\set x 1\n\\aset", `t.sql:2:1: \aset must follow an SQL statement (and only one \gset or \aset per statement)`},
		{"SELECT 1 \\gset\n\\gset", `t.sql:2:1: \gset must follow an SQL statement (and only one \gset or \aset per statement)`},
		{`SELECT 1 AS a \gset p q`, `t.sql:1:23: \gset takes at most one argument, a prefix for the variables' names`},
		{`SELECT 1 AS a \gset 9p`, `t.sql:1:21: invalid variable prefix "9p": use letters, digits and underscores, not starting with a digit`},
		{"\\startpipeline\nSELECT 1 \\gset\n\\endpipeline", `t.sql:2:1: \gset and \aset are not allowed in a pipeline: move the statement out of it`},
		{`\endpipeline`, `t.sql:1:1: \endpipeline outside a pipeline: start one with \startpipeline`},
		{`\syncpipeline`, `t.sql:1:1: \syncpipeline outside a pipeline: start one with \startpipeline`},
		{"\\startpipeline\n\\startpipeline", `t.sql:2:1: \startpipeline inside a pipeline: end the first with \endpipeline`},
		{"\\startpipeline\nSELECT 1;", `t.sql:1:1: \startpipeline without \endpipeline`},
		{`\startpipeline now`, `t.sql:1:16: \startpipeline takes no argument`},
		{"SELECT 'abc;\n", `t.sql:1:8: unterminated quoted string: close it with '`},
		{`SELECT "abc;`, `t.sql:1:8: unterminated quoted identifier: close it with "`},
		{`SELECT E'a\';`, `t.sql:1:8: unterminated quoted string: close it with '`},
		{"SELECT 1; /* c /* d */", `t.sql:1:11: unterminated /* comment: close it with */`},
		{"SELECT $f$ ab $g$;", `t.sql:1:8: unterminated dollar-quoted string: close it with $f$`},
		{"\\set aid 1\nSELECT " + many + "1;", `t.sql:2:1538: statement refers to variables 256 times; at most 255 are allowed (pgbench's limit)`},
	} {
		_, err := Parse("t.sql", []byte(c.src))
		var pe *ParseError
		switch {
		case err == nil:
			t.Errorf("%q: parsed, want %s", c.src, c.want)
		case !errors.As(err, &pe):
			t.Errorf("%q: %T %v, want a *ParseError", c.src, err, err)
		case err.Error() != c.want:
			t.Errorf("%q:\n got %s\nwant %s", c.src, err, c.want)
		}
	}
}

// TestDefinesAndAutomaticVariables: -D names and the automatic variables count as set.
func TestDefinesAndAutomaticVariables(t *testing.T) {
	src := "SELECT :client_id, :scale, :random_seed, :default_seed, :mine;\n\\set x hash(:mine)"
	if _, err := Parse("t.sql", []byte(src)); err == nil {
		t.Fatal("parsed without -D mine")
	}
	s, err := Parse("t.sql", []byte(src), "mine")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"client_id", "default_seed", "mine", "random_seed", "scale"}; !slices.Equal(s.Reads(), want) {
		t.Errorf("Reads() = %q, want %q", s.Reads(), want)
	}
	if !slices.Equal(s.Sets(), []string{"x"}) {
		t.Errorf("Sets() = %q", s.Sets())
	}
}

// TestGrammarAgreesWithPgbench checks that expressions pgbench's parser accepts are
// accepted here and those it refuses are refused, asking the installed pgbench (which
// parses its scripts before it connects, so no server is needed).
func TestGrammarAgreesWithPgbench(t *testing.T) {
	bin := pgbenchBinary(t)
	dir := t.TempDir()
	for i, expr := range []string{
		"1 < 2 < 3", "1 = 2 = 3", "1 < 2 = 3", "1 IS NULL IS NULL", "1 ISNULL ISNULL", "1 NOTNULL IS TRUE",
		"NOT NOT true", "NOT 1 < 2", "1 < NOT 2", "- - 1", "-9223372036854775808", "- 9223372036854775808",
		"1 - 9223372036854775808", "9223372036854775808", "~ - 1", "- ~ 1", "1 + + 2", "1 IS NOT TRUE",
		"1 IS NOT 1", "(1 IS NULL) = true", "1 IS NULL = true", "1 = 1 IS NULL", "CASE WHEN 1 THEN 2 END",
		"CASE 1 WHEN 1 THEN 2 END", "case when 1 then 2 else 3 end", "CASE WHEN 1 THEN 2 ELSE 3", "abs(1,)",
		"abs()", "pi()", "PI()", "Hash(1)", "hash(1, 2)", "permute(1, 2)", "permute(1, 2, 3)", "permute(1)",
		"least(1)", "greatest()", "f(1)", "1 +", "(1", "1)", "1 2", ".5", "5.", "1e5", "1e", "1.e3", ":a1",
		"1 AND OR 2", "true and false or not null", "1 & 2 | 3 # 4 << 5 >> 6", "1 != 2", "1 <> 2",
		"1 <= 2", "1 >= 2", "1 !! 2", "null is null", "1 isnull", "TRUE IS FALSE", "1 % 2 * 3 / 4",
		"mod(1, 2)", "power(2, 3)", "random_zipfian(1, 10, 1.5)", "1 is not null is not null",
		"(((1)))", "1 +\\\n 2", "CASE WHEN 1 THEN 2 WHEN 3 THEN 4 END", "sqrt(-1)", "int(1.5) + double(2)",
	} {
		src := fmt.Sprintf("\\set a1 1\n\\set x %s\n", expr)
		file := filepath.Join(dir, fmt.Sprintf("e%d.sql", i))
		if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		// Parsing comes before connecting: a script pgbench accepts fails on the connection.
		out, _ := exec.Command(bin, "-n", "-t", "1", "-f", file, "-h", dir, "-p", "1").CombinedOutput()
		pgbenchOK := !strings.Contains(string(out), file+":")
		_, err := Parse("t.sql", []byte(src))
		if pgbenchOK != (err == nil) {
			t.Errorf("%q: pgbench accepts: %v (%s); Parse: %v", expr, pgbenchOK, strings.TrimSpace(string(out)), err)
		}
	}
}

// TestSplitting checks how SQL is cut into statements and where variables are found.
func TestSplitting(t *testing.T) {
	type stmt struct {
		sql  string
		vars []string
	}
	for _, c := range []struct {
		src  string
		want []stmt
	}{
		{"SELECT 1; SELECT 2;", []stmt{{"SELECT 1;", nil}, {"SELECT 2;", nil}}},
		{"-- comment\n  SELECT 1 -- c\n ;\n\n", []stmt{{"SELECT 1 -- c\n ;", nil}}},
		{"/* lead */ SELECT 1;", []stmt{{"/* lead */ SELECT 1;", nil}}},
		{"SELECT 1\n", []stmt{{"SELECT 1\n", nil}}},
		{"SELECT 'a;b:c', \"x;:y\", $$ ; :z $$, $t$ :w $x$ $t$;", []stmt{{"SELECT 'a;b:c', \"x;:y\", $$ ; :z $$, $t$ :w $x$ $t$;", nil}}},
		{"SELECT 'it''s :a', E'\\' :b', :c::int, x:=1, a[1:2];", []stmt{{"SELECT 'it''s :a', E'\\' :b', :c::int, x:=1, a[1:2];", []string{"c"}}}},
		{"SELECT f(1; 2); SELECT :d", []stmt{{"SELECT f(1; 2);", nil}, {"SELECT :d", []string{"d"}}}},
		{"SELECT 1 /* ; /* ; */ ; */ ;", []stmt{{"SELECT 1 /* ; /* ; */ ; */ ;", nil}}},
		{"SELECT 1\\; SELECT :e;", []stmt{{"SELECT 1; SELECT :e;", []string{"e"}}}},
		{"SELECT '\\:x', 1 \\:y;", []stmt{{"SELECT '\\:x', 1 :y;", nil}}},
		{"SELECT :a,:b_2,:ü;", []stmt{{"SELECT :a,:b_2,:ü;", []string{"a", "b_2", "ü"}}}},
		{"SELECT :a \\gset\nSELECT 2", []stmt{{"SELECT :a ", []string{"a"}}, {"SELECT 2", nil}}},
		{";;  ;\n-- only comments\n/* and this */;\nSELECT 1;", []stmt{{"SELECT 1;", nil}}},
		{"CREATE FUNCTION f() RETURNS int LANGUAGE sql BEGIN ATOMIC SELECT 1; SELECT CASE WHEN true THEN 2 END; END; SELECT 3;",
			[]stmt{{"CREATE FUNCTION f() RETURNS int LANGUAGE sql BEGIN ATOMIC SELECT 1; SELECT CASE WHEN true THEN 2 END; END;", nil}, {"SELECT 3;", nil}}},
		{"EXECUTE BLOCK AS DECLARE x INT; BEGIN SELECT 1 FROM rdb$database INTO \\:x; END; BEGIN;",
			[]stmt{{"EXECUTE BLOCK AS DECLARE x INT; BEGIN SELECT 1 FROM rdb$database INTO :x; END;", nil}, {"BEGIN;", nil}}},
		{"CREATE OR ALTER PROCEDURE p (n int) AS DECLARE x INT; DECLARE y INT = 2; BEGIN x = n; END; SELECT 1;",
			[]stmt{{"CREATE OR ALTER PROCEDURE p (n int) AS DECLARE x INT; DECLARE y INT = 2; BEGIN x = n; END;", nil}, {"SELECT 1;", nil}}},
		{"CREATE TRIGGER t FOR a AFTER INSERT AS BEGIN UPDATE b SET c = 1; END; SELECT 2;",
			[]stmt{{"CREATE TRIGGER t FOR a AFTER INSERT AS BEGIN UPDATE b SET c = 1; END;", nil}, {"SELECT 2;", nil}}},
		{"CREATE FUNCTION f() RETURNS int AS 'SELECT 1; SELECT 2' LANGUAGE sql; SELECT 3;",
			[]stmt{{"CREATE FUNCTION f() RETURNS int AS 'SELECT 1; SELECT 2' LANGUAGE sql;", nil}, {"SELECT 3;", nil}}},
		{"BEGIN; END;", []stmt{{"BEGIN;", nil}, {"END;", nil}}},
		{"SELECT `a;:b` FROM t;", []stmt{{"SELECT `a;:b` FROM t;", nil}}},
		{"SELECT $1, a$b$c, 1$$x$$;", []stmt{{"SELECT $1, a$b$c, 1$$x$$;", nil}}},
	} {
		s, err := Parse("t.sql", []byte(c.src), "a", "b_2", "ü", "c", "d", "e")
		if err != nil {
			t.Errorf("%q: %v", c.src, err)
			continue
		}
		var got []stmt
		for _, cmd := range s.Commands() {
			if cmd.Kind != CmdSQL {
				continue
			}
			st := stmt{sql: cmd.SQL}
			for _, r := range cmd.refs {
				st.vars = append(st.vars, r.name)
			}
			got = append(got, st)
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%q:\n got %q\nwant %q", c.src, got, c.want)
		}
	}
}

// TestBuiltinScriptsParse parses pgbench's built-in scripts as --show-script prints them.
func TestBuiltinScriptsParse(t *testing.T) {
	for name, stmts := range map[string]int{"tpcb-like": 7, "simple-update": 5, "select-only": 1} {
		s, err := Parse(name, []byte(builtinScript(t, name)))
		if err != nil {
			t.Fatal(err)
		}
		if s.Statements() != stmts || s.UsesPipeline() || s.Captures() {
			t.Errorf("%s: %d statements, pipeline %v, captures %v", name, s.Statements(), s.UsesPipeline(), s.Captures())
		}
		if !slices.Contains(s.Reads(), "scale") || !slices.Contains(s.Sets(), "aid") {
			t.Errorf("%s: reads %q, sets %q", name, s.Reads(), s.Sets())
		}
	}
}

// TestFormat renders a script and checks that the text parses back to the same script.
func TestFormat(t *testing.T) {
	src := `-- a comment that Format drops
\set aid random(1, 100000 * :scale)
\SET x -(-3) + ~ 1 & 6 >> 1
\set y NOT (:x > 2 AND :x ISNULL) OR :x IS NOT TRUE
\set z case when :x < 1 then 1.0 when :x <= 2 then 2.5e-3 end
\set h hash(:aid) + HASH_FNV1A(:aid, 5) + permute(:aid, 10) + power(2, 3) + mod(:aid, 3)
\set m -9223372036854775808 + (1 - 2) * 3 - (4 - 5)
\if :x = 1
  SELECT :aid AS a, 'x:y' \gset p_
\elif :z > 0.5
  SELECT 1\; SELECT 2 \aset
\else
  \sleep :x ms
\endif
\sleep 10us
\sleep 2
\startpipeline
UPDATE t SET v = v + 1 WHERE id = :aid;
\syncpipeline
\endpipeline
`
	s, err := Parse("t.sql", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	text := s.Format()
	want := `\set aid random(1, 100000 * :scale)
\set x -(-3) + (~1) & 6 >> 1
\set y NOT (:x > 2 AND :x IS NULL) OR :x IS NOT TRUE
\set z CASE WHEN :x < 1 THEN 1.0 WHEN :x <= 2 THEN 0.0025 ELSE NULL END
\set h hash_murmur2(:aid) + hash_fnv1a(:aid, 5) + permute(:aid, 10) + pow(2, 3) + mod(:aid, 3)
\set m -9223372036854775808 + (1 - 2) * 3 - (4 - 5)
\if :x = 1
SELECT :aid AS a, 'x:y' \gset p_
\elif :z > 0.5
SELECT 1\; SELECT 2 \aset
\else
\sleep :x ms
\endif
\sleep 10 us
\sleep 2
\startpipeline
UPDATE t SET v = v + 1 WHERE id = :aid;
\syncpipeline
\endpipeline
`
	if text != want {
		t.Errorf("Format:\n%s\nwant\n%s", text, want)
	}
	s2, err := Parse("t.sql", []byte(text))
	if err != nil {
		t.Fatalf("Format's text does not parse: %v\n%s", err, text)
	}
	if s2.Format() != text {
		t.Errorf("Format is not stable:\n%s", s2.Format())
	}
	for i, c := range s.Commands() {
		c2 := s2.Commands()[i]
		if c.Kind != c2.Kind || strings.TrimSpace(c.SQL) != strings.TrimSpace(c2.SQL) || c.Expr != c2.Expr || c.Capture != c2.Capture || c.Prefix != c2.Prefix {
			t.Errorf("command %d: %+v, after Format %+v", i, c, c2)
		}
	}
}
