package words

import (
	"strings"
	"testing"
)

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

func TestBytesAndTables(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 999: "999 B", 1000: "1.0 kB", 12_345_678: "12.3 MB", 2e9: "2.0 GB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
	var b strings.Builder
	w := NewWriter(&b, "test")
	tb := w.Table("  ")
	tb.Row("a", "bb")
	tb.Row("ccc", "d")
	tb.Flush()
	if want := "  a    bb\n  ccc  d\n"; b.String() != want || w.Err() != nil {
		t.Errorf("table %q (%v), want %q", b.String(), w.Err(), want)
	}
	b.Reset()
	c := NumberColumns(&b)
	_, _ = c.Write([]byte("1\t22\t\n333\t4\t\n"))
	_ = c.Flush()
	if want := "    1  22\n  333   4\n"; b.String() != want { // each cell padded by 2, then aligned right
		t.Errorf("number columns %q, want %q", b.String(), want)
	}
}
