package postgres

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

func TestNeedsCopyEscapeMatchesNaive(t *testing.T) {
	naive := func(s string) bool { return strings.ContainsAny(s, "\\\t\n\r") }
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("ab\\\t\n\r\x00\x0d\x0e\x5b\x5c\x5d\xff\x80 ")
	for range 20000 {
		b := make([]byte, r.IntN(40))
		for i := range b {
			if r.IntN(8) == 0 {
				b[i] = alphabet[r.IntN(len(alphabet))]
			} else {
				b[i] = byte('A' + r.IntN(26))
			}
		}
		if got, want := needsCopyEscape(string(b)), naive(string(b)); got != want {
			t.Fatalf("needsCopyEscape(%q) = %v, want %v", b, got, want)
		}
	}
}

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
