// Package words is the one home of dblat's text: counts in English ("1 run", "3 runs",
// "2 studies"), byte counts ("12.3 MB"), the plain-text Writer that keeps its first error,
// and the aligned tables that reports, analyses, observations and commands print
// (Writer.Table, Columns, NumberColumns). It is a leaf: it imports nothing of dblat, and
// every package that prints or renders text uses it.
package words

import (
	"strconv"
	"strings"
)

// Integer is the integer types a count may have.
type Integer interface {
	~int | ~int32 | ~int64 | ~uint | ~uint32 | ~uint64
}

// Count writes n with its noun, given in the singular: "1 warning", "2 warnings", "0
// runs"; a noun that ends in a consonant and y takes ies ("2 studies"). Nouns whose plural
// is otherwise irregular are written out by the caller.
func Count[N Integer](n N, noun string) string {
	s := strconv.FormatInt(int64(n), 10)
	if n == 1 {
		return s + " " + noun
	}
	return s + " " + Plural(noun)
}

// Plural returns the plural of a regular English noun: an s added, or ies for a
// consonant's y.
func Plural(noun string) string {
	if strings.HasSuffix(noun, "y") && len(noun) > 1 && !strings.ContainsRune("aeiou", rune(noun[len(noun)-2])) {
		return noun[:len(noun)-1] + "ies"
	}
	return noun + "s"
}

// List joins items as English does: "a", "a and b", "a, b and c"; "" for none.
func List(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}
