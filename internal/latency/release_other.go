//go:build !linux

package latency

import "syscall"

// newReleaser returns nil: without timerfd each delay line times its own chunks.
func newReleaser(clock, *histogram) (releaser, error) { return nil, nil }

func newReleaseJob(rc syscall.RawConn) *releaseJob {
	return &releaseJob{raw: rc, index: -1, done: make(chan struct{}, 1)}
}
