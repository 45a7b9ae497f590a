package firebird

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/managed"
)

// Launcher runs private Firebird servers (managed.Launcher): 3.0 from Debian's packages,
// and 3.0 to 5.0 from a Firebird home such as their Linux tarballs unpack to (BinDir is
// its bin/; versions.go says what differs between versions). An instance directory holds
// the whole server:
//
//	firebird.conf      written on every start: port, 127.0.0.1, ServerMode, the user's keys
//	databases.conf     forbids remote access to the security database
//	plugins.conf       copied from the installation
//	intl, plugins, UDF, firebird.msg   links into the installation's root
//	security3.fdb      a fresh security database holding only SYSDBA (Srp)
//	credentials/       sysdba.password, SYSDBA's generated password (PasswordFile), mode
//	                   0600, the invoking user's: the DSN names it (PasswordFileParam), and
//	                   isql, gfix and fbsvcmgr read it with -fetch_password
//	lock/              FIREBIRD_LOCK: lock table, monitoring and init files
//	data/bench.fdb     the benchmark database
//	load/              the load directory: files of external tables (LoadDirParam), the
//	                   only place the server reads them from (ExternalFileAccess)
//	server.log         the server's stderr, its only log when it does not run as root
//	firebird.pid       the server's PID while it runs, written by dblat
//
// The server is /usr/sbin/firebird run with FIREBIRD=<dir> (so it reads the configuration
// above; Debian's compiled-in paths keep plugins at the installation) and
// FIREBIRD_LOCK=<dir>/lock, as the unprivileged account when dblat runs as root. The same
// binary serves all three architectures: ServerMode=Super and SuperClassic run one
// multi-threaded process; ServerMode=Classic makes it a listener that forks one process per
// connection (no xinetd). It never daemonizes, so its PID is the one dblat started; it does
// call setpgrp(), so it is stopped by PID, never through dblat's process group. Its one
// argument is the instance directory: the server ignores arguments that are not switches, and
// the directory names the instance in ps and /proc/PID/cmdline, by which the test helpers
// recognise a server that a dead test binary left behind (managed.TestDirs).
//
// The security and benchmark databases are created before the server first starts, by the
// embedded engine (isql-fb with no host in the path, run as the server's account): no
// password crosses the wire and the files belong to the server's account, mode 0660, so
// that no other user of the machine opens them through an embedded engine of its own
// (Firebird has no Unix socket on Linux: a client is remote over TCP, with SYSDBA's
// password, or embedded, with the files' permissions). The page size
// comes from the PageSize setting, because the driver's own CREATE always makes 4 KiB
// pages. CreateDatabase adds databases to a running server.
type Launcher struct {
	// BinDir overrides the search for the binaries (the --fb-bin flag): a directory holding
	// firebird, isql (or isql-fb) and gfix, as in the bin directory of Firebird's own
	// installer; its parent is then taken as the Firebird root.
	BinDir string
	// RunAs names the unprivileged user to run as when dblat runs as root ("" = auto).
	RunAs string
	// StartTimeout bounds how long Start waits for the server to accept connections
	// (default 60 s).
	StartTimeout time.Duration
	// ParentDeathSignal, when set, is sent to the server by the kernel when the thread that
	// started it exits (Linux PR_SET_PDEATHSIG), so that a test binary killed by its
	// time-out leaves no server behind. Go threads practically never exit, but a goroutine
	// that ends while locked to its thread takes the thread along, and the signal with it.
	// For tests only (fbtest sets SIGKILL): managed servers must outlive dblat.
	ParentDeathSignal syscall.Signal
}

// InstallHint tells a user how to get Firebird 3.0 binaries.
const InstallHint = "install them with `apt-get install firebird3.0-server firebird3.0-utils` (Debian/Ubuntu; the system service need not run), or point --fb-bin at the bin directory of a Firebird 3.0 installation"

// Binaries are the Firebird programs and files a Launcher uses.
type Binaries struct {
	Server string // the server (Debian: /usr/sbin/firebird)
	ISQL   string // isql (Debian: /usr/bin/isql-fb)
	GFix   string // gfix
	// Root is the installation's root directory, which holds intl/, plugins/, UDF/,
	// firebird.msg and plugins.conf (Debian: /usr/lib/<triplet>/firebird/3.0).
	Root string
	// Version is what `firebird -z` prints ("LI-V3.0.11.33637 Firebird 3.0").
	Version string
}

