package script

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// scripted is an Executor for tests: it records each statement with its arguments and
// answers from results, keyed by the statement's text (as sent), with rows; err, if set,
// fails the statement whose text contains failOn, failing times times.
type scripted struct {
	log     []string
	results map[string][]result
	failOn  string
	fail    int
	calls   []string // pipeline calls
}

type result struct {
	cols []string
	rows [][]string // nil entries are NULL
}

var errTest = errors.New("serialization failure (test)")

func (e *scripted) Exec(_ context.Context, st *Stmt) error {
	line := st.SQL
	if len(st.Args) > 0 {
		line += fmt.Sprint(" ", st.Args)
	}
	e.log = append(e.log, line)
	if e.failOn != "" && strings.Contains(st.SQL, e.failOn) && e.fail > 0 {
		e.fail--
		return errTest
	}
	if st.Capture == CaptureNone {
		return nil
	}
	for _, r := range e.results[st.SQL] {
		var last [][]byte
		if len(r.rows) > 0 {
			for _, v := range r.rows[len(r.rows)-1] {
				if v == "NULL" {
					last = append(last, nil)
				} else {
					last = append(last, []byte(v))
				}
			}
		}
		if err := st.Result(r.cols, len(r.rows), last); err != nil {
			return err
		}
	}
	return nil
}

func (e *scripted) StartPipeline(context.Context) error {
	e.calls = append(e.calls, "start")
	return nil
}
func (e *scripted) SyncPipeline(context.Context) error { e.calls = append(e.calls, "sync"); return nil }
func (e *scripted) EndPipeline(context.Context) error  { e.calls = append(e.calls, "end"); return nil }
func (e *scripted) AbortPipeline()                     { e.calls = append(e.calls, "abort") }

