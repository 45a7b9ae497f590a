package managed

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Contain places a running server's processes in the cgroups of their own that inst asks
// for, named after the instance under a "dblat" cgroup beside dblat's own, and records
// them:
//
//   - a cgroup v2 for accounting (inst.Cgroup): it lets the kernel account the server apart
//     from everything else on the machine, its CPU time (cpu.stat) and the time its tasks
//     waited for CPU, IO and memory (the pressure files), which package signals reads
//     beside every run;
//   - where inst.Memory is set, a memory cgroup whose limit is inst.Memory
//     (inst.MemoryCgroup): the same cgroup v2 with memory.max where the host's v2
//     hierarchy has the memory controller, else one of cgroup v1's memory hierarchy with
//     memory.limit_in_bytes (a host that mounts v1's controllers beside an empty v2). The
//     limit holds what the server's processes take and the page cache they read into, so
//     that a database larger than memory is a few GB on any machine.
//
// The main process moves first, so that what it forks from then on starts inside; the
// processes it had already forked follow.
//
// It needs the right to create a cgroup there (root, or a delegated subtree). Without a
// cgroup v2, inst.Cgroup stays empty and the error says why: the server runs as before,
// and its CPU is read from its process tree instead. Where inst.Memory is set and no
// memory cgroup can hold the server, inst.MemoryCgroup stays empty and the error says
// why: the caller must not run the server without the limit it asked for.
func Contain(inst *Instance) error {
	inst.Cgroup, inst.MemoryCgroup = "", ""
	if inst.PID <= 0 {
		return errors.New("the server is not running")
	}
	var errs []error
	acct, err := makeCgroup2(inst.Name)
	if err != nil {
		errs = append(errs, err)
	}
	mem := ""
	if inst.Memory > 0 {
		if mem, err = memoryCgroup(inst.Name, acct, inst.Memory); err != nil {
			errs = append(errs, err)
		}
	}
	dirs := slices.Compact([]string{acct, mem})
	dirs = slices.DeleteFunc(dirs, func(d string) bool { return d == "" })
	for _, dir := range dirs {
		if err := moveTree(inst.PID, dir); err != nil {
			errs = append(errs, err)
			if dir == mem {
				mem = ""
			}
			if dir == acct {
				acct = ""
			}
		}
	}
	inst.Cgroup, inst.MemoryCgroup = acct, mem
	return errors.Join(errs...)
}

// moveTree moves pid and its descendants into the cgroup dir.
func moveTree(pid int, dir string) error {
	procs := filepath.Join(dir, "cgroup.procs")
	move := func(pid int) error {
		err := os.WriteFile(procs, []byte(strconv.Itoa(pid)), 0o644)
		if err != nil && Alive(pid) {
			return fmt.Errorf("move process %d into cgroup %s: %w", pid, dir, err)
		}
		return nil // a process that exited meanwhile has nothing to move
	}
	if err := move(pid); err != nil {
		return err
	}
	for _, c := range descendants(pid) {
		if err := move(c); err != nil {
			return err
		}
	}
	return nil
}

// Release removes inst's cgroups once its processes are gone (a cgroup with processes
// cannot be removed, and is left as it is), and the "dblat" cgroups above them when no
// other server's is left there, and forgets them.
func Release(inst *Instance) {
	for _, dir := range slices.Compact([]string{inst.Cgroup, inst.MemoryCgroup}) {
		if dir != "" && os.Remove(dir) == nil {
			_ = os.Remove(filepath.Dir(dir)) // fails while another server's is there
		}
	}
	inst.Cgroup, inst.MemoryCgroup = "", ""
}

// makeCgroup2 creates the cgroup v2 of the instance called name.
func makeCgroup2(name string) (string, error) {
	root, err := cgroup2Mount()
	if err != nil {
		return "", err
	}
	self, err := ownCgroup("")
	if err != nil {
		return "", err
	}
	return mkCgroup(filepath.Join(root, self, "dblat", name))
}

