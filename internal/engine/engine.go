// Package engine is the seam for a database product: how to open it, which SQL dialect and
// capabilities it has, how its errors are classified, what settings and statistics it
// reports, and — through optional capabilities (capabilities.go) — how dblat runs managed
// servers of it, which run options and hooks it has, how it restores a pristine database,
// how big a cache its settings ask for, whether it encrypts data at rest, which operations
// (a backup, a vacuum, a checkpoint, an index build) it runs during a window, and what its
// settings and counters mean for a like-for-like comparison.
//
// Nothing outside package engine and its sub-packages tests an engine's name: workload
// code branches on Dialect and the optional capabilities, the execution core and the
// credibility checks on the optional capabilities. Register resolves those once into an
// engine's Capabilities (caps.go), which callers read through Caps: the type assertions
// to the optional interfaces are all there. Package engine imports of dblat only the
// product-neutral leaf packages managed, option and wire; the per-product implementations
// live in sub-packages (engine/postgres, ...), which register themselves, and engine/all
// imports them all (adding an engine is its package plus one line there). The few pieces
// of logic those share (FoldedBatchTx, Interpolate, AppendLoadText, IsConnectionLost)
// live here, and the conformance suites every engine's tests run in engine/enginetest
// and (for Batcher) engine/batchtest.
package engine

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// Engine is one database product. Implementations are safe for concurrent use.
type Engine interface {
	// Name is the short product name used on the command line ("postgres").
	Name() string
	// Open returns a pool for dsn and checks that the server answers. It does not limit the
	// pool; callers do. opts.Dial, when set, replaces the driver's TCP dialer.
	Open(ctx context.Context, dsn string, opts OpenOptions) (*sql.DB, error)
	// Dialect describes the SQL this engine speaks.
	Dialect() Dialect
	// Classify sorts an error returned by this engine's driver into a behaviour class.
	Classify(err error) ErrorClass
	// Inspect reads back the server version and the settings the server actually runs with.
	Inspect(ctx context.Context, db *sql.DB) (Info, error)
	// Stats reads cumulative server statistics, to be taken before and after a run.
	Stats(ctx context.Context, db *sql.DB) (Stats, error)
	// Redact returns dsn with any password removed, safe to store and print.
	Redact(dsn string) string
}

// OpenOptions adjust how Engine.Open connects.
type OpenOptions struct {
	// Dial, when set, makes every connection of the pool. The context is the one passed to
	// (*sql.DB).Conn, so a caller can find out which connection it got (round-trip accounting).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// ConnectTimeout, when positive, bounds the making of each connection (dial, TLS,
	// authentication), by whichever knob the engine's driver has; a DSN that sets the
	// driver's own keeps it. 0 leaves the driver's default.
	ConnectTimeout time.Duration
}

// BulkLoader is an optional Engine capability: a fast path for loading many rows
// (PostgreSQL COPY, ...). Engines without it are loaded with multi-row INSERTs.
type BulkLoader interface {
	// CopyRows loads rows into table. next is called until it returns false; each call fills
	// row (len(cols) values, reused between calls) and is never called concurrently.
	CopyRows(ctx context.Context, db *sql.DB, table string, cols []string, next func(row []any) bool) (int64, error)
}

// Info is what the server reports about itself, read back rather than echoed from requests.
type Info struct {
	Version  string            `json:"version"`
	Settings map[string]string `json:"settings"`
	// DatabaseBytes is the size of the benchmark database on disk.
	DatabaseBytes int64 `json:"database_bytes"`
}

// Stats is a named set of cumulative counters ("pg_stat_database.xact_commit" -> 123).
type Stats map[string]float64

// Delta returns after-before for every counter present in both.
func (after Stats) Delta(before Stats) Stats {
	d := make(Stats, len(after))
	for k, v := range after {
		if b, ok := before[k]; ok {
			d[k] = v - b
		}
	}
	return d
}

