// Package managed keeps the private database servers that dblat starts itself: where their
// files live in the state directory, which of them are running, on which port, as which
// user, the credentials their clients log in with (generated per instance, kept where only
// the invoking user reads them), and how to stop them by PID without leaving orphans. It
// places a running server's processes in cgroups of their own (Contain): one that accounts
// for them apart from the rest of the machine, and one that holds them under the memory
// limit the instance asks for (cgroup v2's memory.max, or v1's memory.limit_in_bytes),
// which MemoryLimit reads back; DropCache and ReadBytes make that limit mean what it says
// for the server's data.
//
// It knows nothing of any product: each engine sub-package (engine/postgres, ...) provides a
// Launcher, whose Start begins with what every server's start shares (start.go: Prepare,
// Spawn, Process.AwaitReady), and the execution core ties the two together. Instances are
// described by an instance.json file in their directory, so `dblat server list` works
// across processes.
package managed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"time"
)

// Instance is one managed server. It is saved as instance.json in Dir.
type Instance struct {
	Name   string `json:"name"`
	Engine string `json:"engine"`
	// Dir is the instance's private directory (data, sockets, log).
	Dir  string `json:"dir"`
	Port int    `json:"port"`
	// PID is the server's main process while it runs, 0 when stopped.
	PID int `json:"pid"`
	// DSN connects to the benchmark database. It holds no password: it names the file of the
	// instance's credentials directory (CredentialsDir) that the engine's clients read it
	// from, so that it can be printed and stored.
	DSN string `json:"dsn"`
	// Client is a command line that connects the engine's own command-line client to the
	// benchmark database, naming the credentials file rather than the password ("psql
	// 'postgres://...&passfile=...'"); "" when the engine has none.
	Client string `json:"client,omitempty"`
	// Settings are the server settings requested at creation or on the last start.
	Settings map[string]string `json:"settings,omitempty"`
	// Binaries is the directory of the server binaries used.
	Binaries string `json:"binaries"`
	// Install is the installation directory the server was asked to run from (server start
	// --install), and Version the server version it was asked for (--version); "" when the
	// engine chose (its default search). A restart without them reuses these, so that the
	// data directory keeps meeting the version that created it.
	Install string `json:"install,omitempty"`
	Version string `json:"version,omitempty"`
	// RunAs is the unprivileged OS user the server runs as when dblat runs as root.
	RunAs   string    `json:"run_as,omitempty"`
	Started time.Time `json:"started,omitzero"`
	// Cgroup is the cgroup v2 directory the running server's processes were placed in
	// (Contain), "" when they were not.
	Cgroup string `json:"cgroup,omitempty"`
	// Memory is the memory limit in bytes the server runs under, as requested at creation
	// or the last start (0: none, the machine's memory); MemoryCgroup is the cgroup that
	// holds the running server under it (Contain: Cgroup itself on a host with cgroup v2's
	// memory controller, else one of cgroup v1's memory hierarchy), "" when none does.
	Memory       int64  `json:"memory,omitempty"`
	MemoryCgroup string `json:"memory_cgroup,omitempty"`
	// Encrypted is set for a server created to keep its data encrypted at rest (server
	// start --encryption on), which its engine's launcher sets up at every start; a server
	// keeps what it was created with.
	Encrypted bool `json:"encrypted,omitempty"`
	// Storage is where the data directory lives, StorageDisk or StorageMemory; "" for
	// instances created before it was recorded, which are on disk (StorageOf). DataDir is
	// the directory in memory that Dir/data links to (PlaceData); "" on disk.
	Storage string `json:"storage,omitempty"`
	DataDir string `json:"data_dir,omitempty"`
}

// Launcher starts and stops one engine's servers. Implementations live in the engine
// sub-packages.
type Launcher interface {
	// Start creates the instance's files if they do not exist, starts the server with
	// inst.Settings on inst.Port, waits until it accepts connections, and fills inst.PID,
	// inst.DSN, inst.Client and inst.Binaries. The server lets in only clients that log in
	// with the passwords of inst's credentials directory, which Start generates when the
	// instance has none (a new one, or one made by an earlier dblat). On failure nothing is
	// left running.
	Start(ctx context.Context, inst *Instance) error
	// Stop shuts the server down cleanly and waits for its processes to end.
	Stop(ctx context.Context, inst *Instance) error
}

// ErrNoInstance is wrapped by Load when no instance has the given name.
var ErrNoInstance = errors.New("no such managed server")

