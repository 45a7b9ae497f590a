//go:build !linux

package latency

import "syscall"

// newReleaser returns nil: without timerfd each delay line times its own chunks.
func newReleaser(clock) (releaser, error) { return nil, nil }

func newReleaseJob(rc syscall.RawConn, h *histogram) *releaseJob {
	return &releaseJob{raw: rc, lateness: h, index: -1, done: make(chan struct{}, 1)}
}
