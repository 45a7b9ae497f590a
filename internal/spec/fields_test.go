package spec

import "testing"

// TestFieldsDeclared: every field has a unique key, a kind, a help text, a reader and a
// writer, and says what a difference in it does to a comparison (Mismatch), which the
// like-for-like check of stored runs quotes for every field.
func TestFieldsDeclared(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range Fields {
		if f.Name == "" || seen[f.Name] {
			t.Errorf("field %q: empty or repeated key", f.Name)
		}
		seen[f.Name] = true
		if f.Usage == "" || (f.Mismatch == "") != f.Incidental {
			t.Errorf("field %q: Usage %q, Mismatch %q (incidental %v): each must be set, Mismatch unless incidental", f.Name, f.Usage, f.Mismatch, f.Incidental)
		}
		if f.set == nil || f.get == nil {
			t.Errorf("field %q: no reader or writer", f.Name)
		}
	}
}
