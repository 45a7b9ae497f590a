package engine

import "strings"

// LeadingWords returns up to n of a statement's first words in upper case, for telling
// what kind of statement it is (BEGIN, COMMIT, SELECT …). Blanks, semicolons and comments
// (-- to the end of the line, /* … */) between them are skipped. A word is a run of
// letters, digits, underscores and non-ASCII bytes. Anything else (a parenthesis, a quote,
// an operator) ends the scan and is returned as a last word of its own, so that a caller
// can tell "COMMIT" from "COMMIT (".
func LeadingWords(query string, n int) []string {
	var out []string
	for i := 0; i < len(query) && len(out) < n; {
		c := query[i]
		switch {
		case c == '-' && i+1 < len(query) && query[i+1] == '-':
			for i < len(query) && query[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(query) && query[i+1] == '*':
			end := strings.Index(query[i+2:], "*/")
			if end < 0 {
				return out
			}
			i += end + 4
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == ';':
			i++
		case isWordByte(c):
			j := i
			for j < len(query) && isWordByte(query[j]) {
				j++
			}
			out = append(out, strings.ToUpper(query[i:j]))
			i = j
		default:
			return append(out, string(c))
		}
	}
	return out
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c >= 0x80
}
