package postgres

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	embeddedpostgres "github.com/fergusstrange/embedded-postgres"

	"github.com/dblat/dblat/internal/managed"
)

// DefaultVersion is the PostgreSQL major version fetched when no server binaries are
// installed and none was asked for: the same major version as Debian 12's packages, so
// results compare with the packaged one.
const DefaultVersion = "15"

// releases maps the major versions dblat can fetch to the release of each: the one
// fergusstrange/embedded-postgres pins, except for 13, whose pin (13.21.0) its default
// repository never had; 13.22.0 is the release nearest to it there. That repository
// serves them; dblat never names it.
var releases = map[string]embeddedpostgres.PostgresVersion{
	"13": "13.22.0", "14": embeddedpostgres.V14, "15": embeddedpostgres.V15,
	"16": embeddedpostgres.V16, "17": embeddedpostgres.V17, "18": embeddedpostgres.V18,
}

// Versions lists the major versions DownloadVersion can fetch, oldest first.
func Versions() []string {
	return []string{"13", "14", "15", "16", "17", "18"}
}

// DownloadBinaries fetches PostgreSQL DefaultVersion into dir; see DownloadVersion.
func DownloadBinaries(dir string) (string, error) {
	return DownloadVersion(dir, DefaultVersion)
}

// DownloadVersion fetches the official binaries of PostgreSQL major (one of Versions) into
// dir (once; later calls reuse them), checks that they run and are that version, and
// returns their bin directory. It uses fergusstrange/embedded-postgres, which downloads
// the zonky builds from its default repository, checks their checksum and extracts them;
// the archive stays in dir/.cache. That library also initialises a scratch cluster after
// extracting, which fails when running as root; only the extracted binaries matter here.
func DownloadVersion(dir, major string) (string, error) {
	rel, ok := releases[major]
	if !ok {
		return "", fmt.Errorf("PostgreSQL %q: dblat fetches major versions %s", major, strings.Join(Versions(), ", "))
	}
	bin := filepath.Join(dir, "bin")
	if hasServer(bin) {
		return bin, checkMajor(bin, major)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	scratch, err := os.MkdirTemp("", "dblat-pg-download-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(scratch)
	port, err := managed.FreePort()
	if err != nil {
		return "", err
	}
	cache := filepath.Join(dir, ".cache")
	cfg := embeddedpostgres.DefaultConfig().Version(rel).Port(uint32(port)).
		BinariesPath(dir).RuntimePath(filepath.Join(scratch, "run")).DataPath(filepath.Join(scratch, "data")).
		CachePath(cache).Logger(io.Discard)
	ep := embeddedpostgres.NewDatabase(cfg)
	startErr := ep.Start()
	if startErr == nil {
		_ = ep.Stop()
	}
	if !hasServer(bin) {
		return "", fmt.Errorf("fetch PostgreSQL %s: %w. Offline? %s", major, errors.Join(startErr, errors.New("no binaries extracted")),
			offlineHint(major, rel, dir, cache))
	}
	// The server runs as an unprivileged user: it must be able to read and execute them.
	err = filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		perm := fi.Mode().Perm() | 0o044 // readable by all
		if fi.IsDir() || perm&0o100 != 0 {
			perm |= 0o011 // and searchable/executable where the owner may
		}
		return os.Chmod(p, perm)
	})
	if err != nil {
		return "", err
	}
	if err := checkMajor(bin, major); err != nil {
		return "", fmt.Errorf("fetched binaries in %s: %w (remove the directory and fetch again)", dir, err)
	}
	return bin, nil
}

// offlineHint says what to fetch by hand and where to put it: the library takes the
// archive from its cache when it finds it there. Its artifact names the platform as the
// library's version strategy does (arm64 is "arm64v8").
func offlineHint(major string, rel embeddedpostgres.PostgresVersion, dir, cache string) string {
	arch := runtime.GOARCH
	if arch == "arm64" {
		arch = "arm64v8"
	}
	artifact := fmt.Sprintf("embedded-postgres-binaries-%s-%s", runtime.GOOS, arch)
	return fmt.Sprintf("Fetch the Maven artifact io.zonky.test.postgres:%s:%s (a .jar, which is a zip), take the .txz archive out of it "+
		"and save it as %s; then run the command again. Or unpack any PostgreSQL %s build yourself and start it with --install DIR",
		artifact, rel, filepath.Join(cache, artifact+"-"+string(rel)+".txz"), major)
}

// hasServer reports whether bin holds initdb and postgres.
func hasServer(bin string) bool {
	for _, b := range []string{"initdb", "postgres"} {
		if st, err := os.Stat(filepath.Join(bin, b)); err != nil || st.IsDir() {
			return false
		}
	}
	return true
}

// ServerVersion runs `postgres --version` of bin and returns the version it prints
// ("13.21", "17.5").
func ServerVersion(bin string) (string, error) {
	out, err := exec.Command(filepath.Join(bin, "postgres"), "--version").Output()
	if err != nil {
		return "", fmt.Errorf("%s --version: %v", filepath.Join(bin, "postgres"), err)
	}
	// "postgres (PostgreSQL) 13.21" or "postgres (PostgreSQL) 15.14 (Debian 15.14-0+deb12u1)"
	s := strings.TrimSpace(string(out))
	if _, rest, ok := strings.Cut(s, ") "); ok {
		s = rest
	}
	if v, _, ok := strings.Cut(s, " "); ok {
		s = v
	}
	return s, nil
}

// majorOf returns the major version of a PostgreSQL version ("13" of "13.21"; since 10 the
// major is the first number).
func majorOf(version string) string {
	m, _, _ := strings.Cut(version, ".")
	return m
}

// checkMajor verifies that the postgres binary in bin is of major version major.
func checkMajor(bin, major string) error {
	v, err := ServerVersion(bin)
	if err != nil {
		return err
	}
	if majorOf(v) != major {
		return fmt.Errorf("%s runs PostgreSQL %s, not %s", bin, v, major)
	}
	return nil
}
