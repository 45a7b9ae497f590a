package script

import (
	"testing"
)

// FuzzParse parses arbitrary scripts: Parse must return a script or a *ParseError, never
// panic, and a script must survive Format: its text parses again and formats the same.
// The seed corpus (pgbench's built-in scripts and the language's corners) runs with every
// go test; go test -fuzz=FuzzParse explores from it.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		tpcbScript,
		"\\set aid random(1, 100000 * :scale)\n\\set bid random(1, 1 * :scale)\n\\set tid random(1, 10 * :scale)\n\\set delta random(-5000, 5000)\nBEGIN;\nUPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;\nSELECT abalance FROM pgbench_accounts WHERE aid = :aid;\nINSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);\nEND;\n",
		"\\set aid random(1, 100000 * :scale)\nSELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n",
		"\\set x CASE WHEN :scale > 1 THEN -9223372036854775808 ELSE ~1 # 2 << 3 END\n\\if :x IS NOT NULL AND NOT :x ISNULL\nSELECT :x AS y \\gset p_\n\\elif :x NOTNULL\n\\else\n\\endif\n",
		"SELECT 'a;:b', \"c;:d\", $q$ ; $q$, E'\\';' /* ; /* ; */ */ -- ;\n;\nSELECT 1\\; SELECT 2 \\aset\n",
		"\\startpipeline\nSELECT 1;\n\\syncpipeline\nSELECT 2;\n\\endpipeline\n\\sleep 10ms\n\\sleep :scale us\n",
		"\\set h hash(1) + hash_fnv1a(2, 3) + permute(4, 5) + least(1, 2.5) + greatest(3) + pow(2, 0.5) + abs(-1) + int(1.5) + double(1) + sqrt(4) + ln(1) + exp(0) + pi() + mod(7, 3)\n",
		"\\set z random_zipfian(1, 100, 1.5) + random_exponential(1, 10, 2) + random_gaussian(1, 10, 2.5)\n\\set d debug(:z)\n",
		"SELECT 1 -- c\n\\gset\nCREATE FUNCTION f() BEGIN ATOMIC SELECT 1; END;\nEXECUTE BLOCK AS DECLARE x INT; BEGIN x = 1; END\n",
		"\\set a 1 +\\\n 2\n\\set b .5e3 * 5. - 1e-3\n\\set c true OR false AND NULL IS NULL\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, src string) {
		s, err := Parse("fuzz.sql", []byte(src))
		if err != nil {
			if _, ok := err.(*ParseError); !ok {
				t.Fatalf("error %T %v is not a *ParseError", err, err)
			}
			return
		}
		text := s.Format()
		s2, err := Parse("fuzz.sql", []byte(text))
		if err != nil {
			t.Fatalf("Format's text does not parse: %v\n--- source\n%s\n--- formatted\n%s", err, src, text)
		}
		if again := s2.Format(); again != text {
			t.Fatalf("Format is not stable:\n--- first\n%s\n--- second\n%s", text, again)
		}
		if len(s2.Commands()) != len(s.Commands()) || s2.Statements() != s.Statements() {
			t.Fatalf("Format changed the commands: %d, %d statements, then %d, %d", len(s.Commands()), s.Statements(), len(s2.Commands()), s2.Statements())
		}
	})
}
