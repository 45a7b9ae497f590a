package managed

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlaceData: a server in memory gets a directory of its own under MemoryRoot, linked
// from its data directory, found again on the next start; when it is gone (a restart of
// the machine) a new one replaces it with a note; a server cannot move between disk and
// memory; RemoveData frees the memory.
func TestPlaceData(t *testing.T) {
	root := t.TempDir()
	old := MemoryRoot
	MemoryRoot = root
	t.Cleanup(func() { MemoryRoot = old })

	inst := &Instance{Name: "m", Dir: t.TempDir(), Storage: StorageMemory}
	note, err := inst.PlaceData(nil)
	if err != nil || note != "" {
		t.Fatalf("PlaceData: %q, %v", note, err)
	}
	first := inst.DataDir
	if !strings.HasPrefix(first, root+"/dblat-m-") {
		t.Fatalf("data in %s, want under %s", first, root)
	}
	if target, err := os.Readlink(filepath.Join(inst.Dir, "data")); err != nil || target != first {
		t.Fatalf("data links to %q (%v), want %s", target, err, first)
	}
	if _, err := inst.PlaceData(nil); err != nil || inst.DataDir != first {
		t.Errorf("second PlaceData: %s, %v; want the same directory", inst.DataDir, err)
	}

	if err := os.RemoveAll(first); err != nil {
		t.Fatal(err)
	}
	note, err = inst.PlaceData(nil)
	if err != nil || !strings.Contains(note, "is gone") || inst.DataDir == first {
		t.Errorf("after the memory was lost: %q, %v, dir %s", note, err, inst.DataDir)
	}

	disk := *inst
	disk.Storage = StorageDisk
	if _, err := disk.PlaceData(nil); err == nil || !strings.Contains(err.Error(), "keeps its data in memory") {
		t.Errorf("a server in memory moved to disk: %v", err)
	}
	onDisk := &Instance{Name: "d", Dir: t.TempDir()}
	if _, err := onDisk.PlaceData(nil); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(onDisk.Dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	onDisk.Storage = StorageMemory
	if _, err := onDisk.PlaceData(nil); err == nil || !strings.Contains(err.Error(), "keeps its data on disk") {
		t.Errorf("a server on disk moved to memory: %v", err)
	}

	if err := inst.RemoveData(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(inst.DataDir); !os.IsNotExist(err) {
		t.Errorf("RemoveData left %s: %v", inst.DataDir, err)
	}
	outside := &Instance{Name: "x", Storage: StorageMemory, DataDir: t.TempDir()}
	if err := outside.RemoveData(); err == nil {
		t.Error("RemoveData removed a directory outside MemoryRoot")
	}
}

// TestMemoryRoom: the room in memory is no more than MemoryRoot's free space and half the
// memory available.
func TestMemoryRoom(t *testing.T) {
	room, avail, err := MemoryRoom()
	if err != nil {
		t.Skipf("no %s here: %v", MemoryRoot, err)
	}
	if room <= 0 || (avail > 0 && room > avail/2) {
		t.Errorf("room %d with %d available", room, avail)
	}
}