// Dialect holds the SQL spellings and capabilities that differ between engines.
// Workloads ask the dialect; they never test the engine's name.
type Dialect struct {
	// Placeholder returns the bind marker for the n-th (1-based) parameter: "$1" or "?".
	Placeholder func(n int) string
	// ForUpdate is the suffix that locks selected rows (" FOR UPDATE"), or "" if unsupported.
	// It follows LimitOne's result: TPC-C's Delivery reads each district's oldest NEW-ORDER
	// row with LimitOne(query)+ForUpdate; its other transactions lock a row by writing it
	// first (see LockingIsolation).
	ForUpdate string
	// SupportsReturning reports whether UPDATE ... RETURNING is available.
	SupportsReturning bool
	// LimitOne turns a SELECT into one that returns at most one row, or nil if the query
	// must be trimmed by the client.
	LimitOne func(query string) string
	// Types maps the generic column types used in workload DDL to engine types.
	// Keys: "int", "smallint", "bigint", "decimal(p,s)" pattern handled by Decimal, "timestamp",
	// "text" (variable length char).
	Decimal   func(p, s int) string
	Timestamp string
	// Varchar returns a variable-length character type of at most n characters.
	Varchar func(n int) string
	// Char returns a fixed-length character type of n characters.
	Char func(n int) string

	// LockingIsolation is the isolation level (for sql.TxOptions) of read-write transactions
	// that lock each row by writing it (UPDATE/DELETE) before reading it back: every
	// statement sees the latest committed data, and a write to a row a concurrent
	// transaction changed waits for it and then applies to the committed version instead of
	// failing. That is READ COMMITTED on PostgreSQL and InnoDB. sql.LevelDefault leaves the
	// server's default.
	LockingIsolation sql.IsolationLevel
	// SnapshotIsolation is the isolation level (for sql.TxOptions) that gives a read-only
	// transaction one consistent snapshot of committed data (REPEATABLE READ on PostgreSQL
	// and InnoDB, "concurrency" on Firebird). Read-only transactions at this level never
	// fail with serialization errors on those engines.
	SnapshotIsolation sql.IsolationLevel
	// DropTable returns a statement that drops table and succeeds when it does not exist
	// ("DROP TABLE IF EXISTS t"), or nil if the engine cannot say that: callers then issue
	// "DROP TABLE t" and ignore its error.
	DropTable func(table string) string
	// Analyze returns the statement that refreshes the optimizer statistics of table, for
	// the given columns or for all of them when cols is empty ("ANALYZE t (a, b)"), or is
	// nil if the engine has none worth running after a bulk load.
	Analyze func(table string, cols []string) string
	// MaxInsertRows is how many rows one INSERT ... VALUES (...), (...) may carry when
	// loading without a BulkLoader; 0 or 1 means one row per INSERT (no multi-row VALUES).
	// Callers also keep rows*columns at or below 32767 bind parameters.
	MaxInsertRows int
	// Blob is the column type of a binary large object ("bytea", "longblob", ...).
	Blob string
	// Dual is the FROM clause of a SELECT that reads no table: "" where the engine allows a
	// SELECT without FROM, " FROM RDB$DATABASE" on Firebird.
	Dual string
	// Concat returns an SQL expression that concatenates the given string expressions
	// ("a || b", or "CONCAT(a, b)" where || means OR), or is nil if the engine has no
	// spelling the workloads know; they then concatenate on the client.
	Concat func(exprs ...string) string
	// ProcedureLanguage names the language of the engine's stored procedures, so that a
	// workload that installs server-side code can pick its sources by capability rather than
	// by product: "plpgsql" (PostgreSQL 11+: procedures may COMMIT and ROLLBACK), "sql/psm"
	// (MySQL/MariaDB's SQL/PSM dialect: procedures may COMMIT and ROLLBACK), "psql"
	// (Firebird: procedures cannot end the transaction they run in; the client must). ""
	// means none the workloads know.
	ProcedureLanguage string
	// FoldsUpper is set when the engine stores unquoted identifiers in upper case and names
	// result columns so (Firebird: SELECT count(*) AS n names its column N), where
	// PostgreSQL folds them to lower case; a script's \gset then stores them as PostgreSQL
	// would name them.
	FoldsUpper bool
	// ExecCountsRows is set when the driver's Exec of a statement that returns no rows
	// costs a second round trip to read how many rows it changed, which running the same
	// statement as a query does not (Firebird: op_info_sql after op_execute). A caller that
	// does not need the count runs such statements as queries, one round trip each.
	ExecCountsRows bool
}

