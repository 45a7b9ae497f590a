package execution

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/latency"
	"github.com/dblat/dblat/internal/managed"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/spec"
	"github.com/dblat/dblat/internal/workload"
)

// Store is what a Core needs of the results store.
type Store interface {
	Begin(ctx context.Context, r *results.Run) (int64, error)
	AddSamples(ctx context.Context, runID int64, samples []results.Sample) error
	Finish(ctx context.Context, r *results.Run) error
	SaveStudy(ctx context.Context, st results.Study) error
	CellCounts(ctx context.Context, study string) (map[string]map[results.Status]int, error)
	// List reads stored runs: a study's finished runs, and those of a cell key in any study,
	// from which a study decides its repeats.
	List(ctx context.Context, f results.Filter) ([]results.Run, error)
}

// Core runs runs and studies. Its fields are set once; a Core is used by one goroutine at a
// time.
type Core struct {
	// Store receives every run; the caller opens and closes it.
	Store Store
	// Servers are the managed servers of the state directory.
	Servers managed.Registry
	// Launch says how managed servers are started; BinDirs overrides Launch.BinDir per
	// engine name.
	Launch  engine.LaunchConfig
	BinDirs map[string]string
	// Observer is told what happens; nil means NopObserver.
	Observer Observer
	// Agents runs a Spec in parts on n agents and stores the merged run (internal/agent's
	// Coordinator); a study with agents needs it. It is called with the study's target
	// prepared (started, loaded, restored).
	Agents func(ctx context.Context, drain <-chan struct{}, rs spec.Run, n int) (*results.Run, error)
	// BeforeStart, when set, is the run's start barrier: it is called once the run is stored
	// as running and just before its terminals start, and the terminals start when it
	// returns. An agent waits there for the coordinator's announced start (package agent).
	// Its error fails the run.
	BeforeStart func(ctx context.Context, run *results.Run) error
	// HoldCPULatency keeps the CPUs out of deep idle states during runs and studies
	// (latency.HoldCPULatency), where the machine permits it; every run records whether it
	// was held.
	HoldCPULatency bool
	// NoSignals leaves runs without the host's, dblat's and the server's signals (package
	// signals), and so without disturbances: what BenchmarkSignalsCost compares against.
	NoSignals bool

	hold      *latency.CPULatencyHold
	holdCount int
	holdWarn  bool
}

// holdCPU takes the CPU latency hold for a run or a study, if asked and permitted, and
// returns the function that gives it back. Nested holds share one.
func (c *Core) holdCPU() func() {
	if !c.HoldCPULatency {
		return func() {}
	}
	if c.holdCount == 0 {
		h, err := latency.HoldCPULatency()
		if err != nil {
			if !c.holdWarn {
				c.holdWarn = true
				c.info("note: CPUs not held out of deep idle states (%v); runs record it, and the link's timing is less precise", err)
			}
			return func() {}
		}
		c.hold = h
	}
	c.holdCount++
	return func() {
		if c.holdCount--; c.holdCount == 0 {
			c.hold.Release()
			c.hold = nil
		}
	}
}

// cpuHeld reports whether the CPU latency hold is in force.
func (c *Core) cpuHeld() bool { return c.hold != nil }

func (c *Core) obs() Observer {
	if c.Observer == nil {
		return NopObserver{}
	}
	return c.Observer
}

func (c *Core) info(format string, args ...any) { c.obs().Info(fmt.Sprintf(format, args...)) }

// Target is a resolved database to benchmark: a managed server or a DSN.
type Target struct {
	Engine engine.Engine
	// DSN connects to the benchmark database. It may hold a password: never store or print it.
	DSN string
	// Label names the target in output and results: the server's name or the redacted DSN.
	Label string
	// Server is the managed server; nil for a server dblat does not manage.
	Server *managed.Instance
}

// Resolve interprets a target: a managed server's name or a DSN.
func (c *Core) Resolve(spec string) (*Target, error) {
	if spec == "" {
		return nil, Inputf("no target: give a managed server's name (see `dblat server list`) or a DSN such as postgres://user@host:5432/db or mysql://user:pw@host:3306/db")
	}
	if engine.IsDSN(spec) {
		e, err := engine.ForDSN(spec)
		if err != nil {
			return nil, asInput(fmt.Errorf("target: %w", err))
		}
		return &Target{Engine: e, DSN: spec, Label: e.Redact(spec)}, nil
	}
	inst, err := c.Servers.Load(spec)
	if err != nil {
		return nil, err
	}
	if inst.PID == 0 {
		return nil, Inputf("server %s is not running: start it with `dblat server start %s --name %s`", spec, inst.Engine, spec)
	}
	e, err := engine.Lookup(inst.Engine)
	if err != nil {
		return nil, err
	}
	return &Target{Engine: e, DSN: inst.DSN, Label: spec, Server: inst}, nil
}

