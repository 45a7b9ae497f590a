package analysis

import (
	"github.com/dblat/dblat/internal/words"
	"strings"
	"testing"
)

// TestWriteFindingsCountsInWords: a count of one takes the singular ("1 errors, 1 warnings,
// 1 notes" was printed), every other count the plural.
func TestWriteFindingsCountsInWords(t *testing.T) {
	for _, c := range []struct {
		fs   []Finding
		want string
	}{
		{[]Finding{{Severity: Error}, {Severity: Warning}, {Severity: Info}}, "Credibility: 1 error, 1 warning, 1 note\n"},
		{[]Finding{{Severity: Error}, {Severity: Error}, {Severity: Info}}, "Credibility: 2 errors, 0 warnings, 1 note\n"},
		{nil, "Credibility: 0 errors, 0 warnings, 0 notes\n"},
	} {
		var b strings.Builder
		if err := WriteFindings(&b, c.fs); err != nil {
			t.Fatal(err)
		}
		if got := b.String(); !strings.HasPrefix(got, c.want) {
			t.Errorf("got %q, want it to start with %q", got, c.want)
		}
	}
	for n, want := range map[int]string{1: "1 retry", 2: "2 retries", 0: "0 retries"} {
		if got := words.Count(n, "retry"); got != want {
			t.Errorf("words.Count(%d, retry) = %q, want %q", n, got, want)
		}
	}
	if got := words.Count(3, "key"); got != "3 keys" {
		t.Errorf("words.Count(3, key) = %q", got)
	}
}
