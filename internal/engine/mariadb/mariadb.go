package mariadb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/dblat/dblat/internal/engine"
)

// Engine is the MariaDB engine; it also talks to MySQL 8 servers. The zero value is ready to
// use and safe for concurrent use.
type Engine struct{}

func init() {
	engine.Register(Engine{}, engine.Naming{Aliases: []string{"mysql"}, Schemes: []string{"mysql", "mariadb"}})
}

// Name returns "mariadb".
func (Engine) Name() string { return "mariadb" }

// Dialect returns MariaDB's SQL spelling (see dialect.go).
func (Engine) Dialect() engine.Dialect { return dialect() }

// Open parses dsn (either form, see the package comment), installs opts.Dial, and pings the
// server. opts.Dial receives the network the DSN names ("tcp", or "unix" with the socket path
// as address) and the context of the request that made the connection: the one passed to
// (*sql.DB).Conn, BeginTx, QueryContext... when database/sql dials for that request; pool
// refills in the background dial with a context of their own. The driver's own logging to
// stderr is silenced (only the CLI prints): what it logs is an error it also returns, or a
// broken idle connection it drops and replaces.
func (Engine) Open(ctx context.Context, dsn string, opts engine.OpenOptions) (*sql.DB, error) {
	cfg, err := ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("mariadb DSN %s: %w", Redact(dsn), err)
	}
	cfg.Logger = &mysql.NopLogger{}
	if cfg.Timeout == 0 { // the DSN's timeout first
		cfg.Timeout = opts.ConnectTimeout
	}
	// The driver's timeout bounds the dial only; the handshake and authentication that
	// follow watch the context, which boundedConnector gives the same deadline.
	if opts.Dial != nil {
		cfg.DialFunc = opts.Dial
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("mariadb DSN %s: %w", Redact(dsn), err)
	}
	db := sql.OpenDB(boundedConnector{conn, cfg.Timeout})
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("cannot connect to %s: %w", Redact(dsn), err)
	}
	return db, nil
}

// boundedConnector makes each connection of Connector within timeout (0: no bound).
type boundedConnector struct {
	driver.Connector
	timeout time.Duration
}

// Connect implements driver.Connector.
func (c boundedConnector) Connect(ctx context.Context) (driver.Conn, error) {
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	return c.Connector.Connect(ctx)
}

// schemes are the URL schemes ParseDSN accepts.
var schemes = []string{"mysql://", "mariadb://"}

func cutScheme(dsn string) (rest string, isURL bool) {
	for _, s := range schemes {
		if len(dsn) >= len(s) && strings.EqualFold(dsn[:len(s)], s) {
			return dsn[len(s):], true
		}
	}
	return dsn, false
}

// ParseDSN turns either DSN form into the driver's configuration:
//
//	mysql://user:pw@host:3306/db?params      TCP (port 3306 when omitted)
//	mysql://user:pw@unix(/path/sock)/db      Unix socket
//	mysql://user:pw@host/db?socket=/path     Unix socket (host ignored)
//	user:pw@tcp(host:3306)/db?params         the driver's own form (socket= works there too)
//
// In the URL form user and password are percent-decoded. A "password" parameter is refused
// rather than sent to the server as a session variable. An option_file parameter
// (OptionFileParam) names a MySQL option file that gives the password when the DSN has none.
func ParseDSN(dsn string) (*mysql.Config, error) {
	rest, isURL := cutScheme(dsn)
	if !isURL {
		cfg, err := mysql.ParseDSN(dsn)
		if err != nil {
			return nil, err
		}
		if _, has := cfg.Params["password"]; has {
			return nil, errors.New(`"password" is not a parameter: write user:password@`)
		}
		if sock, has := cfg.Params["socket"]; has {
			delete(cfg.Params, "socket")
			cfg.Net, cfg.Addr = "unix", sock
		}
		if file, has := cfg.Params[OptionFileParam]; has {
			delete(cfg.Params, OptionFileParam)
			if err := applyOptionFile(cfg, file); err != nil {
				return nil, err
			}
		}
		return cfg, nil
	}
	d, err := splitURL(rest)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	if d.user != "" || d.pass != "" {
		b.WriteString(d.user)
		if d.pass != "" {
			b.WriteString(":" + d.pass)
		}
		b.WriteString("@")
	}
	if d.addr != "" {
		b.WriteString(d.net + "(" + d.addr + ")")
	}
	b.WriteString("/" + url.PathEscape(d.db))
	if d.query != "" {
		// The driver finds the database name after the last '/', so none may follow it.
		b.WriteString("?" + strings.ReplaceAll(d.query, "/", "%2F"))
	}
	cfg, err := mysql.ParseDSN(b.String())
	if err != nil {
		return nil, err
	}
	if d.optionFile != "" {
		if err := applyOptionFile(cfg, d.optionFile); err != nil {
			return nil, err
		}
	}
	return cfg, nil
}

