package signals

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// userHZ is the unit of the CPU times in /proc/PID/stat: USER_HZ, 100 on every
// architecture Linux and Go share.
const userHZ = 100

// psiResources are the kernel's pressure files, in the order of the signals they give.
var psiResources = []string{"cpu", "io", "memory"}

// host reads the machine's signals: /proc, dblat's own rusage, and the managed server's
// cgroup or process tree.
type host struct {
	cfg   Config
	psi   bool // /proc/pressure is there
	cpus  int
	notes []string
	// others is the last scan of the machine's processes (pid → CPU ticks and name), to
	// name the busiest other processes by their CPU between two scans.
	others     map[int]procCPU
	othersAt   time.Time
	lastOthers time.Time
	// tree is the server's processes' CPU seconds at the last reading (by PID), when it
	// has no cgroup, and treeSum the CPU seconds they used since the first reading.
	tree    map[int]float64
	treeSum float64
	// canaryBuf is the canary's working set.
	canaryBuf []uint64
}

type procCPU struct {
	ticks uint64
	comm  string
}

// hostReading is the cumulative counters read at one moment.
type hostReading struct {
	at time.Time
	// psi and serverPSI are total stall times in microseconds, by "cpu.some", "io.full", ...
	psi, serverPSI map[string]float64
	stat           cpuStat
	statOK         bool
	dblat          float64 // CPU seconds
	server         float64 // CPU seconds (cgroup), or the tree's sum of deltas so far
	serverOK       bool
	dirty          float64 // MiB to write back
	dirtyOK        bool
	written        float64 // MB the machine's disks wrote so far
	writtenOK      bool
}

// cpuStat is /proc/stat's first line, in ticks.
type cpuStat struct {
	busy, idle, iowait, steal, total uint64
}

type value struct {
	name string
	val  float64
}

func newHost(cfg Config) *host {
	h := &host{cfg: cfg, cpus: runtime.NumCPU(), tree: map[int]float64{}}
	if _, err := os.Stat("/proc/pressure/io"); err == nil {
		h.psi = true
	} else {
		h.notes = append(h.notes, "this kernel has no pressure stall information (/proc/pressure): the waits for CPU, IO and memory were not measured, so a disturbed run can be named only by CPU time, steal and dblat's own stalls")
	}
	return h
}

// read takes the counters at now.
func (h *host) read(now time.Time) hostReading {
	r := hostReading{at: now}
	if h.psi {
		r.psi = readPSI("/proc/pressure")
	}
	r.stat, r.statOK = readCPUStat()
	r.dirty, r.dirtyOK = readDirty()
	r.written, r.writtenOK = readDiskWritten()
	r.dblat = selfCPU()
	switch {
	case h.cfg.ServerCgroup != "":
		if usec, ok := cgroupUsage(h.cfg.ServerCgroup); ok {
			r.server, r.serverOK = usec/1e6, true
		}
		r.serverPSI = readPSI(h.cfg.ServerCgroup)
	case h.cfg.ServerPID > 0:
		r.server, r.serverOK = h.treeCPU(), true
	}
	return r
}

// interval turns two readings into the interval's signals.
func (h *host) interval(prev, cur hostReading) []value {
	span := cur.at.Sub(prev.at).Seconds()
	var out []value
	for _, res := range psiResources {
		for _, kind := range []string{"some", "full"} {
			key := res + "." + kind
			if a, ok := prev.psi[key]; ok {
				if b, ok := cur.psi[key]; ok && b >= a {
					out = append(out, value{"host." + key, clamp01((b - a) / 1e6 / span)})
				}
			}
			if a, ok := prev.serverPSI[key]; ok {
				if b, ok := cur.serverPSI[key]; ok && b >= a {
					out = append(out, value{"server." + key, clamp01((b - a) / 1e6 / span)})
				}
			}
		}
	}
	var others float64
	if prev.statOK && cur.statOK && cur.stat.total > prev.stat.total {
		total := float64(cur.stat.total - prev.stat.total)
		busy := float64(cur.stat.busy-prev.stat.busy) / total * float64(h.cpus)
		out = append(out,
			value{HostBusy, busy},
			value{HostSteal, float64(cur.stat.steal-prev.stat.steal) / total},
			value{HostIOWait, float64(cur.stat.iowait-prev.stat.iowait) / total},
			value{HostCPUs, float64(h.cpus)})
		others = busy
	}
	if cur.dirtyOK {
		out = append(out, value{HostDirty, cur.dirty})
	}
	if prev.writtenOK && cur.writtenOK && cur.written >= prev.written {
		out = append(out, value{HostDiskWrite, (cur.written - prev.written) / span})
	}
	if us, ok := h.canary(); ok {
		out = append(out, value{HostCanary, us})
	}
	dblat := max(0, cur.dblat-prev.dblat) / span
	out = append(out, value{DblatCPU, dblat})
	others -= dblat
	if prev.serverOK && cur.serverOK {
		server := max(0, cur.server-prev.server) / span
		out = append(out, value{ServerCPU, server})
		others -= server
	}
	if others >= busyOthers && cur.at.Sub(h.lastOthers) >= time.Second {
		h.lastOthers = cur.at
		out = append(out, h.busiest(cur.at)...)
	}
	return out
}

