package firebird

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nakagami/firebirdsql"

	"github.com/dblat/dblat/internal/engine"
)

// Engine is the Firebird engine. The zero value is ready to use and safe for concurrent use.
type Engine struct{}

func init() {
	engine.Register(Engine{}, engine.Naming{Aliases: []string{"fb"}, Schemes: []string{"firebird"}})
}

// Name returns "firebird".
func (Engine) Name() string { return "firebird" }

// Dialect returns Firebird 3.0's SQL spelling (see dialect.go for the caveats).
func (Engine) Dialect() engine.Dialect { return dialect() }

// Scheme is the optional URL scheme of a Firebird DSN. The driver's own form has none.
const Scheme = "firebird://"

// PasswordFileParam is the DSN parameter that names a file holding the password, used when
// the DSN itself carries none. Managed servers' DSNs use it, so that they can be printed and
// stored: the password stays in the instance directory (mode 0600). The parameter is
// dblat's, not the driver's; Open removes it before the driver sees the DSN.
const PasswordFileParam = "password_file"

// parseDSN reads dsn in the driver's form, user[:password]@host[:port]/path/to/db.fdb?params,
// with or without the firebird:// scheme. The path is absolute on the server ("/srv/db.fdb"
// after the host) or an alias (a single component).
func parseDSN(dsn string) (*url.URL, error) {
	u, err := url.Parse(Scheme + strings.TrimPrefix(dsn, Scheme))
	if err != nil {
		return nil, errors.New("not of the form user:password@host:port/path/db.fdb (reserved characters in the password must be %-encoded)")
	}
	if u.User == nil || u.User.Username() == "" {
		return nil, errors.New("no user (want user:password@host:port/path/db.fdb)")
	}
	if strings.Trim(u.Path, "/") == "" {
		return nil, errors.New("no database path (want user:password@host:port/path/db.fdb)")
	}
	if u.Port() == "" {
		u.Host = net.JoinHostPort(u.Hostname(), "3050") // the driver's default, made explicit for Dial
	}
	return u, nil
}

// DriverURL returns dsn as the driver reads it (firebird://user:password@host:port/path),
// with the password that PasswordFileParam names read in: for a client that opens its
// own connections with the driver (dblat replay's sessions). The URL holds the password:
// never print or store it.
func DriverURL(dsn string) (*url.URL, error) {
	u, err := parseDSN(dsn)
	if err != nil {
		return nil, err
	}
	if err := resolvePassword(u); err != nil {
		return nil, err
	}
	return u, nil
}

// resolvePassword moves the password named by PasswordFileParam into u, unless u already
// has one, and drops the parameter.
func resolvePassword(u *url.URL) error {
	q := u.Query()
	file := q.Get(PasswordFileParam)
	if !q.Has(PasswordFileParam) {
		return nil
	}
	q.Del(PasswordFileParam)
	u.RawQuery = q.Encode()
	if _, has := u.User.Password(); has {
		return nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("%s: %w", PasswordFileParam, err)
	}
	u.User = url.UserPassword(u.User.Username(), strings.TrimSpace(string(b)))
	return nil
}

// The driver's DSN parameters that bound a statement after its context ends: the driver
// sends op_cancel and then waits for the statement's answer; with cancel_hard_drop it closes
// the socket when none came within cancel_hard_drop_grace milliseconds, and database/sql
// discards the connection. Open sets them unless the DSN does.
const (
	paramCancelHardDrop      = "cancel_hard_drop"
	paramCancelHardDropGrace = "cancel_hard_drop_grace"
)

// cancelGrace is how long a canceled statement may take to answer before its connection is
// dropped. Without a bound, runs of 16 TPC-C terminals on Firebird 3.0.11 (4 s windows,
// client mode, a busy machine) hung after their window in 2 of 15: a statement the runner
// canceled at the end of its drain time never answered, while the server showed its
// attachment idle with the transaction open, and the run waited for that terminal for
// good; with the bound none of 15 did. Half a second is hundreds of times what op_cancel
// normally takes, and keeps a run's overrun within the runner's drain time-out plus a
// second.
const cancelGrace = 500 * time.Millisecond

