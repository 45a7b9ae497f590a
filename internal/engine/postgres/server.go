package postgres

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/managed"
	"github.com/dblat/dblat/internal/suggest"
)

// Launcher runs private PostgreSQL servers: initdb into the instance directory, then the
// postgres binary on a loopback port and a Unix socket, as an unprivileged account when
// dblat runs as root. The benchmark database is called "dblat" and owned by the superuser
// "dblat", whose password is generated when the instance is made and kept in its
// credentials directory (managed.CredentialsDir):
//
//	credentials/dblat.password   the superuser's password
//	credentials/pgpass           the same in libpq's password-file format, which the DSN
//	                             names (passfile=): pgx, psql and pgbench read it
//	data/                        the data directory; pg_hba.conf and dblat.conf are
//	                             written on every start
//	run/                         the Unix socket
//	server.log                   the server's log
//
// Every connection, over TCP and through the socket, authenticates with scram-sha-256
// (pg_hba.conf has no trust line): another user of the machine gets in only with the
// password. The server is given the password's SCRAM verifier, never the password.
type Launcher struct {
	// BinDir overrides the search for server binaries (server start --bin-dir).
	BinDir string
	// Install is an installation to run (server start --install): a directory holding
	// initdb and postgres, or one whose bin/ does.
	Install string
	// Version is the major version to run (server start --version): fetched into
	// DownloadDir on first use, and found there afterwards (never the OS packages' copy:
	// installedVersion says why).
	Version string
	// DownloadDir, when set, is where official binaries are downloaded to (and reused from),
	// one directory per major version: a Version not installed, or DefaultVersion when no
	// installed binaries are found.
	DownloadDir string
	// RunAs names the unprivileged user to run as when dblat runs as root ("" = auto).
	RunAs string
	// StartTimeout bounds how long Start waits for the server to accept connections.
	StartTimeout time.Duration
}

// InstallHint tells a user how to get PostgreSQL server binaries.
const InstallHint = "install them with `apt-get install postgresql` (Debian/Ubuntu) or `make setup`, or point --bin-dir at a directory holding initdb and postgres"

// FindBinaries returns the directory holding initdb and postgres: dir if given, else the
// one `pg_config --bindir` names, else the newest /usr/lib/postgresql/*/bin.
func FindBinaries(dir string) (string, error) {
	has := func(d string) bool {
		for _, b := range []string{"initdb", "postgres"} {
			if st, err := os.Stat(filepath.Join(d, b)); err != nil || st.IsDir() {
				return false
			}
		}
		return true
	}
	if dir != "" {
		if has(dir) {
			return dir, nil
		}
		return "", fmt.Errorf("--bin-dir %s: no initdb and postgres there", dir)
	}
	var tried []string
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		d := strings.TrimSpace(string(out))
		if has(d) {
			return d, nil
		}
		tried = append(tried, d)
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(matches, func(i, j int) bool { return pgMajor(matches[i]) > pgMajor(matches[j]) })
	for _, d := range matches {
		if has(d) {
			return d, nil
		}
		tried = append(tried, d)
	}
	tried = append(tried, "/usr/lib/postgresql/*/bin")
	return "", fmt.Errorf("no PostgreSQL server binaries found (looked in pg_config --bindir, %s): %s",
		strings.Join(tried, ", "), InstallHint)
}