// applyOptionFile takes cfg's password, and its user when it has none, from the option
// file at path, unless cfg has a password already.
func applyOptionFile(cfg *mysql.Config, path string) error {
	if cfg.Passwd != "" {
		return nil
	}
	user, pw, err := readOptionFile(path)
	if err != nil {
		return fmt.Errorf("%s: %w (it holds the password: run as the user who owns it, or give the password another way)", OptionFileParam, err)
	}
	if cfg.User == "" {
		cfg.User = user
	}
	cfg.Passwd = pw
	return nil
}

// urlDSN is a URL-form DSN taken apart.
type urlDSN struct {
	user, pass string // decoded
	net, addr  string // "tcp", "host:port" or "unix", "/path"; empty addr = driver default
	db         string
	query      string // raw, without socket= and option_file=
	optionFile string // OptionFileParam, decoded
}

func splitURL(rest string) (urlDSN, error) {
	var d urlDSN
	rest, rawQuery, _ := strings.Cut(rest, "?")
	var params []string
	for p := range strings.SplitSeq(rawQuery, "&") {
		k, v, _ := strings.Cut(p, "=")
		switch k {
		case "":
			continue
		case "password":
			return d, errors.New(`"password" is not a parameter: write user:password@`)
		case "socket":
			path, err := url.QueryUnescape(v)
			if err != nil || path == "" {
				return d, fmt.Errorf("socket=%q: want the socket's path", v)
			}
			d.net, d.addr = "unix", path
			continue
		case OptionFileParam:
			path, err := url.QueryUnescape(v)
			if err != nil || path == "" {
				return d, fmt.Errorf("%s=%q: want the option file's path", OptionFileParam, v)
			}
			d.optionFile = path
			continue
		}
		params = append(params, p)
	}
	d.query = strings.Join(params, "&")

	var userinfo, path string
	if i := strings.Index(rest, "unix("); i >= 0 && (i == 0 || rest[i-1] == '@') {
		// unix(/path) is no URL host, so url.Parse cannot take it apart.
		if i > 0 {
			userinfo = rest[:i-1]
		}
		end := strings.LastIndex(rest, ")")
		if end < i {
			return d, errors.New("unix( without closing )")
		}
		d.net, d.addr = "unix", rest[i+len("unix("):end]
		var err error
		if path, err = url.PathUnescape(rest[end+1:]); err != nil {
			return d, err
		}
		if path != "" && path[0] != '/' {
			return d, errors.New("want /database after unix(...)")
		}
		user, pass, _ := strings.Cut(userinfo, ":")
		if d.user, err = url.PathUnescape(user); err != nil {
			return d, err
		}
		if d.pass, err = url.PathUnescape(pass); err != nil {
			return d, err
		}
	} else {
		u, err := url.Parse("mysql://" + rest)
		if err != nil {
			var ue *url.Error
			if errors.As(err, &ue) {
				err = ue.Err // without the URL, which may hold the password
			}
			return d, err
		}
		if u.User != nil {
			d.user = u.User.Username()
			d.pass, _ = u.User.Password()
		}
		if d.net == "" && u.Host != "" {
			port := u.Port()
			if port == "" {
				port = strconv.Itoa(defaultPort)
			}
			d.net, d.addr = "tcp", net.JoinHostPort(u.Hostname(), port)
		}
		path = u.Path
	}
	d.db = strings.TrimPrefix(path, "/")
	if strings.Contains(d.db, "/") {
		return d, fmt.Errorf("database name %q holds a '/'", d.db)
	}
	return d, nil
}