func mustParse(t *testing.T, src string, defined ...string) *Script {
	t.Helper()
	s, err := Parse("t.sql", []byte(src), defined...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustClient(t *testing.T, cfg Config) *Client {
	t.Helper()
	c, err := NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestRetry: a retried transaction draws the same random values and sees the variables as
// the first try did; a failed try leaves no \gset behind; the next transaction draws anew.
func TestRetry(t *testing.T) {
	s := mustParse(t, `\set a random(1, 1000000000)
SELECT :a AS g \gset
\set b random(1, 1000000000) + :g
UPDATE t SET v = :b;
`)
	ex := &scripted{failOn: "UPDATE", fail: 1, results: map[string][]result{}}
	c := mustClient(t, Config{Seed: 99})
	ctx := context.Background()
	c.Begin(s)
	exec := &echo{ex} // the \gset gets the value the SELECT was given
	if err := c.Run(ctx, exec); !errors.Is(err, errTest) {
		t.Fatalf("first try: %v, want the executor's error", err)
	}
	var re *RunError
	if err := c.Run(ctx, exec); err != nil {
		t.Fatalf("retry: %v", err)
	}
	first, retry := ex.log[:2], ex.log[2:4]
	if !slices.Equal(first, retry) {
		t.Errorf("the retry sent\n%q\nthe first try\n%q", retry, first)
	}
	c.Begin(s)
	if err := c.Run(ctx, exec); err != nil {
		t.Fatal(err)
	}
	if next := ex.log[4:]; next[0] == first[0] || next[1] == first[1] {
		t.Errorf("the next transaction drew the same values: %q", next)
	}
	// A failure restores the variables: g from the failed try's \gset is gone.
	s2 := mustParse(t, "SELECT 7 AS h \\gset\nUPDATE t SET v = :h;")
	ex.failOn, ex.fail = "UPDATE", 1
	c.Begin(s2)
	err := c.Run(ctx, exec)
	if !errors.As(err, &re) || re.Line != 2 || re.File != "t.sql" {
		t.Fatalf("error %v, want a RunError at t.sql:2", err)
	}
	if v := c.Var("h"); v.Kind() != KindNone {
		t.Errorf("h = %v after the failed try, want unset", v)
	}
}

// echo answers each captured statement with one row whose columns are the aliases in its
// text ("SELECT 5 AS x, 6 AS y" gives x=5, y=6).
type echo struct{ *scripted }

func (e *echo) Exec(ctx context.Context, st *Stmt) error {
	if err := e.scripted.Exec(ctx, st); err != nil || st.Capture == CaptureNone {
		return err
	}
	var cols []string
	var vals [][]byte
	for _, part := range strings.Split(strings.TrimPrefix(strings.TrimSpace(st.SQL), "SELECT "), ",") {
		v, name, _ := strings.Cut(strings.TrimSpace(part), " AS ")
		cols, vals = append(cols, strings.TrimSpace(name)), append(vals, []byte(v))
	}
	return st.Result(cols, 1, vals)
}

func TestCaptures(t *testing.T) {
	ctx := context.Background()
	s := mustParse(t, `SELECT a \gset
SELECT b \gset p_
SELECT c \aset
SELECT d \aset q_
UPDATE t SET v = :a || :p_b || :x || :q_y || :z;
`)
	ex := &scripted{results: map[string][]result{
		"SELECT a ":    {{cols: []string{"a"}, rows: [][]string{{"1"}}}},
		"SELECT b ":    {{cols: []string{"x"}, rows: [][]string{{"skipped"}}}, {cols: []string{"b"}, rows: [][]string{{"NULL"}}}},
		"SELECT c ":    {{cols: []string{"x", "y"}, rows: [][]string{{"x1", "y1"}, {"x2", "y2"}}}, {cols: nil}, {cols: []string{"z"}, rows: nil}, {cols: []string{"z"}, rows: [][]string{{"z1"}}}},
		"SELECT d ":    {{cols: []string{"y"}, rows: [][]string{{"qy"}}}},
		"UPDATE t SET": nil,
	}}
	for _, mode := range []Mode{Literal, Params} {
		ex.log = nil
		c := mustClient(t, Config{Mode: mode})
		c.Begin(s)
		if err := c.Run(ctx, ex); err != nil {
			t.Fatal(err)
		}
		want := "UPDATE t SET v = 1 ||  || x2 || qy || z1;"
		if mode == Params {
			want = "UPDATE t SET v = $1 || $2 || $3 || $4 || $5; [1  x2 qy z1]"
		}
		if got := ex.log[len(ex.log)-1]; got != want {
			t.Errorf("%v: sent %q, want %q", mode, got, want)
		}
	}
	for _, c := range []struct {
		res  []result
		want string
	}{
		{nil, `t.sql:2: \gset expects one row, got 0`},
		{[]result{{cols: nil}}, `t.sql:2: \gset expects one row, got 0`},
		{[]result{{cols: []string{"a"}, rows: [][]string{{"1"}, {"2"}}}}, `t.sql:2: \gset expects one row, got 2`},
		{[]result{{cols: []string{"a"}, rows: [][]string{{"1"}}}, {cols: []string{"a"}}}, `t.sql:2: \gset expects one row, got 0`},
		{[]result{{cols: []string{"?column?"}, rows: [][]string{{"1"}}}}, `t.sql:2: \gset cannot store column "?column?": variable name "?column?" is invalid (name the column with AS, using letters, digits and underscores)`},
	} {
		s := mustParse(t, "\\set x 1\nSELECT x \\gset")
		cl := mustClient(t, Config{})
		cl.Begin(s)
		err := cl.Run(ctx, &scripted{results: map[string][]result{"SELECT x ": c.res}})
		if err == nil || err.Error() != c.want {
			t.Errorf("%v: %v, want %s", c.res, err, c.want)
		}
	}
}

func TestRuntimeErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{`\set x 1 / 0`, `t.sql:1: \set x: division by zero`},
		{`\set x 1 % 0`, `t.sql:1: \set x: division by zero`},
		{`\set x 9223372036854775807 + 1`, `t.sql:1: \set x: bigint add out of range`},
		{`\set x -9223372036854775808 - 1`, `t.sql:1: \set x: bigint sub out of range`},
		{`\set x 4611686018427387904 * 2`, `t.sql:1: \set x: bigint mul out of range`},
		{`\set x -9223372036854775808 / -1`, `t.sql:1: \set x: bigint div out of range`},
		{`\set x -(-9223372036854775808)`, `t.sql:1: \set x: bigint sub out of range`},
		{`\set x int(1e19)`, `t.sql:1: \set x: double to int overflow for 10000000000000000000.000000`},
		{`\set x :s * 2`, `t.sql:1: \set x: malformed variable "s" value "abc": invalid input syntax for type double: "abc"`},
		{`\set x :e + 1`, `t.sql:1: \set x: malformed variable "e" value "": empty value`},
		{`\set x :big + 1`, `t.sql:1: \set x: malformed variable "big" value "99999999999999999999": value "99999999999999999999" is out of range for type bigint`},
		{`\set x true + 1`, `t.sql:1: \set x: cannot coerce boolean to int`},
		{`\set x 1.5 + false`, `t.sql:1: \set x: cannot coerce boolean to double`},
		{`\set x 1 AND true`, `t.sql:1: \set x: cannot coerce int to boolean`},
		{`\set x NOT 1`, `t.sql:1: \set x: cannot coerce int to boolean`},
		{`\set x 1 << true`, `t.sql:1: \set x: cannot coerce boolean to int`},
		{`\set x permute(1, 0)`, `t.sql:1: \set x: permute size parameter must be greater than zero`},
		{`\set x random(1, :zero)`, `t.sql:1: \set x: empty range given to random: 1 > 0`},
		{`\set x random(-9223372036854775808, 9223372036854775807)`, `t.sql:1: \set x: random range is too large`},
		{`\set x random_zipfian(1, 10, :half)`, `t.sql:1: \set x: zipfian parameter must be in range [1.001, 1000] (not 0.5)`},
		{`\set x random_gaussian(1, 10, :half)`, `t.sql:1: \set x: gaussian parameter must be at least 2.0 (not 0.5)`},
		{`\set x random_exponential(1, 10, :zero)`, `t.sql:1: \set x: exponential parameter must be greater than zero (not 0)`},
		{"SELECT 1;\n\\if 1 + true\n\\endif", `t.sql:2: \if: cannot coerce boolean to int`},
		{"\\if false\n\\elif 1 / 0\n\\endif", `t.sql:2: \elif: division by zero`},
		{`\sleep :s`, `t.sql:1: \sleep: invalid sleep time "abc" in variable "s": it must be an integer`},
		{`\sleep :t`, `t.sql:1: \sleep: invalid sleep time "true" in variable "t": it must be an integer`},
	} {
		s := mustParse(t, c.src, "s", "e", "big", "zero", "half", "t")
		cl := mustClient(t, Config{Defines: map[string]string{"s": "abc", "e": "", "big": "99999999999999999999", "zero": "0", "half": "0.5"}})
		cl.vars[cl.slot("t")].val = Bool(true)
		cl.Begin(s)
		err := cl.Run(context.Background(), &scripted{})
		var re *RunError
		if !errors.As(err, &re) || err.Error() != c.want {
			t.Errorf("%s:\n got %v\nwant %s", c.src, err, c.want)
		}
	}
}

// TestConditionals: only the branch chosen runs, and a condition after a branch that ran
// is not evaluated (its debug() prints nothing), as in pgbench.
func TestConditionals(t *testing.T) {
	s := mustParse(t, `\set x 2
\if :x = 1
SELECT 'one';
\elif :x = 2
SELECT 'two';
  \if :x > 1
  SELECT 'nested';
  \else
  SELECT 'not';
  \endif
\elif debug(99) = 99
SELECT 'three';
\else
SELECT 'other';
\endif
\if 0
SELECT 'zero';
\elif NULL
SELECT 'null';
\elif 0.5
SELECT 'half';
\endif
\if false
\else
SELECT 'else';
\endif
SELECT 'after';
`)
	var dbg bytes.Buffer
	c := mustClient(t, Config{Debug: &dbg})
	ex := &scripted{}
	c.Begin(s)
	if err := c.Run(context.Background(), ex); err != nil {
		t.Fatal(err)
	}
	want := []string{"SELECT 'two';", "SELECT 'nested';", "SELECT 'half';", "SELECT 'else';", "SELECT 'after';"}
	if !slices.Equal(ex.log, want) || dbg.Len() != 0 {
		t.Errorf("ran %q (debug %q), want %q", ex.log, dbg.String(), want)
	}
}

func TestSleep(t *testing.T) {
	s := mustParse(t, "\\sleep 3\n\\sleep 2 ms\n\\sleep 10us\n\\sleep :v ms\n\\sleep :d\n\\sleep -5\n\\sleep :txt US\n\\sleep 0", "v", "d", "txt")
	var slept []time.Duration
	c := mustClient(t, Config{Defines: map[string]string{"v": "7", "txt": " 12abc"},
		Sleep: func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil }})
	c.vars[c.slot("d")].val = Double(1.5)
	c.Begin(s)
	if err := c.Run(context.Background(), &scripted{}); err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{3 * time.Second, 2 * time.Millisecond, 10 * time.Microsecond, 7 * time.Millisecond, time.Second, 12 * time.Microsecond}
	if !slices.Equal(slept, want) {
		t.Errorf("slept %v, want %v", slept, want)
	}
	// Without a hook, a cancelled context ends the sleep with its error.
	c = mustClient(t, Config{})
	c.Begin(mustParse(t, `\sleep 1 s`))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := c.Run(ctx, &scripted{}); !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 900*time.Millisecond {
		t.Errorf("cancelled sleep: %v after %v", err, time.Since(start))
	}
}

