package firebird

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/managed"
	"github.com/dblat/dblat/internal/option"
)

// What the Firebird engine declares to the rest of dblat (package engine's capabilities).
var (
	_ engine.Manager    = Engine{}
	_ engine.RunHooks   = Engine{}
	_ engine.Comparer   = Engine{}
	_ engine.Batcher    = Engine{}
	_ engine.BulkLoader = Engine{}
	_ engine.TxOnly     = Engine{}
	_ engine.Restorer   = Engine{}
	_ engine.Templater  = Engine{}
	_ engine.Databases  = Engine{}
)

// Launcher implements engine.Manager.
func (Engine) Launcher(cfg engine.LaunchConfig) managed.Launcher {
	return Launcher{BinDir: launchBinDir(cfg), RunAs: cfg.RunAs}
}

// Run options of Firebird: sweep and gstat -r around each session (seed 001), and the
// transaction parameters of read-write READ COMMITTED transactions (txparams.go).
const (
	OptionSweep          = "sweep"
	OptionGstat          = "gstat"
	OptionLockResolution = ParamLockResolution
	OptionRecordVersion  = ParamRecordVersion
)

var runOptions = option.Set{
	{Name: OptionSweep, Kind: option.Bool, Default: "false", ManagedOnly: true,
		Usage: "Firebird (managed): sweep the database before the run"},
	{Name: OptionGstat, Kind: option.Bool, Default: "false", ManagedOnly: true,
		Usage: "Firebird (managed): add gstat -r record and version statistics before and after the run"},
	{Name: OptionLockResolution, Kind: option.String, Default: DefaultLockResolve, Values: []string{LockWait, LockNoWait},
		Usage: "Firebird: a read-write READ COMMITTED transaction that meets a row changed by an uncommitted one waits for it (wait) or fails at once (nowait)"},
	{Name: OptionRecordVersion, Kind: option.String, Default: DefaultRecVersion, Values: []string{RecVersion, NoRecVersion},
		Usage: "Firebird: such a transaction reads the last committed version at once (rec_version) or waits for the writer and reads what it committed (no_rec_version, with wait only)"},
}

// RunOptions implements engine.RunHooks.
func (Engine) RunOptions() option.Set { return runOptions }

// RunDSN implements engine.RunHooks: the transaction parameters go into the DSN as the
// parameters Open reads (ParamLockResolution, ParamRecordVersion). A combination the driver
// cannot start (no_rec_version with nowait) is an error naming the fix.
func (Engine) RunDSN(dsn string, vals option.Values) (string, error) {
	return withTxParams(dsn, vals[OptionLockResolution], vals[OptionRecordVersion])
}

// BeforeRun implements engine.RunHooks: the sweep, then gstat -r.
func (Engine) BeforeRun(ctx context.Context, rc *engine.RunContext) error {
	if rc.Options.Bool(OptionSweep) {
		took, err := SweepDatabase(ctx, rc.Server, rc.DSN)
		if err != nil {
			return fmt.Errorf("sweep before the run: %w", err)
		}
		rc.Notes["swept_before"] = "true"
		rc.Info("swept %s in %.2f s", rc.Server.Name, took.Seconds())
	}
	return gstat(ctx, rc, "before")
}

// AfterRun implements engine.RunHooks: gstat -r.
func (Engine) AfterRun(ctx context.Context, rc *engine.RunContext) error {
	return gstat(ctx, rc, "after")
}

func gstat(ctx context.Context, rc *engine.RunContext, when string) error {
	if !rc.Options.Bool(OptionGstat) {
		return nil
	}
	g, err := DatabaseRecordStats(ctx, rc.Server, rc.DSN)
	if err != nil {
		return fmt.Errorf("gstat -r %s the run: %w", when, err)
	}
	for k, v := range g {
		rc.Stats[k] = v
	}
	return nil
}

// Defaults of DefaultDbCachePages (engines.md §1.4): 2048 pages in Super, 256 per
// attachment in Classic and SuperClassic.
const (
	defaultPagesSuper   = 2048
	defaultPagesClassic = 256
	// classicMaxBuffers is the page-buffer count per connection above which Classic and
	// SuperClassic slow down: "after 2048 buffers per connection, the cost of
	// synchronization of pages in separate caches of connections quickly grows" (seed 002).
	classicMaxBuffers = 2048
)

