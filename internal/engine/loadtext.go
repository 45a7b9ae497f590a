package engine

// LoadTextNeedsEscape reports whether s holds a byte that AppendLoadText escapes
// (backslash, tab, newline, carriage return). It tests eight bytes at a time: a byte below
// 0x0E (which covers the three control characters, and a few others harmlessly) or equal
// to '\\'; the byte-wise loop handles the tail.
func LoadTextNeedsEscape(s string) bool {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
		bsl   = 0x5C5C5C5C5C5C5C5C
	)
	i := 0
	for ; i+8 <= len(s); i += 8 {
		x := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		y := x ^ bsl
		// (x - 0x0E..) & ^x & highs is non-zero iff some byte of x is below 0x0E; likewise
		// for y and zero bytes (bytes equal to '\\').
		if ((x-0x0E*ones)&^x|(y-ones)&^y)&highs != 0 {
			for _, c := range []byte(s[i : i+8]) {
				if c == '\\' || c == '\t' || c == '\n' || c == '\r' {
					return true
				}
			}
		}
	}
	for ; i < len(s); i++ {
		switch s[i] {
		case '\\', '\t', '\n', '\r':
			return true
		}
	}
	return false
}

// AppendLoadText appends s as a field of the text format that PostgreSQL's COPY and
// MariaDB's LOAD DATA (with its defaults, ESCAPED BY '\\') both read: tab-separated fields,
// newline-terminated rows, \N for NULL. Backslash, tab, newline and carriage return are
// written as \\, \t, \n and \r; other bytes, including UTF-8 sequences, pass through.
func AppendLoadText(b []byte, s string) []byte {
	if !LoadTextNeedsEscape(s) {
		return append(b, s...)
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			b = append(b, '\\', '\\')
		case '\t':
			b = append(b, '\\', 't')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		default:
			b = append(b, c)
		}
	}
	return b
}
