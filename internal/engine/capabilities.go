package engine

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/dblat/dblat/internal/managed"
	"github.com/dblat/dblat/internal/option"
	"github.com/dblat/dblat/internal/wire"
)

// The optional capabilities below are what an engine package declares about itself so that
// nothing outside package engine has to know which product it is: the execution core, the
// workloads, the CLI and the credibility checks read a capability from Caps (caps.go, where
// Register resolves them once), never a name. Each engine package asserts the ones it
// implements at compile time.

// Manager is an optional Engine capability: dblat can run private managed servers of the
// engine (package managed keeps them).
type Manager interface {
	// Launcher returns the launcher of the engine's managed servers.
	Launcher(cfg LaunchConfig) managed.Launcher
}

// LaunchConfig says how a Manager's launcher finds and runs the server.
type LaunchConfig struct {
	// BinDir is the directory of the server's binaries; "" means the engine's own search
	// (the OS packages' locations).
	BinDir string
	// Install is an installation of the server to run, in the layout the engine's own
	// distribution unpacks to (a PostgreSQL bin directory or its parent, a MariaDB
	// tarball's base directory, a Firebird home with bin/firebird and plugins/); "" means
	// BinDir or the engine's search. Relative paths are taken from the working directory.
	Install string
	// Version asks for a version of the server (PostgreSQL's "16"): an installation of it
	// that the engine finds (below StateDir, in the OS packages' locations), or, for an
	// Installer, fetches at start. "" means whatever BinDir, Install or the search finds.
	Version string
	// RunAs is the unprivileged OS user the server runs as when dblat runs as root; ""
	// means the first of managed.Unprivileged's candidates.
	RunAs string
	// StateDir is dblat's state directory (absolute): caches such as downloaded binaries
	// live below it.
	StateDir string
	// Warn receives warnings about the start (a setting the server adjusted); nil ignores them.
	Warn func(string)
}

// Installer is an optional Manager capability: fetching versions of the server into the
// state directory (`dblat server install`), so that managed servers and studies can run
// any of them (LaunchConfig.Version).
type Installer interface {
	// InstallVersions lists the versions Install can fetch, oldest first.
	InstallVersions() []string
	// Installed returns the directory of an installation of version that needs no fetching
	// (fetched before into cfg.StateDir, or from the OS packages), and false when there is
	// none. It does not run anything.
	Installed(cfg LaunchConfig, version string) (dir string, ok bool)
	// Install fetches version into cfg.StateDir (once: a later call finds it), verifies
	// that it runs and is that version, and returns its directory. Offline, the error says
	// what to fetch and where to put it.
	Install(ctx context.Context, cfg LaunchConfig, version string) (dir string, err error)
}

// Read-back settings that describe the server's build rather than its configuration, in
// every engine's Info.Settings where the engine (or, for a managed server, its executable)
// can tell. The credibility checks never compare builds of different word size (seed 002).
const (
	// SettingBits is the server build's word size, "32" or "64".
	SettingBits = "build.bits"
	// SettingArch is the server build's instruction set as uname -m spells it ("x86_64").
	SettingArch = "build.arch"
)

// ArchBits returns the word size of an instruction set named as uname -m, compilers'
// target triples or MariaDB's version_compile_machine name it, or 0 when it cannot tell.
func ArchBits(arch string) int {
	a := strings.ToLower(strings.TrimSpace(arch))
	switch {
	case a == "":
		return 0
	case strings.Contains(a, "64") || a == "s390x":
		return 64 // x86_64, amd64, aarch64, arm64, ppc64le, riscv64, sparc64, loongarch64
	case a == "x86" || a == "i386" || a == "i486" || a == "i586" || a == "i686" || strings.HasPrefix(a, "arm") ||
		a == "ppc" || a == "powerpc" || a == "mips" || a == "mipsel" || a == "riscv32":
		return 32
	}
	return 0
}

// SettingsChecker is an optional Manager capability: checking a managed server's settings
// before any server starts (names against the server's own list, values where the engine
// can tell), so that a study's plan reports a misspelt setting instead of its first run.
type SettingsChecker interface {
	// CheckSettings returns an error naming the first setting the server would refuse, with
	// a suggestion where one is close; or an error saying the server binaries are missing.
	CheckSettings(cfg LaunchConfig, settings map[string]string) error
}