// Open parses dsn, reads the password from PasswordFileParam if the DSN names one, and
// pings the server (one attach). The pool it returns is not limited; a statement whose
// context ends is canceled and, if it does not answer within cancelGrace, its connection
// dropped.
//
// Callers must run every statement inside BeginTx ... Commit (see the package comment).
// Transaction isolation levels map as the driver defines them, except for read-write
// sql.LevelReadCommitted (and LevelDefault): READ COMMITTED with the lock resolution and
// record-version mode of the DSN's lock_resolution and record_version parameters
// (txparams.go; by default WAIT and DefaultRecVersion). LevelRepeatableRead is SNAPSHOT
// (concurrency) WAIT, LevelSerializable is SNAPSHOT TABLE STABILITY, and
// firebirdsql.LevelReadCommittedNoWait is READ COMMITTED NO WAIT. TxOptions.ReadOnly always
// gives READ COMMITTED READ ONLY whatever the isolation asked for: a read-only snapshot must
// be asked for as a read-write LevelRepeatableRead transaction that does not write.
//
// When opts.Dial is set, every connection goes through it, with the context the pool was
// asked for the connection with. The driver has no dialer hook (v0.9.23 dials with its own
// net.Dialer), so Open bridges: for each new connection it calls opts.Dial for the server's
// address, listens once on an ephemeral 127.0.0.1 port, lets the driver connect there and
// copies bytes both ways while the driver attaches; then it points the driver's wire channel
// at the Dial-ed connection and closes the loopback socket (adopt.go), so that a round trip
// costs no more socket copies than on the other engines' drivers. Everything the driver
// sends and receives passes through the Dial-ed connection unchanged, so round trips and
// bytes counted on it are the driver's. Between Listen and Accept another local process
// could connect to the bridge first; it would then talk to the server (which listens on
// loopback anyway) and the driver's attach would fail.
func (e Engine) Open(ctx context.Context, dsn string, opts engine.OpenOptions) (*sql.DB, error) {
	u, err := parseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("firebird DSN %s: %w", e.Redact(dsn), err)
	}
	if err := resolvePassword(u); err != nil {
		return nil, fmt.Errorf("firebird DSN %s: %w", e.Redact(dsn), err)
	}
	tp, err := takeTxParams(u)
	if err != nil {
		return nil, fmt.Errorf("firebird DSN %s: %w", e.Redact(dsn), err)
	}
	q := u.Query()
	loadDir := q.Get(LoadDirParam)
	q.Del(LoadDirParam)
	if !q.Has(paramCancelHardDrop) {
		q.Set(paramCancelHardDrop, "true")
		q.Set(paramCancelHardDropGrace, strconv.FormatInt(cancelGrace.Milliseconds(), 10))
	}
	u.RawQuery = q.Encode()
	c, err := newConnector(u, opts.Dial, tp)
	if err != nil {
		return nil, fmt.Errorf("firebird DSN %s: %w", e.Redact(dsn), oneLine(err))
	}
	c.loadDir, c.timeout = loadDir, opts.ConnectTimeout
	db := sql.OpenDB(c)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("cannot connect to %s: %w", e.Redact(dsn), oneLine(err))
	}
	return db, nil
}

// oneLine joins the lines of a Firebird message (the driver puts each status-vector entry
// on a line of its own) and keeps err for errors.Is/As.
func oneLine(err error) error {
	if !strings.ContainsAny(err.Error(), "\r\n") {
		return err
	}
	return lineError{strings.Join(strings.Fields(err.Error()), " "), err}
}

type lineError struct {
	msg string
	err error
}

func (e lineError) Error() string { return e.msg }
func (e lineError) Unwrap() error { return e.err }

// baseDriver is the driver registered as "firebirdsql", reached through database/sql because
// its type is unexported.
var baseDriver = sync.OnceValues(func() (driver.DriverContext, error) {
	db, err := sql.Open("firebirdsql", "")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	dc, ok := db.Driver().(driver.DriverContext)
	if !ok {
		return nil, errors.New("driver firebirdsql does not implement driver.DriverContext")
	}
	return dc, nil
})

// connector makes the pool's connections, directly or through dial (see Engine.Open).
type connector struct {
	u    *url.URL // with password, without dblat's parameters
	base driver.Connector
	dial func(ctx context.Context, network, addr string) (net.Conn, error)
	tp   txParams
	// timeout bounds each Connect (OpenOptions.ConnectTimeout); 0: none.
	timeout time.Duration

	loadDir       string     // LoadDirParam, "" for none
	ddlMu         sync.Mutex // one DDL statement of copyExternal at a time
	probeMu       sync.Mutex // guards probed and probeErr
	probed        bool
	probeErr      error // of probeExternal
	insertOnce    sync.Once
	inserts       chan struct{} // see acquireInsert
	externalLoads atomic.Int64  // CopyRows calls that loaded through an external table
}