func TestPipeline(t *testing.T) {
	s := mustParse(t, "\\startpipeline\nSELECT 1;\n\\syncpipeline\nSELECT 2;\n\\endpipeline\nSELECT 3;")
	ex := &scripted{}
	c := mustClient(t, Config{Mode: Params})
	c.Begin(s)
	if err := c.Run(context.Background(), ex); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(ex.calls, ex.log) != "[start sync end] [SELECT 1; SELECT 2; SELECT 3;]" {
		t.Errorf("calls %v, statements %v", ex.calls, ex.log)
	}
	// A failure inside the pipeline abandons it.
	ex = &scripted{failOn: "SELECT 2", fail: 1}
	c.Begin(s)
	if err := c.Run(context.Background(), ex); !errors.Is(err, errTest) || fmt.Sprint(ex.calls) != "[start sync abort]" {
		t.Errorf("failure in a pipeline: %v, calls %v", err, ex.calls)
	}
	// The literal mode and executors that cannot pipeline are refused.
	c = mustClient(t, Config{Mode: Literal})
	c.Begin(s)
	if err := c.Run(context.Background(), &scripted{}); err == nil || !strings.Contains(err.Error(), "pipelines need the parameter mode") {
		t.Errorf("literal mode: %v", err)
	}
	c = mustClient(t, Config{Mode: Params})
	c.Begin(s)
	if err := c.Run(context.Background(), nopExecutor{}); err == nil || !strings.Contains(err.Error(), "cannot pipeline") {
		t.Errorf("executor without Pipeliner: %v", err)
	}
}