// SettingError is a problem with one setting of a managed server, which front ends place at
// the setting (a flag's value, a study file's line).
type SettingError struct {
	// Name is the setting as given.
	Name string
	Err  error
}

func (e *SettingError) Error() string { return e.Err.Error() }
func (e *SettingError) Unwrap() error { return e.Err }

// SettingErrorf returns a *SettingError for setting name with a formatted message.
func SettingErrorf(name, format string, args ...any) error {
	return &SettingError{Name: name, Err: fmt.Errorf(format, args...)}
}

// Sockets is an optional Engine capability: a managed server of the engine also listens on a
// Unix socket, which runs may use instead of TCP (the "transport" run option).
type Sockets interface {
	// SocketDSN returns the DSN that reaches inst's benchmark database through its socket.
	SocketDSN(inst *managed.Instance) (string, error)
}

// RunHooks is an optional Engine capability: run options of the engine's own, and work it
// does around each run (Firebird's sweep and gstat -r, MariaDB's client-side parameter
// interpolation, the pause PostgreSQL's backends need to publish their counters).
type RunHooks interface {
	// RunOptions lists the options of the engine's runs. Options whose ManagedOnly is set
	// are refused for servers dblat does not manage.
	RunOptions() option.Set
	// RunDSN returns the DSN a run with vals connects with (dsn itself when no option
	// changes it).
	RunDSN(dsn string, vals option.Values) (string, error)
	// BeforeRun runs once the server's settings are read and before the statistics taken
	// before the run. It may add counters to rc.Stats and notes to rc.Notes.
	BeforeRun(ctx context.Context, rc *RunContext) error
	// AfterRun runs after the measurement window, before the statistics taken after it.
	AfterRun(ctx context.Context, rc *RunContext) error
}

// RunContext is what RunHooks see of a run.
type RunContext struct {
	// DSN is the DSN the run connects with.
	DSN string
	// DB is an open pool on the run's database, for reading counters.
	DB *sql.DB
	// Server is the managed server of the run; nil for a server dblat does not manage.
	Server *managed.Instance
	// Options are the run's values of the engine's RunOptions.
	Options option.Values
	// Stats receives counters to store with the run (before or after it, depending on
	// the hook); it is never nil.
	Stats Stats
	// Notes receives facts to store with the run's options ("swept_before" = "true").
	Notes map[string]string
	// Info reports progress to the user ("swept fb1 in 1.2 s").
	Info func(format string, args ...any)
}

// Restorer is an optional Engine capability: keeping a pristine copy of a loaded database
// and putting it back before a run, so that runs of a study do not drift as the data grows
// (seed 001). Implementations may need admin rights on the server; managed servers have them.
type Restorer interface {
	// CanRestore reports whether the engine can restore a database of a managed server
	// (managed true) or of a server dblat does not manage (managed false).
	CanRestore(managed bool) bool
	// SavePristine copies the database dsn names to its pristine copy, replacing an older one.
	SavePristine(ctx context.Context, dsn string) error
	// HasPristine reports whether a pristine copy of the database exists.
	HasPristine(ctx context.Context, dsn string) (bool, error)
	// RestorePristine replaces the database with its pristine copy. No connection to the
	// database may be open.
	RestorePristine(ctx context.Context, dsn string) error
}

// Templater is an optional Restorer capability: keeping a loaded database as a template in a
// directory of dblat's state (outside any one server) and making a server's database from
// it, so that a later study or load on a server of the same kind restores it instead of
// loading again. A template is keyed by what determines its content: the engine's part
// (TemplateKey: the server's version, the on-disk format, the page size or other storage
// settings) and the caller's (workload, scale, data seed).
type Templater interface {
	// TemplateKey returns the engine's part of the key of the database dsn names on inst
	// (inst nil: a server dblat does not manage), as name → value; ok is false when the
	// engine cannot make templates of it.
	TemplateKey(ctx context.Context, dsn string, inst *managed.Instance) (key map[string]string, ok bool, err error)
	// SaveTemplate copies the database dsn names into dir, an empty directory the caller
	// made. No other connection to the database may be writing.
	SaveTemplate(ctx context.Context, dsn, dir string) error
	// RestoreTemplate replaces the database dsn names with the template in dir, and makes
	// the template its pristine copy (RestorePristine then restores it). No connection to
	// the database may be open.
	RestoreTemplate(ctx context.Context, dsn, dir string) error
}