// Open connects to the target's database dsn ("" means t.DSN).
func (t *Target) Open(ctx context.Context, dsn string, opts engine.OpenOptions) (workload.Target, error) {
	if dsn == "" {
		dsn = t.DSN
	}
	db, err := t.Engine.Open(ctx, dsn, opts)
	if err != nil {
		return workload.Target{}, fmt.Errorf("target %s: %w", t.Label, err)
	}
	return workload.Target{Engine: t.Engine, DB: db}, nil
}

func closeDB(t workload.Target) {
	if t.DB != nil {
		_ = t.DB.Close()
	}
}

// StartServer creates (if new) or restarts the managed server name of engine engineName on
// port (0: a free one, kept across restarts) with settings (nil: those of the last start),
// and saves its record. A server that already runs is left as it is, unless settings or the
// port differ, which is an error. It is Start without an installation or version.
func (c *Core) StartServer(ctx context.Context, engineName, name string, port int, settings map[string]string) (*managed.Instance, error) {
	return c.Start(ctx, ServerStart{Engine: engineName, Name: name, Port: port, Settings: settings})
}

// ServerStart says which managed server to start and how.
type ServerStart struct {
	Engine, Name string
	// Port is the loopback port; 0 takes a free one, kept across restarts.
	Port int
	// Settings replace those of the last start; nil keeps them.
	Settings map[string]string
	// Install and Version choose the server's binaries (engine.LaunchConfig); "" keeps
	// those the server was created with. A server created with another one is an error:
	// its data directory belongs to that version.
	Install, Version string
	// Storage is where a new server keeps its data (managed.StorageDisk or StorageMemory;
	// "" is disk); a server created with another is an error.
	Storage string
	// Memory is the memory limit the server runs under (managed.ParseMemory: "512MB", or
	// managed.MemoryNone for the machine's memory); "" keeps the one of its last start.
	Memory string
	// Encryption is "on" for a new server that keeps its data encrypted at rest (the
	// engine's engine.Encrypter), "off" or "" for one that does not; a server created
	// otherwise is an error.
	Encryption string
}

// checkStartRequest checks what req asks of e's server before anything is made, making
// req.Install absolute; it returns the memory limit asked for (-1: keep the last start's)
// and whether the server is to be encrypted.
func (c *Core) checkStartRequest(e engine.Engine, req *ServerStart) (limit int64, encrypt bool, err error) {
	if req.Install != "" && req.Version != "" {
		return 0, false, Inputf("give --install DIR or --version V, not both")
	}
	if req.Install != "" {
		abs, err := filepath.Abs(req.Install)
		if err != nil {
			return 0, false, asInput(err)
		}
		req.Install = abs
	}
	if req.Install != "" || req.Version != "" {
		// A wrong directory or a version that cannot be had is bad input, found before
		// anything is created.
		cfg := c.launchConfig(e.Name())
		cfg.Install, cfg.Version = req.Install, req.Version
		if _, err := c.checkBinaries(e, cfg); err != nil {
			return 0, false, asInput(err)
		}
	}
	if err := c.checkStartSettings(e, *req); err != nil {
		return 0, false, err
	}
	limit = -1 // keep the limit of the last start
	if req.Memory != "" {
		if limit, err = managed.ParseMemory(req.Memory); err != nil {
			return 0, false, Inputf("memory %v", err)
		}
	}
	encrypt = req.Encryption == "on"
	if req.Encryption != "" && req.Encryption != "on" && req.Encryption != "off" {
		return 0, false, Inputf("encryption must be on or off, got %q", req.Encryption)
	}
	if encrypt {
		cfg := c.launchConfig(e.Name())
		cfg.Install, cfg.Version = req.Install, req.Version
		if err := canEncrypt(e, cfg); err != nil {
			return 0, false, asInput(err)
		}
	}
	return limit, encrypt, nil
}

