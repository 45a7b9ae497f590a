package engine_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/engine/postgres"
)

// TestCapabilitiesListEveryOptionalInterface: every interface package engine documents as
// "an optional ... capability" is a field of Capabilities of its own name and type, so
// that a new capability cannot be asserted anywhere but in Caps.
func TestCapabilitiesListEveryOptionalInterface(t *testing.T) {
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	caps := reflect.TypeFor[engine.Capabilities]()
	var n int
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE || g.Doc == nil || !strings.Contains(g.Doc.Text(), " is an optional ") {
				continue
			}
			ts := g.Specs[0].(*ast.TypeSpec)
			if _, ok := ts.Type.(*ast.InterfaceType); !ok {
				continue
			}
			n++
			field, ok := caps.FieldByName(ts.Name.Name)
			if !ok || field.Type.Name() != ts.Name.Name || field.Type.Kind() != reflect.Interface {
				t.Errorf("Capabilities has no field %s of type engine.%[1]s", ts.Name.Name)
			}
		}
	}
	if n != caps.NumField() {
		t.Errorf("%d optional interfaces documented, %d fields in Capabilities", n, caps.NumField())
	}
}

// wrapped is an engine a test builds around a registered one, overriding a capability.
type wrapped struct{ postgres.Engine }

func (wrapped) TxOnly() bool { return true }

// TestCaps: the registered engine's capabilities are the ones Register resolved; an engine
// that is not the registered value under its name (a test's wrapper) has its own.
func TestCaps(t *testing.T) {
	pg := engine.Caps(postgres.Engine{})
	if pg.Manager == nil || pg.BulkLoader == nil || pg.WireProtocol == nil || pg.TxOnly != nil {
		t.Errorf("postgres capabilities: %+v", pg)
	}
	w := engine.Caps(wrapped{})
	if w.TxOnly == nil || !w.TxOnly.TxOnly() {
		t.Error("the wrapper's own TxOnly is not among its capabilities")
	}
	if _, ok := w.BulkLoader.(wrapped); !ok {
		t.Errorf("the wrapper's BulkLoader is a %T, want the wrapper", w.BulkLoader)
	}
	if (engine.Caps(nil) != engine.Capabilities{}) {
		t.Error("a nil engine has capabilities")
	}
}