func clamp01(f float64) float64 { return min(max(f, 0), 1) }

// readPSI reads the total stall times of dir's cpu, io and memory pressure files
// (/proc/pressure, or a cgroup v2 directory's *.pressure).
func readPSI(dir string) map[string]float64 {
	out := map[string]float64{}
	for _, res := range psiResources {
		name := filepath.Join(dir, res)
		if dir != "/proc/pressure" {
			name = filepath.Join(dir, res+".pressure")
		}
		b, err := os.ReadFile(name)
		if err != nil {
			continue
		}
		// "some avg10=0.00 avg60=0.00 avg300=0.00 total=123\nfull ... total=45\n"
		for _, line := range strings.Split(string(b), "\n") {
			kind, rest, ok := strings.Cut(line, " ")
			if !ok {
				continue
			}
			i := strings.Index(rest, "total=")
			if i < 0 {
				continue
			}
			if v, err := strconv.ParseFloat(strings.TrimSpace(rest[i+len("total="):]), 64); err == nil {
				out[res+"."+kind] = v
			}
		}
	}
	return out
}

// readCPUStat reads the machine's CPU times from /proc/stat's first line.
func readCPUStat() (cpuStat, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuStat{}, false
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := strings.Fields(string(line))
	// cpu user nice system idle iowait irq softirq steal [guest guest_nice]: guest time is
	// already in user and nice.
	if len(f) < 9 || f[0] != "cpu" {
		return cpuStat{}, false
	}
	var v [8]uint64
	for i := range v {
		n, err := strconv.ParseUint(f[i+1], 10, 64)
		if err != nil {
			return cpuStat{}, false
		}
		v[i] = n
	}
	s := cpuStat{busy: v[0] + v[1] + v[2] + v[5] + v[6], idle: v[3], iowait: v[4], steal: v[7]}
	for _, n := range v {
		s.total += n
	}
	return s, true
}

// canaryWork is the canary's piece of work: steps of a xorshift generator, each adding to
// one of canarySlots words, so that it exercises the core's arithmetic and its L1 cache as
// a server's and a client's code do. About 0.35 ms of CPU on a 2026 cloud core: twice a
// second, a few hundredths of a per cent of a CPU.
const (
	canaryWork  = 200_000
	canarySlots = 4096
)

// canary runs the canary's work on the calling goroutine's thread, locked to it, and
// returns the thread's CPU time for it in µs; ok is false where a thread's CPU time
// cannot be read. Its writes go to the host's own buffer, which outlives the call, so
// the compiler keeps them.
func (h *host) canary() (float64, bool) {
	if h.canaryBuf == nil {
		h.canaryBuf = make([]uint64, canarySlots)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start, ok := threadCPU()
	if !ok {
		return 0, false
	}
	x, buf := uint64(88172645463325252), h.canaryBuf
	for range canaryWork {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		buf[x&(canarySlots-1)] += x
	}
	end, _ := threadCPU()
	return float64(end-start) / 1e3, true
}

// readDirty reads the page cache's data waiting to be written back, Dirty plus Writeback
// of /proc/meminfo, in MiB.
func readDirty() (float64, bool) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	var kb float64
	found := 0
	for _, line := range strings.Split(string(b), "\n") {
		name, v, ok := strings.Cut(line, ":")
		if !ok || (name != "Dirty" && name != "Writeback") {
			continue
		}
		if n, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64); err == nil {
			kb += n
			found++
		}
	}
	return kb / 1024, found == 2
}

// readDiskWritten is what the machine's whole disks have written since it started, in MB
// (/proc/diskstats' sectors written, of 512 bytes). Partitions, device-mapper and md
// devices are left out: their writes are their disks' too; loop and RAM disks write no disk.
func readDiskWritten() (float64, bool) {
	b, err := os.ReadFile("/proc/diskstats")
	if err != nil {
		return 0, false
	}
	var sectors float64
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 10 || !wholeDisk(f[2]) {
			continue
		}
		if n, err := strconv.ParseFloat(f[9], 64); err == nil {
			sectors += n
		}
	}
	return sectors * 512 / 1e6, true
}

// wholeDisk reports whether a block device of /proc/diskstats is a disk of its own.
func wholeDisk(name string) bool {
	for _, p := range []string{"loop", "ram", "zram", "dm-", "md", "sr"} {
		if strings.HasPrefix(name, p) {
			return false
		}
	}
	_, err := os.Stat(filepath.Join("/sys/block", name))
	return err == nil
}

