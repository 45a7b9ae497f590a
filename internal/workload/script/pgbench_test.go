package script

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dblat/dblat/internal/engine/firebird/fbtest"
	"github.com/dblat/dblat/internal/engine/mariadb/mariadbtest"
	"github.com/dblat/dblat/internal/engine/postgres"
	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
)

// TestMain stops the managed servers the tests started.
func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Shutdown()
	mariadbtest.Shutdown()
	fbtest.Shutdown()
	os.Exit(code)
}

// pgbenchBinary returns the pgbench installed beside the PostgreSQL server, or on PATH;
// without one the test is skipped (failed under DBLAT_REQUIRE_SERVERS=1).
func pgbenchBinary(t *testing.T) string {
	t.Helper()
	if bin, err := postgres.FindBinaries(""); err == nil {
		if p := filepath.Join(bin, "pgbench"); fileExists(p) {
			return p
		}
	}
	if p, err := exec.LookPath("pgbench"); err == nil {
		return p
	}
	if pgtest.Required() {
		t.Fatal("pgbench is not installed: install postgresql-client (Debian: apt-get install postgresql-15)")
	}
	t.Skip("skipping: pgbench is not installed (Debian: apt-get install postgresql-15)")
	return ""
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// runPgbench runs pgbench with args and the script src (-f) against dsn and returns its
// standard error, where debug() and -d write.
func runPgbench(t *testing.T, dsn, src string, args ...string) string {
	t.Helper()
	bin := pgbenchBinary(t)
	file := filepath.Join(t.TempDir(), "script.sql")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	args = append(append([]string{"-n", "-f", file}, args...), dsn)
	cmd := exec.Command(bin, args...)
	var stderr, stdout bytes.Buffer
	cmd.Stderr, cmd.Stdout = &stderr, &stdout
	if err := cmd.Run(); err != nil {
		t.Fatalf("pgbench %s: %v\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stderr.String()
}

var pgbenchDebugLine = regexp.MustCompile(`(?m)^debug\(script=\d+,command=(\d+)\): (.*)$`)

// pgbenchDebug returns the values pgbench's debug() printed, in order: "int 5",
// "double 1.5", "boolean true", "null".
func pgbenchDebug(out string) []string {
	var vals []string
	for _, m := range pgbenchDebugLine.FindAllStringSubmatch(out, -1) {
		vals = append(vals, m[2])
	}
	return vals
}

// ourDebug runs src once on a client and returns the values debug() printed, in
// pgbench's form.
func ourDebug(t *testing.T, src string, cfg Config) []string {
	t.Helper()
	s, err := Parse("script.sql", []byte(src), keys(cfg.Defines)...)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cfg.Debug = &out
	c, err := NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.Begin(s)
	if err := c.Run(context.Background(), nopExecutor{}); err != nil {
		t.Fatal(err)
	}
	var vals []string
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		_, v, ok := strings.Cut(line, ": debug: ")
		if !ok {
			t.Fatalf("debug line %q", line)
		}
		vals = append(vals, v)
	}
	return vals
}

func keys(m map[string]string) []string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	return k
}

type nopExecutor struct{}

func (nopExecutor) Exec(context.Context, *Stmt) error { return nil }

// TestHashesMatchPgbench asks the installed pgbench for hash(), hash_murmur2(),
// hash_fnv1a() and permute() over many arguments and seeds (negative, zero, extreme, and
// the default seed) in one run, and checks that the package returns the same values.
func TestHashesMatchPgbench(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	vals := []string{"0", "1", "-1", "42", "-42", "255", "256", "65536", "123456789", "-987654321",
		"4294967296", "9223372036854775807", "-9223372036854775808", "1311768467463790320"}
	seeds := []string{"0", "1", "-1", "5432", "-77", "9223372036854775807", "-9223372036854775808", "2654435761"}
	var src strings.Builder
	var want []string // our values, computed directly
	const defaultSeed = 8283928392
	line := func(expr string, v int64) {
		fmt.Fprintf(&src, "\\set h%d debug(%s)\n", len(want), expr)
		want = append(want, fmt.Sprintf("int %d", v))
	}
	for _, v := range vals {
		iv := mustInt(t, v)
		line(fmt.Sprintf("hash(%s)", v), HashMurmur2(iv, defaultSeed))
		line(fmt.Sprintf("hash_fnv1a(%s)", v), HashFNV1a(iv, defaultSeed))
		for _, s := range seeds {
			is := mustInt(t, s)
			line(fmt.Sprintf("hash_murmur2(%s, %s)", v, s), HashMurmur2(iv, is))
			line(fmt.Sprintf("hash_fnv1a(%s, %s)", v, s), HashFNV1a(iv, is))
		}
	}
	sizes := []string{"1", "2", "3", "4", "5", "7", "8", "10", "1000", "1000003", "4294967296", "9223372036854775807"}
	for _, size := range sizes {
		n := mustInt(t, size)
		for _, v := range []string{"0", "1", "-1", "2", "6", "999", "-9223372036854775808", "9223372036854775807"} {
			iv := mustInt(t, v)
			line(fmt.Sprintf("permute(%s, %s)", v, size), Permute(iv, n, defaultSeed))
			for _, s := range seeds[:5] {
				line(fmt.Sprintf("permute(%s, %s, %s)", v, size, s), Permute(iv, n, mustInt(t, s)))
			}
		}
	}
	out := runPgbench(t, dsn, src.String(), "-t", "1", "-D", fmt.Sprintf("default_seed=%d", defaultSeed))
	got := pgbenchDebug(out)
	if len(got) != len(want) {
		t.Fatalf("pgbench printed %d values, want %d:\n%s", len(got), len(want), out)
	}
	lines := strings.Split(src.String(), "\n")
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%s: pgbench %s, we %s", lines[i], got[i], want[i])
		}
	}
	// The interpreter gives the same values through the language.
	ours := ourDebug(t, src.String(), Config{Defines: map[string]string{"default_seed": fmt.Sprint(defaultSeed)}})
	for i := range want {
		if ours[i] != want[i] {
			t.Errorf("%s: interpreter %s, want %s", lines[i], ours[i], want[i])
		}
	}
}

