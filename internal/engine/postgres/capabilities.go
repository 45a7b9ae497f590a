package postgres

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/managed"
)

// What the PostgreSQL engine declares to the rest of dblat (package engine's capabilities).
var (
	_ engine.Manager        = Engine{}
	_ engine.Sockets        = Engine{}
	_ engine.Restorer       = Engine{}
	_ engine.Templater      = Engine{}
	_ engine.Settler        = Engine{}
	_ engine.Comparer       = Engine{}
	_ engine.Batcher        = Engine{}
	_ engine.BulkLoader     = Engine{}
	_ engine.QueryProtocols = Engine{}
	_ engine.RowQuerier     = Engine{}
)

// Launcher implements engine.Manager: managed servers from the installed binaries, or
// binaries downloaded into the state directory when none are installed.
func (Engine) Launcher(cfg engine.LaunchConfig) managed.Launcher {
	return Launcher{BinDir: cfg.BinDir, Install: cfg.Install, Version: cfg.Version, RunAs: cfg.RunAs, DownloadDir: downloadDir(cfg)}
}

// SocketDSN implements engine.Sockets: the server's socket directory is run/ in its own
// directory; the password comes from its pgpass file, as over TCP.
func (Engine) SocketDSN(inst *managed.Instance) (string, error) {
	return fmt.Sprintf("postgres://%s@/dblat?host=%s&port=%d&sslmode=disable&passfile=%s",
		superuser, queryPath(filepath.Join(inst.Dir, "run")), inst.Port, queryPath(PassFile(inst))), nil
}

// CanRestore implements engine.Restorer: CREATE DATABASE … TEMPLATE works on any server
// where the user may create databases.
func (Engine) CanRestore(bool) bool { return true }

// StatsSettle implements engine.Settler: backends publish their pg_stat counters when they
// go idle or exit, which takes a moment after the pool closes.
func (Engine) StatsSettle() time.Duration { return 300 * time.Millisecond }

// defaultSharedBuffers is PostgreSQL's built-in shared_buffers, 128 MB (16384 pages of 8 kB),
// read back as "16384 8kB".
const defaultSharedBuffers = 128 << 20

// Comparison implements engine.Comparer.
func (Engine) Comparison() engine.Comparison {
	return engine.Comparison{
		// Cache (shared_buffers, work_mem, effective_cache_size, wal_buffers, huge_pages),
		// durability (fsync, synchronous_commit, full_page_writes, wal_level,
		// wal_sync_method, commit_delay), checkpoints (checkpoint_timeout, max_wal_size),
		// the page size (block_size), concurrency and isolation (max_connections,
		// default_transaction_isolation), jit. Names as pg_settings spells them (Inspect).
		KeySettings: []string{
			"shared_buffers", "work_mem", "effective_cache_size", "wal_buffers", "huge_pages",
			"fsync", "synchronous_commit", "full_page_writes", "wal_level", "wal_sync_method", "commit_delay",
			"checkpoint_timeout", "max_wal_size", "block_size", "max_connections",
			"default_transaction_isolation", "jit",
		},
		Location: []string{"data_directory", "config_file", "hba_file", "ident_file", "external_pid_file", "port",
			"unix_socket_directories"},
		Cache: func(settings map[string]string) (string, float64, bool, bool) {
			const name = "shared_buffers"
			b, ok := engine.SettingBytes(settings[name], 8192)
			return name, b, b == defaultSharedBuffers, ok
		},
		PageSize: func(settings map[string]string) (string, float64, bool) {
			const name = "block_size"
			b, ok := engine.SettingBytes(settings[name], 1)
			return name, b, ok
		},
		IO: cacheIO,
	}
}

var _ engine.SettingsChecker = Engine{}

// CheckSettings implements engine.SettingsChecker against the server's own
// `postgres --describe-config`: the installation cfg.Install names, the installed
// cfg.Version, or the installed binaries. A version that is not installed yet, or no
// installed binaries at all (a start would fetch them), leave nothing to check against
// yet, and it returns nil; a version dblat cannot fetch is an error.
func (e Engine) CheckSettings(cfg engine.LaunchConfig, settings map[string]string) error {
	var bin string
	var err error
	switch {
	case cfg.Install != "" && cfg.Version != "":
		return errors.New("give an installation or a version, not both")
	case cfg.Install != "":
		if bin, err = installBin(cfg.Install); err != nil {
			return err
		}
	case cfg.Version != "":
		dir, ok := e.Installed(cfg, cfg.Version)
		if !ok {
			if !slices.Contains(Versions(), cfg.Version) {
				return fmt.Errorf("PostgreSQL %q is not installed, and dblat fetches major versions %s only: install it and give its directory instead",
					cfg.Version, strings.Join(Versions(), ", "))
			}
			return nil
		}
		bin = filepath.Join(dir, "bin")
	default:
		if bin, err = FindBinaries(cfg.BinDir); err != nil {
			if cfg.BinDir != "" {
				return err
			}
			return nil
		}
	}
	return checkSettings(bin, settings)
}
