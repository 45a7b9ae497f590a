package managed

import (
	"os"
	"runtime"
	"strconv"
	"testing"
)

// TestExecutableBuild reads this test binary's own build through /proc/PID/exe.
func TestExecutableBuild(t *testing.T) {
	b, err := ExecutableBuild(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"amd64": "x86_64", "arm64": "aarch64", "386": "i386", "arm": "arm"}[runtime.GOARCH]
	if bits := strconv.IntSize; b.Bits != bits || (want != "" && b.Arch != want) {
		t.Errorf("build %+v, want %d-bit %s", b, bits, want)
	}
	if _, err := FileBuild("/nonexistent"); err == nil {
		t.Error("no error for a missing file")
	}
}
