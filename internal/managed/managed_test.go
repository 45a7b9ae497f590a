package managed

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestAliveTreatsZombiesAsGone(t *testing.T) {
	// A child that waits for its stdin to close, then exits.
	cmd := exec.Command("cat")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if !Alive(pid) {
		t.Fatal("running child not alive")
	}
	stdin.Close()
	// Wait for it to exit without reaping it (WNOWAIT): a zombie.
	var info unix.Siginfo
	if err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil); err != nil {
		t.Fatal(err)
	}
	if Alive(pid) {
		t.Error("zombie reported alive")
	}
	_ = cmd.Wait()
	if Alive(pid) || Alive(0) || Alive(-1) {
		t.Error("reaped process reported alive")
	}
	if !Alive(os.Getpid()) {
		t.Error("this process not alive")
	}
}

func TestStopPIDEscalatesToKill(t *testing.T) {
	// A shell that ignores SIGTERM must still be stopped. It says when its trap is set.
	cmd := exec.Command("sh", "-c", "trap '' TERM; echo ready; exec sleep 30")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := out.Read(make([]byte, 6)); err != nil {
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait() }()
	err = StopPID(cmd.Process.Pid, syscall.SIGTERM, 300*time.Millisecond)
	if err == nil {
		t.Error("no error for a process that ignored SIGTERM")
	}
	if Alive(cmd.Process.Pid) {
		t.Error("still alive after StopPID")
	}
}

func TestRegistryRoundTrip(t *testing.T) {
	r := Registry{Root: t.TempDir()}
	inst := &Instance{Name: "a", Engine: "postgres", Dir: r.Dir("a"), Port: 5, PID: os.Getpid(), Settings: map[string]string{"x": "1"}}
	if err := os.MkdirAll(inst.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := r.Save(inst); err != nil {
		t.Fatal(err)
	}
	got, err := r.Load("a")
	if err != nil || got.PID != os.Getpid() || got.Settings["x"] != "1" {
		t.Fatalf("%+v %v", got, err)
	}
	if _, err := r.Load("b"); err == nil {
		t.Error("loaded a missing instance")
	}
	list, err := r.List()
	if err != nil || len(list) != 1 {
		t.Errorf("%v %v", list, err)
	}
	if CheckName("../x") == nil || CheckName("ok-name_1.2") != nil {
		t.Error("CheckName")
	}
	if _, err := os.Stat(filepath.Join(inst.Dir, "instance.json")); err != nil {
		t.Error(err)
	}
}

// TestClaimPort: a new instance gets a free port, a taken one is refused with a hint.
func TestClaimPort(t *testing.T) {
	inst := &Instance{Name: "x"}
	if err := inst.ClaimPort(); err != nil || inst.Port == 0 {
		t.Fatalf("port %d, %v", inst.Port, err)
	}
	// Below the ephemeral range, where no outgoing connection takes it while the server is
	// stopped (FreePort falls back to the range only when there is no room below it).
	if lo := ephemeralLow(); lo-lowestPort >= 1000 && (inst.Port < lowestPort || inst.Port >= lo) {
		t.Errorf("port %d, want one in [%d, %d), below the ephemeral range", inst.Port, lowestPort, lo)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	taken := &Instance{Name: "y", Port: ln.Addr().(*net.TCPAddr).Port}
	if err := taken.ClaimPort(); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Errorf("claiming a taken port: %v", err)
	}
}

// TestStopServerVerifiesThePID: a PID whose command line is not the server's — another
// program took it over after the server died — is never signalled; the server's is stopped.
func TestStopServerVerifiesThePID(t *testing.T) {
	marker := "\x00" + t.TempDir() + "\x00"
	other := exec.Command("sleep", "30")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = other.Process.Kill(); _ = other.Wait() }()
	err := StopServer(other.Process.Pid, marker, syscall.SIGTERM, time.Second)
	if err == nil || !strings.Contains(err.Error(), "not signalled") {
		t.Errorf("stopping a foreign PID: %v", err)
	}
	if !Alive(other.Process.Pid) {
		t.Fatal("the foreign process was signalled")
	}

	dir := strings.Trim(marker, "\x00")
	server := exec.Command("sh", "-c", "sleep 30; :", "server", dir) // "; :" keeps sh from exec-ing sleep
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = server.Wait() }()
	if !RunsCommand(server.Process.Pid, "\x00"+dir) {
		t.Fatalf("RunsCommand does not find %q in the server's command line", dir)
	}
	if err := StopServer(server.Process.Pid, "\x00"+dir, syscall.SIGTERM, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if Alive(server.Process.Pid) {
		t.Error("the server survived StopServer")
	}
	if err := StopServer(server.Process.Pid, "\x00"+dir, syscall.SIGTERM, time.Second); err != nil {
		t.Errorf("stopping a stopped server: %v", err)
	}
}
