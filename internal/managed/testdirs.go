package managed

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// TestDirs describes the scratch directories a test helper (pgtest, mariadbtest) starts its
// servers in, under a temporary root, so that the servers of a test binary that died without
// stopping them (a panic, go test's -timeout or a kill skips TestMain's cleanup, and the
// servers run in their own sessions) are stopped by the next test binary.
type TestDirs struct {
	// Prefix starts the name of every directory ("dblat-pgtest-").
	Prefix string
	// PIDFiles is a glob, relative to a directory, of the servers' PID files; each holds the
	// server's PID on its first line ("*/data/postmaster.pid").
	PIDFiles string
	// Marker returns what the command line (/proc/PID/cmdline, NUL-separated) of a server
	// running in dir contains; a PID whose command line does not is never signalled.
	Marker func(dir string) string
	// Signal asks a server to stop before SIGKILL (SIGQUIT is PostgreSQL's immediate
	// shutdown, SIGTERM MariaDB's).
	Signal syscall.Signal
	// Registry, when set, is a managed-server registry's root relative to a directory
	// ("state"): the servers it records are stopped too (a test of the CLI or the execution
	// core starts them as dblat does). Each is signalled only if its command line names
	// its instance directory.
	Registry string
}

// ownerFile holds the PID of the test binary that made a directory.
const ownerFile = "owner"

// Make makes a new directory under root ("" for os.TempDir) that an unprivileged server user
// can reach (t.TempDir is mode 0700), marked with this process's PID.
func (td TestDirs) Make(root string) (string, error) {
	d, err := os.MkdirTemp(root, td.Prefix)
	if err != nil {
		return "", err
	}
	if err := os.Chmod(d, 0o755); err != nil {
		return "", err
	}
	return d, os.WriteFile(filepath.Join(d, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o644)
}

// Sweep stops the servers left in the directories under root whose owner has died, and
// removes those directories. A directory whose owner still runs, or that has no owner file
// yet, is left alone, and so is one whose server could not be stopped.
func (td TestDirs) Sweep(root string) {
	dirs, _ := filepath.Glob(filepath.Join(root, td.Prefix+"*"))
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, ownerFile))
		if err != nil {
			continue
		}
		owner, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || owner == os.Getpid() || Alive(owner) {
			continue
		}
		stopped := true
		if td.Registry != "" {
			list, _ := Registry{Root: filepath.Join(d, td.Registry)}.List()
			for _, inst := range list {
				if inst.PID == 0 {
					continue
				}
				if cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", inst.PID)); err == nil && strings.Contains(string(cmdline), inst.Dir) {
					_ = StopPID(inst.PID, syscall.SIGTERM, 30*time.Second)
					stopped = stopped && !Alive(inst.PID)
				}
			}
		}
		var pidFiles []string
		if td.PIDFiles != "" {
			pidFiles, _ = filepath.Glob(filepath.Join(d, td.PIDFiles))
		}
		for _, pf := range pidFiles {
			b, err := os.ReadFile(pf)
			if err != nil {
				continue
			}
			first, _, _ := strings.Cut(string(b), "\n")
			pid, err := strconv.Atoi(strings.TrimSpace(first))
			if err != nil {
				continue
			}
			cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			if err == nil && strings.Contains(string(cmdline), td.Marker(d)) {
				_ = StopPID(pid, td.Signal, 30*time.Second)
				stopped = stopped && !Alive(pid)
			}
		}
		if stopped {
			_ = os.RemoveAll(d)
		}
	}
}