// Names and places inside an instance directory.
const (
	benchFile     = "bench.fdb"
	pidFile       = "firebird.pid"
	oldPassword   = "sysdba.password" // where dblat kept it before credentials/
	securityFile  = "security3.fdb"
	sysdba        = "SYSDBA"
	dataDir       = "data"
	loadDir       = "load"
	lockDir       = "lock"
	debianServer  = "/usr/sbin/firebird"
	debianRootPat = "/usr/lib/*/firebird/3.0"
)

// Grace periods for Stop. A server without clients normally shuts down within 0.1-1.6 s of
// SIGTERM, but Firebird 3.0.11 now and then wedges in its shutdown (seen in all three
// architectures, with and without clients, about once in ten test runs): the signal is
// taken, the process stays up and further SIGTERMs change nothing. Such a server is killed
// after stopGrace. A Classic connection process normally exits within 0.2 s of SIGTERM,
// and is killed after childGrace otherwise. Killing loses nothing committed: Firebird
// writes a transaction's pages at commit (careful write order keeps the file consistent),
// and the lock manager purges dead owners.
const (
	stopGrace  = 10 * time.Second
	childGrace = 3 * time.Second
	// disconnectTimeout bounds disconnectAll: an attach and one statement, normally well
	// under a second.
	disconnectTimeout = 5 * time.Second
)

// FindBinaries returns the Firebird 3.0 programs: those in dir if given, else Debian's
// (/usr/sbin/firebird, isql-fb and gfix from PATH). It refuses other versions than 3.0,
// whose settings and page sizes differ.
func FindBinaries(dir string) (Binaries, error) {
	isFile := func(p string) bool {
		st, err := os.Stat(p)
		return err == nil && !st.IsDir()
	}
	var b Binaries
	if dir != "" {
		b = Binaries{Server: filepath.Join(dir, "firebird"), GFix: filepath.Join(dir, "gfix"), Root: filepath.Dir(filepath.Clean(dir))}
		for _, n := range []string{"isql", "isql-fb"} {
			if p := filepath.Join(dir, n); isFile(p) {
				b.ISQL = p
				break
			}
		}
		if !isFile(b.Server) || b.ISQL == "" || !isFile(b.GFix) {
			return b, fmt.Errorf("%s: no firebird, isql and gfix there (give --install a Firebird home holding bin/, or --fb-bin its bin directory)", dir)
		}
	} else {
		b.Server = debianServer
		b.ISQL, _ = exec.LookPath("isql-fb") // plain "isql" on PATH is often unixODBC's
		b.GFix, _ = exec.LookPath("gfix")
		roots, _ := filepath.Glob(debianRootPat)
		if len(roots) > 0 {
			b.Root = roots[0]
		}
		if !isFile(b.Server) || b.ISQL == "" || b.GFix == "" || b.Root == "" {
			return b, fmt.Errorf("no Firebird 3.0 binaries found (looked for %s, isql-fb and gfix on PATH, %s): %s",
				debianServer, debianRootPat, InstallHint)
		}
	}
	out, err := exec.Command(b.Server, "-z").Output()
	if err != nil {
		return b, fmt.Errorf("%s -z: %v", b.Server, err)
	}
	b.Version = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(out)), "Firebird TCP/IP server version"))
	return b, supportedVersion(b.Server, b.Version)
}

