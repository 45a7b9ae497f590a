package words

import "testing"

func TestCount(t *testing.T) {
	for _, c := range []struct {
		n    int64
		noun string
		want string
	}{
		{1, "run", "1 run"}, {0, "run", "0 runs"}, {3, "warning", "3 warnings"},
		{2, "study", "2 studies"}, {2, "day", "2 days"}, {2, "key", "2 keys"}, {1, "study", "1 study"},
	} {
		if got := Count(c.n, c.noun); got != c.want {
			t.Errorf("Count(%d, %q) = %q, want %q", c.n, c.noun, got, c.want)
		}
	}
	if got := Count(uint32(5), "shape"); got != "5 shapes" {
		t.Errorf("Count(uint32) = %q", got)
	}
}

func TestList(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want string
	}{{nil, ""}, {[]string{"a"}, "a"}, {[]string{"a", "b"}, "a and b"}, {[]string{"a", "b", "c"}, "a, b and c"}} {
		if got := List(c.in); got != c.want {
			t.Errorf("List(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
