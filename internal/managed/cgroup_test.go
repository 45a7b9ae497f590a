package managed

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestContain: a process and the children it had already started move into a cgroup of
// their own, whose CPU accounting and pressure files package signals reads; Release
// removes it once they are gone. Where this process may not create cgroups, Contain says
// why and leaves Cgroup empty.
func TestContain(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sleep 30 & echo ready; wait")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	inst := &Instance{Name: "contain-test-" + strconv.Itoa(os.Getpid()), PID: cmd.Process.Pid}
	if err := Contain(inst); err != nil {
		if inst.Cgroup != "" {
			t.Errorf("Contain failed (%v) but set Cgroup %s", err, inst.Cgroup)
		}
		t.Skipf("no cgroup of its own here: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(inst.Cgroup, "cgroup.procs"))
	if err != nil {
		t.Fatal(err)
	}
	procs := strings.Fields(string(b))
	want := append([]int{cmd.Process.Pid}, descendants(cmd.Process.Pid)...)
	if len(want) < 2 {
		t.Fatalf("the shell has no child: %v", want)
	}
	for _, pid := range want {
		if !slices.Contains(procs, strconv.Itoa(pid)) {
			t.Errorf("process %d not in %s (%v)", pid, inst.Cgroup, procs)
		}
	}
	for _, f := range []string{"cpu.stat", "io.pressure"} {
		if _, err := os.Stat(filepath.Join(inst.Cgroup, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	dir := inst.Cgroup
	for _, pid := range want {
		_ = syscallKill(pid)
	}
	_ = cmd.Wait()
	for _, pid := range want[1:] {
		waitGone(pid, 5e9)
	}
	Release(inst)
	if _, err := os.Stat(dir); !os.IsNotExist(err) || inst.Cgroup != "" {
		t.Errorf("Release left %s (%v), Cgroup %q", dir, err, inst.Cgroup)
	}
}

func syscallKill(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}

// TestContainMemory: a server given a memory limit runs in a memory cgroup whose limit
// reads back as asked, with its processes in it; the page cache of what it writes counts
// against the limit (a file four times the limit is written while the cgroup's usage
// stays within it); what it reads from the disk after DropCache shows in ReadBytes, its
// children's included once they ended; Release removes the cgroup.
func TestContainMemory(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(data, "big")
	cmd := exec.Command("sh", "-c", `echo ready; read x; head -c 256M /dev/zero > "$1"; sync; echo written; read x; cat "$1" > /dev/null; echo read; sleep 30`, "sh", big)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	lines := bufio.NewReader(out)
	expect := func(word string) {
		t.Helper()
		if line, err := lines.ReadString('\n'); err != nil || strings.TrimSpace(line) != word {
			t.Fatalf("the shell said %q (%v), want %q", line, err, word)
		}
	}
	expect("ready")
	const limit = 64 << 20
	inst := &Instance{Name: "memory-test-" + strconv.Itoa(os.Getpid()), Dir: dir, PID: cmd.Process.Pid, Memory: limit}
	if err := Contain(inst); err != nil && inst.MemoryCgroup == "" {
		t.Skipf("no memory cgroup here: %v", err)
	}
	defer Release(inst)
	if got, err := MemoryLimit(inst); err != nil || got != limit {
		t.Errorf("limit read back %d (%v), want %d", got, err, limit)
	}
	b, err := os.ReadFile(filepath.Join(inst.MemoryCgroup, "cgroup.procs"))
	if err != nil || !slices.Contains(strings.Fields(string(b)), strconv.Itoa(cmd.Process.Pid)) {
		t.Fatalf("process %d not in %s: %q (%v)", cmd.Process.Pid, inst.MemoryCgroup, b, err)
	}
	fmt.Fprintln(in)
	expect("written")
	if peak := cgroupPeak(t, inst.MemoryCgroup); peak > limit {
		t.Errorf("the cgroup took %d bytes at most, above its limit of %d", peak, limit)
	}
	if n, err := DropCache(inst); err != nil || n != 256<<20 {
		t.Errorf("DropCache went through %d bytes (%v), want the 256 MiB file", n, err)
	}
	before, err := ReadBytes(inst)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(in)
	expect("read")
	after, err := ReadBytes(inst)
	if err != nil {
		t.Fatal(err)
	}
	// The page cache may keep a part it was handed back meanwhile, never most of it.
	if after-before < 128<<20 {
		t.Errorf("the server read %d bytes from the storage layer; want most of the 256 MiB file", after-before)
	}
	mem := inst.MemoryCgroup
	procs := append(descendants(cmd.Process.Pid), cmd.Process.Pid)
	for _, pid := range procs {
		_ = syscallKill(pid)
	}
	_ = cmd.Wait()
	for _, pid := range procs {
		waitGone(pid, 5e9)
	}
	Release(inst)
	if exists(mem) {
		t.Errorf("Release left %s", mem)
	}
}

// cgroupPeak is the most memory the cgroup dir took (v2 memory.peak, v1
// memory.max_usage_in_bytes).
func cgroupPeak(t *testing.T, dir string) int64 {
	for _, f := range []string{"memory.peak", "memory.max_usage_in_bytes"} {
		if b, err := os.ReadFile(filepath.Join(dir, f)); err == nil {
			n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("%s reports no peak", dir)
	return 0
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
