package firebird

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/dblat/dblat/internal/engine"
)

// Firebird versions: dblat was built against Firebird 3.0 (Debian's packages), and runs 4.0
// and 5.0 from their own Linux tarballs (server start --install DIR, studies'
// server.install): the same programs and the same layout (bin/firebird, bin/isql,
// bin/gfix, bin/fbsvcmgr, plugins/, intl/, firebird.msg, plugins.conf). What differs and
// what dblat does about it:
//
//   - firebird.conf: 4.0 added keys (laterKeys; ReadConsistency among them), which are
//     accepted from 4.0 on; on 3.0 they are refused, since 3.0 would ignore them silently.
//   - page sizes: 4.0 added 32 KiB pages.
//   - RDB$CONFIG (4.0+) reports the configuration the server runs with: Inspect reads
//     ReadConsistency and the file-system cache settings from it (configKeys).
//   - ReadConsistency=1, 4.0's default, makes READ COMMITTED transactions restart a
//     statement on an update conflict, which seed 002 found to multiply the conflicts of a
//     test whose statements change what they touch when restarted (Comparison.Conflicts).

// minMajor and maxMajor bound the Firebird major versions dblat manages.
const (
	minMajor = 3
	maxMajor = 5
)

var versionPattern = regexp.MustCompile(`Firebird (\d+)\.(\d+)`)

// majorOf returns the major version in a Firebird version string ("LI-V3.0.11.33637
// Firebird 3.0", "Firebird 4.0.5"), or 0.
func majorOf(version string) int {
	if m := versionPattern.FindStringSubmatch(version); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return 0
}

// supportedVersion checks a server's `firebird -z` version against the majors dblat
// manages.
func supportedVersion(server, version string) error {
	if n := majorOf(version); n < minMajor || n > maxMajor {
		return fmt.Errorf("%s is %q: dblat manages Firebird 3.0 to 5.0 servers", server, version)
	}
	return nil
}

// installBinDir is the directory of the programs of installation dir: dir/bin in a
// Firebird home (the layout of Firebird's Linux tarballs), else dir itself.
func installBinDir(dir string) string {
	if st, err := os.Stat(filepath.Join(dir, "bin", "firebird")); err == nil && !st.IsDir() {
		return filepath.Join(dir, "bin")
	}
	return dir
}

// launchBinDir is the bin directory a launch configuration names: its installation's, else
// BinDir.
func launchBinDir(cfg engine.LaunchConfig) string {
	if cfg.Install != "" {
		abs, err := filepath.Abs(cfg.Install)
		if err != nil {
			abs = cfg.Install
		}
		return installBinDir(abs)
	}
	return cfg.BinDir
}

// checkSettingsFor is checkSettings for a server of Firebird major: from 4.0 on, the keys
// 4.0 and 5.0 added (laterKeys) are firebird.conf keys and 32 KiB pages are valid.
func checkSettingsFor(major int, settings map[string]string) (serverConfig, error) {
	if major < 4 {
		return checkSettings(settings)
	}
	rest := map[string]string{}
	later := map[string]string{}
	pageSize := 0
	for k, v := range settings {
		switch {
		case strings.EqualFold(k, SettingPageSize) && strings.TrimSpace(v) == "32768":
			pageSize = 32768
		case canonicalLater(k) != "":
			if strings.ContainsAny(v, "\r\n#") {
				return serverConfig{}, engine.SettingErrorf(k, "Firebird setting %s: the value must be one line without '#'", k)
			}
			later[canonicalLater(k)] = strings.TrimSpace(v)
		default:
			rest[k] = v
		}
	}
	cfg, err := checkSettings(rest)
	if err != nil {
		return cfg, err
	}
	for k, v := range later {
		cfg.conf[k] = v
	}
	if pageSize != 0 {
		cfg.pageSize = pageSize
	}
	return cfg, nil
}

// canonicalLater returns the spelling of key among laterKeys, or "".
func canonicalLater(key string) string {
	for _, k := range laterKeys {
		if strings.EqualFold(k, key) {
			return k
		}
	}
	return ""
}

// configKeys are the firebird.conf keys Inspect reads back from RDB$CONFIG on 4.0 and
// later: ReadConsistency changes what READ COMMITTED means, the file-system cache settings
// what a page read costs (seed 002).
var configKeys = []string{"ReadConsistency", "UseFileSystemCache", "FileSystemCacheThreshold"}

// inspectConfig adds to settings the values of configKeys that a server of version (as
// Inspect reports it) runs with, from RDB$CONFIG (4.0+; SYSDBA or an admin sees it). It does
// nothing for 3.0, which cannot report its configuration.
func inspectConfig(ctx context.Context, db *sql.DB, version string, settings map[string]string) error {
	if majorOf(version) < 4 {
		return nil
	}
	return readOnly(ctx, db, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT TRIM(RDB$CONFIG_NAME), TRIM(RDB$CONFIG_VALUE) FROM RDB$CONFIG
			WHERE RDB$CONFIG_NAME IN ('`+strings.Join(configKeys, "', '")+`')`)
		if err != nil {
			return fmt.Errorf("read RDB$CONFIG: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var name string
			var value sql.NullString
			if err := rows.Scan(&name, &value); err != nil {
				return err
			}
			settings[name] = value.String
		}
		return rows.Err()
	})
}

// readConsistency reports whether read-back settings say ReadConsistency is on.
func readConsistency(settings map[string]string) bool {
	switch strings.ToLower(strings.TrimSpace(setting(settings, "ReadConsistency"))) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// conflicts implements Comparison.Conflicts: on 4.0 and later with ReadConsistency on,
// READ COMMITTED transactions restart a statement that meets an update conflict (up to 10
// times) while keeping the locks of what it changed; seed 002 found that a test whose
// restarted statements touch other rows than the first time piles up locks, and with them
// conflicts, until the figures measured the test's logic.
func conflicts(version string, settings map[string]string) (engine.Advice, bool) {
	if majorOf(version) < 4 || !readConsistency(settings) {
		return engine.Advice{}, false
	}
	return engine.Advice{
		Rule: "fb-read-consistency", Warning: true,
		Message: "many update conflicts on Firebird 4+ with ReadConsistency on: READ COMMITTED transactions restart the statement that met a conflict, keeping the locks of what it changed, so a workload whose restarted statements touch other rows piles up locks and conflicts (seed 002: \"unable to get a stable set of rows … after 10 attempts of restart\")",
		Detail:  fmt.Sprintf("%s with ReadConsistency=%s", version, setting(settings, "ReadConsistency")),
		Fix:     "compare with ReadConsistency=0 (--set ReadConsistency=0) to see how much of the figure the restarts cost, look for the conflicting rows in the transaction logic, or spread the load over more warehouses",
	}, true
}

// pageSize implements Comparison.PageSize: the benchmark database's page size.
func pageSize(settings map[string]string) (string, float64, bool) {
	n, err := strconv.Atoi(strings.TrimSpace(setting(settings, KeyPageSize)))
	if err != nil || n <= 0 {
		return KeyPageSize, 0, false
	}
	return KeyPageSize, float64(n), true
}
