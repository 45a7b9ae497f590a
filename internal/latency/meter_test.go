package latency

import (
	"io"
	"net"
	"testing"
)

func TestMeterTurns(t *testing.T) {
	var m Meter
	m.Down(10) // server speaks first (a greeting): not a round trip
	m.Up(5)
	m.Up(7) // a request in two chunks
	m.Down(100)
	m.Down(50) // a reply in two chunks: still one round trip
	m.Up(0)    // ignored
	m.Down(0)
	m.Up(3)
	m.Down(4)
	want := Counts{RoundTrips: 2, BytesUp: 15, BytesDown: 164, ChunksUp: 3, ChunksDown: 4}
	if got := m.Snapshot(); got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	before := want
	m.Up(1)
	m.Down(1)
	if d := m.Snapshot().Sub(before); d != (Counts{1, 1, 1, 1, 1}) {
		t.Errorf("Sub: %+v", d)
	}
	if s := before.Add(Counts{1, 1, 1, 1, 1}); s != m.Snapshot() {
		t.Errorf("Add: %+v", s)
	}
}

func TestMeteredConn(t *testing.T) {
	a, b := net.Pipe()
	mc := MeterConn(a)
	go func() {
		buf := make([]byte, 16)
		for {
			n, err := b.Read(buf)
			if err != nil {
				return
			}
			_, _ = b.Write(buf[:n])
			_, _ = b.Write(buf[:n]) // every request gets a reply in two writes
		}
	}()
	buf := make([]byte, 8)
	for range 3 {
		if _, err := mc.Write([]byte("ping")); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(mc, buf); err != nil {
			t.Fatal(err)
		}
	}
	mc.Close()
	b.Close()
	want := Counts{RoundTrips: 3, BytesUp: 12, BytesDown: 24, ChunksUp: 3, ChunksDown: 6}
	if got := mc.Counts(); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if mc.Unwrap() != a {
		t.Error("Unwrap")
	}
}