var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$`)

// CheckName reports whether name can name an instance (it becomes a directory name).
func CheckName(name string) error {
	if !validName.MatchString(name) {
		return fmt.Errorf("server name %q: use letters, digits, '.', '_' or '-' (at most 63)", name)
	}
	return nil
}

// Registry is the set of instances under one state directory (default ./.dblat).
type Registry struct {
	// Root is the state directory; instances live in Root/servers/NAME.
	Root string
}

// Dir returns the directory of the instance called name.
func (r Registry) Dir(name string) string {
	return filepath.Join(r.Root, "servers", name)
}

// Load reads the instance called name.
func (r Registry) Load(name string) (*Instance, error) {
	b, err := os.ReadFile(filepath.Join(r.Dir(name), "instance.json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w %q (see `dblat server list`)", ErrNoInstance, name)
	}
	if err != nil {
		return nil, err
	}
	var inst Instance
	if err := json.Unmarshal(b, &inst); err != nil {
		return nil, fmt.Errorf("managed server %q: corrupt instance.json: %w", name, err)
	}
	if inst.PID != 0 && !Alive(inst.PID) {
		inst.PID = 0
	}
	return &inst, nil
}

// Save writes inst atomically.
func (r Registry) Save(inst *Instance) error {
	b, err := json.MarshalIndent(inst, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(inst.Dir, "instance.json.tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(inst.Dir, "instance.json"))
}

// List returns every instance, sorted by name.
func (r Registry) List() ([]*Instance, error) {
	entries, err := os.ReadDir(filepath.Join(r.Root, "servers"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []*Instance
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		inst, err := r.Load(e.Name())
		if errors.Is(err, ErrNoInstance) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, inst)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Alive reports whether a process with this PID exists and has not exited: a zombie (exited,
// waiting for its parent to reap it) counts as gone.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	if err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	// /proc/PID/stat is "pid (comm) state ..."; comm may contain spaces and parentheses.
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true // no procfs: trust kill(2)
	}
	if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) {
		return b[i+2] != 'Z'
	}
	return true
}

// StopPID sends sig to pid and waits up to grace for it to exit; if it is still there it
// sends SIGKILL and waits again. It never signals a process group.
func StopPID(pid int, sig syscall.Signal, grace time.Duration) error {
	if !Alive(pid) {
		return nil
	}
	if err := syscall.Kill(pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signal %d: %w", pid, err)
	}
	if waitGone(pid, grace) {
		return nil
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	if waitGone(pid, 10*time.Second) {
		return fmt.Errorf("process %d ignored %v for %v and was killed", pid, sig, grace)
	}
	return fmt.Errorf("process %d survives SIGKILL", pid)
}

func waitGone(pid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		// Reap it if it is our child; otherwise this fails harmlessly.
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		if !Alive(pid) {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// RunsCommand reports whether process pid's command line (/proc/PID/cmdline, its arguments
// separated by NUL bytes) contains marker — the data directory a server was started with,
// say — so that a PID that another program took over after the server died or the machine
// rebooted is recognised. Without /proc it cannot tell and says yes; for a process that is
// gone it says no.
//
// A process in the middle of execve has an empty command line for a moment: the kernel
// lets the parent go (and closes its close-on-exec pipe) before it lays out the new
// arguments. An empty read is therefore retried for up to 100 ms.
func RunsCommand(pid int, marker string) bool {
	path := fmt.Sprintf("/proc/%d/cmdline", pid)
	for deadline := time.Now().Add(100 * time.Millisecond); ; {
		b, err := os.ReadFile(path)
		if err != nil {
			if _, serr := os.Stat("/proc/self/cmdline"); serr != nil {
				return Alive(pid)
			}
			return false
		}
		if len(b) > 0 || time.Now().After(deadline) {
			return bytes.Contains(b, []byte(marker))
		}
		time.Sleep(time.Millisecond)
	}
}

// StopServer stops the server whose main process is pid and whose command line contains
// marker (RunsCommand): sig, then SIGKILL after grace, as StopPID. A process that is gone
// is already stopped. A live PID whose command line lacks marker belongs to another program
// now (dblat often runs as root): it is never signalled, and the error says so.
func StopServer(pid int, marker string, sig syscall.Signal, grace time.Duration) error {
	if !Alive(pid) {
		return nil
	}
	if !RunsCommand(pid, marker) {
		return fmt.Errorf("PID %d no longer runs the server (its command line lacks %q): not signalled", pid, strings.Trim(marker, "\x00"))
	}
	return StopPID(pid, sig, grace)
}