// contain puts inst's started server in cgroups of its own, and reads its memory limit
// back; a limit that does not hold stops the server.
func (c *Core) contain(ctx context.Context, l managed.Launcher, inst *managed.Instance) error {
	if err := managed.Contain(inst); err != nil && inst.Memory > 0 && inst.MemoryCgroup == "" {
		_ = l.Stop(ctx, inst)
		managed.Release(inst)
		return fmt.Errorf("server %s: %w", inst.Name, err)
	}
	if inst.Memory > 0 {
		got, err := managed.MemoryLimit(inst)
		if err != nil {
			_ = l.Stop(ctx, inst)
			managed.Release(inst)
			return fmt.Errorf("server %s: read back its memory limit: %w", inst.Name, err)
		}
		c.info("server %s runs under a memory limit of %s (%s)", inst.Name, engine.FormatBytes(float64(got)), inst.MemoryCgroup)
	}
	return nil
}

// Start creates (if new) or restarts a managed server as req says, and saves its record.
// A server that already runs is left as it is, unless its settings, port, installation or
// version differ, which is an error.
func (c *Core) Start(ctx context.Context, req ServerStart) (*managed.Instance, error) {
	e, err := engine.Lookup(req.Engine)
	if err != nil {
		return nil, asInput(err)
	}
	mgr := engine.Caps(e).Manager
	if mgr == nil {
		return nil, Inputf("dblat cannot manage %s servers (managed engines: %s); connect to your own with --target DSN",
			e.Name(), strings.Join(engine.Managed(), ", "))
	}
	name := req.Name
	if err := managed.CheckName(name); err != nil {
		return nil, asInput(err)
	}
	limit, encrypt, err := c.checkStartRequest(e, &req)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(c.Servers.Root, 0o755); err != nil {
		return nil, Inputf("state directory %s: %v (choose another with --state)", c.Servers.Root, err)
	}
	inst, err := c.Servers.Load(name)
	made := err == nil // by an earlier start, perhaps of an earlier dblat
	switch {
	case errors.Is(err, managed.ErrNoInstance):
		inst = &managed.Instance{Name: name, Engine: e.Name(), Dir: c.Servers.Dir(name), Storage: req.Storage, Encrypted: encrypt}
		if err := checkMemory(e, limit, req.Settings); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(inst.Dir, 0o755); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, err
	case inst.Engine != e.Name():
		return nil, Inputf("server %q is a %s server, not %s", name, inst.Engine, e.Name())
	case req.Storage != "" && req.Storage != inst.StorageOf():
		return nil, Inputf("server %q keeps its data %s, not %s: give another --name", name, managed.StoragePhrase(inst.StorageOf()), managed.StoragePhrase(req.Storage))
	case req.Encryption != "" && encrypt != inst.Encrypted:
		return nil, Inputf("server %q was created %s, and its data stays so: give another --name for a server %s",
			name, encryptedPhrase(inst.Encrypted), encryptedPhrase(encrypt))
	}
	if have, want := otherBinaries(inst, req); have != "" {
		return nil, Inputf("server %q runs %s, not %s: its data directory belongs to %s; give %s another --name (or remove %s)",
			name, have, want, have, want, inst.Dir)
	}
	if inst.PID != 0 {
		if req.Settings != nil || (req.Port != 0 && req.Port != inst.Port) {
			return nil, Inputf("server %q is running (PID %d): stop it first to change its settings", name, inst.PID)
		}
		if limit >= 0 && limit != inst.Memory {
			return nil, Inputf("server %q is running (PID %d) with a memory limit of %s: stop it first to give it %s", name, inst.PID,
				managed.FormatMemory(inst.Memory), managed.FormatMemory(limit))
		}
		c.info("server %s is already running (PID %d)", name, inst.PID)
		if !inst.HasCredentials() {
			c.info("warning: server %s was started by an earlier dblat and may let in any user of this machine: restart it (dblat server stop %s, then server start) to give it credentials", name, name)
		}
		return inst, nil
	}
	// An instance of a dblat from before credentials/ gets them at this start.
	earlier := made && !inst.HasCredentials()
	if req.Settings != nil {
		inst.Settings = req.Settings
	}
	if req.Port != 0 {
		inst.Port = req.Port
	}
	if req.Install != "" || req.Version != "" {
		inst.Install, inst.Version = req.Install, req.Version
	}
	if limit >= 0 {
		inst.Memory = limit
	}
	if made {
		if err := checkMemory(e, inst.Memory, inst.Settings); err != nil {
			return nil, err
		}
	}
	l := c.launcherFor(mgr, e.Name(), inst)
	if in := engine.Caps(e).Installer; in != nil && inst.Version != "" {
		if _, ok := in.Installed(c.launchConfig(e.Name()), inst.Version); !ok {
			c.info("%s %s is not installed: fetching it into %s first (once; `dblat server install` does only that)", e.Name(), inst.Version, c.launchConfig(e.Name()).StateDir)
		}
	}
	if err := c.placeData(e, inst); err != nil {
		return nil, err
	}
	c.info("starting %s server %s in %s ...", e.Name(), name, inst.Dir)
	if err := l.Start(ctx, inst); err != nil {
		return nil, fmt.Errorf("server %s: %w", name, err)
	}
	// A cgroup of its own lets each run tell the server's CPU and waits from the machine's;
	// without one (no rights, no cgroup v2) its process tree is read instead. A memory
	// limit must hold, or the server does not run.
	if err := c.contain(ctx, l, inst); err != nil {
		return nil, err
	}
	if err := c.Servers.Save(inst); err != nil {
		_ = l.Stop(ctx, inst)
		return nil, err
	}
	if earlier && inst.HasCredentials() {
		c.info("server %s was made by an earlier dblat: its clients now log in with the credentials in %s, which only you can read (its DSN names the file)",
			name, filepath.Join(inst.Dir, managed.CredentialsDir))
	}
	c.info("server %s is up on 127.0.0.1:%d (PID %d)", name, inst.Port, inst.PID)
	return inst, nil
}

