package observe

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/wire"
	"github.com/dblat/dblat/internal/workload/script"
)

var pgLex = wire.Lexicon{DollarQuotes: true, NestedComments: true}

// record adds n transactions of one shape to r, built by stmts(i).
func record(r *Recorder, hash uint64, text string, n int, stmts func(i int) []tapStmt) {
	for i := range n {
		s := &txSample{stmts: stmts(i)}
		r.add(&wire.Shape{Hash: hash, Text: text}, s, "PostgreSQL", pgLex)
	}
}

func p(v string) wire.Param { return wire.Param{Text: []byte(v)} }

func TestScript(t *testing.T) {
	r := newRecorder()
	// pgbench -M prepared's tpcb-like: parameters; aid repeats in two statements, tid takes
	// 10 values, bid one.
	record(r, 1, "tpcb", 300, func(i int) []tapStmt {
		aid, tid, delta := fmt.Sprint(1+i*331%100000), fmt.Sprint(1+i%10), fmt.Sprint(i%1000-500)
		return []tapStmt{
			{text: []byte("BEGIN;"), req: 1},
			{text: []byte("UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2;"), params: []wire.Param{p(delta), p(aid)}, req: 2},
			{text: []byte("SELECT abalance FROM pgbench_accounts WHERE aid = $1"), params: []wire.Param{p(aid)}, req: 3},
			{text: []byte("UPDATE pgbench_tellers SET tbalance = tbalance + $1 WHERE tid = $2"), params: []wire.Param{p(delta), p(tid)}, req: 4},
			{text: []byte("UPDATE pgbench_branches SET bbalance = bbalance + $1 WHERE bid = $2"), params: []wire.Param{p(delta), p("1")}, req: 5},
			{text: []byte("END;"), req: 6},
		}
	})
	// The simple protocol: literals in the text, a cast, a colon that is not a variable, a
	// text value that varies, a decimal, and two statements sent in one request.
	record(r, 2, "simple", 100, func(i int) []tapStmt {
		return []tapStmt{
			{text: []byte(fmt.Sprintf("SELECT %d::int, 'a:b', x FROM t WHERE name = 'n%d' AND f > %d.5 AND y = :z", i, i%3, i)), req: 1},
			{text: []byte("SELECT 1 "), req: 7},
			{text: []byte("SELECT 2;"), req: 7},
		}
	})
	// A shape whose parameter values the decoder could not read.
	record(r, 3, "hidden", 5, func(int) []tapStmt {
		return []tapStmt{{text: []byte("INSERT INTO b VALUES (?)"), hidden: true}}
	})
	var b strings.Builder
	n, err := r.Script(&b, ScriptInfo{Upstream: "127.0.0.1:5432", Started: time.Date(2025, 1, 2, 3, 4, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	src := b.String()
	if n != 2 {
		t.Errorf("%d shapes written, want 2:\n%s", n, src)
	}
	s, err := script.Parse("recorded.sql", []byte(src))
	if err != nil {
		t.Fatalf("the recording does not parse: %v\n%s", err, src)
	}
	for _, want := range []string{
		"may be sensitive",
		"\\set rec_shape random(1, 400)\n\\if :rec_shape <= 300\n", // the hidden shape left out
		"\\set s1_v1 random(-",               // delta: many values, a range
		"\\set s1_v2 random(",                // aid
		"\\set s1_v3 CASE WHEN :s1_v3_r <= ", // tid: ten values
		"UPDATE pgbench_accounts SET abalance = abalance + :s1_v1 WHERE aid = :s1_v2;\n",
		"SELECT abalance FROM pgbench_accounts WHERE aid = :s1_v2;\n",
		"WHERE bid = 1;\n", // always the same: written as it was
		"BEGIN;\n", "END;\n",
		"\\else\n",
		"SELECT :s2_v1::int, 'a:b', x FROM t WHERE name = 'n0' AND f > :s2_v2 AND y = \\:z;\n",
		"value 3 of statement 1 took 3 distinct values; replayed as its most frequent, 'n0'",
		"\\set s2_v2 0.5 + random(0, 1000000) * (99.5 - 0.5) / 1000000.0\n",
		"SELECT 1\\;\nSELECT 2;\n",
		"shape 3 (5 transactions, hidden) is not replayed: the decoder could not read its parameter values",
		"\\endif\n",
	} {
		if !strings.Contains(src, want) {
			t.Errorf("the recording lacks %q:\n%s", want, src)
		}
	}
	if s.Statements() != 8 { // 6, and 2 of which one is two sent together
		t.Errorf("%d statements, want 8:\n%s", s.Statements(), src)
	}
}

// TestScriptCategorical: values that repeat replay at their frequencies; decimals and
// integers mixed in one slot make a double variable.
func TestScriptCategorical(t *testing.T) {
	r := newRecorder()
	record(r, 1, "q", 40, func(i int) []tapStmt {
		v := []string{"7", "7", "7", "9"}[i%4]
		f := []string{"1", "2.5"}[i%2]
		return []tapStmt{{text: []byte("SELECT $1, $2"), params: []wire.Param{p(v), p(f)}}}
	})
	var b strings.Builder
	if _, err := r.Script(&b, ScriptInfo{}); err != nil {
		t.Fatal(err)
	}
	src := b.String()
	for _, want := range []string{
		"\\set s1_v1_r random(1, 40)\n\\set s1_v1 CASE WHEN :s1_v1_r <= 30 THEN 7 ELSE 9 END\n",
		"\\set s1_v2 CASE WHEN :s1_v2_r <= 20 THEN 1.0 ELSE 2.5 END\n",
	} {
		if !strings.Contains(src, want) {
			t.Errorf("lacks %q:\n%s", want, src)
		}
	}
	if _, err := script.Parse("r.sql", []byte(src)); err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
}

func TestScriptNothing(t *testing.T) {
	var b strings.Builder
	if _, err := newRecorder().Script(&b, ScriptInfo{}); err == nil || !strings.Contains(err.Error(), "nothing to replay") {
		t.Errorf("empty recording: %v", err)
	}
}

// TestTapTake: the statements of a transaction are found in the tap's queue after COMMITs
// with nothing to end, and by the shape's text.
func TestTapTake(t *testing.T) {
	tp := &tap{lex: pgLex, lexSet: true}
	for _, s := range []string{"COMMIT", "BEGIN", "SELECT 5", "COMMIT", "SELECT 6"} {
		tp.Event(&wire.Event{Kind: wire.EvStatement, Text: []byte(s)})
	}
	s := tp.take(&wire.Tx{Statements: 3, Shape: &wire.Shape{Text: "BEGIN; SELECT ?; COMMIT"}})
	if s == nil || string(s.stmts[1].text) != "SELECT 5" {
		t.Fatalf("took %+v", s)
	}
	if len(tp.q) != 1 || string(tp.q[0].text) != "SELECT 6" {
		t.Errorf("left %d statements", len(tp.q))
	}
	if s := tp.take(&wire.Tx{Statements: 1, Shape: &wire.Shape{Text: "SELECT nothing"}}); s != nil {
		t.Errorf("a statement of another shape was taken: %+v", s)
	}
}

// FuzzScriptParses: whatever SQL text and values a client sent, the recording's script
// parses (or the shape is left out with a reason).
//
//	go test ./internal/observe -run '^$' -fuzz FuzzScriptParses -fuzztime 30s
func FuzzScriptParses(f *testing.F) {
	for _, s := range []string{
		"UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2;",
		"SELECT 'a:b', x::int, :y, $$q;$$ FROM t WHERE a = -5 AND b IN (1, 2) -- c\n",
		"BEGIN NOT ATOMIC UPDATE t SET a = 1; SELECT 2; END",
		"INSERT INTO t VALUES (?, 'x\\'y', \"z\")", "SELECT E'\\\\', /* ; */ 1.5e3",
	} {
		f.Add(s, "42", "x'y")
	}
	f.Fuzz(func(t *testing.T, sql, v1, v2 string) {
		for _, lx := range []wire.Lexicon{pgLex, {DoubleQuotedStrings: true, BackslashEscapes: true, HashComments: true, Backticks: true}} {
			r := newRecorder()
			for i := range 3 {
				vals := []string{v1, v2, fmt.Sprint(i)}
				st := tapStmt{text: []byte(sql), params: []wire.Param{p(vals[i%3]), p(vals[(i+1)%3]), {Null: i == 2}}}
				r.add(&wire.Shape{Hash: 1, Text: "s"}, &txSample{stmts: []tapStmt{st}}, "X", lx)
			}
			var b strings.Builder
			if _, err := r.Script(&b, ScriptInfo{}); err != nil {
				continue
			}
			if _, err := script.Parse("fuzz.sql", []byte(b.String())); err != nil {
				t.Fatalf("the recording of %q does not parse: %v\n%s", sql, err, b.String())
			}
		}
	})
}

// TestEscapeSQL: colons before names and semicolons become the script language's \: and \;
// outside quoted identifiers and comments, which the script's lexer reads as they are.
func TestEscapeSQL(t *testing.T) {
	for in, want := range map[string]string{
		`SELECT a::int, :x FROM t WHERE b = 1; END`: `SELECT a::int, \:x FROM t WHERE b = 1\; END`,
		`SELECT "a;b", "c:d" FROM t`:                `SELECT "a;b", "c:d" FROM t`,
		"SELECT 1 /* a; :b */ -- c; :d\n;":          "SELECT 1 /* a; :b */ -- c; :d\n\\;",
		"SELECT `x;y`":                              "SELECT `x;y`",
	} {
		if got := escapeSQL([]byte(in)); got != want {
			t.Errorf("escapeSQL(%q) = %q, want %q", in, got, want)
		}
	}
}