// TestVariablesAndPlaceholders: -D overrides automatic variables; each :name gets its own
// placeholder, in the executor's style; values keep their text.
func TestVariablesAndPlaceholders(t *testing.T) {
	s := mustParse(t, "\\set d 1.0 / 4\n\\set b :scale > 1\n\\set n NULL\nSELECT :scale, :client_id, :d, :b, :n, :client_id, :txt, :random_seed;", "txt")
	cfg := Config{ID: 3, Scale: 7, RandomSeed: 11, Defines: map[string]string{"scale": "0010", "txt": "it's"}}
	for mode, want := range map[Mode]string{
		Literal: "SELECT 0010, 3, 0.25, true, NULL, 3, it's, 11;",
		Params:  "SELECT ?, ?, ?, ?, ?, ?, ?, ?; [0010 3 0.25 true NULL 3 it's 11]",
	} {
		cfg.Mode, cfg.Placeholder = mode, Question
		c := mustClient(t, cfg)
		ex := &scripted{}
		c.Begin(s)
		if err := c.Run(context.Background(), ex); err != nil {
			t.Fatal(err)
		}
		if ex.log[0] != want {
			t.Errorf("%v: %q, want %q", mode, ex.log[0], want)
		}
	}
	if _, err := NewClient(Config{Defines: map[string]string{"bad name": "1"}}); err == nil {
		t.Error("a define with an invalid name was accepted")
	}
	args := AppendArgs(nil, []Value{Int(1), Double(0.5), Bool(true), Null(), Text("x"), {}})
	if fmt.Sprintf("%#v", args) != `[]interface {}{1, 0.5, true, interface {}(nil), "x", interface {}(nil)}` {
		t.Errorf("AppendArgs: %#v", args)
	}
}

func TestInterpretText(t *testing.T) {
	for text, want := range map[string]string{
		"t": "boolean true", "TRUE": "boolean true", "ye": "boolean true", "on": "boolean true",
		"f": "boolean false", "No": "boolean false", "of": "boolean false", "OFF": "boolean false",
		"null": "null", "NULL": "null", " 42": "int 42", "-7": "int -7", "+7": "int 7", "7 ": "error", "007": "int 7",
		"1.5e3": "double 1500", " .5": "double 0.5", "inf": "double Infinity", "-Infinity": "double -Infinity",
		"nan": "double NaN", "1e-5": "double 1e-05",
		"": "error", "o": "error", "+": "error", "abc": "error", "1.5x": "error", "1e400": "error",
		"1e-400": "error", "9223372036854775808": "error", "truex": "error", "1_000": "error",
	} {
		v, err := interpret(text)
		got := "error"
		if err == nil {
			got = v.Kind().String()
			if v.Kind() != KindNull {
				got += " " + v.String()
			}
		}
		if got != want {
			t.Errorf("interpret(%q) = %s, want %s", text, got, want)
		}
	}
}

// TestClientsShareAScript runs clients of one script in parallel (run with -race): a Script
// is read-only once parsed, and each client draws its own sequence.
func TestClientsShareAScript(t *testing.T) {
	s := mustParse(t, tpcbScript)
	seeds, defaultSeed := PgbenchSeeds(1, 8)
	logs := make([][]string, len(seeds))
	done := make(chan int)
	for i := range seeds {
		go func() {
			defer func() { done <- i }()
			c, err := NewClient(Config{ID: i, Scale: 1, Seed: seeds[i], DefaultSeed: defaultSeed, Mode: Mode(i % 2)})
			if err != nil {
				t.Error(err)
				return
			}
			ex := &scripted{}
			for range 200 {
				c.Begin(s)
				if err := c.Run(context.Background(), ex); err != nil {
					t.Error(err)
					return
				}
			}
			logs[i] = ex.log
		}()
	}
	for range seeds {
		<-done
	}
	if slices.Equal(logs[0], logs[2]) || len(logs[0]) != 200*7 {
		t.Errorf("clients 0 and 2 sent the same %d statements", len(logs[0]))
	}
}