// defaultPort is the port MariaDB and MySQL listen on unless told otherwise.
const defaultPort = 3306

// Classify sorts MariaDB/MySQL errors by behaviour: deadlocks, lock wait timeouts and
// snapshot conflicts are retryable; a connection the server or network dropped is a
// connection error; an ended context is canceled. It is a pure function of err.
func (Engine) Classify(err error) engine.ErrorClass {
	if err == nil {
		return engine.ClassOther
	}
	if engine.IsCanceled(err) {
		return engine.ClassCanceled
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case erLockDeadlock, erLockWaitTimeout, erCheckRead, erLockNowait, erTooManyConcurrentTrxs:
			return engine.ClassRetryable
		case crServerGone, crServerLost, erServerShutdown, erConnectionKilled, erClientInteractionTimeout:
			return engine.ClassConnection
		}
		return engine.ClassOther
	}
	if engine.IsConnectionLost(err) || errors.Is(err, mysql.ErrInvalidConn) {
		return engine.ClassConnection
	}
	return engine.ClassOther
}

// Error numbers that Classify knows (MariaDB's include/mysqld_error.h and errmsg.h; MySQL
// shares the numbers below 3000).
const (
	erCheckRead                = 1020 // Record has changed since last read (innodb_snapshot_isolation=ON)
	erServerShutdown           = 1053
	erLockWaitTimeout          = 1205
	erLockDeadlock             = 1213
	erTooManyConcurrentTrxs    = 1637
	erConnectionKilled         = 1927
	crServerGone               = 2006 // client-side codes, for errors relayed by proxies
	crServerLost               = 2013
	erLockNowait               = 3572 // MySQL 8: NOWAIT found the row locked
	erClientInteractionTimeout = 4031 // MySQL 8: disconnected for inactivity
)

// Inspect reads the server version with its build comment ("10.11.19-MariaDB-0+deb12u1
// (Debian 12)"; MySQL's VERSION() does not name the product, its comment does), every global
// variable from SHOW GLOBAL VARIABLES (about 650 on MariaDB 10.11: the full configuration,
// so two runs can be compared setting by setting), and the size of the current database as
// the sum of data_length+index_length of its tables in information_schema. InnoDB estimates
// those from its statistics, so the size is approximate until ANALYZE TABLE has run. The
// build's word size and instruction set (engine.SettingBits, SettingArch) come from
// version_compile_machine.
func (Engine) Inspect(ctx context.Context, db *sql.DB) (engine.Info, error) {
	info := engine.Info{Settings: map[string]string{}}
	if err := db.QueryRowContext(ctx, "SELECT CONCAT(VERSION(), ' (', @@version_comment, ')')").Scan(&info.Version); err != nil {
		return info, err
	}
	if err := nameValues(ctx, db, "SHOW GLOBAL VARIABLES", func(name, value string) {
		info.Settings[name] = value
	}); err != nil {
		return info, err
	}
	buildSettings(info.Settings)
	if enc := tablespacesEncrypted(ctx, db); enc != "" && info.Settings["innodb_encrypt_tables"] != "" {
		info.Settings[SettingTablespacesEncrypted] = enc
	}
	err := db.QueryRowContext(ctx, `SELECT CAST(COALESCE(SUM(data_length + index_length), 0) AS SIGNED)
		FROM information_schema.tables WHERE table_schema = DATABASE()`).Scan(&info.DatabaseBytes)
	return info, err
}