func mustInt(t *testing.T, s string) int64 {
	t.Helper()
	i, err := parseInt64(s)
	if err != nil {
		t.Fatal(err)
	}
	return i
}

// pgbenchExpressions are expressions whose values pgbench and the interpreter must agree
// on: precedence, types and promotions, NULL handling, functions, double formatting, and
// variables given as text with -D.
var pgbenchExpressions = []string{
	"1 + 2 * 3", "(1 + 2) * 3", "7 / 2", "-7 / 2", "7 % 3", "-7 % 3", "7 % -3", "7.0 / 2", "1 / 3.0",
	"10 - 3 - 2", "2 * 3 % 4", "100 / 10 / 5", "1 << 3 + 1", "~ 1 + 2", "~1 & 6", "5 & 3 | 8 # 2",
	"8 >> 1", "-8 >> 1", "1 << 62", "3 # 5 & 6", "~~5", "- - 3", "-(-3)", "+3", "2 * +3", "(1 + 2) * -3",
	"1 < 2 AND 2 < 3", "NOT 1 = 2", "NOT true AND false", "true OR false AND false", "not TRUE or TRUE",
	"NULL IS NULL", "1 IS NULL", "NULL ISNULL", "1 NOTNULL", "1 IS NOT NULL", "true IS TRUE",
	"true IS NOT FALSE", "false is false", "1 IS TRUE", "1 IS NOT NULL IS TRUE", "NULL IS NULL IS NULL",
	"NOT NULL IS NULL", "1 + 2 IS NULL", "NULL = NULL", "NULL + 1", "NOT NULL", "NULL AND false",
	"false AND NULL", "true OR NULL", "NULL OR true", "true AND NULL", "false OR NULL",
	"CASE WHEN 1 > 2 THEN 1 WHEN 2 > 1 THEN 2 ELSE 3 END", "CASE WHEN false THEN 1 END",
	"CASE WHEN 0 THEN 1 ELSE 2 END", "CASE WHEN 0.0 THEN 1 ELSE 2.5 END", "CASE WHEN NULL THEN 1 ELSE 0 END",
	"case when 3 then 4 end + 1", "abs(-5)", "abs(-5.5)", "abs(-9223372036854775807)", "abs(0)",
	"least(3, 1.5, 2)", "greatest(1, 2, 3)", "least(5)", "greatest(1, 2.0)", "least(-1, NULL)",
	"int(5.5)", "int(4.5)", "int(-2.5)", "int(2.4999)", "int(-0.5)", "int(1e18)", "double(3)",
	"double(9223372036854775807)", "sqrt(2)", "ln(10)", "exp(1)", "pi()", "pow(2, 10)", "power(2.0, 0.5)",
	"POW(-8, 1.0 / 3)", "ln(0)", "ln(-1)", "sqrt(-1)", "1e300 * 1e10", "-1e300 * 1e10", "0.1 + 0.2",
	"1.0e20", "123456789012345.0", "1234567890123456.0", "1e15", "1e-5", "0.0001", "0.00001234",
	"1.5e-300 / 1e10", "2.0 / 3", "1e16 + 1", ".5", "5.", "3.", "1e3", "9223372036854775807",
	"-9223372036854775808", "-9223372036854775807 - 1", "mod(-7, 3)", "mod(7, -1)", "-9223372036854775808 % -1",
	"5 <> 6", "5 != 5", "5 >= 5", "5 <= 4", "2 > 1.5", "1 = 1.0", "(3 > 2) IS TRUE", "3 > 2 IS TRUE",
	":client_id", ":scale", ":random_seed", ":default_seed", ":t AND true", ":n * 2", ":i + 1",
	":nu IS NULL", ":f OR false", ":d + 0", ":big", ":yes", ":no", ":off",
	"random(5, 5)", "permute(0, 1)", "hash(0) = hash_murmur2(0, :default_seed)",
	"random(-9223372036854775807, -9223372036854775807)", "random_zipfian(1, 1, 1.5)",
}

