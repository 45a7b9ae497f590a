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
// whose binaries/ is the shared cache (LinkBinaryCache).
func StateDir(t testing.TB) string {
	t.Helper()
	dir, err := dirs.Make("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	state := filepath.Join(dir, "state")
	LinkBinaryCache(t, state)
	return state
}

// LinkBinaryCache makes state's binaries/ (where `dblat server install` and --version
// fetch PostgreSQL versions) a cache shared by every test run on the machine, so that each
// version is fetched once, not once per test. The servers' unprivileged user can reach it.
func LinkBinaryCache(t testing.TB, state string) {
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
	if err := os.MkdirAll(state, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(cache, filepath.Join(state, "binaries")); err != nil {
		t.Fatal(err)
	}
}