// Start implements managed.Launcher. It checks inst.Settings (checkSettings) before touching
// anything, creates the instance's files on first start, starts the server, waits until it
// answers, and then verifies what it runs with (verify): a server that does not run as asked
// is stopped and Start fails. On failure nothing is left running.
func (l Launcher) Start(ctx context.Context, inst *managed.Instance) error {
	bin, err := FindBinaries(l.BinDir)
	if err != nil {
		return err
	}
	cfg, err := checkSettingsFor(majorOf(bin.Version), inst.Settings)
	if err != nil {
		return err
	}
	// Before the port is claimed: a dead Classic server's connection processes may hold it.
	stopOrphans(inst, bin.Server)
	acct, err := managed.Prepare(inst, l.RunAs)
	if err != nil {
		return err
	}
	if err := layout(inst, bin, cfg); err != nil {
		return err
	}
	if err := acct.Hand(inst.Dir); err != nil {
		return err
	}
	if err := l.createFiles(ctx, inst, bin, acct, cfg); err != nil {
		return err
	}

	cmd := command(acct, inst.Dir, bin.Server, inst.Dir)
	cmd.SysProcAttr.Pdeathsig = l.ParentDeathSignal
	proc, err := managed.Spawn(inst, acct, cmd, logTail)
	if err != nil {
		return err
	}
	_ = os.WriteFile(filepath.Join(inst.Dir, pidFile), []byte(strconv.Itoa(inst.PID)+"\n"), 0o644)
	inst.Binaries = filepath.Dir(bin.Server)
	inst.DSN = DSN(inst, filepath.Join(inst.Dir, dataDir, benchFile))
	inst.Client = fmt.Sprintf("%s -user %s -fetch_password %s %s", bin.ISQL, sysdba, PasswordFile(inst),
		remotePath(inst, filepath.Join(inst.Dir, dataDir, benchFile)))

	fail := func(err error) error {
		_ = l.Stop(context.Background(), inst)
		return err
	}
	timeout := l.StartTimeout
	if timeout == 0 {
		timeout = 60 * time.Second
	}
	if err := proc.AwaitReady(ctx, timeout, func(ctx context.Context) error { return ping(ctx, inst.DSN) }); err != nil {
		if inst.PID == 0 { // exited
			_ = os.Remove(filepath.Join(inst.Dir, pidFile))
			return err
		}
		return fail(err)
	}
	if err := verify(ctx, inst, cfg); err != nil {
		return fail(err)
	}
	inst.Started = time.Now()
	return nil
}

// stopOrphans stops what a server of inst that died (killed, not stopped) left running:
// the connection processes of a Classic server outlive their listener, in its process
// group, and hold its listening port, so that the server could not start again on it. The
// dead server's PID is the one its PID file still names (Stop removes the file).
func stopOrphans(inst *managed.Instance, server string) {
	b, err := os.ReadFile(filepath.Join(inst.Dir, pidFile))
	if err != nil {
		return
	}
	old, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || old <= 0 || managed.Alive(old) {
		return
	}
	if kids := serverChildren(old, server); len(kids) > 0 {
		err := stopAll(kids, childGrace)
		logNote(inst, fmt.Sprintf("stopped %d connection processes that firebird (PID %d) left when it died: %v", len(kids), old, err))
	}
}

// DSN returns the DSN of database file db (an absolute path) on the managed server inst,
// for SYSDBA with the password read from the instance's password file (PasswordFileParam),
// so that it can be printed and stored, and with the instance's load directory
// (LoadDirParam): firebird://SYSDBA@127.0.0.1:PORT/DB?load_dir=...&password_file=...
func DSN(inst *managed.Instance, db string) string {
	u := url.URL{Scheme: strings.TrimSuffix(Scheme, "://"), User: url.User(sysdba),
		Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(inst.Port)), Path: db,
		RawQuery: LoadDirParam + "=" + queryPath(filepath.Join(inst.Dir, loadDir)) + "&" +
			PasswordFileParam + "=" + queryPath(PasswordFile(inst))}
	return u.String()
}

// queryPath escapes a file path for a URL's query, keeping its slashes, which a query may
// hold, readable.
func queryPath(p string) string { return strings.ReplaceAll(url.QueryEscape(p), "%2F", "/") }

// PasswordFile returns the path of the file that holds the SYSDBA password of the managed
// server inst: what its DSNs name (PasswordFileParam) and Firebird's tools read with
// -fetch_password.
func PasswordFile(inst *managed.Instance) string { return inst.PasswordFile(sysdba) }

// layout writes the configuration files and links of inst.Dir (see Launcher).
func layout(inst *managed.Instance, bin Binaries, cfg serverConfig) error {
	for _, d := range []string{lockDir, dataDir, loadDir} {
		if err := os.MkdirAll(filepath.Join(inst.Dir, d), 0o755); err != nil {
			return err
		}
	}
	for _, name := range []string{"intl", "plugins", "UDF", "firebird.msg"} {
		target := filepath.Join(bin.Root, name)
		link := filepath.Join(inst.Dir, name)
		if _, err := os.Stat(target); err != nil {
			continue
		}
		if cur, err := os.Readlink(link); err == nil && cur == target {
			continue
		}
		_ = os.Remove(link)
		if err := os.Symlink(target, link); err != nil {
			return err
		}
	}
	plugins, err := os.ReadFile(filepath.Join(bin.Root, "plugins.conf"))
	if err != nil {
		return fmt.Errorf("read the installation's plugins.conf: %w", err)
	}
	if err := os.WriteFile(filepath.Join(inst.Dir, "plugins.conf"), plugins, 0o644); err != nil {
		return err
	}
	dbConf := fmt.Sprintf("# Written by dblat on every start.\nsecurity.db = %s\n{\n\tRemoteAccess = false\n}\n",
		filepath.Join(inst.Dir, securityFile))
	if err := os.WriteFile(filepath.Join(inst.Dir, "databases.conf"), []byte(dbConf), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(inst.Dir, "firebird.conf"), []byte(confFile(inst, cfg)), 0o644)
}

