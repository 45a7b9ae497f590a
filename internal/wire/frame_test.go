package wire

import (
	"bytes"
	"fmt"
	"testing"
)

// lenFraming: a 2-byte big-endian length header, keeping at most keepMax body bytes.
type lenFraming struct {
	keepMax int
	got     []string
}

func (f *lenFraming) HeaderLen() int { return 2 }
func (f *lenFraming) Body(h []byte) (int, int, error) {
	n := int(h[0])<<8 | int(h[1])
	if n == 0xffff {
		return 0, 0, fmt.Errorf("bad length")
	}
	return n, f.keepMax, nil
}
func (f *lenFraming) Message(h, b []byte) error {
	f.got = append(f.got, fmt.Sprintf("%d:%s", int(h[0])<<8|int(h[1]), b))
	return nil
}

func TestFramer(t *testing.T) {
	var stream []byte
	var want []string
	for _, body := range []string{"hello", "", "x", "a longer message body"} {
		stream = append(stream, byte(len(body)>>8), byte(len(body)))
		stream = append(stream, body...)
		want = append(want, fmt.Sprintf("%d:%s", len(body), body[:min(len(body), 4)]))
	}
	for size := 1; size <= len(stream); size++ {
		var f Framer
		fr := &lenFraming{keepMax: 4}
		for i := 0; i < len(stream); i += size {
			if err := f.Feed(stream[i:min(i+size, len(stream))], fr); err != nil {
				t.Fatal(err)
			}
		}
		if fmt.Sprint(fr.got) != fmt.Sprint(want) || f.Partial() {
			t.Fatalf("chunks of %d: got %q, partial %v; want %q", size, fr.got, f.Partial(), want)
		}
	}
	var f Framer
	fr := &lenFraming{keepMax: 100}
	if err := f.Feed([]byte{0, 5, 'a', 'b'}, fr); err != nil || !f.Partial() {
		t.Fatalf("partial: %v %v", err, f.Partial())
	}
	if err := f.Feed(bytes.Repeat([]byte{0xff}, 8), fr); err == nil {
		// 'c','d','e' complete the message; then 0xffff is a bad length.
		t.Fatalf("no error for a bad length; got %q", fr.got)
	}
}
