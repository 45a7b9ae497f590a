package mariadb

import (
	"context"
	"crypto/sha1"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/dblat/dblat/internal/managed"
)

// Launcher runs private MariaDB servers; it implements managed.Launcher. An instance
// directory holds:
//
//	data/             the datadir, created by mariadb-install-db on first start
//	run/mysqld.sock   the Unix socket (SocketDSN)
//	run/mysqld.pid    mariadbd's own pid file
//	run/init.sql      the accounts' set-up (--init-file), while the server starts
//	credentials/      dblat.password and root.password, generated when the instance is
//	                  made, and client.cnf, the option file the DSN names (OptionFile)
//	server.log        the error log (--log-error), plus anything written to stdout/stderr
//	settings.json     the requested settings next to the values read back (LastSettings)
//
// mariadbd runs with --no-defaults (no /etc/mysql/my.cnf), listens on 127.0.0.1 only, in
// its own session, as an unprivileged user when dblat runs as root. The benchmark database
// is "dblat"; the user dblat@127.0.0.1 (and dblat@localhost, for the socket) has all
// privileges, and root@localhost (socket only) is dblat's own administrator. Both log in
// with their generated passwords, over TCP and through the socket: another user of the
// machine gets in with neither. The server learns them at every start from an init file
// (--init-file) that it runs before it accepts a connection, which holds their
// mysql_native_password hashes, never the passwords; the same file drops the other root
// accounts and the anonymous ones that mariadb-install-db makes, and Start drops any
// password-less root or anonymous account left and warns of any other.
//
// inst.Settings are mariadbd options: key=value becomes --key=value, after dblat's own
// options, so it wins. Keys may be spelt with '_' or '-', may carry the option prefixes
// loose-, skip-, enable-, disable- (skip-log-bin), and an empty value makes a bare flag.
// log_bin=OFF (or 0, false, no) becomes --skip-log-bin and log_bin=ON --log-bin, because
// mariadbd would take --log-bin=OFF as the base name of binary logs to write. Binary
// logging is off unless asked for (--no-defaults).
//
// A Launcher holds only configuration; Start and Stop may be called from several
// goroutines for different instances.
type Launcher struct {
	// BinDir is the directory of mariadbd (server start --bin-dir); "" searches PATH and
	// /usr/sbin. mariadb-install-db is looked for there, in ../scripts and ../bin.
	BinDir string
	// RunAs names the unprivileged user to run as when dblat runs as root ("" = auto).
	RunAs string
	// StartTimeout bounds how long Start waits for the server to accept connections
	// (default 2 minutes: crash recovery after an unclean stop replays the redo log first).
	StartTimeout time.Duration
	// Warn, when set, is called once per requested setting that the server runs with at
	// another value (it clamped, rounded or ignored it). settings.json records the same.
	Warn func(msg string)
}

// InstallHint tells a user how to get MariaDB server binaries.
const InstallHint = "install them with `apt-get install mariadb-server` (Debian/Ubuntu; its system service need not run) or `make setup`, or point --bin-dir at the directory holding mariadbd"

// Binaries are the programs a Launcher runs.
type Binaries struct {
	Server    string // mariadbd (or mysqld of a MariaDB build)
	InstallDB string // mariadb-install-db (or mysql_install_db)
}

