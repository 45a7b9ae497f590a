package postgres

import (
	"strings"
	"testing"
	"time"
)

func BenchmarkCopyEncodeRow(b *testing.B) {
	ts := time.Now()
	s1, s2 := strings.Repeat("abcdefghij", 3), strings.Repeat("XYZ", 100)
	id := int64(123456)
	row := []any{&id, &s1, &s2, &ts, int64(5), "0.01"}
	var e copyEncoder
	buf := make([]byte, 0, 4096)
	b.SetBytes(int64(len(s1) + len(s2) + 40))
	for b.Loop() {
		buf, _ = e.appendRow(buf[:0], row)
	}
}
