package study

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

// TestScriptKeys: the script workload's parameters as a study writes them — scripts and
// builtins as lists (or one value), defines as a mapping, init as a file — and scripts as a
// factor whose levels are one script or a list of them.
func TestScriptKeys(t *testing.T) {
	src := head + `base:
  workload: script
  scripts: [orders.sql@10, status.sql]
  builtins: select-only@2
  defines: {products: 1000, label: "a,b"}
  init: schema.sql
factors:
  scripts: [client.sql, [proc.sql@3, status.sql]]
`
	st, err := Parse("x.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	b := st.Base.Run
	if !slices.Equal(b.Scripts, []string{"orders.sql@10", "status.sql"}) || !slices.Equal(b.Builtins, []string{"select-only@2"}) ||
		!maps.Equal(b.Defines, map[string]string{"products": "1000", "label": "a,b"}) || b.Init != "schema.sql" {
		t.Errorf("base: %+v", b.Params)
	}
	if f := st.Factors[0]; f.Key != "scripts" || !slices.Equal(f.Levels, []string{"client.sql", "proc.sql@3,status.sql"}) {
		t.Errorf("factor %+v", f)
	}
	cells := st.Cells()
	if len(cells) != 2 || !slices.Equal(cells[1].Params.Scripts, []string{"proc.sql@3", "status.sql"}) ||
		cells[0].Key == cells[1].Key || !slices.Equal(cells[0].Params.Builtins, []string{"select-only@2"}) {
		t.Errorf("cells: %+v", cells)
	}
	// The parameters enter the cell key; a study without them keeps its keys.
	plain, err := Parse("x.yaml", []byte(head+"base: {workload: tpcc}\n"))
	if err != nil {
		t.Fatal(err)
	}
	withInit, err := Parse("x.yaml", []byte(head+"base: {workload: tpcc, init: a.sql}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if CellKey(plain.Base) == CellKey(withInit.Base) {
		t.Error("init does not change the cell key")
	}
}

func TestScriptKeyErrors(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"bad weight in a list", head + "base:\n  scripts: [a.sql, b.sql@x]\n",
			`x.yaml:4:20: scripts weight "x" after @ in "b.sql@x" is not a whole number (write FILE@WEIGHT, such as orders.sql@10)`},
		{"bad define name", head + "base:\n  defines: {2x: 1}\n", `x.yaml:4:17: defines "2x" is not a variable name: use letters, digits and underscores, not starting with a digit`},
		{"bad level item", head + "factors:\n  scripts: [a.sql, [b.sql, c.sql@-1]]\n",
			`x.yaml:4:28: scripts level weight "-1" after @ in "c.sql@-1" is not a whole number`},
		{"all weights zero", head + "base:\n  scripts: [a.sql@0]\n", `x.yaml:4:12: scripts all have weight 0: give at least one script a positive weight`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("x.yaml", []byte(tc.src))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v\nwant %s", err, tc.want)
			}
		})
	}
}

func TestScriptKeyHints(t *testing.T) {
	_, err := Parse("x.yaml", []byte(head+"base:\n  script: a.sql\n  define: {a: 1}\n"))
	if err == nil || !strings.Contains(err.Error(), `unknown key "script" in base (did you mean scripts?)`) ||
		!strings.Contains(err.Error(), `unknown key "define" in base (did you mean defines?)`) {
		t.Errorf("got %v", err)
	}
}
