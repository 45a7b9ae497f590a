package wiretest

import (
	"bytes"
	"testing"

	"github.com/dblat/dblat/internal/wire"
)

func TestCaptureRoundTrip(t *testing.T) {
	c := Capture{
		{Dir: wire.Client, At: 5, Data: []byte("hello")},
		{Dir: wire.Server, At: 1005, Data: []byte{}},
		{Dir: wire.Server, At: 2000, Data: bytes.Repeat([]byte{0xab}, 300)},
		{Dir: wire.Client, At: 2000, Data: []byte("x")},
	}
	got, err := Unmarshal(c.Marshal())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(c) {
		t.Fatalf("%d chunks, want %d", len(got), len(c))
	}
	for i := range c {
		if got[i].Dir != c[i].Dir || got[i].At != c[i].At || !bytes.Equal(got[i].Data, c[i].Data) {
			t.Errorf("chunk %d: %+v, want %+v", i, got[i], c[i])
		}
	}
	if got.RoundTrips() != 1 {
		t.Errorf("round trips %d, want 1", got.RoundTrips())
	}
	if _, err := Unmarshal([]byte("not a capture")); err == nil {
		t.Error("no error for a file without the magic line")
	}
	b := c.Marshal()
	part, err := Unmarshal(b[:len(b)-3])
	if err == nil || len(part) != 3 {
		t.Errorf("truncated: %d chunks, %v; want the 3 whole ones and an error", len(part), err)
	}
	r := Rechunk(c, 2)
	if len(r) != 3+150+1 { // "hello" in 3, the server's 300 bytes in 150, "x"
		t.Errorf("rechunked into %d pieces", len(r))
	}
}