func newConnector(u *url.URL, dial func(context.Context, string, string) (net.Conn, error), tp txParams) (*connector, error) {
	dc, err := baseDriver()
	if err != nil {
		return nil, err
	}
	base, err := dc.OpenConnector(u.String())
	if err != nil {
		return nil, err
	}
	return &connector{u: u, base: base, dial: dial, tp: tp}, nil
}

// Connect implements driver.Connector: a connection of the driver, wrapped to start
// transactions with the DSN's transaction parameters (txparams.go). The driver has no
// connect timeout of its own but bounds its dial and attach by ctx's deadline, so
// OpenOptions.ConnectTimeout is one on ctx.
func (c *connector) Connect(ctx context.Context) (driver.Conn, error) {
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	var conn driver.Conn
	var err error
	if c.dial == nil {
		conn, err = c.base.Connect(ctx)
	} else {
		conn, err = c.bridged(ctx)
	}
	if err != nil {
		return nil, err
	}
	return wrapConn(conn, c.tp)
}

// Driver implements driver.Connector. The value also lets Inspect open an extra attachment
// with the same DSN (see otherServerPID).
func (c *connector) Driver() driver.Driver { return connDriver{c} }

type connDriver struct{ c *connector }

// Open opens a connection for name, ignoring the connector's DSN (database/sql never calls
// it when a Connector is used).
func (d connDriver) Open(name string) (driver.Conn, error) {
	dc, err := baseDriver()
	if err != nil {
		return nil, err
	}
	return dc.(driver.Driver).Open(name)
}

// bridged connects the driver to the server through c.dial (see Engine.Open and adopt.go):
// through a loopback bridge for the attach, then, where the driver's wire channel can be
// reached, on the Dial-ed connection itself.
func (c *connector) bridged(ctx context.Context) (driver.Conn, error) {
	up, err := c.dial(ctx, "tcp", c.u.Host)
	if err != nil {
		return nil, err
	}
	ln, err := net.ListenTCP("tcp4", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		up.Close()
		return nil, err
	}
	accepted := make(chan *bridge, 1)
	go func() {
		down, err := ln.AcceptTCP()
		ln.Close()
		if err != nil {
			up.Close()
			accepted <- nil
			return
		}
		b := &bridge{down: down, up: up}
		b.run()
		accepted <- b
	}()
	local := *c.u
	local.Host = ln.Addr().String()
	dc, err := baseDriver()
	if err != nil {
		ln.Close()
		return nil, err
	}
	lc, err := dc.OpenConnector(local.String())
	if err != nil {
		ln.Close()
		return nil, err
	}
	conn, err := lc.Connect(ctx)
	if err != nil {
		// Unblocks Accept if the driver never connected; otherwise the driver has closed
		// its end and the bridge closes up.
		ln.Close()
		return nil, err
	}
	b := <-accepted
	w, ok := wireOf(conn)
	if !ok || !w.idle() || b == nil {
		return conn, nil // the bridge stays
	}
	if !b.detach() {
		conn.Close()
		return nil, errors.New("firebird: the connection to the server ended as it was made")
	}
	if old := w.repoint(up); old != nil {
		old.Close()
	}
	return conn, nil
}

// codeUpdateErasedRecord is "cannot update erased record" (not among the driver's constants).
const codeUpdateErasedRecord = 336527548

// Firebird status codes (GDS codes, ISC error numbers) that Classify sorts. They are the
// values of firebirdsql.ISC* constants, named here as in Firebird's include/gen/iberror.h.
var (
	// retryableCodes: the transaction lost a race for a row or a lock and may succeed when
	// retried. A row update conflict reaches the client as isc_deadlock (335544336, the
	// message is just "deadlock"), isc_update_conflict (335544451) and
	// isc_concurrent_transaction (335544878): observed on 3.0.11 alike for a NO WAIT
	// writer, a READ COMMITTED WAIT writer whose blocker committed, and a SNAPSHOT writer.
	// A NO WAIT request for another kind of lock fails with isc_lock_conflict (335544345),
	// a wait that times out (isc_tpb_lock_timeout) with isc_lock_timeout (335544510).
	// Two transactions racing to delete the same row (TPC-C Delivery taking the same oldest
	// NEW-ORDER) make the loser fail with "cannot update erased record" (336527548) on
	// 3.0.11: a lost race too.
	retryableCodes = []int{
		firebirdsql.ISCDeadlock, firebirdsql.ISCUpdateConflict, firebirdsql.ISCConcurrentTransaction,
		firebirdsql.ISCLockConflict, firebirdsql.ISCLockTimeout, codeUpdateErasedRecord,
	}
	// connectionCodes: the attachment is gone or never came up: network errors, lost
	// connection, the database or the attachment shut down, connection rejected.
	connectionCodes = []int{
		firebirdsql.ISCNetworkError, firebirdsql.ISCNetConnectErr, firebirdsql.ISCNetReadErr,
		firebirdsql.ISCNetWriteErr, firebirdsql.ISCLostDbConnection, firebirdsql.ISCAttShutdown,
		firebirdsql.ISCShutdown, firebirdsql.ISCConnectReject, firebirdsql.ISCNetServerShutdown,
	}
)