// Databases is an optional Engine capability of managed servers: benchmark databases that
// differ in an option fixed when a database is created (Firebird's page size). Each set of
// values has its own database on the same server, loaded once and, with a Restorer, with
// its own pristine copy.
type Databases interface {
	// DatabaseOptions lists the options fixed at creation.
	DatabaseOptions() option.Set
	// Database returns the DSN of inst's benchmark database created with vals, creating it
	// when it does not exist yet. With no values it returns inst.DSN.
	Database(ctx context.Context, inst *managed.Instance, vals option.Values) (string, error)
}

// LoadSession is an optional Engine capability: database settings a bulk load runs faster
// with, applied for the load's duration only (Firebird turns forced writes off: with them
// on, every page the load writes is written synchronously).
type LoadSession interface {
	// BeginLoad applies the settings to the database db is open on and returns the function
	// that restores them, which the loader calls once it is done, whether it succeeded or
	// not (with a context that is not canceled). Settings the engine cannot change here
	// (no rights on the server) are left alone, not an error.
	BeginLoad(ctx context.Context, db *sql.DB) (end func(context.Context) error, err error)
}

// Signaler is an optional Engine capability: the server's own view of what it was doing
// during a run — its WAL syncs, checkpoints, vacuum, the waits of its sessions — read once
// a second beside the run (package signals stores them as "db.NAME"), so that a dip in a
// run's throughput can be told apart: the host's disk, or the server's own checkpoint.
type Signaler interface {
	// SignalReader prepares reading the server's view on db (dblat's own connection, not
	// the terminals') and returns the function that reads it. The reader is called from
	// one goroutine, about once a second; it must not hold a transaction open between
	// calls.
	SignalReader(ctx context.Context, db *sql.DB) (func(ctx context.Context) ([]Signal, error), error)
}

// Signal is one value a server reports about itself: a Counter is cumulative (a run stores
// its difference per interval), any other a gauge read at the moment (sessions waiting
// now). Names are short, lower case and say their unit where it is not a count
// ("wal_sync_s").
type Signal struct {
	Name    string
	Value   float64
	Counter bool
}

// Settler is an optional Engine capability: after a run's connections close, the server
// needs a moment before its cumulative statistics include them (PostgreSQL's backends
// publish their counters when they go idle or exit).
type Settler interface {
	StatsSettle() time.Duration
}

// Comparer is an optional Engine capability: what the credibility checks need to know to
// judge whether two runs on this engine compare like for like.
type Comparer interface {
	Comparison() Comparison
}

// Comparison describes an engine's settings to the credibility checks.
type Comparison struct {
	// KeySettings are the read-back settings (as Inspect names them) whose difference
	// between runs in one chart makes the comparison unlike. Everything else Inspect
	// reports (ports, paths, volatile counters) is left to the report's tables.
	KeySettings []string
	// Location are the read-back settings that say where a server keeps its files and
	// listens (data directory, configuration files, port, socket): two servers differ in
	// them by construction, so run-to-run comparisons list them apart from the
	// configuration rather than as a difference that could explain a figure.
	Location []string
	// Aliases maps a requested setting's name (lower case) to the read-back names it
	// governs under another name (Firebird's WireCrypt reads back as wire_encrypted).
	Aliases map[string][]string
	// Canonical returns the canonical spelling of a setting's value where the engine has
	// several (Firebird's ServerMode ThreadedShared is SuperClassic), and ok false for
	// values it has nothing to say about. Nil: none.
	Canonical func(value string) (canonical string, ok bool)
	// Cache reads the server's own cache size in bytes from read-back settings, with the
	// setting's name and whether it is the engine's default; ok is false when the settings
	// do not say. Nil: the engine has no cache rule.
	Cache func(settings map[string]string) (name string, bytes float64, isDefault, ok bool)
	// NotApplied explains, by setting name (lower case), why a requested value may read back
	// differently and what to do.
	NotApplied map[string]Advice
	// Advise returns the engine's own findings about one run's read-back settings at the
	// given concurrency (Firebird Classic's per-connection caches). Nil: none.
	Advise func(settings map[string]string, connections int) []Advice
	// PageSize reads the size in bytes of the database's pages from read-back settings,
	// with the setting's name; ok is false when the settings do not say. Nil: the engine
	// has no page-size rule. Versions compared with different page sizes compare index
	// depths and cache sizes too (seed 002: Firebird 3 with 16 KB pages, 4 with 32 KB).
	PageSize func(settings map[string]string) (name string, bytes float64, ok bool)
	// VersionSettings are read-back settings that follow from the server's version itself
	// (Firebird's on-disk structure): they differ between the levels of a version factor by
	// necessity, not by configuration.
	VersionSettings []string
	// EncryptionSettings are read-back settings that encryption at rest sets (Encrypter:
	// MariaDB's innodb_encrypt_tables): they differ between the levels of an encryption
	// factor by design.
	EncryptionSettings []string
	// Conflicts explains a high rate of conflicts (retryable errors) in a run of this
	// server version with these read-back settings, where the engine knows a cause in its
	// configuration (Firebird 4's ReadConsistency restarting statements: seed 002); ok is
	// false when it knows none. Nil: none.
	Conflicts func(version string, settings map[string]string) (advice Advice, ok bool)
	// IO reads what the server's cache did over a run from the difference of its
	// statistics (Stats after less before): the pages it read from outside its cache, those
	// it looked up, and its transactions; ok is false when the statistics do not say. Nil:
	// the engine counts none.
	IO func(delta map[string]float64) (io IO, ok bool)
}

