package postgres

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	embeddedpostgres "github.com/fergusstrange/embedded-postgres"

	"github.com/dblat/dblat/internal/managed"
)

// downloadVersion is the PostgreSQL release fetched when no server binaries are installed:
// the same major version as Debian 12's packages, so results compare with the packaged one.
const downloadVersion = embeddedpostgres.V15

// DownloadBinaries fetches official PostgreSQL server binaries into dir (once; later calls
// reuse them) and returns their bin directory. It uses fergusstrange/embedded-postgres,
// which downloads the zonky builds from its default repository, checks their checksum and
// extracts them. That library also initialises a scratch cluster after extracting, which
// fails when running as root; only the extracted binaries matter here.
func DownloadBinaries(dir string) (string, error) {
	bin := filepath.Join(dir, "bin")
	if _, err := os.Stat(filepath.Join(bin, "postgres")); err == nil {
		return bin, nil
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
	cfg := embeddedpostgres.DefaultConfig().Version(downloadVersion).Port(uint32(port)).
		BinariesPath(dir).RuntimePath(filepath.Join(scratch, "run")).DataPath(filepath.Join(scratch, "data")).
		CachePath(filepath.Join(dir, ".cache")).Logger(io.Discard)
	ep := embeddedpostgres.NewDatabase(cfg)
	startErr := ep.Start()
	if startErr == nil {
		_ = ep.Stop()
	}
	if _, err := os.Stat(filepath.Join(bin, "postgres")); err != nil {
		return "", fmt.Errorf("download PostgreSQL binaries: %w", errors.Join(startErr, err))
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
	return bin, err
}