func pgMajor(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

// Start implements managed.Launcher.
func (l Launcher) Start(ctx context.Context, inst *managed.Instance) error {
	bin, err := l.binaries()
	if err != nil {
		return err
	}
	if err := checkSettings(bin, inst.Settings); err != nil {
		return err
	}
	acct, err := managed.Prepare(inst, l.RunAs)
	if err != nil {
		return err
	}
	data := filepath.Join(inst.Dir, "data")
	sock := filepath.Join(inst.Dir, "run")
	if err := os.MkdirAll(sock, 0o755); err != nil {
		return err
	}
	if err := acct.Hand(inst.Dir); err != nil {
		return err
	}
	fresh := false
	if _, err := os.Stat(filepath.Join(data, "PG_VERSION")); errors.Is(err, os.ErrNotExist) {
		fresh = true
		// No server runs with initdb's pg_hba.conf: hbaConf replaces it before the first start.
		out, err := l.command(acct, filepath.Join(bin, "initdb"), "-D", data, "-U", superuser,
			"--auth=reject", "-E", "UTF8", "--locale=C", "--no-sync").CombinedOutput()
		if err != nil {
			return fmt.Errorf("initdb failed: %v: %s", err, lastLines(string(out), 3))
		}
	}
	if err := os.WriteFile(filepath.Join(data, "dblat.conf"), []byte(confFile(inst, sock)), 0o644); err != nil {
		return err
	}
	if err := ensureInclude(filepath.Join(data, "postgresql.conf")); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(data, "pg_hba.conf"), []byte(hbaConf), 0o600); err != nil {
		return err
	}
	if err := acct.Hand(inst.Dir); err != nil {
		return err
	}
	if err := l.credentials(ctx, acct, bin, inst); err != nil {
		return err
	}
	proc, err := managed.Spawn(inst, acct, l.command(acct, filepath.Join(bin, "postgres"), "-D", data), logError)
	if err != nil {
		return err
	}
	inst.Binaries = bin
	timeout := l.StartTimeout
	if timeout == 0 {
		timeout = 60 * time.Second
	}
	admin := DatabaseDSN(inst, "postgres")
	err = proc.AwaitReady(ctx, timeout, func(ctx context.Context) error {
		err := ping(ctx, admin)
		if pgErr := (*pgconn.PgError)(nil); errors.As(err, &pgErr) && strings.HasPrefix(pgErr.Code, "28") {
			return managed.StopWaiting(fmt.Errorf("postgres refuses the password of %s kept in %s (%s): restore that file, or remove the server's directory %s to start afresh",
				superuser, inst.PasswordFile(superuser), pgErr.Message, inst.Dir))
		}
		return err
	})
	if err != nil {
		if inst.PID != 0 {
			_ = managed.StopPID(inst.PID, syscall.SIGQUIT, 5*time.Second)
			inst.PID = 0
		}
		return err
	}
	if fresh {
		if err := execSQL(ctx, admin, "CREATE DATABASE dblat"); err != nil {
			_ = l.Stop(ctx, inst)
			return fmt.Errorf("create database: %w", err)
		}
	}
	inst.DSN = DatabaseDSN(inst, "dblat")
	inst.Client = "psql '" + inst.DSN + "'"
	inst.Started = time.Now()
	return nil
}

// superuser is the role dblat connects as, which owns the benchmark database.
const superuser = "dblat"

// passFile is the name of the pgpass file in the credentials directory.
const passFile = "pgpass"

// PassFile returns the path of inst's pgpass file: what a libpq client reads the
// superuser's password from (PGPASSFILE, or passfile= in its connection string).
func PassFile(inst *managed.Instance) string { return inst.CredentialsFile(passFile) }

// DatabaseDSN returns the DSN of database db on the managed server inst, over TCP: the
// superuser, its password read from the instance's pgpass file (passfile=).
func DatabaseDSN(inst *managed.Instance, db string) string {
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable&passfile=%s", superuser, inst.Port, url.PathEscape(db), queryPath(PassFile(inst)))
}

// queryPath escapes a file path for a URL's query, keeping its slashes, which a query may
// hold, readable.
func queryPath(p string) string {
	return strings.ReplaceAll(url.QueryEscape(p), "%2F", "/")
}