// encryptedPhrase says how a server keeps its data: "encrypted at rest", "unencrypted".
func encryptedPhrase(on bool) string {
	if on {
		return "encrypted at rest"
	}
	return "unencrypted"
}

// canEncrypt says why e's servers launched with cfg cannot keep their data encrypted at
// rest, or nil when they can (engine.Encrypter).
func canEncrypt(e engine.Engine, cfg engine.LaunchConfig) error {
	enc := engine.Caps(e).Encrypter
	if enc == nil {
		return fmt.Errorf("dblat cannot encrypt a %s server's data at rest", e.Name())
	}
	return enc.CanEncrypt(cfg)
}

// checkMemory says why a server of e with settings cannot run under a memory limit of
// limit bytes (0 or less: none): the host cannot limit a server's memory, or the cache the
// settings ask for (engine.CacheSizer) does not fit in it, which would have the server
// killed for memory it was told it could take. It is an *InputError.
func checkMemory(e engine.Engine, limit int64, settings map[string]string) error {
	if limit <= 0 {
		return nil
	}
	if err := managed.CanLimitMemory(); err != nil {
		return asInput(err)
	}
	cs := engine.Caps(e).CacheSizer
	if cs == nil {
		return nil
	}
	name, cache, err := cs.RequestedCache(settings)
	if err != nil {
		return asInput(err)
	}
	if cache >= limit {
		return Inputf("memory %s is not more than the cache the server takes for itself (%s = %s): give it more memory, or a smaller %s",
			managed.FormatMemory(limit), name, engine.FormatBytes(float64(cache)), name)
	}
	return nil
}

// placeData puts inst's data directory where its storage says (managed.PlaceData), owned
// by the account the engine's servers run as.
func (c *Core) placeData(e engine.Engine, inst *managed.Instance) error {
	acct, err := managed.Unprivileged(c.launchConfig(e.Name()).RunAs)
	if err != nil {
		return err
	}
	note, err := inst.PlaceData(acct)
	if err != nil {
		return asInput(err)
	}
	if note != "" {
		c.info("%s", note)
	}
	return nil
}

// checkStartSettings judges req's settings against the binaries the server will run
// (those req names, else those it was created with), before anything is created or
// started: an unknown setting is bad input. Binaries that cannot be found are left to the
// start to report, as without settings.
func (c *Core) checkStartSettings(e engine.Engine, req ServerStart) error {
	sc := engine.Caps(e).SettingsChecker
	if sc == nil || len(req.Settings) == 0 {
		return nil
	}
	cfg := c.launchConfig(e.Name())
	cfg.Install, cfg.Version = req.Install, req.Version
	if prev, err := c.Servers.Load(req.Name); err == nil && req.Install == "" && req.Version == "" {
		cfg.Install, cfg.Version = prev.Install, prev.Version
	}
	if sc.CheckSettings(cfg, nil) != nil {
		return nil //nolint:nilerr // binaries that cannot be found are left to the start to report
	}
	return asInput(sc.CheckSettings(cfg, req.Settings))
}

