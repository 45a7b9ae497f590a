package managed

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Contain places a running server's processes in a cgroup v2 of their own, named after
// the instance under a "dblat" cgroup beside dblat's own, and records its directory in
// inst.Cgroup. The cgroup limits nothing: it lets the kernel account the server apart
// from everything else on the machine, its CPU time (cpu.stat) and the time its tasks
// waited for CPU, IO and memory (the pressure files), which package signals reads beside
// every run. The main process moves first, so that what it forks from then on starts
// inside; the processes it had already forked follow.
//
// It needs the right to create a cgroup there (root, or a delegated subtree) and a kernel
// with cgroup v2 mounted (alone or beside v1, as "unified"); without them it returns an
// error saying why, and inst.Cgroup stays empty: the server runs as before, and its CPU is
// read from its process tree instead.
func Contain(inst *Instance) error {
	inst.Cgroup = ""
	if inst.PID <= 0 {
		return errors.New("the server is not running")
	}
	root, err := cgroup2Mount()
	if err != nil {
		return err
	}
	self, err := ownCgroup()
	if err != nil {
		return err
	}
	dir := filepath.Join(root, self, "dblat", inst.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create cgroup %s: %w", dir, err)
	}
	procs := filepath.Join(dir, "cgroup.procs")
	move := func(pid int) error {
		err := os.WriteFile(procs, []byte(strconv.Itoa(pid)), 0o644)
		if err != nil && Alive(pid) {
			return fmt.Errorf("move process %d into cgroup %s: %w", pid, dir, err)
		}
		return nil // a process that exited meanwhile has nothing to move
	}
	if err := move(inst.PID); err != nil {
		return err
	}
	for _, pid := range descendants(inst.PID) {
		if err := move(pid); err != nil {
			return err
		}
	}
	inst.Cgroup = dir
	return nil
}

// Release removes inst's cgroup once its processes are gone (a cgroup with processes
// cannot be removed, and is left as it is), and forgets it.
func Release(inst *Instance) {
	if inst.Cgroup != "" {
		_ = os.Remove(inst.Cgroup)
	}
	inst.Cgroup = ""
}

// cgroup2Mount is where the cgroup v2 hierarchy is mounted (/sys/fs/cgroup, or
// /sys/fs/cgroup/unified beside v1's controllers).
func cgroup2Mount() (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", fmt.Errorf("no cgroup v2: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "36 25 0:31 / /sys/fs/cgroup/unified rw,... shared:10 - cgroup2 cgroup2 rw"
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok || !strings.HasPrefix(post, "cgroup2 ") {
			continue
		}
		if f := strings.Fields(pre); len(f) >= 5 {
			return f[4], nil
		}
	}
	return "", errors.New("no cgroup v2 hierarchy is mounted")
}

// ownCgroup is dblat's own cgroup v2 path ("0::/path" in /proc/self/cgroup).
func ownCgroup() (string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			return p, nil
		}
	}
	return "", errors.New("this process is in no cgroup v2")
}

// descendants lists pid's descendants, children before theirs
// (/proc/PID/task/PID/children of each).
func descendants(pid int) []int {
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", p, p))
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil {
				out = append(out, c)
				queue = append(queue, c)
			}
		}
	}
	return out
}
