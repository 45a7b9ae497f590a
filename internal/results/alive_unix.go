//go:build unix

package results

import (
	"errors"
	"syscall"
)

// processAlive reports whether a process with this PID exists on this host. Only a
// definite "no such process" counts as dead: EPERM means it exists under another user,
// and an unknown PID (<= 0) is never declared dead. A reused PID reads as alive.
func processAlive(pid int) bool {
	if pid <= 0 {
		return true
	}
	err := syscall.Kill(pid, 0)
	return !errors.Is(err, syscall.ESRCH)
}