// credentials makes sure the superuser has a password and writes the pgpass file. An
// instance without a password (new, or made by a dblat that trusted loopback connections)
// gets a new one: the server, stopped, is given its verifier in single-user mode, then the
// password is saved in the credentials directory. The pgpass file is written on every start.
func (l Launcher) credentials(ctx context.Context, acct *managed.Account, bin string, inst *managed.Instance) error {
	pw, ok, err := inst.Password(superuser)
	if err != nil {
		return err
	}
	if !ok {
		if pw, err = managed.NewPassword(); err != nil {
			return err
		}
		verifier, err := scramVerifier(pw)
		if err != nil {
			return err
		}
		if err := l.singleUser(ctx, acct, bin, inst, fmt.Sprintf("ALTER ROLE %s PASSWORD '%s'", superuser, verifier)); err != nil {
			return err
		}
		if err := inst.SavePassword(superuser, pw); err != nil {
			return err
		}
	}
	// Any host and port: the socket, and the proxies and links that stand for the server.
	return inst.WriteCredentials(passFile, []byte(fmt.Sprintf("*:*:*:%s:%s\n", superuser, pw)))
}

// singleUser runs one statement in PostgreSQL's single-user mode on inst's data directory,
// which no server may be running on, as acct, and fails with the server's complaint: about
// its configuration (a bad setting stops it here, before the real start) or the statement.
func (l Launcher) singleUser(ctx context.Context, acct *managed.Account, bin string, inst *managed.Instance, stmt string) error {
	cmd := l.command(acct, filepath.Join(bin, "postgres"), "--single", "-D", filepath.Join(inst.Dir, "data"), "postgres")
	cmd.Stdin = strings.NewReader(stmt + "\n")
	cmd.Dir = inst.Dir // the caller's directory may be closed to the server's account
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	msg := firstComplaint(string(out))
	if err != nil {
		if msg == "" {
			msg = lastLines(string(out), 3)
		}
		return fmt.Errorf("postgres exited at start (single-user mode, %v): %s", err, msg)
	}
	if msg != "" {
		return fmt.Errorf("set the password of %s in single-user mode: %s", superuser, msg)
	}
	return nil
}

// firstComplaint returns the most telling FATAL or ERROR line of a server's output (see
// logError), or "" when there is none.
func firstComplaint(out string) string {
	line := complaint(bufio.NewScanner(strings.NewReader(out)))
	if !strings.Contains(line, "FATAL") && !strings.Contains(line, "ERROR") && !strings.Contains(line, "parameter \"") && !strings.Contains(line, "invalid value") {
		return ""
	}
	return trimLogPrefix(line)
}

// scramVerifier returns the SCRAM-SHA-256 verifier of pw as PostgreSQL stores it in
// pg_authid (RFC 5802, RFC 7677): ALTER ROLE ... PASSWORD with it sets the password without
// the password reaching the server, its logs or its catalogue.
func scramVerifier(pw string) (string, error) {
	const iterations = 4096 // PostgreSQL's scram_iterations default
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	salted, err := pbkdf2.Key(sha256.New, pw, salt, iterations, sha256.Size)
	if err != nil {
		return "", err
	}
	mac := func(msg string) []byte {
		h := hmac.New(sha256.New, salted)
		h.Write([]byte(msg))
		return h.Sum(nil)
	}
	stored := sha256.Sum256(mac("Client Key"))
	b64 := base64.StdEncoding.EncodeToString
	return fmt.Sprintf("SCRAM-SHA-256$%d:%s$%s:%s", iterations, b64(salt), b64(stored[:]), b64(mac("Server Key"))), nil
}

// checkSettings rejects setting names this server version does not know, before starting it:
// `postgres --describe-config` lists every parameter of the binary (it may run as root).
// Values are checked by the server itself at start.
func checkSettings(bin string, settings map[string]string) error {
	if len(settings) == 0 {
		return nil
	}
	out, err := exec.Command(filepath.Join(bin, "postgres"), "--describe-config").Output()
	if err != nil {
		return nil //nolint:nilerr // cannot list them: the server's own check at start still applies
	}
	known := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		if name, _, ok := strings.Cut(line, "\t"); ok {
			known[name] = true
		}
	}
	for k := range settings {
		if known[strings.ToLower(k)] || strings.Contains(k, ".") { // "ext.param" is a custom setting
			continue
		}
		hint := ""
		if s := suggest.Closest(k, slices.Collect(maps.Keys(known)), 3); s != "" {
			hint = fmt.Sprintf(" (did you mean %s?)", s)
		}
		return engine.SettingErrorf(k, "unknown PostgreSQL setting %q%s", k, hint)
	}
	return nil
}

