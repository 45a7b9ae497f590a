// Package suggest finds the known name that a mistyped one was probably meant to be, for
// the "did you mean …?" part of an error about an unknown setting, key or flag value. It
// knows nothing of what the names are; the engines and the study parser use it.
package suggest

import (
	"slices"
	"strings"
)

// Closest returns the candidate nearest to word, ignoring case, if it is at most maxEdits
// edits away, else "". Ties go to the first candidate in sorted order, so the hint is the
// same on every run.
func Closest(word string, candidates []string, maxEdits int) string {
	sorted := slices.Clone(candidates)
	slices.Sort(sorted)
	w := strings.ToLower(word)
	best, bestD := "", maxEdits+1
	for _, c := range sorted {
		if d := Distance(w, strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// Distance is the Levenshtein distance between a and b, counted in bytes (the names it is
// used for are ASCII). Strings longer than 64 bytes are far from everything (99): no
// setting name is that long, and it bounds the work a fuzzed input can cause.
func Distance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 99
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