// Rebind rewrites a query written with "?" placeholders into the dialect's markers.
func (d Dialect) Rebind(query string) string {
	if d.Placeholder == nil {
		return query
	}
	out := make([]byte, 0, len(query)+8)
	n := 0
	for i := 0; i < len(query); i++ {
		if query[i] == '?' {
			n++
			out = append(out, d.Placeholder(n)...)
			continue
		}
		out = append(out, query[i])
	}
	return string(out)
}

// Naming is how users name an engine besides Engine.Name: on the command line and in study
// files (Aliases), and in DSNs (Schemes).
type Naming struct {
	// Aliases are other names of the engine ("pg", "postgresql").
	Aliases []string
	// Schemes are the URL schemes of its DSNs ("postgres", "postgresql").
	Schemes []string
	// KeyValueDSN is set for the engine that reads DSNs without a scheme, libpq's
	// "host=... dbname=..." (at most one engine).
	KeyValueDSN bool
}

type registered struct {
	e     Engine
	names Naming
	caps  Capabilities // resolved once, here
}

var (
	mu       sync.RWMutex
	registry = map[string]registered{}
)

// Register makes an engine available to Lookup and ForDSN under its name, aliases and DSN
// schemes, and resolves its optional capabilities once (Caps). It panics on a name, alias or scheme already taken, which is a programming
// error found at init time.
func Register(e Engine, n Naming) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := registry[e.Name()]; dup {
		panic("engine: duplicate registration of " + e.Name())
	}
	for _, r := range registry {
		for _, a := range n.Aliases {
			if a == r.e.Name() || slices.Contains(r.names.Aliases, a) {
				panic("engine: alias " + a + " of " + e.Name() + " is taken by " + r.e.Name())
			}
		}
		for _, s := range n.Schemes {
			if slices.Contains(r.names.Schemes, s) {
				panic("engine: DSN scheme " + s + " of " + e.Name() + " is taken by " + r.e.Name())
			}
		}
		if n.KeyValueDSN && r.names.KeyValueDSN {
			panic("engine: key=value DSNs are already read by " + r.e.Name())
		}
	}
	registry[e.Name()] = registered{e: e, names: n, caps: resolve(e)}
}

// Lookup returns the engine registered under name or one of its aliases.
func Lookup(name string) (Engine, error) {
	mu.RLock()
	defer mu.RUnlock()
	if r, ok := registry[name]; ok {
		return r.e, nil
	}
	for _, r := range registry {
		if slices.Contains(r.names.Aliases, name) {
			return r.e, nil
		}
	}
	return nil, fmt.Errorf("unknown engine %q (known: %s)", name, strings.Join(namesLocked(), ", "))
}

// ForDSN returns the engine whose DSNs look like dsn: by its URL scheme
// ("mysql://..."), or the KeyValueDSN engine for a DSN without one.
func ForDSN(dsn string) (Engine, error) {
	scheme, _, hasScheme := strings.Cut(dsn, "://")
	mu.RLock()
	defer mu.RUnlock()
	var schemes []string
	for _, name := range namesLocked() {
		r := registry[name]
		if hasScheme && slices.Contains(r.names.Schemes, scheme) || !hasScheme && r.names.KeyValueDSN {
			return r.e, nil
		}
		for _, s := range r.names.Schemes {
			schemes = append(schemes, s+"://")
		}
	}
	if !hasScheme {
		return nil, fmt.Errorf("DSN has no scheme and no engine reads key=value DSNs (known schemes: %s)", strings.Join(schemes, ", "))
	}
	return nil, fmt.Errorf("unknown DSN scheme %q (known: %s)", scheme, strings.Join(schemes, ", "))
}