// FindBinaries locates mariadbd and mariadb-install-db: in dir if given (and ../scripts,
// ../bin, as in MariaDB's tarballs), else on PATH, /usr/sbin and /usr/bin.
func FindBinaries(dir string) (Binaries, error) {
	find := func(names []string, dirs []string) string {
		for _, d := range dirs {
			for _, n := range names {
				p := filepath.Join(d, n)
				if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
					return p
				}
			}
		}
		return ""
	}
	servers := []string{"mariadbd", "mysqld"}
	installers := []string{"mariadb-install-db", "mysql_install_db"}
	var b Binaries
	if dir != "" {
		b.Server = find(servers, []string{dir})
		b.InstallDB = find(installers, []string{dir, filepath.Join(dir, "..", "scripts"), filepath.Join(dir, "..", "bin")})
		if b.Server == "" || b.InstallDB == "" {
			if b.Server != "" && isMySQL(b.Server) {
				return b, mysqlError(b.Server)
			}
			return b, fmt.Errorf("%s: no mariadbd and mariadb-install-db there (give --install a MariaDB tarball's base directory, or --bin-dir the directory of mariadbd)", dir)
		}
		if isMySQL(b.Server) {
			return b, mysqlError(b.Server)
		}
		return b, nil
	}
	pathDirs := filepath.SplitList(os.Getenv("PATH"))
	b.Server = find(servers, append(pathDirs, "/usr/sbin", "/usr/local/mysql/bin"))
	b.InstallDB = find(installers, append(pathDirs, "/usr/bin", "/usr/local/mysql/scripts"))
	if b.Server == "" || b.InstallDB == "" {
		return b, fmt.Errorf("no MariaDB server binaries found (looked for mariadbd and mariadb-install-db on PATH, /usr/sbin, /usr/bin): %s", InstallHint)
	}
	if out, err := exec.Command(b.Server, "--version").Output(); err == nil && !strings.Contains(string(out), "MariaDB") {
		return b, fmt.Errorf("%s is not MariaDB (%s): dblat manages MariaDB servers only; %s",
			b.Server, strings.TrimSpace(string(out)), InstallHint)
	}
	return b, nil
}

// SocketPath returns the Unix socket of a managed instance.
func SocketPath(inst *managed.Instance) string { return filepath.Join(inst.Dir, "run", "mysqld.sock") }

// SocketDSN returns the DSN that reaches the instance's benchmark database through its Unix
// socket instead of TCP (inst.DSN).
func SocketDSN(inst *managed.Instance) string { return SocketDatabaseDSN(inst, "dblat") }

// maxSocketPath is the longest Unix socket path Linux takes: sun_path is 108 bytes with
// the terminating NUL.
const maxSocketPath = 107

// Start implements managed.Launcher. Settings are checked before anything starts (names
// against mariadbd's option list, values by a dry run of mariadbd --help) and read back
// afterwards (settings.json, Warn).
func (l Launcher) Start(ctx context.Context, inst *managed.Instance) error {
	if inst.PID != 0 && managed.Alive(inst.PID) && managed.RunsCommand(inst.PID, datadirMarker(inst)) {
		return fmt.Errorf("managed server %q is already running (pid %d)", inst.Name, inst.PID)
	}
	bins, err := FindBinaries(l.BinDir)
	if err != nil {
		return err
	}
	if err := checkSettings(bins.Server, inst.Settings); err != nil {
		return err
	}
	acct, err := managed.Prepare(inst, l.RunAs)
	if err != nil {
		return err
	}
	data := filepath.Join(inst.Dir, "data")
	sock := SocketPath(inst)
	if len(sock) > maxSocketPath {
		return fmt.Errorf("socket path %s is longer than %d bytes: use a shorter state directory (--state)", sock, maxSocketPath)
	}
	if err := os.MkdirAll(filepath.Dir(sock), 0o755); err != nil {
		return err
	}
	pws, err := passwords(inst)
	if err != nil {
		return err
	}
	initPath := filepath.Join(filepath.Dir(sock), initFile)
	if err := os.WriteFile(initPath, []byte(initSQL(pws)), 0o600); err != nil {
		return err
	}
	defer os.Remove(initPath)
	if err := acct.Hand(inst.Dir); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(data, "mysql")); errors.Is(err, os.ErrNotExist) {
		if err := l.installDB(bins, acct, inst, data); err != nil {
			return err
		}
	}

	var enc []string
	if inst.Encrypted {
		if enc, err = encryptionArgs(inst, acct); err != nil {
			return fmt.Errorf("encryption: %w", err)
		}
	}
	cmd := command(acct, inst.Dir, bins.Server, l.withBasedir(bins, serverArgs(inst, data, sock, inst.LogPath(), initPath, enc))...)
	proc, err := managed.Spawn(inst, acct, cmd, logError)
	if err != nil {
		return err
	}
	inst.Binaries = filepath.Dir(bins.Server)
	fail := func(err error) error {
		_ = managed.StopPID(inst.PID, syscall.SIGTERM, shutdownGrace)
		inst.PID = 0
		return err
	}
	if err := proc.AwaitReady(ctx, l.startTimeout(), func(ctx context.Context) error {
		err := ping(ctx, sock, pws[rootUser])
		if me := (*mysql.MySQLError)(nil); errors.As(err, &me) && me.Number == erAccessDenied {
			return managed.StopWaiting(fmt.Errorf("mariadbd refuses the password of root kept in %s (%s): restore that file, or remove the server's directory %s to start afresh",
				inst.PasswordFile(rootUser), me.Message, inst.Dir))
		}
		return err
	}); err != nil {
		return fail(err)
	}
	_ = os.Remove(initPath) // the server has run it
	if err := l.setUp(ctx, inst, sock, pws); err != nil {
		return fail(err)
	}
	inst.Started = time.Now()
	return nil
}

