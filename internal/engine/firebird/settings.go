package firebird

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/suggest"
)

// knownKeys are the firebird.conf keys of Firebird 3.0.11: the entries table of
// src/common/config/config.cpp as compiled into Debian's /usr/sbin/firebird 3.0.11 (read
// with strings(1), in table order). They are the 54 keys documented as comments in the
// default /etc/firebird/3.0/firebird.conf plus three undocumented ones (TraceDSQL,
// LegacyHash, IPv6V6Only). Firebird 3.0 silently ignores any other key, so an unknown key
// here is refused rather than written.
var knownKeys = []string{
	"TempBlockSize", "TempCacheLimit", "RemoteFileOpenAbility", "GuardianOption", "CpuAffinityMask",
	"TcpRemoteBufferSize", "TcpNoNagle", "TcpLoopbackFastPath", "DefaultDbCachePages", "ConnectionTimeout",
	"DummyPacketInterval", "LockMemSize", "LockHashSlots", "LockAcquireSpins", "EventMemSize",
	"DeadlockTimeout", "RemoteServiceName", "RemoteServicePort", "RemotePipeName", "IpcName",
	"MaxUnflushedWrites", "MaxUnflushedWriteTime", "ProcessPriorityLevel", "RemoteAuxPort",
	"RemoteBindAddress", "ExternalFileAccess", "DatabaseAccess", "UdfAccess", "TempDirectories",
	"BugcheckAbort", "TraceDSQL", "LegacyHash", "GCPolicy", "Redirection", "DatabaseGrowthIncrement",
	"FileSystemCacheThreshold", "RelaxedAliasChecking", "AuditTraceConfigFile", "MaxUserTraceLogSize",
	"FileSystemCacheSize", "Providers", "AuthServer", "AuthClient", "UserManager", "TracePlugin",
	"SecurityDatabase", "ServerMode", "WireCrypt", "WireCryptPlugin", "KeyHolderPlugin", "RemoteAccess",
	"IPv6V6Only", "WireCompression", "AllowEncryptedSecurityDatabase", "ClearGTTAtRetaining",
	"LegacyDatabaseFileId",
}

// laterKeys are firebird.conf keys that first appeared in Firebird 4.0 or 5.0, named in the
// refusal so that a user who copied a newer configuration learns why.
var laterKeys = []string{
	"ReadConsistency", "StatementTimeout", "ConnectionIdleTimeout", "DefaultTimeZone",
	"MaxIdentifierByteLength", "MaxIdentifierCharLength", "SnapshotsMemSize", "TipCacheBlockSize",
	"DataTypeCompatibility", "OutputRedirectionFile", "ExtConnPoolSize", "ExtConnPoolLifeTime",
	"InlineSortThreshold", "ClientBatchBufferSize", "MaxParallelWorkers", "ParallelWorkers",
	"UseFileSystemCache", "MaxStatementCacheSize", "OptimizeForFirstRows", "ServerBoost",
	"AuthClientSspi", "CryptSecurityDatabase",
}

// Settings that dblat handles itself instead of writing them to firebird.conf.
const (
	// SettingPageSize is the page size in bytes of the benchmark database, given to CREATE
	// DATABASE when the instance is created (default 8192, Firebird 3.0's default). It is
	// fixed from then on: a later start that asks for another size fails.
	SettingPageSize = "PageSize"
	// SettingForcedWrites turns synchronous writes of the benchmark database "on" (every
	// new database's default) or "off", with gfix -write sync|async before each start.
	SettingForcedWrites = "ForcedWrites"
)

// Valid page sizes of Firebird 3.0: 4 KiB to 16 KiB in powers of two. 3.0 silently turns
// 32768 into 16384 and anything below 4096 into 4096 (32 KiB pages came with 4.0).
var validPageSizes = []int{4096, 8192, 16384}

// defaultPageSize is Firebird 3.0's default page size.
const defaultPageSize = 8192

// ownedKeys are firebird.conf keys dblat sets for every managed server, with why a user may
// not: the port, the loopback-only address and the private security database are what make
// the instance private.
var ownedKeys = map[string]string{
	"RemoteServicePort": "dblat sets the port: use --port",
	"RemoteServiceName": "dblat sets the port: use --port",
	"RemoteBindAddress": "managed servers listen on 127.0.0.1 only",
	"SecurityDatabase":  "each managed server has its own security3.fdb in its directory",
}