// selfCPU is dblat's own user and system CPU time so far, in seconds.
func selfCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}

// cgroupUsage reads a cgroup v2 directory's CPU usage in microseconds (cpu.stat's
// usage_usec, kept even where the cpu controller is not enabled).
func cgroupUsage(dir string) (float64, bool) {
	b, err := os.ReadFile(filepath.Join(dir, "cpu.stat"))
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "usage_usec "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return f, err == nil
		}
	}
	return 0, false
}

// treeCPU is the CPU the server's process tree used so far, as a running sum: each
// process's time since it was last seen (all of it for a process new since), so that a
// backend that exits between two readings takes none of the sum back.
func (h *host) treeCPU() float64 {
	seen := map[int]float64{}
	var walk func(pid, depth int)
	walk = func(pid, depth int) {
		if depth > 4 {
			return
		}
		if t, ok := procTicks(pid); ok {
			seen[pid] = float64(t.ticks) / userHZ
		}
		for _, c := range children(pid) {
			walk(c, depth+1)
		}
	}
	walk(h.cfg.ServerPID, 0)
	var sum float64
	for pid, cpu := range seen {
		sum += cpu - h.tree[pid]
	}
	h.tree = seen
	h.treeSum += sum
	return h.treeSum
}

// children lists pid's children (/proc/PID/task/PID/children).
func children(pid int) []int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(f); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// procTicks reads a process's user and system CPU ticks and its command name.
func procTicks(pid int) (procCPU, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procCPU{}, false
	}
	// "pid (comm) state ppid ...": comm may hold spaces and parentheses.
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return procCPU{}, false
	}
	f := strings.Fields(string(b[end+1:]))
	// After comm: state(0) ppid(1) ... utime(11) stime(12).
	if len(f) < 13 {
		return procCPU{}, false
	}
	u, err1 := strconv.ParseUint(f[11], 10, 64)
	s, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return procCPU{}, false
	}
	return procCPU{ticks: u + s, comm: string(b[open+1 : end])}, true
}

// busiest scans the machine's processes and names the busiest others since the last
// scan (dblat and the server's processes left out), as "proc.PID.COMM" signals in CPUs. The
// first scan has nothing to compare with and names none.
func (h *host) busiest(now time.Time) []value {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	skip := map[int]bool{os.Getpid(): true}
	for pid := range h.tree {
		skip[pid] = true
	}
	if h.cfg.ServerPID > 0 {
		skip[h.cfg.ServerPID] = true
	}
	if h.cfg.ServerCgroup != "" {
		if b, err := os.ReadFile(filepath.Join(h.cfg.ServerCgroup, "cgroup.procs")); err == nil {
			for _, f := range strings.Fields(string(b)) {
				if pid, err := strconv.Atoi(f); err == nil {
					skip[pid] = true
				}
			}
		}
	}
	scan := map[int]procCPU{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || skip[pid] {
			continue
		}
		if p, ok := procTicks(pid); ok {
			scan[pid] = p
		}
	}
	prev, prevAt := h.others, h.othersAt
	h.others, h.othersAt = scan, now
	// A scan older than a few seconds would spread a burst over the time between.
	if prev == nil || now.Sub(prevAt) > 3*time.Second {
		return nil
	}
	span := now.Sub(prevAt).Seconds()
	type busy struct {
		pid  int
		comm string
		cpus float64
	}
	var list []busy
	for pid, p := range scan {
		q, ok := prev[pid]
		if !ok || p.ticks < q.ticks {
			continue
		}
		if cpus := float64(p.ticks-q.ticks) / userHZ / span; cpus >= 0.05 {
			list = append(list, busy{pid, p.comm, cpus})
		}
	}
	sort.Slice(list, func(i, j int) bool { return list[i].cpus > list[j].cpus })
	var out []value
	for _, b := range list[:min(len(list), topProcesses)] {
		out = append(out, value{ProcessName(b.pid, b.comm), b.cpus})
	}
	return out
}

// ProcessName is the signal name of another process: "proc.PID.COMM", its name's dots and
// spaces replaced by '_'.
func ProcessName(pid int, comm string) string {
	comm = strings.Map(func(r rune) rune {
		if r == '.' || r == ' ' || r < ' ' {
			return '_'
		}
		return r
	}, comm)
	return ProcessPrefix + strconv.Itoa(pid) + "." + comm
}

// ParseProcessName reads a ProcessName back: the process's PID and name.
func ParseProcessName(name string) (pid int, comm string, ok bool) {
	rest, ok := strings.CutPrefix(name, ProcessPrefix)
	if !ok {
		return 0, "", false
	}
	p, comm, ok := strings.Cut(rest, ".")
	if !ok {
		return 0, "", false
	}
	pid, err := strconv.Atoi(p)
	return pid, comm, err == nil
}
