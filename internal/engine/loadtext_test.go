package engine

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestLoadTextNeedsEscapeMatchesNaive(t *testing.T) {
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
		if got, want := LoadTextNeedsEscape(string(b)), naive(string(b)); got != want {
			t.Fatalf("LoadTextNeedsEscape(%q) = %v, want %v", b, got, want)
		}
	}
}