// TestExpressionsMatchPgbench evaluates every expression of pgbenchExpressions with the
// installed pgbench (debug() prints each value) and with the interpreter.
func TestExpressionsMatchPgbench(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	defines := map[string]string{"t": "yes", "n": "1.50", "i": "  42", "nu": "NULL", "f": "of",
		"d": "2.5e3", "big": "-9223372036854775808", "yes": "Y", "no": "n", "off": "OFF"}
	var src strings.Builder
	for i, e := range pgbenchExpressions {
		fmt.Fprintf(&src, "\\set e%d debug(%s)\n", i, e)
	}
	args := []string{"-t", "1", "-s", "3", "--random-seed=77"}
	for k, v := range defines {
		args = append(args, "-D", k+"="+v)
	}
	out := runPgbench(t, dsn, src.String(), args...)
	got := pgbenchDebug(out)
	seeds, defaultSeed := PgbenchSeeds(77, 1)
	ours := ourDebug(t, src.String(), Config{Scale: 3, RandomSeed: 77, DefaultSeed: defaultSeed, Seed: seeds[0], Defines: defines})
	if len(got) != len(ours) {
		t.Fatalf("pgbench printed %d values, the interpreter %d:\npgbench: %q\nours: %q", len(got), len(ours), got, ours)
	}
	for i := range got {
		if got[i] != ours[i] {
			t.Errorf("%s: pgbench %s, interpreter %s", pgbenchExpressions[i], got[i], ours[i])
		}
	}
}

// TestRandomStreamMatchesPgbench checks that a client seeded with PgbenchSeeds draws
// pgbench's own values from every random function, over three transactions.
func TestRandomStreamMatchesPgbench(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	var src strings.Builder
	for i, e := range []string{"random(1, 1000000)", "random(-5, 5)", "random(0, 9223372036854775806)",
		"random_exponential(1, 1000, 2.5)", "random_exponential(-100, 100, 0.5)", "random_gaussian(1, 1000, 2.0)",
		"random_gaussian(1, 10, 5)", "random_zipfian(1, 1000, 1.07)", "random_zipfian(1, 100, 2.5)",
		"random_zipfian(10, 20, 1.001)", "random(1, 10) > random(1, 10)", "permute(random(0, 99), 100)"} {
		fmt.Fprintf(&src, "\\set r%d debug(%s)\n", i, e)
	}
	src.WriteString("\\set d debug(:default_seed)\n")
	const seed = 20240917
	out := runPgbench(t, dsn, src.String(), "-t", "3", "-c", "1", fmt.Sprintf("--random-seed=%d", seed))
	got := pgbenchDebug(out)
	seeds, defaultSeed := PgbenchSeeds(seed, 1)
	s, err := Parse("random.sql", []byte(src.String()))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	c, err := NewClient(Config{Seed: seeds[0], DefaultSeed: defaultSeed, RandomSeed: seed, Debug: &buf})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		c.Begin(s)
		if err := c.Run(context.Background(), nopExecutor{}); err != nil {
			t.Fatal(err)
		}
	}
	var ours []string
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		_, v, _ := strings.Cut(line, ": debug: ")
		ours = append(ours, v)
	}
	if strings.Join(got, "\n") != strings.Join(ours, "\n") {
		t.Errorf("pgbench drew\n%s\nthe interpreter\n%s", strings.Join(got, "\n"), strings.Join(ours, "\n"))
	}
}