// otherBinaries says which binaries inst was created with (have) when req asks for others
// (want), or "" when it does not: an installation or version given now differs from the
// one recorded (nothing recorded means the engine's default, which a request may pin down).
func otherBinaries(inst *managed.Instance, req ServerStart) (have, want string) {
	if req.Install == "" && req.Version == "" {
		return "", ""
	}
	describe := func(install, version string) string {
		if install != "" {
			return "the installation " + install
		}
		return "version " + version
	}
	have, want = describe(inst.Install, inst.Version), describe(req.Install, req.Version)
	if (inst.Install == "" && inst.Version == "") || have == want {
		return "", ""
	}
	return have, want
}

// launcherFor returns the launcher of inst: the core's configuration with the
// installation and version inst records.
func (c *Core) launcherFor(mgr engine.Manager, engineName string, inst *managed.Instance) managed.Launcher {
	cfg := c.launchConfig(engineName)
	cfg.Install, cfg.Version = inst.Install, inst.Version
	return mgr.Launcher(cfg)
}

// launchConfig is how servers of engineName are launched: the core's Launch with the
// engine's BinDirs entry and the state directory filled in.
func (c *Core) launchConfig(engineName string) engine.LaunchConfig {
	cfg := c.Launch
	if d := c.BinDirs[engineName]; d != "" {
		cfg.BinDir = d
	}
	if cfg.StateDir == "" {
		cfg.StateDir = c.Servers.Root
	}
	if cfg.Warn == nil {
		cfg.Warn = func(msg string) { c.info("warning: %s", msg) }
	}
	return cfg
}

// StopServer stops the managed server name if it runs (its data is kept).
func (c *Core) StopServer(ctx context.Context, name string) error {
	inst, err := c.Servers.Load(name)
	if err != nil {
		return err
	}
	if inst.PID == 0 {
		c.info("server %s is not running", name)
		return nil
	}
	e, err := engine.Lookup(inst.Engine)
	if err != nil {
		return err
	}
	mgr := engine.Caps(e).Manager
	if mgr == nil {
		return fmt.Errorf("server %s: engine %s no longer manages servers", name, inst.Engine)
	}
	pid := inst.PID
	if err := c.launcherFor(mgr, e.Name(), inst).Stop(ctx, inst); err != nil {
		_ = c.Servers.Save(inst)
		return fmt.Errorf("stop server %s: %w", name, err)
	}
	managed.Release(inst)
	c.info("server %s stopped (PID %d)", name, pid)
	return c.Servers.Save(inst)
}

// RemoveServer removes the stopped managed server name: its data in memory, if it kept it
// there, and its directory. A running server is refused: stop it first.
func (c *Core) RemoveServer(name string) error {
	inst, err := c.Servers.Load(name)
	if err != nil {
		return asInput(err)
	}
	if inst.PID != 0 {
		return Inputf("server %s is running (PID %d): stop it first with `dblat server stop %s`", name, inst.PID, name)
	}
	if err := inst.RemoveData(); err != nil {
		return err
	}
	if err := os.RemoveAll(inst.Dir); err != nil {
		return err
	}
	c.info("server %s removed (%s)", name, inst.Dir)
	return nil
}

// Install fetches version of engineName's server into the state directory (once; a later
// call finds it) and returns its directory, for `dblat server install` and studies that
// ask for a version not installed yet.
func (c *Core) Install(ctx context.Context, engineName, version string) (string, error) {
	e, err := engine.Lookup(engineName)
	if err != nil {
		return "", asInput(err)
	}
	in := engine.Caps(e).Installer
	if in == nil {
		return "", Inputf("dblat cannot fetch %s servers: unpack one yourself and start it with `dblat server start %s --install DIR`", e.Name(), e.Name())
	}
	if !slices.Contains(in.InstallVersions(), version) {
		return "", Inputf("%s %q: dblat fetches versions %s", e.Name(), version, strings.Join(in.InstallVersions(), ", "))
	}
	cfg := c.launchConfig(e.Name())
	if err := os.MkdirAll(cfg.StateDir, 0o755); err != nil {
		return "", Inputf("state directory %s: %v (choose another with --state)", cfg.StateDir, err)
	}
	if dir, ok := in.Installed(cfg, version); ok {
		c.info("%s %s is installed in %s", e.Name(), version, dir)
	} else {
		c.info("fetching %s %s into %s ...", e.Name(), version, cfg.StateDir)
	}
	return in.Install(ctx, cfg, version)
}