// confFile renders firebird.conf: the keys dblat owns first, then dblat's defaults and the
// user's keys sorted by name, the user's value winning. Each key appears once.
func confFile(inst *managed.Instance, cfg serverConfig) string {
	entries := map[string]string{
		// dblat's defaults: Srp256 first for the driver (its default), Srp for clients that
		// only speak SHA-1 SRP; Enabled lets the client decide on wire encryption (the
		// driver asks for it); external files only in the load directory, for the loader.
		"AuthServer":         "Srp256, Srp",
		"UserManager":        "Srp",
		"WireCrypt":          "Enabled",
		"ExternalFileAccess": "Restrict " + filepath.Join(inst.Dir, loadDir),
	}
	for k, v := range cfg.conf {
		entries[k] = v
	}
	entries["ServerMode"] = cfg.mode
	var b strings.Builder
	b.WriteString("# Written by dblat on every start; change with `dblat server start --set`.\n")
	fmt.Fprintf(&b, "RemoteServicePort = %d\nRemoteBindAddress = 127.0.0.1\nSecurityDatabase = %s\n",
		inst.Port, filepath.Join(inst.Dir, securityFile))
	keys := make([]string, 0, len(entries))
	for k := range entries {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s = %s\n", k, entries[k])
	}
	return b.String()
}

// createFiles creates, when missing, the security database with SYSDBA and its password,
// and the benchmark database; then applies ForcedWrites. All of it runs in the embedded
// engine as the server's account, before the server starts (a Super server opens its
// databases exclusively).
func (l Launcher) createFiles(ctx context.Context, inst *managed.Instance, bin Binaries, acct *managed.Account, cfg serverConfig) error {
	sec := filepath.Join(inst.Dir, securityFile)
	if err := movePassword(inst); err != nil {
		return err
	}
	if _, err := os.Stat(sec); errors.Is(err, os.ErrNotExist) {
		pw, err := managed.NewPassword()
		if err != nil {
			return err
		}
		if err := inst.SavePassword(sysdba, pw); err != nil {
			return err
		}
		// Any empty database serves as a security database: the Srp user manager creates
		// its table on the first CREATE USER. The embedded connection needs no password.
		script := fmt.Sprintf("CREATE DATABASE %s;\nCREATE USER %s PASSWORD %s USING PLUGIN Srp;\nCOMMIT;\n",
			sqlString(sec), sysdba, sqlString(pw))
		if err := runTool(ctx, acct, inst.Dir, script, bin.ISQL, "-q", "-b", "-user", sysdba); err != nil {
			_ = os.Remove(sec)
			return fmt.Errorf("create the security database: %w", err)
		}
	} else if _, ok, err := inst.Password(sysdba); err != nil || !ok {
		if err == nil {
			err = os.ErrNotExist
		}
		return fmt.Errorf("%s: %w (the instance's SYSDBA password is lost; remove the server directory to recreate it)", PasswordFile(inst), err)
	}
	bench := filepath.Join(inst.Dir, dataDir, benchFile)
	if _, err := os.Stat(bench); errors.Is(err, os.ErrNotExist) {
		size := cfg.pageSize
		if size == 0 {
			size = defaultPageSize
		}
		script := fmt.Sprintf("CREATE DATABASE %s PAGE_SIZE %d DEFAULT CHARACTER SET UTF8;\n", sqlString(bench), size)
		if err := runTool(ctx, acct, inst.Dir, script, bin.ISQL, "-q", "-b", "-user", sysdba); err != nil {
			_ = os.Remove(bench)
			return fmt.Errorf("create the benchmark database: %w", err)
		}
	}
	if cfg.forcedWrites != "" {
		mode := map[string]string{"on": "sync", "off": "async"}[cfg.forcedWrites]
		if err := runTool(ctx, acct, inst.Dir, "", bin.GFix, "-user", sysdba, "-write", mode, bench); err != nil {
			return fmt.Errorf("gfix -write %s: %w", mode, err)
		}
	}
	return nil
}