// startTimeout is how long Start waits for the server to accept connections.
func (l Launcher) startTimeout() time.Duration {
	if l.StartTimeout == 0 {
		return 2 * time.Minute
	}
	return l.StartTimeout
}

// setUp readies a server that accepts connections: dblat's own accounts and no open one,
// its settings read back and saved (warning of those the server changed), and the client's
// option file; it fills in inst's DSN and client command.
func (l Launcher) setUp(ctx context.Context, inst *managed.Instance, sock string, pws map[string]string) error {
	root, err := rootDB(sock, pws[rootUser])
	if err != nil {
		return err
	}
	defer root.Close()
	for _, q := range setupSQL {
		if _, err := root.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("set up managed server: %s: %w", q, err)
		}
	}
	if err := l.dropOpenAccounts(ctx, root); err != nil {
		return err
	}
	vars := map[string]string{}
	if err := nameValues(ctx, root, "SHOW GLOBAL VARIABLES", func(n, v string) { vars[n] = v }); err != nil {
		return fmt.Errorf("read back settings: %w", err)
	}
	back := readBack(inst.Settings, vars)
	if err := saveSettings(inst.Dir, back); err != nil {
		return err
	}
	if l.Warn != nil {
		for _, s := range back {
			if s.Changed {
				l.Warn(s.String())
			}
		}
	}
	if err := inst.WriteCredentials(clientFile, []byte(clientConf(inst, pws[benchUser]))); err != nil {
		return err
	}
	inst.DSN = DatabaseDSN(inst, "dblat")
	inst.Client = "mariadb --defaults-extra-file=" + OptionFile(inst) + " dblat"
	return nil
}

// The accounts of a managed server, and the names of its credential files.
const (
	benchUser  = "dblat"
	rootUser   = "root"
	clientFile = "client.cnf"
	initFile   = "init.sql"
)

// erAccessDenied is the server's refusal of a user or password (ER_ACCESS_DENIED_ERROR).
const erAccessDenied = 1045

// OptionFile returns the path of inst's option file: the [client] group a MariaDB or MySQL
// client reads with --defaults-extra-file (or --defaults-file), which logs it in as dblat
// over TCP (host, port) or, given -h localhost -S SOCKET, through the socket. The DSNs name
// it.
func OptionFile(inst *managed.Instance) string { return inst.CredentialsFile(clientFile) }

// DatabaseDSN returns the DSN of database db on the managed server inst, over TCP, as dblat
// with the password from its option file (OptionFileParam).
func DatabaseDSN(inst *managed.Instance, db string) string {
	return fmt.Sprintf("mysql://%s@127.0.0.1:%d/%s?%s=%s", benchUser, inst.Port, db, OptionFileParam, queryPath(OptionFile(inst)))
}

