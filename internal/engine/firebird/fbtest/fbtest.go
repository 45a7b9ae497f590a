// Package fbtest gives tests real, dblat-managed Firebird 3.0 servers: one per architecture
// (Super, SuperClassic, Classic) per test binary, each started on first use and stopped when
// the tests end, with a fresh database per test.
//
// Use it as
//
//	func TestMain(m *testing.M) { os.Exit(fbtest.Main(m)) }
//	func TestX(t *testing.T) { dsn := fbtest.NewDatabase(t, "Super"); ... }
//
// When the server binaries are missing, tests are skipped with a message saying what to
// install, unless DBLAT_REQUIRE_SERVERS=1 (set by `make test`), in which case they fail.
// Servers die with the test binary (the kernel's parent-death signal), and the directories
// of a test binary that died without cleaning up (a panic, go test's -timeout, a kill) are
// removed by the next one, which also stops any server of it still running
// (managed.TestDirs). It sits on top of package firebird and is imported only by tests.
package fbtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/engine/firebird"
	"github.com/dblat/dblat/internal/managed"
)

// Architectures are the ServerMode values a test may ask Server for.
var Architectures = []string{"Super", "SuperClassic", "Classic"}

type server struct {
	once sync.Once
	inst *managed.Instance
	err  error
}

var (
	mu       sync.Mutex
	servers  = map[string]*server{}
	baseOnce sync.Once
	baseDir  string
	baseErr  error
	dbSeq    atomic.Int64
)

// Main runs the tests and stops the shared servers afterwards. Use it from TestMain.
func Main(m *testing.M) int {
	code := m.Run()
	Shutdown()
	return code
}

// Shutdown stops every shared server that was started and removes their files.
func Shutdown() {
	mu.Lock()
	defer mu.Unlock()
	for arch, s := range servers {
		if s.inst != nil {
			_ = firebird.Launcher{}.Stop(context.Background(), s.inst)
		}
		delete(servers, arch)
	}
	if baseDir != "" {
		_ = os.RemoveAll(baseDir)
	}
}

// Required reports whether missing servers must fail tests rather than skip them.
func Required() bool { return os.Getenv("DBLAT_REQUIRE_SERVERS") == "1" }

// dirs are this package's directories under os.TempDir. Every instance directory is two
// levels below one (Dir, then the instance's name), and a server's command line names its
// instance directory (see firebird.Launcher), so a server left by a dead test binary is
// found by the PID file the launcher writes and stopped with SIGTERM, then SIGKILL.
var dirs = managed.TestDirs{
	Prefix:   "dblat-fbtest-",
	PIDFiles: filepath.Join("*", "*", "firebird.pid"),
	// Arguments are NUL-separated: "/usr/sbin/firebird\x00<dir>/srv-1/super\x00".
	Marker: func(dir string) string { return "\x00" + dir + "/" },
	Signal: syscall.SIGTERM,
}

// Dir returns a new directory below the test binary's temporary directory, reachable by the
// unprivileged server account (t.TempDir is mode 0700 under root, which that account cannot
// enter); it is removed by Shutdown. The first call removes the directories of dead test
// binaries. It skips or fails like Server when the binaries are missing.
func Dir(t testing.TB) string {
	t.Helper()
	requireBinaries(t)
	baseOnce.Do(func() {
		dirs.Sweep(os.TempDir())
		baseDir, baseErr = dirs.Make("")
	})
	if baseErr != nil {
		t.Fatalf("fbtest: %v", baseErr)
	}
	d, err := os.MkdirTemp(baseDir, "srv-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// findBinaries looks for the binaries once per test binary.
var findBinaries = sync.OnceValue(func() error {
	_, err := firebird.FindBinaries("")
	return err
})

// requireBinaries skips (or, when Required, fails) the test without Firebird 3.0 binaries.
func requireBinaries(t testing.TB) { Require(t) }

// Require skips the test (or, when Required, fails it) without Firebird 3.0's binaries, for
// tests that start their servers another way (through dblat's own state directory).
func Require(t testing.TB) {
	t.Helper()
	if err := findBinaries(); err != nil {
		if Required() || !strings.Contains(err.Error(), "no Firebird 3.0 binaries") {
			t.Fatalf("managed Firebird: %v", err)
		}
		t.Skipf("skipping: %v", err)
	}
}

// Settings are the settings of the shared server of arch: forced writes off (tests need no
// durability) and the architecture.
func Settings(arch string) map[string]string {
	return map[string]string{"ServerMode": arch, firebird.SettingForcedWrites: "off"}
}

// Server returns the shared managed server of architecture arch (Super, SuperClassic or
// Classic), starting it on first use. It is safe for concurrent use.
func Server(t testing.TB, arch string) *managed.Instance {
	t.Helper()
	requireBinaries(t)
	mu.Lock()
	s := servers[arch]
	if s == nil {
		s = &server{}
		servers[arch] = s
	}
	mu.Unlock()
	s.once.Do(func() {
		dir := Dir(t)
		i := &managed.Instance{Name: "fbtest-" + strings.ToLower(arch), Engine: "firebird",
			Dir: filepath.Join(dir, strings.ToLower(arch)), Settings: Settings(arch)}
		if s.err = os.MkdirAll(i.Dir, 0o755); s.err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		// SIGKILL when the test binary dies without Shutdown (a time-out, a crash).
		l := firebird.Launcher{ParentDeathSignal: syscall.SIGKILL}
		if s.err = l.Start(ctx, i); s.err == nil {
			s.inst = i
		}
	})
	if s.err != nil {
		t.Fatalf("managed Firebird %s: %v", arch, s.err)
	}
	return s.inst
}

// NewDatabase creates an empty database (8 KiB pages, UTF8, forced writes off) on the shared
// server of arch for this test, drops it when the test ends, and returns its DSN. Close
// every connection to it before the test ends (a t.Cleanup registered after NewDatabase
// runs first), or the drop fails and the file stays until Shutdown.
func NewDatabase(t testing.TB, arch string) string {
	t.Helper()
	srv := Server(t, arch)
	name := fmt.Sprintf("t%d_%d.fdb", os.Getpid(), dbSeq.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dsn, err := firebird.Launcher{}.CreateDatabase(ctx, srv, name, 0)
	if err != nil {
		t.Fatalf("fbtest: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = firebird.Launcher{}.DropDatabase(ctx, srv, name)
	})
	return dsn
}