// movePassword moves SYSDBA's password from where dblat kept it before managed servers had
// a credentials directory (sysdba.password in the instance directory, by then perhaps the
// server account's) into that directory, the invoking user's.
func movePassword(inst *managed.Instance) error {
	old := filepath.Join(inst.Dir, oldPassword)
	b, err := os.ReadFile(old)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if _, ok, err := inst.Password(sysdba); err != nil || !ok {
		if err != nil {
			return err
		}
		// SRP has no length limit, unlike Legacy_Auth's 8: the generated password is kept whole.
		if err := inst.SavePassword(sysdba, strings.TrimSpace(string(b))); err != nil {
			return err
		}
	}
	return os.Remove(old)
}

// command prepares a Firebird program for instance dir: its configuration root and lock
// directory, run as acct.
func command(acct *managed.Account, dir, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: acct.Credential()}
	var env []string
	for _, kv := range os.Environ() {
		// The caller's Firebird variables would point the tools elsewhere or log them in.
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "FIREBIRD") || strings.HasPrefix(k, "ISC_") {
			continue
		}
		env = append(env, kv)
	}
	cmd.Env = append(env, "FIREBIRD="+dir, "FIREBIRD_LOCK="+filepath.Join(dir, lockDir), "LC_ALL=C")
	return cmd
}

// runTool runs a Firebird tool for the instance in dir with script on stdin, and turns a
// failure into an error quoting its output.
func runTool(ctx context.Context, acct *managed.Account, dir, script, name string, args ...string) error {
	cmd := command(acct, dir, name, args...)
	cmd.Stdin = strings.NewReader(script)
	if out, err := runCmd(ctx, cmd); err != nil {
		return fmt.Errorf("%s: %v: %s", filepath.Base(name), err, lastLines(out, 3))
	}
	return nil
}

// ping attaches to dsn once.
func ping(ctx context.Context, dsn string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	db, err := Engine{}.Open(ctx, dsn, engine.OpenOptions{})
	if err != nil {
		return err
	}
	return db.Close()
}

// verify reads back what the running server does and compares it with what was asked:
// it listens on 127.0.0.1 only (/proc/net/tcp), the benchmark database has the page size,
// page buffers (DefaultDbCachePages) and forced-writes mode asked for, the architecture is
// the ServerMode asked for (Inspect's inference), and the wire is encrypted unless WireCrypt
// is Disabled. Other firebird.conf values cannot be read back from Firebird 3.0.
func verify(ctx context.Context, inst *managed.Instance, cfg serverConfig) error {
	addrs, err := listenAddrs(inst.Port)
	if err != nil {
		return err
	}
	if len(addrs) == 0 {
		return fmt.Errorf("firebird answers but nothing listens on port %d", inst.Port)
	}
	for _, a := range addrs {
		if !a.Equal(net.IPv4(127, 0, 0, 1)) {
			return fmt.Errorf("firebird listens on %s port %d, not on 127.0.0.1 only", a, inst.Port)
		}
	}
	db, err := Engine{}.Open(ctx, inst.DSN, engine.OpenOptions{})
	if err != nil {
		return err
	}
	defer db.Close()
	info, err := Engine{}.Inspect(ctx, db)
	if err != nil {
		return fmt.Errorf("read back the server's settings: %w", err)
	}
	got := info.Settings
	if cfg.pageSize != 0 && got[KeyPageSize] != strconv.Itoa(cfg.pageSize) {
		return fmt.Errorf("%s=%d asked for, but %s has %s-byte pages: the page size is fixed when the database is created (use a new server, or remove this one's directory)",
			SettingPageSize, cfg.pageSize, benchFile, got[KeyPageSize])
	}
	if want, ok := cfg.conf["DefaultDbCachePages"]; ok && got[KeyPageBuffers] != want {
		return fmt.Errorf("DefaultDbCachePages=%s asked for, but the server runs with %s page buffers (MON$PAGE_BUFFERS)", want, got[KeyPageBuffers])
	}
	if cfg.forcedWrites != "" && got[KeyForcedWrites] != cfg.forcedWrites {
		return fmt.Errorf("%s=%s asked for, but MON$FORCED_WRITES says %s", SettingForcedWrites, cfg.forcedWrites, got[KeyForcedWrites])
	}
	if got[KeyServerMode] != cfg.mode {
		return fmt.Errorf("ServerMode=%s asked for, but the server runs as %s", cfg.mode, got[KeyServerMode])
	}
	crypt, wantCrypt := cfg.conf["WireCrypt"], "TRUE"
	if crypt == "" {
		crypt = "Enabled (dblat's default)"
	}
	if strings.EqualFold(crypt, "Disabled") {
		wantCrypt = "FALSE"
	}
	if got[KeyWireEncrypted] != wantCrypt {
		return fmt.Errorf("WireCrypt=%s asked for, but the wire is encrypted: %s", crypt, got[KeyWireEncrypted])
	}
	return nil
}

