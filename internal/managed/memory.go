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

	"golang.org/x/sys/unix"

	"github.com/dblat/dblat/internal/option"
)

// DropCache writes inst's data files back to the disk and drops them from the machine's
// page cache (fdatasync, then posix_fadvise DONTNEED, file by file under its data
// directory), so that what the server reads next comes from its own cache or from the
// disk. A server under a memory limit (Instance.Memory) needs it before a run: the page
// cache of files that another process wrote or read (dblat's restore of a pristine copy,
// the load, an earlier server) is charged to that process's cgroup, not the server's,
// and the server would read it without its limit ever counting it. It returns how many
// bytes of files it went through.
func DropCache(inst *Instance) (int64, error) {
	root, err := filepath.EvalSymlinks(filepath.Join(inst.Dir, dataLink))
	if err != nil {
		return 0, err
	}
	var total int64
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed meanwhile (a temporary file of the server's)
			}
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
				return nil
			}
			return err
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return err
		}
		total += st.Size()
		fd := int(f.Fd())
		// Dirty pages stay in the cache through DONTNEED; written back first, they go.
		_ = unix.Fdatasync(fd)
		if err := unix.Fadvise(fd, 0, 0, unix.FADV_DONTNEED); err != nil {
			return fmt.Errorf("drop %s from the page cache: %w", path, err)
		}
		return nil
	})
	return total, err
}

// ReadBytes is what the server's processes have read from the storage layer, in bytes:
// read_bytes of /proc/PID/io summed over its main process and its descendants (a process
// that ended counts in its parent once reaped), reads the page cache served excluded.
// Taken before and after a run, it tells a server that read its data from memory from one
// that read it from the disk, whatever its engine counts as a read.
func ReadBytes(inst *Instance) (int64, error) {
	if inst.PID <= 0 {
		return 0, errors.New("the server is not running")
	}
	var total int64
	for i, pid := range append([]int{inst.PID}, descendants(inst.PID)...) {
		n, err := procReadBytes(pid)
		if err != nil {
			if i == 0 {
				return 0, err
			}
			continue // a child that ended meanwhile
		}
		total += n
	}
	return total, nil
}

// procReadBytes reads read_bytes of /proc/PID/io.
func procReadBytes(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "read_bytes:"); ok {
			return strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, fmt.Errorf("/proc/%d/io has no read_bytes", pid)
}

// MemoryNone is how a memory limit of none is written: the server has the machine's
// memory.
const MemoryNone = "none"

// MinMemory is the smallest memory limit a server may be given: below it none of the
// engines dblat runs starts with its default cache.
const MinMemory = 64 << 20

// ParseMemory reads a memory limit as users write it: a size (option.ParseSize: "512MB",
// "2GB") of at least MinMemory, or MemoryNone (0).
func ParseMemory(s string) (int64, error) {
	if t := strings.TrimSpace(s); strings.EqualFold(t, MemoryNone) {
		return 0, nil
	}
	b, err := option.ParseSize(s)
	if err != nil {
		return 0, fmt.Errorf("%v, or %s", err, MemoryNone)
	}
	if b < MinMemory {
		return 0, fmt.Errorf("must be at least %s (or %s), got %s", option.FormatSize(MinMemory), MemoryNone, strings.TrimSpace(s))
	}
	return b, nil
}

// FormatMemory writes a memory limit as ParseMemory reads it back: "512MB", or
// MemoryNone for 0.
func FormatMemory(b int64) string {
	if b <= 0 {
		return MemoryNone
	}
	return option.FormatSize(b)
}

// CanLimitMemory says why servers cannot be given a memory limit on this host, or nil when
// they can: a cgroup v2 whose memory controller dblat may use, or cgroup v1's memory
// hierarchy where dblat may create a cgroup (root, or a delegated subtree).
func CanLimitMemory() error {
	var why []string
	if root, err := cgroup2Mount(); err != nil {
		why = append(why, err.Error())
	} else if self, err := ownCgroup(""); err != nil {
		why = append(why, err.Error())
	} else {
		// The "dblat" cgroup below dblat's own gets the memory controller where dblat's
		// own gives it to its children.
		dir := filepath.Join(root, self)
		sub, _ := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
		if slices.Contains(strings.Fields(string(sub)), "memory") && unix.Access(dir, unix.W_OK) == nil {
			return nil
		}
		why = append(why, fmt.Sprintf("cgroup v2 at %s gives no memory controller to its children", dir))
	}
	if root, err := cgroup1Mount("memory"); err != nil {
		why = append(why, err.Error())
	} else if self, err := ownCgroup("memory"); err != nil {
		why = append(why, err.Error())
	} else if dir := filepath.Join(root, self); unix.Access(dir, unix.W_OK) != nil {
		why = append(why, fmt.Sprintf("cgroup v1 memory hierarchy at %s is not writable by this user", dir))
	} else {
		return nil
	}
	return fmt.Errorf("this host cannot limit a server's memory (%s): run dblat as root on a host with cgroup v2's memory controller or cgroup v1's memory hierarchy, or leave the memory limit out", strings.Join(why, "; "))
}
