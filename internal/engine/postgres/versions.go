package postgres

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dblat/dblat/internal/engine"
)

// Where the binaries of a managed server come from, in order: Launcher.Install, then
// Launcher.Version (an installed copy, else a fetched one), then Launcher.BinDir, then the
// OS packages, then DefaultVersion fetched.

var _ engine.Installer = Engine{}

// binaries returns the bin directory the launcher runs.
func (l Launcher) binaries() (string, error) {
	switch {
	case l.Install != "" && l.Version != "":
		return "", errors.New("give --install or --version, not both")
	case l.Install != "":
		return installBin(l.Install)
	case l.Version != "":
		if bin, ok := installedVersion(l.DownloadDir, l.Version); ok {
			return bin, checkMajor(bin, l.Version)
		}
		if l.DownloadDir == "" {
			return "", fmt.Errorf("PostgreSQL %s is not fetched and there is no state directory to fetch it into: give --install DIR", l.Version)
		}
		return DownloadVersion(filepath.Join(l.DownloadDir, l.Version), l.Version)
	}
	bin, err := FindBinaries(l.BinDir)
	if err != nil && l.BinDir == "" && l.DownloadDir != "" {
		if bin, ok := installedVersion(l.DownloadDir, DefaultVersion); ok {
			return bin, nil
		}
		var derr error
		if bin, derr = DownloadVersion(filepath.Join(l.DownloadDir, DefaultVersion), DefaultVersion); derr != nil {
			return "", fmt.Errorf("%w; downloading instead failed too: %v", err, derr)
		}
		return bin, nil
	}
	return bin, err
}

// installBin returns the bin directory of installation dir: dir itself when it holds
// initdb and postgres, else dir/bin.
func installBin(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for _, d := range []string{abs, filepath.Join(abs, "bin")} {
		if hasServer(d) {
			return d, nil
		}
	}
	return "", fmt.Errorf("installation %s: no initdb and postgres there or in its bin/ (give a PostgreSQL installation's bin directory, or the directory above it)", dir)
}

// installedVersion finds PostgreSQL major without fetching, below cache: what Install
// fetched (cache/bin is where dblat before versions put DefaultVersion). The OS packages'
// copy of a version is not used for it: every version asked for by number is the same
// family of builds (compiler, flags, bundled libraries), so that a comparison of versions
// does not also compare Debian's build against another. Run the OS packages' server with
// no version, or with --install.
func installedVersion(cache, major string) (string, bool) {
	if cache == "" {
		return "", false
	}
	dirs := []string{filepath.Join(cache, major, "bin")}
	if major == DefaultVersion {
		dirs = append(dirs, filepath.Join(cache, "bin"))
	}
	for _, d := range dirs {
		if hasServer(d) {
			return d, true
		}
	}
	return "", false
}

// downloadDir is where the engine keeps fetched versions in the state directory.
func downloadDir(cfg engine.LaunchConfig) string {
	if cfg.StateDir == "" {
		return ""
	}
	return filepath.Join(cfg.StateDir, "binaries", "postgres")
}

// InstallVersions implements engine.Installer: the major versions the embedded-postgres
// library's zonky builds provide and dblat has been run with.
func (Engine) InstallVersions() []string { return Versions() }

// Installed implements engine.Installer: a version fetched before (installedVersion).
func (Engine) Installed(cfg engine.LaunchConfig, version string) (string, bool) {
	bin, ok := installedVersion(downloadDir(cfg), version)
	if !ok {
		return "", false
	}
	return filepath.Dir(bin), true
}

// Install implements engine.Installer: DownloadVersion into
// <state>/binaries/postgres/<version>, or nothing when the version is installed already.
func (e Engine) Install(_ context.Context, cfg engine.LaunchConfig, version string) (string, error) {
	if !slices.Contains(Versions(), version) {
		return "", fmt.Errorf("PostgreSQL %q: dblat fetches major versions %s", version, strings.Join(Versions(), ", "))
	}
	if dir, ok := e.Installed(cfg, version); ok {
		return dir, checkMajor(filepath.Join(dir, "bin"), version)
	}
	dl := downloadDir(cfg)
	if dl == "" {
		return "", errors.New("no state directory to fetch PostgreSQL into")
	}
	if err := os.MkdirAll(dl, 0o755); err != nil {
		return "", err
	}
	bin, err := DownloadVersion(filepath.Join(dl, version), version)
	if err != nil {
		return "", err
	}
	return filepath.Dir(bin), nil
}
