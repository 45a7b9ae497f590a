package analysis

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestEveryRuleListed: every Rule… constant of the package is carried by exactly one entry
// of rules, and every name an entry carries is such a constant, so a rule declared in its
// own file cannot be left out of Check.
func TestEveryRuleListed(t *testing.T) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	consts := map[string]string{} // value → constant name
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, e.Name(), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				v := s.(*ast.ValueSpec)
				for i, n := range v.Names {
					if !strings.HasPrefix(n.Name, "Rule") || i >= len(v.Values) {
						continue
					}
					lit, ok := v.Values[i].(*ast.BasicLit)
					if !ok {
						t.Fatalf("%s is not a string literal", n.Name)
					}
					s, _ := strconv.Unquote(lit.Value)
					consts[s] = n.Name
				}
			}
		}
	}
	if len(consts) < 20 {
		t.Fatalf("found only %d Rule constants: %v", len(consts), consts)
	}
	listed := map[string]int{}
	for _, r := range rules {
		if r.check == nil || len(r.names) == 0 {
			t.Errorf("rule %v has no check or no names", r.names)
		}
		for _, n := range r.names {
			listed[n]++
			if _, ok := consts[n]; !ok {
				t.Errorf("rules carry %q, which is no Rule constant", n)
			}
		}
	}
	for v, name := range consts {
		if listed[v] != 1 {
			t.Errorf("%s (%q) is carried by %d rules, want 1", name, v, listed[v])
		}
	}
}