// Advice is one engine-specific finding about a run's configuration.
type Advice struct {
	// Rule names the finding ("fb-classic-buffers"); findings of one rule are grouped.
	Rule string
	// Warning is set for a warning; otherwise the advice is informational.
	Warning bool
	// Message says what is wrong and why it matters; it is the same for every run.
	Message string
	// Detail is this run's evidence ("SuperClassic with 4096 page buffers ...").
	Detail string
	// Fix says what to do.
	Fix string
}

// QueryProtocols is an optional Engine capability: the engine's driver can send one
// statement with one of several wire protocols, chosen per statement. PostgreSQL has three
// (pgbench -M): "simple" (Query message, parameters interpolated by the client), "extended"
// (unnamed statement: Parse, Bind, Describe, Execute, Sync every time) and "prepared" (a
// named statement parsed once per connection, then Bind, Execute, Sync).
type QueryProtocols interface {
	// QueryArgs returns the arguments that, put before a statement's own arguments in a
	// call of ExecContext, QueryContext or QueryRowContext of *sql.Conn or *sql.Tx with the
	// statement's text (never a prepared *sql.Stmt), make the driver send it with protocol
	// ("prepared", "simple" or "extended"); for "prepared" the driver prepares the statement
	// on first use on each connection and reuses it. An error says the engine does not
	// speak protocol; for "prepared", callers then prepare statements themselves through
	// database/sql (as on engines without the capability).
	QueryArgs(protocol string) ([]any, error)
}

// RowQuerier is an optional Engine capability: a lean path for a statement that returns one
// row, run alone on a connection (select-only, ping), that bypasses database/sql's row
// machinery (driver.Value conversion, Rows bookkeeping) by reaching the driver's connection
// through (*sql.Conn).Raw.
type RowQuerier interface {
	// QueryRowRaw runs query (in the dialect's placeholders) with args on the driver
	// connection beneath conn, outside any transaction, and scans its first row into dest
	// (pointers to int64). args may begin with the leading arguments of QueryArgs, which it
	// honours. It returns sql.ErrNoRows when there is no row.
	QueryRowRaw(ctx context.Context, conn *sql.Conn, query string, args []any, dest ...any) error
}

// TxOnly is an optional Engine capability: engines whose driver cannot run a statement
// outside an explicit transaction safely return true. The Firebird driver's autocommit keeps
// one transaction open for the connection's life (COMMIT RETAINING) and can leave a
// prepared query's work uncommitted (engines.md §2.2), so single-statement workloads run in
// a read-only transaction there.
type TxOnly interface {
	TxOnly() bool
}

// WireProtocol is an optional Engine capability: following the engine's client/server
// protocol on the connections a proxy forwards (package wire), to tell which statements
// form which transaction and what each costs in round trips, bytes and time. A proxy takes
// the protocol of the engine named on its command line, or offers every engine's
// (WireProtocols) to each connection, whose first bytes tell which it speaks.
type WireProtocol interface {
	WireProtocol() wire.Protocol
}

