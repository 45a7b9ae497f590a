package managed

import (
	"bufio"
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
