package firebird

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/dblat/dblat/internal/managed"
)

// procStat is what /proc/PID/stat says about a process.
type procStat struct {
	state      byte
	ppid, pgrp int
}

// readStat parses /proc/PID/stat. The command name (field 2) is in parentheses and may
// hold spaces, so the fields are counted from its closing parenthesis.
func readStat(pid int) (procStat, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	f := strings.Fields(s[i+1:]) // state ppid pgrp session ...
	if len(f) < 3 {
		return procStat{}, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	ppid, _ := strconv.Atoi(f[1])
	pgrp, _ := strconv.Atoi(f[2])
	return procStat{state: f[0][0], ppid: ppid, pgrp: pgrp}, nil
}

// gone reports whether pid has exited: no such process, or a zombie waiting for its parent
// (init, for the Classic children whose listener has gone) to reap it.
func gone(pid int) bool {
	if !managed.Alive(pid) {
		return true
	}
	st, err := readStat(pid)
	return err != nil || st.state == 'Z' || st.state == 'X'
}

// isServer reports whether pid runs the Firebird server binary server, so that a PID left
// in instance.json and since reused by another program is never signalled.
func isServer(pid int, server string) bool {
	if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err == nil {
		return exe == server || filepath.Base(strings.TrimSuffix(exe, " (deleted)")) == filepath.Base(server)
	}
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	return err == nil && strings.TrimSpace(string(comm)) == filepath.Base(server)
}

// serverChildren returns the server processes that belong to the server whose main process
// is pid: in Classic the listener forks one process per connection. They are found by
// parent PID or, once the listener has exited and they were re-parented to init, by process
// group: the server calls setpgrp() at start, and its children keep its group. A process
// group ID cannot be reused while any member lives, so the group test is safe after the
// listener has gone. Only processes running the server binary count.
func serverChildren(pid int, server string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil || p == pid {
			continue
		}
		st, err := readStat(p)
		if err != nil || (st.ppid != pid && st.pgrp != pid) || st.state == 'Z' {
			continue
		}
		if isServer(p, server) {
			out = append(out, p)
		}
	}
	return out
}

// errKilled is wrapped by stopAll's error when processes had to be killed and are gone.
var errKilled = errors.New("killed")

// stopAll sends SIGTERM to every pid, waits up to grace for all of them, then SIGKILLs the
// survivors and waits again. It signals processes one by one, never a group.
func stopAll(pids []int, grace time.Duration) error {
	for _, p := range pids {
		_ = syscall.Kill(p, syscall.SIGTERM)
	}
	if waitAll(pids, grace) {
		return nil
	}
	var killed []string
	for _, p := range pids {
		if !gone(p) {
			_ = syscall.Kill(p, syscall.SIGKILL)
			killed = append(killed, strconv.Itoa(p))
		}
	}
	if waitAll(pids, 10*time.Second) {
		return fmt.Errorf("server processes %s ignored SIGTERM for %v: %w", strings.Join(killed, ", "), grace, errKilled)
	}
	return fmt.Errorf("server processes %s survive SIGKILL", strings.Join(killed, ", "))
}

func waitAll(pids []int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		all := true
		for _, p := range pids {
			if !gone(p) {
				all = false
				break
			}
		}
		if all {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// listenAddrs returns the local addresses of the TCP sockets in LISTEN state on port, read
// from /proc/net/tcp and /proc/net/tcp6 (the addresses there are hex, in host byte order
// per 32-bit word; x86 and arm64 are little-endian).
func listenAddrs(port int) ([]net.IP, error) {
	var out []net.IP
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		fh, err := os.Open(f)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			// sl local_address rem_address st ...; st 0A is TCP_LISTEN.
			if len(fields) < 4 || fields[3] != "0A" {
				continue
			}
			host, portHex, ok := strings.Cut(fields[1], ":")
			if !ok {
				continue
			}
			if p, err := strconv.ParseUint(portHex, 16, 16); err != nil || int(p) != port {
				continue
			}
			raw, err := hex.DecodeString(host)
			if err != nil || len(raw)%4 != 0 {
				continue
			}
			for i := 0; i < len(raw); i += 4 { // each 32-bit word is little-endian
				raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
			}
			out = append(out, net.IP(raw))
		}
		fh.Close()
		if err := sc.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}