// Comparison implements engine.Comparer.
func (Engine) Comparison() engine.Comparison {
	return engine.Comparison{
		// Page size, page buffers (MON$PAGE_BUFFERS, reported under the firebird.conf name
		// DefaultDbCachePages), forced writes, architecture, the wire's encryption,
		// compression and protocol, ODS, dialect, character set and sweep interval. Names as
		// Inspect reports them.
		KeySettings: []string{
			KeyPageSize, "DefaultDbCachePages", "ForcedWrites", "ServerMode",
			"wire_encrypted", "wire_compressed", "network_protocol",
			"ods_version", "sql_dialect", "character_set", "sweep_interval", "ReadConsistency",
		},
		PageSize:        pageSize,
		VersionSettings: []string{"ods_version"},
		Conflicts:       conflicts,
		Aliases:         map[string][]string{"wirecrypt": {"wire_encrypted"}},
		Canonical: func(v string) (string, bool) {
			c, ok := serverModes[strings.ToLower(strings.TrimSpace(v))]
			return strings.ToLower(c), ok
		},
		Cache: func(settings map[string]string) (string, float64, bool, bool) {
			const name = "DefaultDbCachePages"
			pages, err1 := strconv.Atoi(strings.TrimSpace(setting(settings, name)))
			size, err2 := strconv.Atoi(strings.TrimSpace(setting(settings, KeyPageSize)))
			if err1 != nil || err2 != nil {
				return name, 0, false, false
			}
			def := defaultPagesSuper
			if classic(settings) {
				def = defaultPagesClassic
			}
			return name, float64(pages) * float64(size), pages == def, true
		},
		NotApplied: map[string]engine.Advice{
			"pagesize": {
				Message: "Firebird 3.0 silently clamps page sizes outside 4096–16384 (32768 becomes 16384), and an existing database keeps the page size it was created with (engines.md §1.5)",
				Fix:     "create the database with a page size this version supports (4096, 8192 or 16384 for 3.0) and rerun",
			},
			"defaultdbcachepages": {
				Message: "page buffers written into the database header with gfix -buffers override DefaultDbCachePages (engines.md §1.4, §6 item 6)",
				Fix:     "run gfix -buffers 0 on the database so that the configuration rules, and rerun",
			},
		},
		Advise: advise,
		IO:     cacheIO,
	}
}

func setting(settings map[string]string, key string) string {
	v, _ := engine.LookupSetting(settings, key)
	return v
}

func classic(settings map[string]string) bool {
	return strings.Contains(strings.ToLower(setting(settings, "ServerMode")), "classic")
}

// advise flags Classic and SuperClassic with more than 2048 page buffers: each connection
// has its own cache of that size (seed 002, engines.md §1.3).
func advise(settings map[string]string, connections int) []engine.Advice {
	if !classic(settings) {
		return nil
	}
	pages, err := strconv.Atoi(strings.TrimSpace(setting(settings, "DefaultDbCachePages")))
	if err != nil || pages <= classicMaxBuffers {
		return nil
	}
	detail := fmt.Sprintf("%s with %d page buffers", setting(settings, "ServerMode"), pages)
	if ps, err := strconv.Atoi(strings.TrimSpace(setting(settings, KeyPageSize))); err == nil && ps > 0 {
		per := float64(pages) * float64(ps)
		detail += fmt.Sprintf(" × %d B = %s per connection × %d = %s", ps, engine.FormatBytes(per), connections, engine.FormatBytes(per*float64(connections)))
	}
	return []engine.Advice{{
		Rule: "fb-classic-buffers", Warning: true,
		Message: "Firebird Classic/SuperClassic with more than 2048 page buffers: every connection keeps its own cache, so memory grows with the pool and synchronising the caches slows the server (seed 002: \"after 2048 buffers per connection, the cost of synchronization … quickly grows\")",
		Detail:  detail,
		Fix:     "use at most 2048 page buffers in Classic/SuperClassic (256 is their default), or SuperServer for a large shared cache",
	}}
}

var _ engine.SettingsChecker = Engine{}

// CheckSettings implements engine.SettingsChecker against the firebird.conf keys of the
// server's version (3.0's, and from 4.0 on the keys 4.0 and 5.0 added) and dblat's own
// (PageSize, ForcedWrites). An installation (cfg.Install) must hold a Firebird 3.0 to 5.0.
func (Engine) CheckSettings(cfg engine.LaunchConfig, settings map[string]string) error {
	major := 3
	if dir := launchBinDir(cfg); dir != "" {
		bin, err := FindBinaries(dir)
		if err != nil {
			return err
		}
		major = majorOf(bin.Version)
	}
	_, err := checkSettingsFor(major, settings)
	return err
}