// Classify sorts Firebird errors: update conflicts, deadlocks and lock conflicts or
// time-outs are retryable; network errors, lost or shut-down attachments and broken driver
// connections mean a lost connection; a context that ended, or a statement the server
// cancelled (isc_cancelled, what the driver's op_cancel on context end produces), is
// canceled. The status vector is searched as a whole, so the order in which the server
// lists its codes does not matter.
func (Engine) Classify(err error) engine.ErrorClass {
	if err == nil {
		return engine.ClassOther
	}
	if engine.IsCanceled(err) {
		return engine.ClassCanceled
	}
	var fbErr *firebirdsql.FbError
	if errors.As(err, &fbErr) {
		has := func(codes []int) bool {
			for _, c := range fbErr.GDSCodes {
				for _, w := range codes {
					if c == w {
						return true
					}
				}
			}
			return false
		}
		switch {
		case has([]int{firebirdsql.ISCCancelled}):
			return engine.ClassCanceled
		case has(retryableCodes), strings.Contains(fbErr.Message, "cannot update erased record"):
			// 3.0.11 also sends the lost-race message under the generic isc_random code.
			return engine.ClassRetryable
		case has(connectionCodes):
			return engine.ClassConnection
		}
		if !errors.Is(err, driver.ErrBadConn) {
			return engine.ClassOther
		}
	}
	// ErrOpResponse: the server answered with an unexpected packet, so the wire is out of
	// step and the connection useless.
	var opErr *firebirdsql.ErrOpResponse
	if engine.IsConnectionLost(err) || errors.As(err, &opErr) {
		return engine.ClassConnection
	}
	return engine.ClassOther
}

// Redact returns dsn with the password in its user information, and the value of any
// password= parameter, replaced by "xxxxx". It accepts every form Open does, and never shows
// a password even in strings Open would reject: when the DSN has more than one "@" (an
// unescaped "@" in the password, or one in the path) or does not parse as a URL, everything
// from the user's ":" to the last "@" is replaced, which may hide part of the host or path
// too.
func (Engine) Redact(dsn string) string {
	const mask = "xxxxx"
	scheme, rest := "", dsn
	if strings.HasPrefix(dsn, Scheme) {
		scheme, rest = Scheme, strings.TrimPrefix(dsn, Scheme)
	}
	ats := strings.Count(rest, "@")
	if u, err := url.Parse(Scheme + rest); err == nil && (ats == 0 || ats == 1 && u.User != nil) {
		// With a single "@" inside the authority, the user information is all of rest
		// before it: nothing of the password can have landed in host, path or query.
		if u.User != nil {
			if _, has := u.User.Password(); has {
				u.User = url.UserPassword(u.User.Username(), mask)
			}
		}
		if q := u.Query(); q.Has("password") {
			q.Set("password", mask)
			u.RawQuery = q.Encode()
		}
		return scheme + strings.TrimPrefix(u.String(), Scheme)
	}
	if at := strings.LastIndexByte(rest, '@'); at >= 0 {
		if colon := strings.IndexByte(rest[:at], ':'); colon >= 0 {
			rest = rest[:colon+1] + mask + rest[at:]
		}
	}
	return scheme + passwordParam.ReplaceAllString(rest, "${1}"+mask)
}

var passwordParam = regexp.MustCompile(`(?i)([?&]password=)[^&]*`)

// TxOnly reports that every statement must run in an explicit transaction: the driver's
// autocommit uses commit-retaining, which pins the oldest snapshot (engines.md §2).
func (Engine) TxOnly() bool { return true }
