package latency

import (
	"testing"
	"time"
)

func TestPacer(t *testing.T) {
	p := newPacer(1_000_000) // 1 MB/s: 1 µs per byte
	if got := p.reserve(0, 1000); got != int64(time.Millisecond) {
		t.Fatalf("first chunk done at %d", got)
	}
	// A chunk ready while the cable is busy queues behind it.
	if got := p.reserve(int64(500*time.Microsecond), 1000); got != int64(2*time.Millisecond) {
		t.Fatalf("queued chunk done at %d", got)
	}
	if b := p.backlog(int64(time.Millisecond)); b != int64(time.Millisecond) {
		t.Fatalf("backlog %d", b)
	}
	// After an idle gap the cable starts when the chunk is ready.
	if got := p.reserve(int64(10*time.Millisecond), 1); got != int64(10*time.Millisecond+time.Microsecond) {
		t.Fatalf("after gap: %d", got)
	}
	// Sub-nanosecond remainders are carried: 3 bytes/s for 3 one-byte chunks is 1 s exactly.
	q := newPacer(3)
	var end int64
	for range 3 {
		end = q.reserve(0, 1)
	}
	if end != int64(time.Second) {
		t.Fatalf("carried remainder: %d", end)
	}
	if l := newPacer(12_500_000).chunkLimit(); l != 12_500 {
		t.Errorf("100mbit chunk %d", l)
	}
	if l := newPacer(100).chunkLimit(); l != 1500 {
		t.Errorf("slow link chunk %d", l)
	}
	if l := newPacer(1e12).chunkLimit(); l != maxChunk {
		t.Errorf("fast link chunk %d", l)
	}
}