// IsDSN reports whether spec looks like a DSN (a URL or key=value pairs) rather than the
// name of a managed server.
func IsDSN(spec string) bool {
	return strings.Contains(spec, "://") || strings.Contains(spec, "=")
}

// Names lists the registered engines' names, sorted.
func Names() []string {
	mu.RLock()
	defer mu.RUnlock()
	return namesLocked()
}

// Managed lists the registered engines that can run managed servers (Manager), sorted.
func Managed() []string {
	var out []string
	for _, n := range Names() {
		e, _ := Lookup(n)
		if Caps(e).Manager != nil {
			out = append(out, n)
		}
	}
	return out
}

func namesLocked() []string {
	n := make([]string, 0, len(registry))
	for k := range registry {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// Batcher is an optional Engine capability: a transaction whose statements travel to the
// server in batches, each batch in one request, so that a workload can trade round trips
// for batched statements without installing server-side code. Each engine sends a batch
// the cheapest way it has, and documents what a batch costs in round trips: a pipeline of
// extended-protocol messages (PostgreSQL, 1 round trip), an anonymous compound statement
// (MariaDB, 1), an EXECUTE BLOCK (Firebird 3, a few, plus the begin and commit that PSQL
// cannot do).
type Batcher interface {
	// BeginBatch begins a transaction with opts (nil: the server's defaults) on conn. An
	// engine that can fold the begin into the first batch sends nothing yet. Until the
	// transaction ends (Commit, Rollback, or a failed batch) it owns conn: use conn for
	// nothing else meanwhile.
	BeginBatch(ctx context.Context, conn *sql.Conn, opts *sql.TxOptions) (BatchTx, error)
}

// BatchTx is a transaction begun by Batcher.BeginBatch. It is used by one goroutine at a
// time. Once it has ended, its methods return sql.ErrTxDone.
type BatchTx interface {
	// Send runs stmts in order, in one request, and fills in their results. If a statement
	// fails, the ones after it do not run, the transaction is rolled back and ends, and the
	// error is returned wrapped (errors.As finds the driver's error, so Engine.Classify
	// works on it).
	Send(ctx context.Context, stmts ...*BatchStmt) error
	// Commit runs stmts like Send and then commits, in the same request where the engine
	// can. stmts may be empty.
	Commit(ctx context.Context, stmts ...*BatchStmt) error
	// Rollback runs stmts like Send and then rolls back, in the same request where the
	// engine can: the statements' results are read, their effects undone. stmts may be
	// empty. After a failed Send it returns sql.ErrTxDone, which callers may ignore.
	Rollback(ctx context.Context, stmts ...*BatchStmt) error
}

// BatchStmt is one statement of a batch and, once the batch has run, its result.
type BatchStmt struct {
	// SQL is one statement without a trailing semicolon, written with the dialect's
	// placeholders (Dialect.Rebind).
	SQL string
	// Args are its arguments: values database/sql accepts (driver.Valuer included).
	Args []any
	// Columns is how many columns each result row has, 0 for a statement that returns no
	// rows (INSERT, UPDATE or DELETE without RETURNING), whose RowsAffected is set
	// instead. Engines that declare result shapes before sending (Firebird) need it.
	Columns int

	// Rows are the result rows, each of Columns values of the driver.Value types (int64,
	// float64, bool, string, []byte, time.Time, or nil for NULL). Engines whose batches
	// carry results as text (Firebird) hand every non-NULL value over as a string; callers
	// convert as database/sql's Scan would.
	Rows [][]any
	// RowsAffected is how many rows a statement with Columns == 0 changed, as the driver
	// reports it for a lone statement (for an UPDATE on MariaDB: changed, not matched).
	RowsAffected int64
}