// mkCgroup creates the cgroup directory dir and returns it. Another dblat's Release may
// remove the empty "dblat" cgroup above it at the same moment: it is made again.
func mkCgroup(dir string) (string, error) {
	var err error
	for range 3 {
		if err = os.MkdirAll(dir, 0o755); err == nil {
			return dir, nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return "", fmt.Errorf("create cgroup %s: %w", dir, err)
}

// memoryCgroup returns the cgroup that holds the instance called name under a memory
// limit of limit bytes: v2, the accounting cgroup acct itself, where the memory controller
// is delegated to its parent; else one of the v1 memory hierarchy.
func memoryCgroup(name, acct string, limit int64) (string, error) {
	var why []string
	if acct != "" {
		err := limitCgroup2(acct, limit)
		if err == nil {
			return acct, nil
		}
		why = append(why, err.Error())
	} else {
		why = append(why, "no cgroup v2")
	}
	dir, err := limitCgroup1(name, limit)
	if err == nil {
		return dir, nil
	}
	why = append(why, err.Error())
	return "", fmt.Errorf("no memory cgroup can hold the server (%s): run dblat as root on a host with cgroup v2's memory controller or cgroup v1's memory hierarchy, or leave the memory limit out", strings.Join(why, "; "))
}

// limitCgroup2 sets memory.max of the cgroup v2 dir to limit, enabling the memory
// controller for the children of its parent (the "dblat" cgroup, dblat's own) where the
// parent has it to give.
func limitCgroup2(dir string, limit int64) error {
	parent := filepath.Dir(dir)
	ctrl, err := os.ReadFile(filepath.Join(parent, "cgroup.controllers"))
	if err != nil {
		return fmt.Errorf("cgroup v2: %w", err)
	}
	if !slices.Contains(strings.Fields(string(ctrl)), "memory") {
		return fmt.Errorf("cgroup v2 at %s has no memory controller", parent)
	}
	sub := filepath.Join(parent, "cgroup.subtree_control")
	if b, err := os.ReadFile(sub); err != nil || !slices.Contains(strings.Fields(string(b)), "memory") {
		if err := os.WriteFile(sub, []byte("+memory"), 0o644); err != nil {
			return fmt.Errorf("cgroup v2: enable the memory controller in %s: %w", parent, err)
		}
	}
	return writeLimit(filepath.Join(dir, "memory.max"), limit)
}

// limitCgroup1 creates the instance's cgroup in cgroup v1's memory hierarchy, beside
// dblat's own there, with memory.limit_in_bytes at limit.
func limitCgroup1(name string, limit int64) (string, error) {
	root, err := cgroup1Mount("memory")
	if err != nil {
		return "", err
	}
	self, err := ownCgroup("memory")
	if err != nil {
		return "", err
	}
	dir, err := mkCgroup(filepath.Join(root, self, "dblat", name))
	if err != nil {
		return "", err
	}
	if err := writeLimit(filepath.Join(dir, "memory.limit_in_bytes"), limit); err != nil {
		return "", err
	}
	return dir, nil
}

func writeLimit(path string, limit int64) error {
	if err := os.WriteFile(path, []byte(strconv.FormatInt(limit, 10)), 0o644); err != nil {
		return fmt.Errorf("set %s to %d: %w", path, limit, err)
	}
	return nil
}

// MemoryLimit reads back the memory limit of inst's memory cgroup (inst.MemoryCgroup), in
// bytes, as the kernel holds it (rounded down to whole pages): what a run records. It is
// 0 without a memory cgroup, and for a cgroup without a limit.
func MemoryLimit(inst *Instance) (int64, error) {
	if inst.MemoryCgroup == "" {
		return 0, nil
	}
	for _, f := range []string{"memory.max", "memory.limit_in_bytes"} {
		b, err := os.ReadFile(filepath.Join(inst.MemoryCgroup, f))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0, err
		}
		s := strings.TrimSpace(string(b))
		if s == "max" {
			return 0, nil
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", f, err)
		}
		if n >= 1<<62 { // v1's "no limit" is the largest page multiple
			return 0, nil
		}
		return n, nil
	}
	return 0, fmt.Errorf("cgroup %s has no memory limit file", inst.MemoryCgroup)
}

// cgroup2Mount is where the cgroup v2 hierarchy is mounted (/sys/fs/cgroup, or
// /sys/fs/cgroup/unified beside v1's controllers).
func cgroup2Mount() (string, error) {
	dir, err := findMount(func(fstype, opts string) bool { return fstype == "cgroup2" })
	if err != nil {
		return "", fmt.Errorf("no cgroup v2: %w", err)
	}
	if dir == "" {
		return "", errors.New("no cgroup v2 hierarchy is mounted")
	}
	return dir, nil
}

// cgroup1Mount is where cgroup v1's hierarchy of controller is mounted
// (/sys/fs/cgroup/memory).
func cgroup1Mount(controller string) (string, error) {
	dir, err := findMount(func(fstype, opts string) bool {
		return fstype == "cgroup" && slices.Contains(strings.Split(opts, ","), controller)
	})
	if err != nil {
		return "", fmt.Errorf("no cgroup v1 %s hierarchy: %w", controller, err)
	}
	if dir == "" {
		return "", fmt.Errorf("no cgroup v1 %s hierarchy is mounted", controller)
	}
	return dir, nil
}

// findMount returns the mount point of the first mount of /proc/self/mountinfo that match
// accepts by file system type and super options, "" when none does.
func findMount(match func(fstype, opts string) bool) (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "36 25 0:31 / /sys/fs/cgroup/unified rw,... shared:10 - cgroup2 cgroup2 rw"
		// "30 25 0:26 / /sys/fs/cgroup/memory rw,... - cgroup cgroup rw,memory"
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		pf, qf := strings.Fields(pre), strings.Fields(post)
		if len(pf) >= 5 && len(qf) >= 3 && match(qf[0], qf[2]) {
			return pf[4], nil
		}
	}
	return "", sc.Err()
}

// ownCgroup is dblat's own cgroup path in the v2 hierarchy (controller "": "0::/path" in
// /proc/self/cgroup) or in v1's hierarchy of controller ("4:memory:/path").
func ownCgroup(controller string) (string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		if controller == "" && f[0] == "0" && f[1] == "" || controller != "" && slices.Contains(strings.Split(f[1], ","), controller) {
			return f[2], nil
		}
	}
	if controller == "" {
		return "", errors.New("this process is in no cgroup v2")
	}
	return "", fmt.Errorf("this process is in no cgroup of v1's %s hierarchy", controller)
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
