package pgtest

import (
	"os"
	"path/filepath"
	"testing"
)

// BinaryCacheEnv names the environment variable that moves the cache of fetched server
// binaries StateDir shares between test runs (default: dblat-test-binaries under
// os.TempDir; under /root it would be out of reach of the servers' unprivileged user).
const BinaryCacheEnv = "DBLAT_TEST_BINARIES"

// StateDir returns a fresh dblat state directory for this test, removed when it ends,
// whose binaries/ (where `dblat server install` and --version fetch PostgreSQL versions)
// is a cache shared by every test run on the machine: each version is fetched once, not
// once per test. The servers' unprivileged user can reach both.
func StateDir(t testing.TB) string {
	t.Helper()
	cache := os.Getenv(BinaryCacheEnv)
	if cache == "" {
		cache = filepath.Join(os.TempDir(), "dblat-test-binaries")
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	dir, err := dirs.Make("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	state := filepath.Join(dir, "state")
	if err := os.MkdirAll(state, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(cache, filepath.Join(state, "binaries")); err != nil {
		t.Fatal(err)
	}
	return state
}