// serverModes maps the accepted ServerMode values (case-insensitive, with 3.0's aliases) to
// the canonical name.
var serverModes = map[string]string{
	"super": "Super", "threadeddedicated": "Super",
	"superclassic": "SuperClassic", "threadedshared": "SuperClassic",
	"classic": "Classic", "multiprocess": "Classic",
}

// serverConfig is what a managed server's settings mean once checked.
type serverConfig struct {
	// conf are the firebird.conf entries asked for, by canonical key.
	conf map[string]string
	// mode is the canonical ServerMode (Super if not asked).
	mode string
	// pageSize is 0 when not asked (then an existing database keeps its size and a new
	// one gets defaultPageSize).
	pageSize int
	// forcedWrites is "", "on" or "off".
	forcedWrites string
}

// checkSettings validates settings before anything is written or started: every key must
// be a Firebird 3.0 firebird.conf key that dblat does not own, or one of dblat's own
// (SettingPageSize, SettingForcedWrites); keys match case-insensitively, as Firebird's do.
// Values must fit on one line, and the values dblat reads back or interprets are checked
// here: ServerMode, WireCrypt, DefaultDbCachePages, PageSize, ForcedWrites. Errors are one
// line and name the key.
func checkSettings(settings map[string]string) (serverConfig, error) {
	cfg := serverConfig{conf: map[string]string{}, mode: "Super"}
	canonical := map[string]string{}
	for _, k := range knownKeys {
		canonical[strings.ToLower(k)] = k
	}
	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := strings.TrimSpace(settings[k])
		if strings.ContainsAny(v, "\r\n#") {
			return cfg, engine.SettingErrorf(k, "Firebird setting %s: the value must be one line without '#'", k)
		}
		switch strings.ToLower(k) {
		case strings.ToLower(SettingPageSize):
			n, err := strconv.Atoi(v)
			if err != nil || !validPageSize(n) {
				return cfg, engine.SettingErrorf(k, "Firebird setting %s=%s: Firebird 3.0 supports page sizes %s (it would silently clamp %s; 32768 needs 4.0)",
					k, v, joinInts(validPageSizes, ", "), v)
			}
			cfg.pageSize = n
			continue
		case strings.ToLower(SettingForcedWrites):
			switch strings.ToLower(v) {
			case "on", "true", "sync", "1":
				cfg.forcedWrites = "on"
			case "off", "false", "async", "0":
				cfg.forcedWrites = "off"
			default:
				return cfg, engine.SettingErrorf(k, "Firebird setting %s=%s: use on or off", k, v)
			}
			continue
		}
		name, ok := canonical[strings.ToLower(k)]
		if !ok {
			return cfg, unknownKey(k)
		}
		if why, owned := ownedKeys[name]; owned {
			return cfg, engine.SettingErrorf(k, "Firebird setting %s cannot be set: %s", k, why)
		}
		switch name {
		case "ServerMode":
			mode, ok := serverModes[strings.ToLower(v)]
			if !ok {
				return cfg, engine.SettingErrorf(k, "Firebird setting ServerMode=%s: use Super, SuperClassic or Classic", v)
			}
			cfg.mode = mode
			v = mode
		case "WireCrypt":
			switch strings.ToLower(v) {
			case "disabled", "enabled", "required":
			default:
				return cfg, engine.SettingErrorf(k, "Firebird setting WireCrypt=%s: use Disabled, Enabled or Required", v)
			}
		case "DefaultDbCachePages":
			if n, err := strconv.Atoi(v); err != nil || n <= 0 {
				return cfg, engine.SettingErrorf(k, "Firebird setting DefaultDbCachePages=%s: want a number of pages", v)
			}
		}
		cfg.conf[name] = v
	}
	return cfg, nil
}

func validPageSize(n int) bool {
	for _, s := range validPageSizes {
		if n == s {
			return true
		}
	}
	return false
}

func joinInts(xs []int, sep string) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, sep)
}

// unknownKey explains why key is refused, with the nearest known key when one is close.
func unknownKey(key string) error {
	for _, k := range laterKeys {
		if strings.EqualFold(k, key) {
			return engine.SettingErrorf(key, "unknown Firebird 3.0 setting %q: %s is a Firebird 4.0+ key, which 3.0 would silently ignore", key, k)
		}
	}
	// Up to three edits away counts as a typo.
	best := suggest.Closest(key, append(slices.Clone(knownKeys), SettingPageSize, SettingForcedWrites), 3)
	hint := ""
	if best != "" {
		hint = fmt.Sprintf(" (did you mean %s?)", best)
	}
	return engine.SettingErrorf(key, "unknown Firebird 3.0 setting %q%s: Firebird would silently ignore it", key, hint)
}