// SocketDatabaseDSN is DatabaseDSN through the instance's Unix socket.
func SocketDatabaseDSN(inst *managed.Instance, db string) string {
	return fmt.Sprintf("mysql://%s@unix(%s)/%s?%s=%s", benchUser, SocketPath(inst), db, OptionFileParam, queryPath(OptionFile(inst)))
}

// queryPath escapes a file path for a URL's query, keeping its slashes readable.
func queryPath(p string) string { return strings.ReplaceAll(url.QueryEscape(p), "%2F", "/") }

// passwords returns the passwords of root and dblat kept in inst's credentials directory,
// generating those it has none of: a new instance, or one made by a dblat whose accounts
// had no password.
func passwords(inst *managed.Instance) (map[string]string, error) {
	pws := map[string]string{}
	for _, u := range []string{rootUser, benchUser} {
		pw, ok, err := inst.Password(u)
		if err != nil {
			return nil, err
		}
		if !ok {
			if pw, err = managed.NewPassword(); err != nil {
				return nil, err
			}
			if err := inst.SavePassword(u, pw); err != nil {
				return nil, err
			}
		}
		pws[u] = pw
	}
	return pws, nil
}

// nativeHash is pw's mysql_native_password hash, as IDENTIFIED BY PASSWORD takes it:
// '*' and SHA1(SHA1(pw)) in upper-case hex. It does not log anyone in: the protocol's
// scramble needs SHA1(pw).
func nativeHash(pw string) string {
	h1 := sha1.Sum([]byte(pw))
	h2 := sha1.Sum(h1[:])
	return "*" + strings.ToUpper(hex.EncodeToString(h2[:]))
}

// initSQL is the init file of every start: the accounts' passwords (as hashes), dblat's
// privileges, and no root account but root@localhost, no anonymous account. Each
// statement is one line (the server reads the file line by line) and idempotent.
func initSQL(pws map[string]string) string {
	root, bench := nativeHash(pws[rootUser]), nativeHash(pws[benchUser])
	return strings.Join([]string{
		"-- Written by dblat at every start and removed once the server runs it.",
		fmt.Sprintf("ALTER USER IF EXISTS 'root'@'localhost' IDENTIFIED BY PASSWORD '%s';", root),
		"DROP USER IF EXISTS 'root'@'127.0.0.1', 'root'@'::1', ''@'localhost', ''@'127.0.0.1';",
		fmt.Sprintf("CREATE USER IF NOT EXISTS 'dblat'@'127.0.0.1' IDENTIFIED BY PASSWORD '%s', 'dblat'@'localhost' IDENTIFIED BY PASSWORD '%s';", bench, bench),
		fmt.Sprintf("ALTER USER 'dblat'@'127.0.0.1' IDENTIFIED BY PASSWORD '%s', 'dblat'@'localhost' IDENTIFIED BY PASSWORD '%s';", bench, bench),
		"GRANT ALL PRIVILEGES ON *.* TO 'dblat'@'127.0.0.1', 'dblat'@'localhost' WITH GRANT OPTION;",
		"",
	}, "\n")
}

// sqlString quotes s as an SQL string literal (the server's default sql_mode: backslash
// escapes).
func sqlString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, "'", `\'`).Replace(s) + "'"
}

// clientConf is the option file of inst's clients: dblat's login over TCP. It names no
// socket: client libraries that read option files (PyMySQL, Connector/Python) would take
// it over the host and port they are given.
func clientConf(inst *managed.Instance, pw string) string {
	return fmt.Sprintf(`# Written by dblat on every start: how a client logs in to managed server %s,
# e.g. mariadb --defaults-extra-file=%s dblat
# (add -h localhost -S %s for the Unix socket). Keep it to yourself: it holds the password.
[client]
user=%s
password=%s
host=127.0.0.1
port=%d
`, inst.Name, OptionFile(inst), SocketPath(inst), benchUser, pw, inst.Port)
}

