package latency

import (
	"sync"
)

// Buffer sizes. Reads go into a maxChunk buffer taken from the pool only once the socket
// is readable, so idle connections hold no buffers. A chunk that is to wait in a delay line
// and is small is copied into the smallest class that fits, so a queue of small messages
// costs 2 KiB each, not 256 KiB.
//
// maxChunk = 256 KiB: bulk through the link is bounded by syscalls per byte; 256 KiB reads
// moved 1.28-1.35 GB/s through a pass-through link here against 1.09-1.18 GB/s with 64 KiB
// (BenchmarkBulk), and a loopback socket rarely has more than that queued per wake-up.
// Through a delay, throughput is bound by QueueLimit/delay instead. The classes 2 KiB and 16 KiB cover a typical
// OLTP request/reply (a few hundred bytes) and a medium result set; each step is 8x, so a
// copy wastes at most 8x its payload and at most 7/8 of a copy of 16 KiB is paid.
const (
	maxChunk   = 256 << 10
	smallClass = 2 << 10
	midClass   = 16 << 10
)

var pools = [3]sync.Pool{
	{New: func() any { b := make([]byte, smallClass); return &b }},
	{New: func() any { b := make([]byte, midClass); return &b }},
	{New: func() any { b := make([]byte, maxChunk); return &b }},
}

// getBuf returns a pooled buffer of exactly one class size >= n (n <= maxChunk).
func getBuf(n int) *[]byte {
	switch {
	case n <= smallClass:
		return pools[0].Get().(*[]byte)
	case n <= midClass:
		return pools[1].Get().(*[]byte)
	default:
		return pools[2].Get().(*[]byte)
	}
}

// putBuf returns a buffer obtained from getBuf.
func putBuf(b *[]byte) {
	switch cap(*b) {
	case smallClass:
		pools[0].Put(b)
	case midClass:
		pools[1].Put(b)
	case maxChunk:
		pools[2].Put(b)
	}
}

// shrink moves the first n bytes of a maxChunk buffer into the smallest class that holds
// them, returning the buffer to keep (the original one when no smaller class fits).
func shrink(b *[]byte, n int) *[]byte {
	if n > midClass {
		return b
	}
	s := getBuf(n)
	copy(*s, (*b)[:n])
	putBuf(b)
	return s
}
