package latency

import (
	"container/heap"
	"syscall"
)

// A releaser writes the chunks that complete a message (the last one queued in a delay line)
// at their release time, for all connections of a link on one goroutine; see
// preciseReleaser. Delay lines without one (tests on net.Pipe, other systems) wait on their
// own timer instead.
type releaser interface {
	// submit queues j; it returns false when the releaser is closed.
	submit(j *releaseJob) bool
	// cancel withdraws j if it has not been taken yet and reports whether it did; if not,
	// j.done will be signalled once the write is over.
	cancel(j *releaseJob) bool
	// close stops the releaser; queued jobs are never written.
	close()
}

// releaseJob is one chunk handed to a releaser: write buf to raw at release, once, without
// blocking, then signal done. A direction owns one and reuses it.
type releaseJob struct {
	release int64
	raw     syscall.RawConn
	// lateness records how late the write was; nil records nothing.
	lateness *histogram
	// then, when set, is called by the releaser after the write instead of signalling
	// done: an in-process conn continues its queue there.
	then    func()
	buf     []byte
	n       int   // bytes written (0 when the socket buffer was full: the owner writes them)
	err     error // a write error other than EAGAIN
	index   int   // position in the releaser's heap, -1 when not in it
	done    chan struct{}
	writeFn func(fd uintptr) bool // bound once (see newReleaseJob)
}

// jobHeap is a min-heap of jobs by release time (container/heap).
type jobHeap []*releaseJob

func (h jobHeap) Len() int           { return len(h) }
func (h jobHeap) Less(i, k int) bool { return h[i].release < h[k].release }
func (h jobHeap) Swap(i, k int) {
	h[i], h[k] = h[k], h[i]
	h[i].index, h[k].index = i, k
}
func (h *jobHeap) Push(x any) {
	j := x.(*releaseJob)
	j.index = len(*h)
	*h = append(*h, j)
}
func (h *jobHeap) Pop() any {
	old := *h
	j := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	j.index = -1
	return j
}

var _ heap.Interface = (*jobHeap)(nil)
