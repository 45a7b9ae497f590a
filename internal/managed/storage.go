package managed

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// The storages of a managed server's data directory (Instance.Storage).
const (
	// StorageDisk keeps the data directory in the instance's directory, on the disk that
	// holds the state directory: what a server in production does.
	StorageDisk = "disk"
	// StorageMemory keeps it in memory, on a tmpfs: no write reaches a disk, so a study about
	// the network is not disturbed by the host's disk stalls (which on a shared cloud VM come
	// every few seconds), at the price of measuring no durability. The data is lost when the
	// machine restarts.
	StorageMemory = "memory"
)

// Storages lists the storages, the default first.
var Storages = []string{StorageDisk, StorageMemory}

// MemoryRoot is the tmpfs a server with StorageMemory keeps its data in: /dev/shm, which
// every Linux mounts.
var MemoryRoot = "/dev/shm"

// dataLink is the instance's data directory, which every engine's launcher uses; for
// StorageMemory it is a symbolic link to a directory under MemoryRoot.
const dataLink = "data"

// StoragePhrase says where a storage keeps data: "on disk", "in memory".
func StoragePhrase(storage string) string {
	if storage == StorageMemory {
		return "in memory"
	}
	return "on disk"
}

// StorageOf is inst's storage, StorageDisk for instances created before it was recorded.
func (inst *Instance) StorageOf() string {
	if inst.Storage == "" {
		return StorageDisk
	}
	return inst.Storage
}

// PlaceData makes inst's data directory (Dir/data) live where inst.Storage says before a
// start: for StorageMemory, a directory of its own under MemoryRoot, handed to acct (the
// account the server runs as; nil for none), linked from Dir/data. It is idempotent. A
// server whose data was in memory and is gone (the machine restarted) gets a new, empty
// directory, and note says so; the launcher then creates the server's files again. A
// server created on disk cannot move to memory, nor back: that is an error.
func (inst *Instance) PlaceData(acct *Account) (note string, err error) {
	link := filepath.Join(inst.Dir, dataLink)
	fi, err := os.Lstat(link)
	isLink := err == nil && fi.Mode()&os.ModeSymlink != 0
	switch {
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return "", err
	case inst.StorageOf() == StorageDisk:
		if isLink {
			return "", fmt.Errorf("server %s keeps its data in memory (%s): give another --name for a server on disk", inst.Name, inst.DataDir)
		}
		return "", nil
	case err == nil && !isLink:
		return "", fmt.Errorf("server %s keeps its data on disk (%s): give another --name for a server in memory", inst.Name, link)
	}
	if isLink {
		target, err := os.Readlink(link)
		if err != nil {
			return "", err
		}
		if _, err := os.Stat(target); err == nil {
			inst.DataDir = target
			return "", nil
		}
		if err := os.Remove(link); err != nil {
			return "", err
		}
		note = fmt.Sprintf("server %s kept its data in memory (%s), which is gone (the machine restarted?): it starts with an empty data directory", inst.Name, target)
	}
	dir, err := os.MkdirTemp(MemoryRoot, "dblat-"+inst.Name+"-")
	if err != nil {
		return "", fmt.Errorf("a data directory in memory for server %s: %w", inst.Name, err)
	}
	if err := acct.Hand(dir); err != nil {
		_ = os.RemoveAll(dir)
		return "", err
	}
	if err := os.Symlink(dir, link); err != nil {
		_ = os.RemoveAll(dir)
		return "", err
	}
	inst.DataDir = dir
	return note, nil
}

// RemoveData removes inst's data directory where it lives in memory (inst must not be
// running), freeing the memory it held; its link stays for the instance's directory to
// remove. It does nothing for a server on disk.
func (inst *Instance) RemoveData() error {
	if inst.StorageOf() != StorageMemory || inst.DataDir == "" {
		return nil
	}
	if !strings.HasPrefix(filepath.Clean(inst.DataDir), filepath.Clean(MemoryRoot)+string(filepath.Separator)) {
		return fmt.Errorf("server %s: its data directory %s is not under %s; remove it by hand", inst.Name, inst.DataDir, MemoryRoot)
	}
	return os.RemoveAll(inst.DataDir)
}

// MemoryRoom is how many bytes a server's data may take in memory: the free space of
// MemoryRoot, but no more than half the memory the machine has available (MemAvailable),
// so that the server, its cache and the terminals keep the rest. avail is that memory.
func MemoryRoom() (room, avail int64, err error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(MemoryRoot, &st); err != nil {
		return 0, 0, fmt.Errorf("%s: %w", MemoryRoot, err)
	}
	free := int64(st.Bavail) * st.Bsize
	avail, err = memAvailable()
	if err != nil {
		return free, 0, nil //nolint:nilerr // the tmpfs's free space alone bounds the room then
	}
	return min(free, avail/2), avail, nil
}

// memAvailable reads MemAvailable from /proc/meminfo, in bytes.
func memAvailable() (int64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "MemAvailable:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb * 1024, err
		}
	}
	return 0, errors.New("no MemAvailable in /proc/meminfo")
}