// Stop implements managed.Launcher. It first disconnects the clients of the benchmark
// database (disconnectAll), then sends SIGTERM to the server's main process (a clean
// shutdown) and SIGKILL after 10 s; then the same, with 3 s of grace, for every server
// process left behind (the Classic listener's per-connection children, which outlive it),
// found through /proc by parent PID or process group. It returns when all of them have
// exited. A process that had to be killed is noted in server.log, not returned as an
// error (see stopGrace). A PID that no longer runs the Firebird server is not signalled.
func (l Launcher) Stop(_ context.Context, inst *managed.Instance) error {
	if inst.PID == 0 {
		return nil
	}
	pid := inst.PID
	server := debianServer
	if inst.Binaries != "" {
		server = filepath.Join(inst.Binaries, "firebird")
	}
	var errs []error
	if managed.Alive(pid) && !isServer(pid, server) {
		inst.PID = 0
		return fmt.Errorf("PID %d no longer runs %s (the server has exited and the PID was reused): not signalled", pid, server)
	}
	disconnectAll(inst)
	if err := stopAll([]int{pid}, stopGrace); errors.Is(err, errKilled) {
		logNote(inst, fmt.Sprintf("firebird (PID %d) did not exit within %v of SIGTERM and was killed", pid, stopGrace))
	} else if err != nil {
		errs = append(errs, err)
	}
	if kids := serverChildren(pid, server); len(kids) > 0 {
		if err := stopAll(kids, childGrace); errors.Is(err, errKilled) {
			logNote(inst, err.Error())
		} else if err != nil {
			errs = append(errs, err)
		}
	}
	inst.PID = 0
	_ = os.Remove(filepath.Join(inst.Dir, pidFile))
	return errors.Join(errs...)
}

// logNote appends a line from dblat to the server's log.
func logNote(inst *managed.Instance, msg string) {
	f, err := os.OpenFile(inst.LogPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "%s dblat: %s\n", time.Now().Format(time.RFC3339), msg)
}

// disconnectAll closes every user attachment to the benchmark database (DELETE FROM
// MON$ATTACHMENTS, as SYSDBA), so that the server's SIGTERM shutdown has no client
// connections to tear down: with connections open, Firebird 3.0 now and then abandons its
// shutdown (the process stays up until SIGKILL), and Classic connection processes may
// ignore SIGTERM. Best effort, bounded to a few seconds: Stop goes on whatever happens.
func disconnectAll(inst *managed.Instance) {
	if inst.DSN != "" {
		disconnect(context.Background(), inst.DSN)
	}
}

