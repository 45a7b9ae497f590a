package suggest

import "testing"

func TestClosest(t *testing.T) {
	known := []string{"shared_buffers", "work_mem", "ServerMode", "DefaultDbCachePages"}
	for word, want := range map[string]string{
		"shared_bufers": "shared_buffers", "SHARED_BUFFERS": "shared_buffers", "servermode": "ServerMode",
		"work_men": "work_mem", "completely_else": "", "DefaultDbCachePage": "DefaultDbCachePages",
	} {
		if got := Closest(word, known, 3); got != want {
			t.Errorf("Closest(%q) = %q, want %q", word, got, want)
		}
	}
	if got := Closest("ab", []string{"ac", "ab2"}, 1); got != "ab2" {
		t.Errorf("tie: got %q, want the first in sorted order", got)
	}
}

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"abc", "abc", 0}, {"kitten", "sitting", 3}, {"", "abc", 3}} {
		if got := Distance(c.a, c.b); got != c.d {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.d)
		}
	}
}
