package postgres_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/dblat/dblat/internal/engine/postgres"
)

// TestDownloadBinaries fetches real binaries (~12 MB); it runs only when asked, because it
// needs the package repository the library downloads from.
func TestDownloadBinaries(t *testing.T) {
	if os.Getenv("DBLAT_TEST_DOWNLOAD") != "1" {
		t.Skip("set DBLAT_TEST_DOWNLOAD=1 to test downloading PostgreSQL binaries")
	}
	dir := t.TempDir()
	bin, err := postgres.DownloadBinaries(dir)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin+"/postgres", "--version").Output()
	if err != nil || !strings.Contains(string(out), "PostgreSQL) 15") {
		t.Fatalf("downloaded postgres --version: %q, %v", out, err)
	}
	if again, err := postgres.DownloadBinaries(dir); err != nil || again != bin {
		t.Errorf("second call: %q, %v", again, err)
	}
}
