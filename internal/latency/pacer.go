package latency

import (
	"sync"
	"time"
)

// pacer serialises one direction of a link at a fixed bandwidth, shared by all connections
// like one cable: a chunk of n bytes that is ready at t starts when the chunks reserved before
// it are through, and occupies the cable for n/bandwidth. This is a token bucket with no
// burst allowance (depth 0), the model of netem's rate and grpc-go's latency package.
// Safe for concurrent use.
type pacer struct {
	mu        sync.Mutex
	bw        int64 // bytes per second
	busyUntil int64 // clock time at which the cable is free
	rem       int64 // sub-ns remainder of the last reservation, in units of 1/bw ns
	total     int64 // bytes reserved so far
}

// maxBacklog is how far ahead of now a connection may reserve the cable before its reader
// waits: a 5 ms shallow switch buffer. It keeps a bulk transfer from adding more than 5 ms of
// queueing to the other connections sharing the link, and is long enough that the cable never
// idles because a waiting reader woke late (a coarse wait is late by up to ~1 ms).
const maxBacklog = int64(5 * time.Millisecond)

func newPacer(bw int64) *pacer { return &pacer{bw: bw} }

// chunkLimit is the largest chunk the link reads for this bandwidth: about 1 ms of
// serialisation (at least 1500 bytes, one Ethernet MTU), so a chunk is released at most
// ~1 ms after its first byte would have arrived on a real link.
func (p *pacer) chunkLimit() int {
	return int(min(max(p.bw/1000, 1500), maxChunk))
}

// reserve books n bytes ready at t and returns when their last byte has been serialised.
func (p *pacer) reserve(t int64, n int) int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	start := max(t, p.busyUntil)
	if start > p.busyUntil {
		p.rem = 0
	}
	// n·1e9/bw ns, carrying the remainder so that long transfers are exact.
	num := int64(n)*int64(time.Second) + p.rem
	p.busyUntil = start + num/p.bw
	p.rem = num % p.bw
	p.total += int64(n)
	return p.busyUntil
}

// sent returns how many bytes the cable has serialised by t: those reserved, less what is
// still queued on it (it drains at bw).
func (p *pacer) sent(t int64) int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	queued := max(p.busyUntil-t, 0) * p.bw / int64(time.Second)
	return max(p.total-queued, 0)
}

// backlog returns how long the cable is booked beyond t.
func (p *pacer) backlog(t int64) int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.busyUntil - t
}
