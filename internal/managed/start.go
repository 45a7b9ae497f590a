package managed

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// The opening every engine's Launcher.Start shares: the account the server runs as, its
// port, its directory made absolute (Prepare); its process started as that account in a
// session of its own with its output appended to the instance's log (Spawn); the wait
// until it answers, or the reason it does not (Process.AwaitReady). What a server needs
// before and after — its files and configuration, its accounts and first database, the
// check of what it runs with, how it is stopped — stays in the engine's Launcher. Placing
// a started server in a cgroup (Contain) and saving its record (Registry.Save) are the
// caller's, once the Launcher's Start has returned.

// LogFile is the name of a managed server's log in its directory, which its process's
// standard output and error are appended to.
const LogFile = "server.log"

// LogPath returns the path of inst's log (LogFile).
func (inst *Instance) LogPath() string { return filepath.Join(inst.Dir, LogFile) }

// Prepare readies inst for a start: it picks the account the server will run as
// (Unprivileged(runAs): nil when dblat does not run as root), claims inst's port
// (ClaimPort) and makes inst.Dir absolute. It starts nothing.
func Prepare(inst *Instance, runAs string) (*Account, error) {
	acct, err := Unprivileged(runAs)
	if err != nil {
		return nil, err
	}
	if err := inst.ClaimPort(); err != nil {
		return nil, err
	}
	if inst.Dir, err = filepath.Abs(inst.Dir); err != nil {
		return nil, err
	}
	return acct, nil
}

// Process is a server process Spawn started, until it answers.
type Process struct {
	inst     *Instance
	name     string
	exited   chan error
	logStart int64
	logError func(path string, offset int64) string
}

// Spawn starts cmd, the engine's server command built to run as acct (its
// SysProcAttr.Credential), with its standard output and error appended to inst's log
// (created if need be and given to acct, which may write to it by name too), in a session
// of its own: a Ctrl-C in dblat's terminal must not reach the server, which dblat stops
// itself, by PID. It records the process in inst.PID and the account in inst.RunAs.
// logError picks, from what the server logged from an offset of its log on, the line that
// says why it exited, for AwaitReady's error.
func Spawn(inst *Instance, acct *Account, cmd *exec.Cmd, logError func(path string, offset int64) string) (*Process, error) {
	name := filepath.Base(cmd.Path)
	logPath := inst.LogPath()
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer logf.Close() // the server has its own copy once started
	if acct != nil {
		if err := os.Lchown(logPath, int(acct.UID), int(acct.GID)); err != nil {
			return nil, err
		}
	}
	logStart, err := logf.Seek(0, 2)
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setsid = true
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	inst.PID = cmd.Process.Pid
	inst.RunAs = ""
	if acct != nil {
		inst.RunAs = acct.Name
	}
	p := &Process{inst: inst, name: name, exited: make(chan error, 1), logStart: logStart, logError: logError}
	go func() { p.exited <- cmd.Wait() }()
	return p, nil
}

// readyPoll is how often AwaitReady probes a server coming up: short against the second
// or so a small server takes, long enough not to matter as load.
const readyPoll = 50 * time.Millisecond

// StopWaiting marks an error of AwaitReady's probe that waiting cannot cure (the server
// refuses dblat's password): AwaitReady returns err at once.
func StopWaiting(err error) error { return stopWaiting{err} }

type stopWaiting struct{ error }

func (e stopWaiting) Unwrap() error { return e.error }

// AwaitReady calls ready every 50 ms until it returns nil, and returns nil then. Otherwise
// it returns why not: ready's error marked StopWaiting, the process's exit (with the line
// of its log that says why; inst.PID is then 0), ctx's end, or timeout (with ready's last
// error). Except after an exit the server is still running: the caller stops it, its own
// way. Call it once.
func (p *Process) AwaitReady(ctx context.Context, timeout time.Duration, ready func(context.Context) error) error {
	deadline := time.Now().Add(timeout)
	logPath := p.inst.LogPath()
	for {
		err := ready(ctx)
		if err == nil {
			return nil
		}
		if sw := (stopWaiting{}); errors.As(err, &sw) {
			return sw.error
		}
		select {
		case werr := <-p.exited:
			p.inst.PID = 0
			return fmt.Errorf("%s exited at start (%v): %s (log: %s)", p.name, werr, p.logError(logPath, p.logStart), logPath)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(readyPoll):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not accept connections within %v (last error: %v; log: %s)", p.name, timeout, err, logPath)
		}
	}
}
