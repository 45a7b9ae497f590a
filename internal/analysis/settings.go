package analysis

import (
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Settings that matter: the server settings, as each engine's Inspect reads them back
// (results.Server.Settings), whose difference between runs in one chart makes the
// comparison unlike. Everything else Inspect reports (ports, paths, socket directories,
// lc_*, the ~650 MariaDB variables) is either volatile or does not change what a run
// measures, and is left to the report's configuration table.
var (
	// PostgresKeys: cache (shared_buffers, work_mem, effective_cache_size, wal_buffers,
	// huge_pages), durability (fsync, synchronous_commit, full_page_writes, wal_level,
	// wal_sync_method, commit_delay), checkpoints (checkpoint_timeout, max_wal_size), the
	// page size (block_size), concurrency and isolation (max_connections,
	// default_transaction_isolation), jit. Names as pg_settings spells them
	// (engine/postgres Inspect).
	PostgresKeys = []string{
		"shared_buffers", "work_mem", "effective_cache_size", "wal_buffers", "huge_pages",
		"fsync", "synchronous_commit", "full_page_writes", "wal_level", "wal_sync_method", "commit_delay",
		"checkpoint_timeout", "max_wal_size", "block_size", "max_connections",
		"default_transaction_isolation", "jit",
	}
	// FirebirdKeys: page size, page buffers (MON$PAGE_BUFFERS, reported under the
	// firebird.conf name DefaultDbCachePages), forced writes, architecture, the wire's
	// encryption, compression and protocol, ODS, dialect, character set and sweep interval.
	// Names as engine/firebird Inspect reports them (firebird.KeyPageSize, …).
	FirebirdKeys = []string{
		"PageSize", "DefaultDbCachePages", "ForcedWrites", "ServerMode",
		"wire_encrypted", "wire_compressed", "network_protocol",
		"ods_version", "sql_dialect", "character_set", "sweep_interval",
	}
	// MariaDBKeys: buffer pool, redo and flushing (innodb_flush_log_at_trx_commit,
	// sync_binlog, innodb_doublewrite, innodb_flush_method, innodb_log_file_size, log_bin,
	// innodb_io_capacity), page size, isolation (tx_isolation before 11.1,
	// transaction_isolation after), connections and threads, the build
	// (version_compile_machine: seed 002's 32- against 64-bit), the query cache and
	// performance_schema. Names as SHOW GLOBAL VARIABLES spells them (engine/mariadb Inspect).
	MariaDBKeys = []string{
		"innodb_buffer_pool_size", "innodb_flush_log_at_trx_commit", "sync_binlog", "innodb_doublewrite",
		"innodb_flush_method", "innodb_log_file_size", "log_bin", "innodb_io_capacity", "innodb_page_size",
		"tx_isolation", "transaction_isolation", "max_connections", "thread_handling",
		"version_compile_machine", "version_compile_os", "query_cache_type", "performance_schema",
		"innodb_adaptive_hash_index",
	}
)

// engineKeys maps an engine name (results.Server.Engine) to its settings that matter.
var engineKeys = map[string][]string{
	"postgres": PostgresKeys,
	"firebird": FirebirdKeys,
	"mariadb":  MariaDBKeys,
	"mysql":    MariaDBKeys,
}

// settingAliases names read-back keys that a requested setting governs under another name:
// Firebird's WireCrypt shows as wire_encrypted, MySQL's tx_isolation as
// transaction_isolation. Keys are lower case.
var settingAliases = map[string][]string{
	"wirecrypt":             {"wire_encrypted"},
	"tx_isolation":          {"transaction_isolation"},
	"transaction_isolation": {"tx_isolation"},
}

// Engine defaults of the server's own cache, for the default-cache rule.
const (
	// pgDefaultSharedBuffers is PostgreSQL's built-in shared_buffers, 128 MB (16384 8kB
	// pages), read back as "16384 8kB" (engine/postgres tests).
	pgDefaultSharedBuffers = 128 << 20
	// mariadbDefaultBufferPool is innodb_buffer_pool_size's default, 128 MiB.
	mariadbDefaultBufferPool = 128 << 20
	// fbDefaultPagesSuper and fbDefaultPagesClassic are DefaultDbCachePages' defaults:
	// 2048 pages in Super, 256 per attachment in Classic and SuperClassic (engines.md §1.4).
	fbDefaultPagesSuper   = 2048
	fbDefaultPagesClassic = 256
	// fbClassicMaxBuffers is the page-buffer count per connection above which Classic and
	// SuperClassic slow down: "after 2048 buffers per connection, the cost of
	// synchronization of pages in separate caches of connections quickly grows" (seed 002).
	fbClassicMaxBuffers = 2048
)

// lookup returns settings[key] matching the key case-insensitively (Firebird's keys match
// that way; PostgreSQL's and MariaDB's are lower case anyway).
func lookup(settings map[string]string, key string) (string, bool) {
	if v, ok := settings[key]; ok {
		return v, true
	}
	for k, v := range settings {
		if strings.EqualFold(k, key) {
			return v, true
		}
	}
	return "", false
}

// value kinds for comparing a requested setting with its read-back.
const (
	kindString = iota
	kindBool
	kindBytes
	kindSeconds
	kindNumber
)

var (
	// "16384 8kB": PostgreSQL's read-back of a setting in pages.
	pagesRe = regexp.MustCompile(`^(\d+)\s+(\d+)\s*([kmgt]?i?b)$`)
	sizeRe  = regexp.MustCompile(`^(\d+(?:\.\d+)?)\s*([kmgt]i?b?|b)$`)
	timeRe  = regexp.MustCompile(`^(\d+(?:\.\d+)?)\s*(us|ms|s|min|h|d)$`)
)

// sizeUnit is the multiplier of a size suffix: binary, as PostgreSQL's kB/MB/GB and
// MySQL's K/M/G are.
func sizeUnit(u string) (float64, bool) {
	u = strings.TrimSuffix(strings.TrimSuffix(u, "b"), "i")
	switch u {
	case "":
		return 1, true
	case "k":
		return 1 << 10, true
	case "m":
		return 1 << 20, true
	case "g":
		return 1 << 30, true
	case "t":
		return 1 << 40, true
	}
	return 0, false
}

// normalize reads a setting's value as a kind and a canonical form, so that "128MB" and
// "16384 8kB", "on" and "1", "5min" and "300 s" compare equal.
func normalize(v string) (int, string) {
	s := strings.ToLower(strings.TrimSpace(v))
	switch s {
	case "on", "true", "yes", "sync":
		return kindBool, "on"
	case "off", "false", "no", "async":
		return kindBool, "off"
	}
	if m := pagesRe.FindStringSubmatch(s); m != nil {
		n, _ := strconv.ParseFloat(m[1], 64)
		per, _ := strconv.ParseFloat(m[2], 64)
		if u, ok := sizeUnit(m[3]); ok {
			return kindBytes, fmtNum(n * per * u)
		}
	}
	if m := sizeRe.FindStringSubmatch(s); m != nil {
		n, _ := strconv.ParseFloat(m[1], 64)
		if u, ok := sizeUnit(m[2]); ok {
			return kindBytes, fmtNum(n * u)
		}
	}
	if m := timeRe.FindStringSubmatch(s); m != nil {
		n, _ := strconv.ParseFloat(m[1], 64)
		mult := map[string]float64{"us": 1e-6, "ms": 1e-3, "s": 1, "min": 60, "h": 3600, "d": 86400}[m[2]]
		return kindSeconds, fmtNum(n * mult)
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return kindNumber, fmtNum(f)
	}
	if canon, ok := fbServerModes[s]; ok {
		return kindString, canon
	}
	return kindString, s
}

// fbServerModes canonicalises Firebird's ServerMode and its 3.0 aliases (engines.md §1.3).
var fbServerModes = map[string]string{
	"super": "super", "threadeddedicated": "super",
	"superclassic": "superclassic", "threadedshared": "superclassic",
	"classic": "classic", "multiprocess": "classic",
}

func fmtNum(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e18 {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'g', 12, 64)
}

// sameSetting compares a requested value with the value read back. comparable is false when
// they cannot be compared (different kinds: "16384" asked, "16384 8kB" read back; or a
// read-back that lists alternatives, "SuperClassic|Classic").
func sameSetting(asked, got string) (same, comparable bool) {
	if strings.Contains(got, "|") {
		return false, false
	}
	ka, a := normalize(asked)
	kg, b := normalize(got)
	// A bare 0/1 read back for an on/off setting (MariaDB's ON is 1 in some variables).
	if ka == kindBool && kg == kindNumber && (b == "0" || b == "1") {
		kg, b = kindBool, map[string]string{"0": "off", "1": "on"}[b]
	}
	if kg == kindBool && ka == kindNumber && (a == "0" || a == "1") {
		ka, a = kindBool, map[string]string{"0": "off", "1": "on"}[a]
	}
	// A bare number read back for a size asked with a unit: MariaDB reports sizes in bytes.
	// Not the other way round: a bare number asked may be in pages (PostgreSQL's
	// shared_buffers=16384 is "16384 8kB").
	if ka == kindBytes && kg == kindNumber {
		kg = kindBytes
	}
	if ka != kg {
		return false, false
	}
	return a == b, true
}

// bytesOf reads a size setting ("16384 8kB", "128MB", "134217728") in bytes; false when it
// is not a size. multiplier scales a bare number (a page count).
func bytesOf(v string, multiplier float64) (float64, bool) {
	k, s := normalize(v)
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false
	}
	switch k {
	case kindBytes:
		return f, true
	case kindNumber:
		return f * multiplier, true
	}
	return 0, false
}
