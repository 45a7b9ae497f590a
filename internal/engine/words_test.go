package engine

import (
	"slices"
	"testing"
)

func TestLeadingWords(t *testing.T) {
	for _, tc := range []struct {
		query string
		n     int
		want  []string
	}{
		{"begin;", 3, []string{"BEGIN"}},
		{"  -- a comment\n /* another */ Commit Work;", 3, []string{"COMMIT", "WORK"}},
		{"ROLLBACK TO SAVEPOINT s1", 2, []string{"ROLLBACK", "TO"}},
		{"COMMIT (x)", 3, []string{"COMMIT", "("}},
		{"(SELECT 1)", 1, []string{"("}},
		{"select s_dist_01, abc$", 3, []string{"SELECT", "S_DIST_01", ","}},
		{"/* unterminated", 2, nil},
		{"", 2, nil},
		{"ÉTAT x", 1, []string{"ÉTAT"}},
	} {
		if got := LeadingWords(tc.query, tc.n); !slices.Equal(got, tc.want) {
			t.Errorf("LeadingWords(%q, %d) = %q, want %q", tc.query, tc.n, got, tc.want)
		}
	}
}
