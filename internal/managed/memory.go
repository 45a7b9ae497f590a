package managed

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
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