// builtinScript returns the text of one of pgbench's built-in scripts as the installed
// pgbench prints it.
func builtinScript(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command(pgbenchBinary(t), "--show-script="+name).CombinedOutput()
	if err != nil {
		t.Fatalf("pgbench --show-script=%s: %v\n%s", name, err, out)
	}
	return string(out)
}

// recorder is an Executor that records the statements it is given.
type recorder struct {
	stmts []string
	args  [][]Value
}

func (r *recorder) Exec(_ context.Context, st *Stmt) error {
	r.stmts = append(r.stmts, st.SQL)
	r.args = append(r.args, append([]Value(nil), st.Args...))
	return nil
}

var pgbenchSending = regexp.MustCompile(`(?m)^pgbench: (?:debug: )?client 0 sending (.*)$`)

// TestBuiltinScriptsMatchPgbench runs pgbench's three built-in scripts, as --show-script
// prints them, with pgbench -d (which logs every statement it sends) and with the
// interpreter seeded as pgbench seeds its client, over five transactions: in the literal
// mode the statements must be byte for byte pgbench -M simple's, in the parameter mode
// the text must be -M extended's, with the same values as arguments.
func TestBuiltinScriptsMatchPgbench(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	// The tables, empty: the statements then run without changing anything.
	init := exec.Command(pgbenchBinary(t), "-i", "-I", "dt", dsn)
	if out, err := init.CombinedOutput(); err != nil {
		t.Fatalf("pgbench -i: %v\n%s", err, out)
	}
	const seed, txs = 4242, 5
	for _, name := range []string{"tpcb-like", "simple-update", "select-only"} {
		t.Run(name, func(t *testing.T) {
			src := builtinScript(t, name)
			s, err := Parse(name+".sql", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			seeds, defaultSeed := PgbenchSeeds(seed, 1)
			run := func(mode Mode) *recorder {
				c, err := NewClient(Config{Scale: 1, Seed: seeds[0], DefaultSeed: defaultSeed, RandomSeed: seed, Mode: mode})
				if err != nil {
					t.Fatal(err)
				}
				r := &recorder{}
				for range txs {
					c.Begin(s)
					if err := c.Run(context.Background(), r); err != nil {
						t.Fatal(err)
					}
				}
				return r
			}
			sent := func(protocol string) []string {
				out := runPgbench(t, dsn, src, "-d", "-M", protocol, "-t", fmt.Sprint(txs), fmt.Sprintf("--random-seed=%d", seed))
				var stmts []string
				for _, m := range pgbenchSending.FindAllStringSubmatch(out, -1) {
					stmts = append(stmts, m[1])
				}
				if len(stmts) == 0 {
					t.Fatalf("pgbench -d logged no statement:\n%s", out)
				}
				return stmts
			}
			literal := run(Literal)
			if want := sent("simple"); strings.Join(literal.stmts, "\n") != strings.Join(want, "\n") {
				t.Errorf("literal mode sent\n%s\npgbench -M simple\n%s", strings.Join(literal.stmts, "\n"), strings.Join(want, "\n"))
			}
			params := run(Params)
			if want := sent("extended"); strings.Join(params.stmts, "\n") != strings.Join(want, "\n") {
				t.Errorf("parameter mode sent\n%s\npgbench -M extended\n%s", strings.Join(params.stmts, "\n"), strings.Join(want, "\n"))
			}
			// The arguments, substituted into the placeholders, give the literal statements.
			for i, sql := range params.stmts {
				for j := len(params.args[i]); j >= 1; j-- { // $10 before $1
					sql = strings.ReplaceAll(sql, fmt.Sprintf("$%d", j), params.args[i][j-1].String())
				}
				if sql != literal.stmts[i] {
					t.Errorf("statement %d: parameters give %q, literal mode %q", i, sql, literal.stmts[i])
				}
			}
		})
	}
}

// pgbenchSplitting is a script whose SQL goes through psql's lexical rules, one
// statement's worth each: quotes, quoted identifiers, E'...' strings, dollar quotes with and
// without a tag, nested comments, \; and \:, a routine body with semicolons, :variables
// beside casts. Every statement runs on PostgreSQL. (A :name inside quotes is left out:
// pgbench substitutes it there, the package does not; see the package documentation.)
const pgbenchSplitting = `\set aid 7
SELECT 'a;b:c' AS "x;:y", 'it''s' AS "q""q";
SELECT $$ ; :w $$ AS d, $t$ :w $x$ ; $t$ AS e, $é$;$é$ AS f;
SELECT E'\';' AS g, e'\\' AS h, U&'d\0061t' AS i, X'1F' AS j, B'101' AS k, N'n;' AS l;
SELECT 1 /* ; /* ; */ ; */ AS m;
SELECT (SELECT 1) AS n
;
SELECT :aid::int AS o, (ARRAY[1,2])[1:2] AS p, 1.5e3 AS r, .5 AS t;
SELECT 1 AS u\; SELECT 2 AS v;
SELECT 1 AS "w\:x";
CREATE FUNCTION pg_temp.f() RETURNS int LANGUAGE sql BEGIN ATOMIC SELECT 1; SELECT CASE WHEN true THEN 2 END; END;
SELECT pg_temp.f()
  AS "multi
line";
`

// TestSplittingMatchesPgbench runs pgbenchSplitting with pgbench -d -M simple, which logs
// every statement it sends, and checks that the literal mode sends the same statements:
// the script is split where psql splits it, and :variables are found where pgbench finds
// them.
func TestSplittingMatchesPgbench(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	out := runPgbench(t, dsn, pgbenchSplitting, "-d", "-M", "simple", "-t", "1")
	// A statement runs from "sending " to the next line of pgbench's log: it may hold
	// newlines.
	var want []string
	for _, part := range strings.Split(out, "\npgbench: ")[1:] {
		if _, sql, ok := strings.Cut(part, "client 0 sending "); ok {
			want = append(want, sql)
		}
	}
	s, err := Parse("splitting.sql", []byte(pgbenchSplitting))
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewClient(Config{Mode: Literal})
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{}
	c.Begin(s)
	if err := c.Run(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	if len(want) != 10 || strings.Join(r.stmts, "\n--\n") != strings.Join(want, "\n--\n") {
		t.Errorf("the literal mode sent\n%s\npgbench -M simple\n%s", strings.Join(r.stmts, "\n--\n"), strings.Join(want, "\n--\n"))
	}
}

// TestJunkMatchesPgbench checks the statements that psql's rules for a number or a $n
// followed directly by an identifier (PostgreSQL 15's junk rules: 1a$$ is one token, and so
// is 1.E before a quote) make of a script: each case starts with a statement the server
// refuses, so pgbench sends only that one, which must be the script's first statement.
func TestJunkMatchesPgbench(t *testing.T) {
	bin := pgbenchBinary(t)
	dsn := pgtest.NewDatabase(t)
	for _, src := range []string{
		"SELECT 1a$$ AS x; SELECT $$y$$;", "SELECT $1a$$ AS x; SELECT $$y$$;", "SELECT 0é$$ AS x; SELECT $$y$$;",
		"SELECT 1.a$$ AS x; SELECT $$y$$;", "SELECT 1.5e3a$$ AS x; SELECT $$y$$;", "SELECT 1e$$ AS x; SELECT $$y$$;",
		`SELECT 1.E'\' AS x, 'a' AS y; SELECT 2;`, `SELECT $1E'\' AS x, 'a' AS y; SELECT 2;`,
		`SELECT 1xE'\' AS x, 'a' AS y; SELECT 2;`, "SELECT 1$$ AS x; $$ AS y; SELECT 2;",
	} {
		file := filepath.Join(t.TempDir(), "junk.sql")
		if err := os.WriteFile(file, []byte(src+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		// pgbench exits with an error: the statement fails on the server.
		out, _ := exec.Command(bin, "-n", "-d", "-M", "simple", "-t", "1", "-f", file, dsn).CombinedOutput()
		_, sent, ok := strings.Cut(string(out), "client 0 sending ")
		sent, _, _ = strings.Cut(sent, "\npgbench: ")
		if !ok {
			t.Fatalf("%s: pgbench sent nothing:\n%s", src, out)
		}
		s, err := Parse("junk.sql", []byte(src+"\n"))
		if err != nil {
			t.Errorf("%s: %v; pgbench sent %q", src, err, sent)
			continue
		}
		if got := s.Commands()[0].SQL; got != sent {
			t.Errorf("%s: first statement %q, pgbench sent %q", src, got, sent)
		}
	}
}