// dropOpenAccounts drops the accounts that log in without a password and are root's or
// anonymous (mariadb-install-db makes root@<hostname>, which the init file cannot name),
// and warns of any other (a user's own): anyone on the machine could use them.
func (l Launcher) dropOpenAccounts(ctx context.Context, root *sql.DB) error {
	rows, err := root.QueryContext(ctx, `SELECT User, Host FROM mysql.global_priv
		WHERE IFNULL(JSON_EXTRACT(Priv, '$.account_locked'), 'false') <> 'true'
		  AND IFNULL(JSON_EXTRACT(Priv, '$.is_role'), 'false') <> 'true'
		  AND IFNULL(JSON_VALUE(Priv, '$.plugin'), '') IN ('', 'mysql_native_password', 'mysql_old_password')
		  AND IFNULL(JSON_VALUE(Priv, '$.authentication_string'), '') = ''`)
	if err != nil {
		return fmt.Errorf("look for accounts without a password: %w", err)
	}
	var open [][2]string
	for rows.Next() {
		var user, host string
		if err := rows.Scan(&user, &host); err != nil {
			rows.Close()
			return err
		}
		open = append(open, [2]string{user, host})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, a := range open {
		if a[0] != "" && a[0] != rootUser {
			if l.Warn != nil {
				l.Warn(fmt.Sprintf("account '%s'@'%s' has no password: any user of this machine can log in as it", a[0], a[1]))
			}
			continue
		}
		if _, err := root.ExecContext(ctx, "DROP USER "+sqlString(a[0])+"@"+sqlString(a[1])); err != nil {
			return fmt.Errorf("drop the password-less account '%s'@'%s': %w", a[0], a[1], err)
		}
	}
	return nil
}

// shutdownGrace is how long Stop waits after SIGTERM before SIGKILL. A clean shutdown
// flushes the buffer pool's dirty pages: 16 GB of them at 200 MB/s take 80 s, so 3 minutes
// leave room; a SIGKILLed server loses nothing committed (crash recovery at the next start).
const shutdownGrace = 3 * time.Minute

// setupSQL runs as root on every start, after the init file; every statement is idempotent.
var setupSQL = []string{
	"CREATE DATABASE IF NOT EXISTS dblat",
}

// installDB creates the datadir. root@localhost uses normal authentication, not
// unix_socket, which would tie it to the OS user root; it has no password until the init
// file of the first start gives it one, before the server accepts any connection (the
// bootstrap server of mariadb-install-db listens on nothing). Settings that fix the datadir's format are passed on, and the
// memory-sized ones so that the bootstrap server is as small as the real one.
func (l Launcher) installDB(bins Binaries, acct *managed.Account, inst *managed.Instance, data string) error {
	args := []string{"--no-defaults", // must come first
		"--datadir=" + data, "--auth-root-authentication-method=normal", "--skip-test-db", "--skip-name-resolve"}
	if l.BinDir != "" {
		args = append(args, "--basedir="+filepath.Dir(filepath.Dir(bins.Server)))
	}
	for _, k := range slices.Sorted(maps.Keys(inst.Settings)) {
		if initSettings[optionName(k)] {
			args = append(args, "--"+k+"="+inst.Settings[k])
		}
	}
	out, err := command(acct, inst.Dir, bins.InstallDB, args...).CombinedOutput()
	if err != nil {
		_ = os.RemoveAll(data) // so that the next start tries again from scratch
		msg := firstError(strings.Split(string(out), "\n"))
		if msg == "" {
			msg = lastLines(string(out), 3)
		}
		return fmt.Errorf("mariadb-install-db failed (%v): %s", err, msg)
	}
	return nil
}

// initSettings are the settings mariadb-install-db gets too (in option form).
var initSettings = map[string]bool{
	"innodb-page-size": true, "innodb-data-file-path": true, "innodb-undo-tablespaces": true,
	"lower-case-table-names": true, "innodb-checksum-algorithm": true,
	"innodb-log-file-size": true, "innodb-buffer-pool-size": true,
}

// serverArgs is mariadbd's command line: what dblat owns, then character set defaults,
// then the encryption options enc (those of an encrypted server, or none), then the user's
// settings, which come later and so win.
func serverArgs(inst *managed.Instance, data, sock, logPath, initPath string, enc []string) []string {
	args := []string{"--no-defaults", // must come first
		"--datadir=" + data,
		"--init-file=" + initPath,
		fmt.Sprintf("--port=%d", inst.Port),
		"--bind-address=127.0.0.1",
		"--socket=" + sock,
		"--pid-file=" + filepath.Join(filepath.Dir(sock), "mysqld.pid"),
		"--log-error=" + logPath,
		"--skip-name-resolve",
		// utf8mb4, as Debian's packaged configuration sets it (compiled-in: latin1).
		"--character-set-server=utf8mb4",
		"--collation-server=utf8mb4_general_ci",
	}
	args = append(args, enc...)
	return append(args, settingArgs(inst.Settings)...)
}

func command(acct *managed.Account, dir, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: acct.Credential()}
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	cmd.Dir = dir // the caller's directory may be closed to the server's user
	return cmd
}