// Stop implements managed.Launcher: a fast shutdown (SIGINT: abort transactions, checkpoint,
// exit), escalating to SIGKILL after 60 s. A PID that no longer runs this instance's
// postmaster (its command line lacks "-D <its data directory>") is never signalled.
func (Launcher) Stop(_ context.Context, inst *managed.Instance) error {
	if inst.PID == 0 {
		return nil
	}
	pid := inst.PID
	inst.PID = 0
	return managed.StopServer(pid, "-D\x00"+filepath.Join(inst.Dir, "data")+"\x00", syscall.SIGINT, 60*time.Second)
}

func (l Launcher) command(acct *managed.Account, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: acct.Credential()}
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	return cmd
}

// hbaConf makes every role authenticate with its password, through the socket and over
// loopback TCP (the only address the server listens on): no trust, no peer, so that
// neither another user of the machine nor the server's own account gets in without it.
// The superuser may also open a replication connection, which pg_basebackup needs (a
// backup during a run: engine.OpBackup), with its password too.
const hbaConf = `# Written by dblat on every start.
local all         all                scram-sha-256
host  all         all  127.0.0.1/32  scram-sha-256
host  replication dblat 127.0.0.1/32 scram-sha-256
`

// confFile renders the settings dblat owns plus the user's, which come last and so win.
func confFile(inst *managed.Instance, sock string) string {
	var b strings.Builder
	b.WriteString("# Written by dblat on every start; edit with `dblat server start --set`.\n")
	fmt.Fprintf(&b, "port = %d\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '%s'\n", inst.Port, sock)
	keys := make([]string, 0, len(inst.Settings))
	for k := range inst.Settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s = '%s'\n", k, strings.ReplaceAll(inst.Settings[k], "'", "''"))
	}
	return b.String()
}

func ensureInclude(conf string) error {
	b, err := os.ReadFile(conf)
	if err != nil {
		return err
	}
	const line = "include 'dblat.conf'"
	if strings.Contains(string(b), line) {
		return nil
	}
	return os.WriteFile(conf, append(b, []byte("\n"+line+"\n")...), 0o600)
}

func ping(ctx context.Context, dsn string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	return c.Close(ctx)
}

func execSQL(ctx context.Context, dsn, sql string) error {
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	_, err = c.Exec(ctx, sql)
	return err
}

// logError returns the most telling line written to the log after offset: a complaint about a
// parameter if there is one, else the first FATAL or ERROR; without its timestamp prefix.
func logError(path string, offset int64) string {
	f, err := os.Open(path)
	if err != nil {
		return "no log"
	}
	defer f.Close()
	_, _ = f.Seek(offset, 0)
	return trimLogPrefix(complaint(bufio.NewScanner(f)))
}

// trimLogPrefix removes a log line's timestamp prefix and folds its spaces.
func trimLogPrefix(line string) string {
	if i := strings.Index(line, "] "); i >= 0 && i < 60 {
		line = line[i+2:]
	}
	return strings.Join(strings.Fields(line), " ")
}

// complaint returns the most telling line sc reads: a complaint about a parameter if there
// is one, else the first FATAL or ERROR, else the last line.
func complaint(sc *bufio.Scanner) string {
	var last, fatal string
	for sc.Scan() {
		line := sc.Text()
		if strings.Contains(line, "parameter \"") || strings.Contains(line, "invalid value") {
			return line
		}
		if fatal == "" && (strings.Contains(line, "FATAL") || strings.Contains(line, "ERROR")) {
			fatal = line
		}
		if strings.TrimSpace(line) != "" {
			last = line
		}
	}
	if fatal != "" {
		return fatal
	}
	return last
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