// statusPrefixes select the SHOW GLOBAL STATUS counters that Stats keeps: I/O and buffer
// pool, redo log, row locks and deadlocks, commands and handler calls, network bytes,
// connections and temporary tables. A name matches when it starts with a prefix.
var statusPrefixes = []string{
	"Innodb_buffer_pool_read", "Innodb_buffer_pool_write_requests", "Innodb_buffer_pool_pages_flushed",
	"Innodb_buffer_pool_wait_free", "Innodb_buffer_pool_pages_dirty", "Innodb_buffer_pool_pages_data",
	"Innodb_data_", "Innodb_os_log_", "Innodb_log_", "Innodb_row_lock_", "Innodb_rows_", "Innodb_deadlocks",
	"Innodb_history_list_length", "Innodb_pages_",
	"Com_commit", "Com_rollback", "Com_begin", "Com_select", "Com_insert", "Com_update", "Com_delete",
	"Com_stmt_", "Com_call_procedure", "Com_set_option", "Com_load",
	"Handler_", "Questions", "Queries", "Bytes_received", "Bytes_sent",
	"Connections", "Aborted_", "Threads_", "Created_tmp_", "Select_", "Sort_", "Slow_queries",
	"Table_locks_", "Opened_tables", "Binlog_", "Uptime",
}

// Stats reads the counters of SHOW GLOBAL STATUS that describe a run (buffer pool reads
// and requests, data and redo I/O and fsyncs, row locks and deadlocks, commits, rollbacks
// and other commands, handler calls, bytes sent and received, connections, temporary
// tables, sorts), keyed "status.<Name>" as the server spells it ("status.Innodb_deadlocks").
// Values that are not numbers are left out. The counters are server-wide and current (no
// flush delay), and count the SHOW statement Stats itself runs (one query).
func (Engine) Stats(ctx context.Context, db *sql.DB) (engine.Stats, error) {
	st := engine.Stats{}
	err := nameValues(ctx, db, "SHOW GLOBAL STATUS", func(name, value string) {
		for _, p := range statusPrefixes {
			if strings.HasPrefix(name, p) {
				if f, err := strconv.ParseFloat(value, 64); err == nil {
					st["status."+name] = f
				}
				return
			}
		}
	})
	return st, err
}

// nameValues runs a SHOW statement of (name, value) rows and hands each row to fn.
func nameValues(ctx context.Context, db *sql.DB, query string, fn func(name, value string)) error {
	rows, err := db.QueryContext(ctx, query)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var value sql.NullString
		if err := rows.Scan(&name, &value); err != nil {
			return err
		}
		fn(name, value.String)
	}
	return rows.Err()
}

// Redact returns dsn with its password, if any, replaced by "xxxxx"; everything else is
// kept byte for byte. It finds the password where ParseDSN would.
func (Engine) Redact(dsn string) string { return Redact(dsn) }

// Redact is Engine.Redact, for callers that hold no Engine.
func Redact(dsn string) string {
	const mask = "xxxxx"
	rest, isURL := cutScheme(dsn)
	prefix := dsn[:len(dsn)-len(rest)]
	var at int // index in rest of the '@' ending the user info, or -1
	if isURL {
		if i := strings.Index(rest, "@unix("); i >= 0 {
			at = i
		} else {
			authority := rest
			if i := strings.IndexAny(authority, "/?"); i >= 0 {
				authority = authority[:i]
			}
			at = strings.LastIndex(authority, "@")
		}
	} else {
		// The driver's own rule: the last '@' before the last '/'.
		slash := strings.LastIndex(rest, "/")
		if slash < 0 {
			return dsn
		}
		at = strings.LastIndex(rest[:slash], "@")
	}
	out := dsn
	if at >= 0 {
		if colon := strings.Index(rest[:at], ":"); colon >= 0 {
			out = prefix + rest[:colon+1] + mask + rest[at:]
		}
	}
	if isURL {
		// A password must not travel as a parameter (ParseDSN refuses it), but mask it anyway.
		if q := strings.Index(out, "?"); q >= 0 {
			out = out[:q] + maskParam(out[q:], "password", mask)
		}
	}
	return out
}

func maskParam(query, key, mask string) string {
	parts := strings.Split(query[1:], "&")
	for i, p := range parts {
		if k, _, ok := strings.Cut(p, "="); ok && k == key {
			parts[i] = key + "=" + mask
		}
	}
	return "?" + strings.Join(parts, "&")
}
