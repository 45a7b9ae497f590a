// Package sysinfo describes the client machine and the dblat build, so that every stored run
// says what drove it. It reads /proc and /etc/os-release and never fails: a fact it cannot
// read is left empty.
package sysinfo

import (
	"bufio"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"

	"github.com/dblat/dblat/internal/results"
)

// version is set at build time with -ldflags "-X github.com/dblat/dblat/internal/sysinfo.version=...".
var version = ""

// Version returns dblat's version: the one set at build time, else the VCS revision Go
// embedded (a build from a checkout, "-dirty" when the tree was modified), else the module
// version (`go install …@v1.2.3`), else "dev".
func Version() string { return Build().Version }

// BuildInfo describes the running dblat build.
type BuildInfo struct {
	// Version is what Version returns.
	Version string
	// Revision, Modified and Time are the VCS commit Go stamped into the binary, whether
	// the tree had changes, and the commit's time (RFC 3339); empty when the build was not
	// stamped (go build -buildvcs=false, a `go run` or `go test` binary, or a git worktree,
	// which go build does not recognise as a checkout).
	Revision string
	Modified bool
	Time     string
	// Go is the Go release the binary was built with.
	Go string
}

// Build returns the description of the running build.
func Build() BuildInfo {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = &debug.BuildInfo{}
	}
	b := buildOf(bi)
	if version != "" {
		b.Version = version
	}
	return b
}

// buildOf reads a binary's build information; Version as Version describes it, without
// the -ldflags value.
func buildOf(bi *debug.BuildInfo) BuildInfo {
	b := BuildInfo{Version: "dev", Go: bi.GoVersion}
	if b.Go == "" {
		b.Go = runtime.Version()
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		case "vcs.time":
			b.Time = s.Value
		}
	}
	switch {
	case b.Revision != "":
		b.Version = b.Revision[:min(12, len(b.Revision))]
		if b.Modified {
			b.Version += "-dirty"
		}
	// "(devel)" is what a build inside the module's own tree says without VCS data.
	case bi.Main.Version != "" && bi.Main.Version != "(devel)":
		b.Version = bi.Main.Version
	}
	return b
}

// Client returns the description of this machine and build.
func Client() results.Client {
	c := results.Client{
		OS:           osName(),
		Kernel:       kernel(),
		CPUModel:     cpuModel(),
		Cores:        runtime.NumCPU(),
		Procs:        runtime.GOMAXPROCS(0),
		MemoryBytes:  memTotal(),
		GoVersion:    runtime.Version(),
		DblatVersion: Version(),
		PID:          os.Getpid(),
	}
	c.Hostname, _ = os.Hostname()
	return c
}

func osName() string {
	b, err := os.ReadFile("/etc/os-release")
	if err != nil {
		return runtime.GOOS
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "PRETTY_NAME="); ok {
			return strings.Trim(v, `"`)
		}
	}
	return runtime.GOOS
}

func kernel() string {
	var u syscall.Utsname
	if err := syscall.Uname(&u); err != nil {
		return ""
	}
	str := func(a [65]int8) string {
		var b strings.Builder
		for _, c := range a {
			if c == 0 {
				break
			}
			b.WriteByte(byte(c))
		}
		return b.String()
	}
	return str(u.Sysname) + " " + str(u.Release) + " " + str(u.Machine)
}

func cpuModel() string {
	return procField("/proc/cpuinfo", "model name")
}

func memTotal() int64 {
	v := procField("/proc/meminfo", "MemTotal")
	kb, _ := strconv.ParseInt(strings.TrimSuffix(v, " kB"), 10, 64)
	return kb * 1024
}

// procField returns the value of the first "key : value" line in a /proc file.
func procField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// CPUTimes is the machine's CPU time so far, all CPUs together, in clock ticks, from the
// first line of /proc/stat.
type CPUTimes struct {
	// Steal is the time the hypervisor ran something else while a virtual CPU wanted to run.
	Steal uint64
	// Total is every state's time, steal included.
	Total uint64
}

// ReadCPUTimes reads the machine's CPU times; ok is false where /proc/stat is missing or
// has no steal column.
func ReadCPUTimes() (t CPUTimes, ok bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return CPUTimes{}, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	// cpu user nice system idle iowait irq softirq steal [guest guest_nice]: guest time is
	// already counted in user and nice.
	if len(f) < 9 || f[0] != "cpu" {
		return CPUTimes{}, false
	}
	for i := 1; i <= 8; i++ {
		v, err := strconv.ParseUint(f[i], 10, 64)
		if err != nil {
			return CPUTimes{}, false
		}
		t.Total += v
	}
	t.Steal, _ = strconv.ParseUint(f[8], 10, 64)
	return t, true
}

// StealShare is the share of the machine's CPU time between from and to that the
// hypervisor took (steal), or false when no time passed.
func StealShare(from, to CPUTimes) (float64, bool) {
	if to.Total <= from.Total || to.Steal < from.Steal {
		return 0, false
	}
	return float64(to.Steal-from.Steal) / float64(to.Total-from.Total), true
}