// CreateDatabase creates another empty database, file name in the running server's data
// directory, with pageSize-byte pages (0: the instance's PageSize setting, else 8192), and
// returns its DSN (see DSN). It connects as SYSDBA through the server (isql-fb; the
// password travels in the tool's environment, not its command line), so it works with every
// architecture while the server runs. The file belongs to the server's account.
func (l Launcher) CreateDatabase(ctx context.Context, inst *managed.Instance, name string, pageSize int) (string, error) {
	path, err := l.dataPath(inst, name)
	if err != nil {
		return "", err
	}
	cfg, err := checkSettings(inst.Settings)
	if err != nil {
		return "", err
	}
	if pageSize == 0 {
		pageSize = orDefault(cfg.pageSize, defaultPageSize)
	}
	if !validPageSize(pageSize) {
		return "", fmt.Errorf("page size %d: Firebird 3.0 supports %s", pageSize, joinInts(validPageSizes, ", "))
	}
	script := fmt.Sprintf("CREATE DATABASE %s PAGE_SIZE %d DEFAULT CHARACTER SET UTF8;\n",
		sqlString(remotePath(inst, path)), pageSize)
	if err := l.remoteTool(ctx, inst, script, "isql", "-q", "-b"); err != nil {
		return "", fmt.Errorf("create database %s: %w", name, err)
	}
	if cfg.forcedWrites != "" {
		mode := map[string]string{"on": "sync", "off": "async"}[cfg.forcedWrites]
		if err := l.remoteTool(ctx, inst, "", "gfix", "-write", mode, remotePath(inst, path)); err != nil {
			return "", fmt.Errorf("gfix -write %s %s: %w", mode, name, err)
		}
	}
	return DSN(inst, path), nil
}

// DropDatabase drops database file name of the running server (DROP DATABASE through the
// server, which fails while other connections use it).
func (l Launcher) DropDatabase(ctx context.Context, inst *managed.Instance, name string) error {
	path, err := l.dataPath(inst, name)
	if err != nil {
		return err
	}
	script := fmt.Sprintf("CONNECT %s;\nDROP DATABASE;\n", sqlString(remotePath(inst, path)))
	if err := l.remoteTool(ctx, inst, script, "isql", "-q", "-b"); err != nil {
		return fmt.Errorf("drop database %s: %w", name, err)
	}
	return nil
}

func (l Launcher) dataPath(inst *managed.Instance, name string) (string, error) {
	if inst.PID == 0 {
		return "", fmt.Errorf("server %s is not running", inst.Name)
	}
	if name == "" || strings.ContainsAny(name, "/'\"") || name == "." || name == ".." {
		return "", fmt.Errorf("database file name %q: want a plain file name such as t1.fdb", name)
	}
	return filepath.Join(inst.Dir, dataDir, name), nil
}

// remotePath is path on inst in the connection-string form isql understands.
func remotePath(inst *managed.Instance, path string) string {
	return fmt.Sprintf("127.0.0.1/%d:%s", inst.Port, path)
}

// remoteTool runs isql or gfix as a client of inst with script on stdin, logged in as
// SYSDBA through ISC_USER and ISC_PASSWORD (the environment of a process is readable only by
// its owner, unlike its command line).
func (l Launcher) remoteTool(ctx context.Context, inst *managed.Instance, script, tool string, args ...string) error {
	bin, err := FindBinaries(l.BinDir)
	if err != nil {
		return err
	}
	pw, ok, err := inst.Password(sysdba)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%s: no SYSDBA password (the instance's is lost; remove the server directory to recreate it)", PasswordFile(inst))
	}
	path := bin.ISQL
	if tool == "gfix" {
		path = bin.GFix
	}
	cmd := command(nil, inst.Dir, path, args...)
	cmd.Env = append(cmd.Env, "ISC_USER="+sysdba, "ISC_PASSWORD="+pw)
	cmd.Stdin = strings.NewReader(script)
	if out, err := runCmd(ctx, cmd); err != nil {
		return fmt.Errorf("%s: %v: %s", tool, err, lastLines(out, 3))
	}
	return nil
}

// runCmd runs cmd to completion, or stops it (by PID) when ctx ends, and returns its
// combined output.
func runCmd(ctx context.Context, cmd *exec.Cmd) (string, error) {
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return "", err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return out.String(), err
	case <-ctx.Done():
		_ = managed.StopPID(cmd.Process.Pid, syscall.SIGTERM, 2*time.Second)
		<-done //nolint:errcheck // waits for the stopped process: its exit status says nothing more
		return out.String(), ctx.Err()
	}
}

func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// logTail returns the last non-empty lines the server wrote to its log after offset.
func logTail(path string, offset int64) string {
	f, err := os.Open(path)
	if err != nil {
		return "no log"
	}
	defer f.Close()
	_, _ = f.Seek(offset, 0)
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if s := strings.TrimSpace(sc.Text()); s != "" {
			lines = append(lines, s)
		}
	}
	if len(lines) == 0 {
		return "nothing in the log"
	}
	return lastLines(strings.Join(lines, "\n"), 3)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return strings.Join(lines, " | ")
}