// rootConfig connects as root@localhost through the socket, with password pw.
func rootConfig(sock, pw string) *mysql.Config {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = rootUser, pw, "unix", sock
	cfg.Logger = &mysql.NopLogger{}
	cfg.Timeout = 2 * time.Second
	return cfg
}

func rootDB(sock, pw string) (*sql.DB, error) {
	c, err := mysql.NewConnector(rootConfig(sock, pw))
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(c)
	db.SetMaxOpenConns(1)
	return db, nil
}

func ping(ctx context.Context, sock, pw string) error {
	db, err := rootDB(sock, pw)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return db.PingContext(ctx)
}

// Stop implements managed.Launcher: SIGTERM (mariadbd shuts down cleanly: ends
// connections, flushes the buffer pool, closes the redo log), escalating to SIGKILL after
// shutdownGrace. A PID that no longer belongs to a MariaDB server is left alone.
func (Launcher) Stop(_ context.Context, inst *managed.Instance) error {
	if inst.PID == 0 {
		return nil
	}
	pid := inst.PID
	inst.PID = 0
	// Only the mariadbd of this instance's datadir is signalled, never a process that took
	// its PID over.
	return managed.StopServer(pid, datadirMarker(inst), syscall.SIGTERM, shutdownGrace)
}

// datadirMarker is what the command line of inst's mariadbd contains: its datadir option.
func datadirMarker(inst *managed.Instance) string {
	return "--datadir=" + filepath.Join(inst.Dir, "data") + "\x00"
}

// settingsFile is the name of the read-back record in the instance directory.
const settingsFile = "settings.json"

func saveSettings(dir string, s []Setting) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, settingsFile), append(b, '\n'), 0o644)
}

// LastSettings returns the requested settings of the instance's last start next to the
// values the server ran with, as Start read them back.
func LastSettings(inst *managed.Instance) ([]Setting, error) {
	b, err := os.ReadFile(filepath.Join(inst.Dir, settingsFile))
	if err != nil {
		return nil, err
	}
	var s []Setting
	return s, json.Unmarshal(b, &s)
}

// logError returns the first [ERROR] line written to the log after offset, without its
// timestamp, or the last line if there is none.
func logError(path string, offset int64) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "no log"
	}
	if offset > int64(len(b)) {
		offset = 0
	}
	lines := strings.Split(strings.TrimSpace(string(b[offset:])), "\n")
	if msg := firstError(lines); msg != "" {
		return msg
	}
	return strings.TrimSpace(lines[len(lines)-1])
}

// firstError returns the message of the first "[ERROR]" line, without the timestamp,
// "Buffered error: " and program path prefixes.
func firstError(lines []string) string {
	for _, line := range lines {
		if _, msg, ok := strings.Cut(line, "[ERROR] "); ok {
			msg = strings.TrimPrefix(msg, "Buffered error: ")
			if _, rest, ok := strings.Cut(msg, ": "); ok && strings.HasPrefix(msg, "/") {
				msg = rest // "/usr/sbin/mariadbd: "
			}
			return strings.TrimSpace(msg)
		}
	}
	return ""
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
