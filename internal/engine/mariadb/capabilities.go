package mariadb

import (
	"context"
	"net/url"
	"strings"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/managed"
	"github.com/dblat/dblat/internal/option"
)

// What the MariaDB engine declares to the rest of dblat (package engine's capabilities).
var (
	_ engine.Manager    = Engine{}
	_ engine.Sockets    = Engine{}
	_ engine.RunHooks   = Engine{}
	_ engine.Comparer   = Engine{}
	_ engine.Batcher    = Engine{}
	_ engine.BulkLoader = Engine{}
	_ engine.Restorer   = Engine{}
	_ engine.Templater  = Engine{}
)

// Launcher implements engine.Manager.
func (Engine) Launcher(cfg engine.LaunchConfig) managed.Launcher {
	return Launcher{BinDir: launchBinDir(cfg), RunAs: cfg.RunAs, Warn: cfg.Warn}
}

// SocketDSN implements engine.Sockets.
func (Engine) SocketDSN(inst *managed.Instance) (string, error) { return SocketDSN(inst), nil }

// OptionInterpolateParams makes go-sql-driver/mysql interpolate parameters in the client:
// one round trip per statement instead of server-side prepared statements.
const OptionInterpolateParams = "interpolate_params"

var runOptions = option.Set{{
	Name: OptionInterpolateParams, Kind: option.Bool, Default: "false",
	Usage: "MariaDB/MySQL: interpolate parameters in the client (1 round trip per statement) instead of server-side prepared statements (2 the first time)",
}}

// RunOptions implements engine.RunHooks.
func (Engine) RunOptions() option.Set { return runOptions }

// RunDSN implements engine.RunHooks: interpolate_params becomes the driver's
// interpolateParams DSN parameter.
func (Engine) RunDSN(dsn string, vals option.Values) (string, error) {
	if !vals.Bool(OptionInterpolateParams) {
		return dsn, nil
	}
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	return dsn + sep + url.QueryEscape("interpolateParams") + "=true", nil
}

// BeforeRun implements engine.RunHooks; MariaDB does nothing before a run.
func (Engine) BeforeRun(context.Context, *engine.RunContext) error { return nil }

// AfterRun implements engine.RunHooks; MariaDB does nothing after a run.
func (Engine) AfterRun(context.Context, *engine.RunContext) error { return nil }

// defaultBufferPool is innodb_buffer_pool_size's default, 128 MiB.
const defaultBufferPool = 128 << 20

// Comparison implements engine.Comparer.
func (Engine) Comparison() engine.Comparison {
	return engine.Comparison{
		// Buffer pool, redo and flushing (innodb_flush_log_at_trx_commit, sync_binlog,
		// innodb_doublewrite, innodb_flush_method, innodb_log_file_size, log_bin,
		// innodb_io_capacity), page size, isolation (tx_isolation before 11.1,
		// transaction_isolation after), connections and threads, the build
		// (version_compile_machine: seed 002's 32- against 64-bit), the query cache and
		// performance_schema. Names as SHOW GLOBAL VARIABLES spells them (Inspect).
		KeySettings: []string{
			"innodb_buffer_pool_size", "innodb_flush_log_at_trx_commit", "sync_binlog", "innodb_doublewrite",
			"innodb_flush_method", "innodb_log_file_size", "log_bin", "binlog_format", "innodb_io_capacity", "innodb_page_size",
			"tx_isolation", "transaction_isolation", "max_connections", "thread_handling",
			"version_compile_machine", "version_compile_os", "query_cache_type", "performance_schema",
			"innodb_adaptive_hash_index", "innodb_encrypt_tables", "innodb_encrypt_log",
		},
		// Paths under the server's directory, its port and socket, and the UUID each
		// server draws at its first start.
		Location: []string{"datadir", "aria_log_dir_path", "innodb_data_home_dir", "wsrep_data_home_dir", "log_error",
			"pid_file", "port", "report_port", "socket", "server_uid", "general_log_file", "slow_query_log_file",
			"log_bin_basename", "log_bin_index", "relay_log_basename", "relay_log_index"},
		// MySQL renamed tx_isolation to transaction_isolation.
		Aliases: map[string][]string{
			"tx_isolation":          {"transaction_isolation"},
			"transaction_isolation": {"tx_isolation"},
		},
		Cache: func(settings map[string]string) (string, float64, bool, bool) {
			const name = "innodb_buffer_pool_size"
			b, ok := engine.SettingBytes(settings[name], 1)
			return name, b, b == defaultBufferPool, ok
		},
		PageSize: pageSize,
		IO:       cacheIO,
		EncryptionSettings: []string{"innodb_encrypt_tables", "innodb_encrypt_log", "innodb_encryption_threads",
			SettingTablespacesEncrypted, "plugin_load_add"},
	}
}

var _ engine.SettingsChecker = Engine{}

// CheckSettings implements engine.SettingsChecker against mariadbd's own option table.
func (Engine) CheckSettings(cfg engine.LaunchConfig, settings map[string]string) error {
	bin, err := FindBinaries(launchBinDir(cfg))
	if err != nil {
		return err
	}
	return checkSettings(bin.Server, settings)
}