// WireProtocols returns the wire protocols of the registered engines that have one, in the
// order of the engines' names.
func WireProtocols() []wire.Protocol {
	var out []wire.Protocol
	for _, n := range Names() {
		e, _ := Lookup(n)
		if w := Caps(e).WireProtocol; w != nil {
			out = append(out, w.WireProtocol())
		}
	}
	return out
}

// CacheSizer is an optional Manager capability: the size of the cache a managed server
// allocates for itself, from the settings it is started with, so that a memory limit
// smaller than the cache is refused before the server starts (the server would be killed
// for memory it was told it could take).
type CacheSizer interface {
	// RequestedCache returns the bytes of the server's own cache that settings (as
	// requested; nil: none) ask for, the engine's default where they say nothing, and the
	// name of the setting that sizes it. An error says a value cannot be read as a size.
	RequestedCache(settings map[string]string) (setting string, bytes int64, err error)
}

// Encrypter is an optional Manager capability: managed servers that keep their data
// encrypted at rest (managed.Instance.Encrypted, server start --encryption on), which the
// engine's launcher sets up and Inspect reads back. An engine that has no encryption at
// rest implements it too, to say why, so that a factor that cannot be set is refused with
// its reason instead of being ignored.
type Encrypter interface {
	// CanEncrypt returns nil when servers launched with cfg can keep their data encrypted
	// at rest, and otherwise an error that says why not and what would.
	CanEncrypt(cfg LaunchConfig) error
}

// The operations a run may start on a managed server during its window (Operator), as
// dblat run --during and a study's during: name them.
const (
	// OpBackup takes a full online backup with the engine's own tool.
	OpBackup = "backup"
	// OpVacuum removes the row versions no transaction can see any more (PostgreSQL's
	// VACUUM, Firebird's sweep).
	OpVacuum = "vacuum"
	// OpCheckpoint writes every page changed in the server's cache to the data files.
	OpCheckpoint = "checkpoint"
	// OpIndex builds an index on one of the workload's largest tables (OperationRequest's
	// Table and Columns), the least blocking way the engine has.
	OpIndex = "index"
)

// Operator is an optional Manager capability: operations dblat starts on a managed server
// during a run's window (a backup, a vacuum or sweep, a checkpoint, an index build), each
// the engine's own way, so that a run measures what a production server's users feel
// while a DBA does them.
type Operator interface {
	// Operation says what the engine runs for op (OpBackup, ...) on servers launched with
	// cfg, in a few words ("pg_basebackup -X stream -c fast"), or returns an error saying
	// why it cannot (the engine has no such operation, its tool is not installed) and what
	// would.
	Operation(cfg LaunchConfig, op string) (string, error)
	// RunOperation runs req and returns when it has ended, or when ctx ends (it then stops
	// what it started). Its result says what it did; an error, why it failed.
	RunOperation(ctx context.Context, req OperationRequest) (OperationResult, error)
}

// OperationRequest is one operation an Operator runs.
type OperationRequest struct {
	// Op names the operation (OpBackup, ...).
	Op string
	// Server is the managed server; DSN its database the run uses, and DB dblat's own pool
	// on it (not the terminals').
	Server *managed.Instance
	DSN    string
	DB     *sql.DB
	// Dir is an empty directory on the server's machine for what the operation writes (a
	// backup), which the caller removes afterwards.
	Dir string
	// Table and Columns are what OpIndex indexes: one of the workload's largest tables.
	Table   string
	Columns []string
}

// OperationResult is what an operation did.
type OperationResult struct {
	// Detail says what it did, in a few words ("1.9 GiB in 142 files").
	Detail string
	// Undo, when set, takes back what the operation left in the database (the index it
	// built), so that the next run finds the data as the workload made it; the caller
	// runs it once the run's figures are taken.
	Undo func(ctx context.Context) error
}

// IO is what a server's own counters say of its cache over a run (Comparison.IO).
type IO struct {
	// Reads are the pages it read from outside its own cache (the OS's page cache or the
	// disk), Lookups the pages it looked for in its cache, read or found.
	Reads, Lookups float64
	// Transactions are the transactions it counted over the same span, which the reads
	// are divided by.
	Transactions float64
}
