package spec

import "testing"

// TestFieldsDeclared: every field has a unique key, a kind, a help text, a reader and a
// writer, and says what a difference in it does to a comparison (Mismatch), which the
// like-for-like check of stored runs quotes for every field.
func TestFieldsDeclared(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range Fields {
		if f.Key == "" || seen[f.Key] {
			t.Errorf("field %q: empty or repeated key", f.Key)
		}
		seen[f.Key] = true
		if f.Kind == "" || f.Usage == "" || f.Mismatch == "" {
			t.Errorf("field %q: Kind %q, Usage %q, Mismatch %q: each must be set", f.Key, f.Kind, f.Usage, f.Mismatch)
		}
		if f.set == nil || f.get == nil {
			t.Errorf("field %q: no reader or writer", f.Key)
		}
	}
}
