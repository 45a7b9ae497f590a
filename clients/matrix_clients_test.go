package clients_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// matrix is every client of the matrix, with the round trips its protocol implies for the
// transaction SELECT by key, UPDATE, COMMIT.
//
// The replay (`dblat run script -f` of the recording) sends one statement per round trip:
// BEGIN, SELECT, UPDATE, COMMIT are 4 on PostgreSQL, whatever the client pipelined
// (pgjdbc); on MariaDB a client with autocommit off sent no BEGIN and the recording has
// none: 3, and 4 for a client that sent START TRANSACTION. On Firebird the replay is the
// script runner's Go driver with its statements prepared: 7.
func matrix() []client {
	const pgTLS, myTLS = "`sslmode=disable`", "none by default"
	return []client{
		// C: libpq, libmariadb, fbclient.
		{name: "pgbench (libpq)", engine: "postgres", fast: true, rts: 4, replay: 4, tls: pgTLS + " (or the proxy's decline)",
			why: "the simple protocol: BEGIN, SELECT, UPDATE and COMMIT each a query and its answer", run: runPgbench},
		{name: "libmariadb, prepared", engine: "mariadb", fast: true, rts: 3, replay: 3, tls: myTLS,
			why: "autocommit off: the SELECT's execute opens the transaction; execute, execute, COM_QUERY COMMIT", run: runLibmariadb(false)},
		{name: "libmariadb, text", engine: "mariadb", fast: true, rts: 3, replay: 3, tls: myTLS,
			why: "autocommit off: SELECT, UPDATE and COMMIT, each a COM_QUERY", run: runLibmariadb(true)},
		{name: "isql-fb (fbclient)", engine: "firebird", fast: true, rts: 9, replay: 7, tls: "`WireCrypt = Disabled` in the client's firebird.conf ($FIREBIRD)",
			why: "isql keeps two transactions and starts both (op_transaction twice); it prepares every statement, COMMIT too, " +
				"in a round trip of its own (the previous statement's op_free_statement and its op_cancel toggles ride along), " +
				"then executes it (the SELECT's op_fetch in the same flight); COMMIT is a DSQL execute for one transaction " +
				"and op_commit for the other: 2 + 2 + 2 + 2 + 1", run: runIsql},
		// Go.
		{name: "pgx", engine: "postgres", fast: true, rts: 4, replay: 4, tls: "`sslmode=disable`",
			why: "Begin sends BEGIN; each statement Bind/Execute/Sync from pgx's statement cache; COMMIT", run: runGo("pgx")},
		{name: "go-sql-driver/mysql", engine: "mariadb", fast: true, rts: 6, replay: 4, tls: myTLS,
			why: "START TRANSACTION; each statement with arguments is COM_STMT_PREPARE, COM_STMT_EXECUTE (and an unanswered COM_STMT_CLOSE); COMMIT", run: runGo("mysql")},
		{name: "firebirdsql (Go)", engine: "firebird", fast: true, rts: 10, replay: 7, tls: "`wire_crypt=false`",
			why: "op_transaction; each statement op_allocate_statement+op_prepare_statement in one flight, op_info_sql, " +
				"op_execute, then op_fetch for the SELECT and op_info_sql for the UPDATE's count; op_commit " +
				"(each op_free_statement rides with the next request): 1 + 4 + 4 + 1", run: runGo("firebird")},
		// Python.
		{name: "psycopg 3", engine: "postgres", rts: 4, replay: 4, tls: pgTLS,
			why: "BEGIN sent by psycopg before the first statement; SELECT and UPDATE each Parse/Bind/Execute/Sync; COMMIT", run: runPython("psycopg_client.py")},
		{name: "mysql-connector-python, plain", engine: "mariadb", rts: 3, replay: 3, tls: "`ssl_disabled=True`",
			why: "autocommit off: SELECT, UPDATE, COMMIT each a COM_QUERY", run: runPython("mysql_connector_client.py", "--mode", "text")},
		{name: "mysql-connector-python, prepared", engine: "mariadb", rts: 7, replay: 3, nagle: true, tls: "`ssl_disabled=True`",
			why: "cursor(prepared=True) prepares again whenever its statement changes: for the SELECT and again for the UPDATE " +
				"an unanswered COM_STMT_CLOSE with COM_STMT_PREPARE, then COM_STMT_RESET, then COM_STMT_EXECUTE; COMMIT: 3 + 3 + 1. " +
				"Each prepare waits about 40 ms behind the unanswered close (pure Python writes them apart: Nagle, delayed ACK)", run: runPython("mysql_connector_client.py", "--mode", "prepared")},
		{name: "PyMySQL", engine: "mariadb", rts: 3, replay: 3, tls: myTLS,
			why: "autocommit off: SELECT, UPDATE, COMMIT each a COM_QUERY", run: runPython("pymysql_client.py")},
		{name: "firebird-driver", engine: "firebird", rts: 6, replay: 7, tls: "`WireCrypt = Disabled` in the connection's configuration (isc_dpb_config)",
			why: "fbclient underneath: op_transaction; the SELECT allocated and prepared in one flight, executed and fetched " +
				"in the next; the UPDATE likewise (the SELECT's frees ride along), its count in the execute's answer; " +
				"op_commit: 1 + 2 + 2 + 1, every transaction (the cursor prepares again when its statement changes)", run: runPython("firebird_driver_client.py")},
		// Java.
		{name: "pgjdbc", engine: "postgres", rts: 3, replay: 4, tls: pgTLS,
			why: "BEGIN goes with the SELECT in one flight (no Sync between); UPDATE; COMMIT", run: runJava("jdbc:postgresql://%s:%d/%s?sslmode=disable")},
		{name: "Connector/J, useServerPrepStmts=true", engine: "mariadb", rts: 3, replay: 3, tls: myTLS,
			why: "autocommit off: execute SELECT, execute UPDATE, COMMIT", run: runJava("jdbc:mariadb://%s:%d/%s?useServerPrepStmts=true")},
		{name: "Connector/J, useServerPrepStmts=false", engine: "mariadb", rts: 3, replay: 3, tls: myTLS,
			why: "autocommit off: SELECT, UPDATE, COMMIT each a COM_QUERY", run: runJava("jdbc:mariadb://%s:%d/%s?useServerPrepStmts=false")},
		{name: "Jaybird", engine: "firebird", rts: 6, replay: 7, tls: "`wireCrypt=DISABLED`",
			why: "statements prepared once per connection; op_transaction; op_execute of the SELECT, op_fetch in a round " +
				"trip of its own; op_execute of the UPDATE (the cursor's free rides along), then op_info_sql for the update " +
				"count executeUpdate returns; op_commit: 1 + 2 + 2 + 1", run: runJava("jdbc:firebirdsql://%s:%d/%s?wireCrypt=DISABLED")},
		// Node.
		{name: "pg (Node)", engine: "postgres", rts: 4, replay: 4, tls: "`ssl: false` (the default)",
			why: "BEGIN, SELECT and UPDATE (Parse/Bind/Describe/Execute/Sync, unnamed), COMMIT", run: runNode("pg_client.js")},
		{name: "mysql2, query", engine: "mariadb", rts: 4, replay: 4, tls: myTLS,
			why: "beginTransaction sends START TRANSACTION; SELECT, UPDATE, COMMIT each a COM_QUERY", run: runNode("mysql2_client.js", "--mode", "query")},
		{name: "mysql2, execute", engine: "mariadb", rts: 4, replay: 4, tls: myTLS,
			why: "START TRANSACTION; SELECT and UPDATE each COM_STMT_EXECUTE of a statement prepared on first use; COMMIT", run: runNode("mysql2_client.js", "--mode", "execute")},
	}
}

// build compiles one of the fast clients once per test binary.
func (h *harness) build(t *testing.T, name string, make func(out string) *exec.Cmd) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if b, ok := h.bins[name]; ok {
		if b == "" {
			t.Fatalf("%s did not build", name)
		}
		return b
	}
	out := filepath.Join(h.dir, name)
	h.bins[name] = ""
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := make(out)
	cmd = exec.CommandContext(ctx, cmd.Path, cmd.Args[1:]...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, b)
	}
	h.bins[name] = out
	return out
}

func runGo(driver string) func(h *harness, s *server, port, threads, tx int) (result, error) {
	return func(h *harness, s *server, port, threads, tx int) (result, error) {
		need(h.t, "go")
		bin := h.build(h.t, "goclient", func(out string) *exec.Cmd {
			return exec.Command("go", "build", "-o", out, "github.com/dblat/dblat/clients/go")
		})
		var dsn string
		switch driver {
		case "pgx":
			dsn = fmt.Sprintf("postgres://%s@%s:%d/%s?sslmode=disable", s.user, s.host, port, s.db)
		case "mysql":
			dsn = fmt.Sprintf("%s@tcp(%s:%d)/%s", s.user, s.host, port, s.db)
		case "firebird":
			dsn = fmt.Sprintf("%s@%s:%d%s?wire_crypt=false", s.user, s.host, port, s.db)
		}
		creds, env := s.credentialArgs()
		return command(bin, append([]string{"-driver", driver, "-dsn", dsn, "-threads", strconv.Itoa(threads),
			"-tx", strconv.Itoa(tx), "-rows", strconv.Itoa(rows)}, creds...), env...)
	}
}

func runLibmariadb(text bool) func(h *harness, s *server, port, threads, tx int) (result, error) {
	return func(h *harness, s *server, port, threads, tx int) (result, error) {
		need(h.t, "gcc")
		need(h.t, "mariadb_config")
		bin := h.build(h.t, "mariadb_client", func(out string) *exec.Cmd {
			flags, _ := exec.Command("mariadb_config", "--cflags", "--libs").Output()
			args := append([]string{"-O1", "-Wall", "-o", out, filepath.Join("c", "mariadb_client.c")}, strings.Fields(string(flags))...)
			cmd := exec.Command("gcc", append(args, "-lpthread")...)
			return cmd
		})
		args := []string{"-F", s.credentials, "-h", s.host, "-P", strconv.Itoa(port), "-u", s.user, "-D", s.db,
			"-c", strconv.Itoa(threads), "-t", strconv.Itoa(tx), "-r", strconv.Itoa(rows)}
		if text {
			args = append(args, "-T")
		}
		return command(bin, args)
	}
}

var (
	pgbenchProcessed = regexp.MustCompile(`number of transactions actually processed: (\d+)`)
	pgbenchLatency   = regexp.MustCompile(`latency average = ([\d.]+) ms`)
	pgbenchTPS       = regexp.MustCompile(`tps = ([\d.]+) \(without initial connection time\)`)
	pgbenchVersion   = regexp.MustCompile(`pgbench \(PostgreSQL\) (\S+)`)
)

// runPgbench runs pgbench with a script of the transaction (the simple protocol, pgbench's
// default) and reads its own count, latency average and tps.
func runPgbench(h *harness, s *server, port, threads, tx int) (result, error) {
	need(h.t, "pgbench")
	script := filepath.Join(h.dir, "pgbench.sql")
	if err := os.WriteFile(script, []byte(fmt.Sprintf(`\set id random(1, %d)
BEGIN;
SELECT balance FROM dblat_clients WHERE id = :id;
UPDATE dblat_clients SET balance = balance + 1 WHERE id = :id;
COMMIT;
`, rows)), 0o644); err != nil {
		return result{}, err
	}
	ver, _ := exec.Command("pgbench", "--version").Output()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "pgbench", "-n", "-c", strconv.Itoa(threads), "-j", strconv.Itoa(threads),
		"-t", strconv.Itoa(tx), "-f", script, "-h", s.host, "-p", strconv.Itoa(port), "-U", s.user, s.db)
	cmd.Env = append(os.Environ(), "PGCONNECT_TIMEOUT=10", "PGOPTIONS=", "PGSSLMODE=disable", "PGPASSFILE="+s.credentials)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return result{}, fmt.Errorf("pgbench: %v\n%s", err, out)
	}
	m, l, p := pgbenchProcessed.FindSubmatch(out), pgbenchLatency.FindSubmatch(out), pgbenchTPS.FindSubmatch(out)
	if m == nil || l == nil || p == nil {
		return result{}, fmt.Errorf("pgbench said no count, latency or tps:\n%s", out)
	}
	r := result{Version: "pgbench (libpq)"}
	if v := pgbenchVersion.FindSubmatch(ver); v != nil {
		r.Version = "pgbench " + string(v[1]) + " (libpq)"
	}
	r.Committed, _ = strconv.ParseInt(string(m[1]), 10, 64)
	r.LatencyMs, _ = strconv.ParseFloat(string(l[1]), 64)
	r.TPS, _ = strconv.ParseFloat(string(p[1]), 64)
	return r, nil
}

var isqlStamp = regexp.MustCompile(`STAMP\s+(\d+)`)

// runIsql runs one isql-fb per connection with a script of tx transactions, each SELECT,
// UPDATE and COMMIT with literal ids. isql times nothing itself: the script asks the
// server's clock (a millisecond count) before the first transaction and after the last,
// and the client's figures are the transactions over that span (latency is not known
// apart from the time between transactions: 0).
func runIsql(h *harness, s *server, port, threads, tx int) (result, error) {
	need(h.t, "isql-fb")
	conf := filepath.Join(h.dir, "fbclient")
	if err := os.MkdirAll(conf, 0o755); err != nil {
		return result{}, err
	}
	if err := os.WriteFile(filepath.Join(conf, "firebird.conf"), []byte("WireCrypt = Disabled\n"), 0o644); err != nil {
		return result{}, err
	}
	stamp := "SELECT DATEDIFF(MILLISECOND FROM TIMESTAMP '2000-01-01 00:00' TO CURRENT_TIMESTAMP) AS stamp FROM rdb$database;\nCOMMIT;\n"
	type out struct {
		n      int64
		ms     float64
		err    error
		output string
	}
	outs := make([]out, threads)
	var wg sync.WaitGroup
	for i := range threads {
		var b strings.Builder
		b.WriteString("SET LIST ON;\n" + stamp)
		for j := range tx {
			id := 1 + i + threads*((j*7919)%(rows/threads))
			fmt.Fprintf(&b, "SELECT balance FROM dblat_clients WHERE id = %d;\nUPDATE dblat_clients SET balance = balance + 1 WHERE id = %d;\nCOMMIT;\n", id, id)
		}
		b.WriteString(stamp)
		script := filepath.Join(h.dir, fmt.Sprintf("isql-%d.sql", i))
		if err := os.WriteFile(script, []byte(b.String()), 0o644); err != nil {
			return result{}, err
		}
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "isql-fb", "-q", "-b", "-i", script, "-u", s.user, "-fetch_password", s.credentials,
				fmt.Sprintf("%s/%d:%s", s.host, port, s.db))
			cmd.Env = append(os.Environ(), "FIREBIRD="+conf)
			b, err := cmd.CombinedOutput()
			outs[i].output = string(b)
			if err != nil {
				outs[i].err = fmt.Errorf("isql-fb: %v\n%s", err, b)
				return
			}
			m := isqlStamp.FindAllStringSubmatch(string(b), -1)
			if len(m) != 2 {
				outs[i].err = fmt.Errorf("isql-fb printed %d stamps:\n%s", len(m), b)
				return
			}
			a, _ := strconv.ParseFloat(m[0][1], 64)
			z, _ := strconv.ParseFloat(m[1][1], 64)
			outs[i].n, outs[i].ms = int64(tx), z-a
		})
	}
	wg.Wait()
	r := result{Version: "isql-fb (fbclient " + fbclientVersion() + ")"}
	var span float64
	for _, o := range outs {
		if o.err != nil {
			return result{}, o.err
		}
		r.Committed += o.n
		span = max(span, o.ms)
	}
	r.ElapsedS = span / 1000
	r.TPS = float64(r.Committed) / r.ElapsedS
	return r, nil
}

// fbclientVersion is the version of Debian's libfbclient2, or "?".
func fbclientVersion() string {
	out, err := exec.Command("dpkg-query", "-W", "-f", "${Version}", "libfbclient2").Output()
	if err != nil {
		return "?"
	}
	v, _, _ := strings.Cut(string(out), "~")
	v, _, _ = strings.Cut(v, "+")
	return strings.TrimSpace(v)
}

// installed returns the cache directory scripts/clients.sh installed into, skipping t when
// it did not.
func (h *harness) installed(t *testing.T, part string) string {
	t.Helper()
	if h.cache == "" {
		t.Skip("skipping: DBLAT_CLIENTS_CACHE is not set (make clients sets it after scripts/clients.sh)")
	}
	if _, err := os.Stat(filepath.Join(h.cache, part)); err != nil {
		t.Fatalf("%s is not installed in %s: run scripts/clients.sh", part, h.cache)
	}
	return filepath.Join(h.cache, part)
}

func runPython(script string, extra ...string) func(h *harness, s *server, port, threads, tx int) (result, error) {
	return func(h *harness, s *server, port, threads, tx int) (result, error) {
		py := filepath.Join(h.installed(h.t, "python"), "bin", "python")
		creds, env := s.credentialArgs()
		args := append(append([]string{filepath.Join("python", script), "--host", s.host, "--port", strconv.Itoa(port),
			"--db", s.db, "--user", s.user, "--threads", strconv.Itoa(threads),
			"--tx", strconv.Itoa(tx), "--rows", strconv.Itoa(rows)}, creds...), extra...)
		return command(py, args, env...)
	}
}

func runNode(script string, extra ...string) func(h *harness, s *server, port, threads, tx int) (result, error) {
	return func(h *harness, s *server, port, threads, tx int) (result, error) {
		mods := filepath.Join(h.installed(h.t, "node"), "node_modules")
		creds, env := s.credentialArgs()
		args := append(append([]string{filepath.Join("node", script), "--host", s.host, "--port", strconv.Itoa(port),
			"--db", s.db, "--user", s.user, "--threads", strconv.Itoa(threads),
			"--tx", strconv.Itoa(tx), "--rows", strconv.Itoa(rows)}, creds...), extra...)
		return command("node", args, append(env, "NODE_PATH="+mods)...)
	}
}

func runJava(urlFormat string) func(h *harness, s *server, port, threads, tx int) (result, error) {
	return func(h *harness, s *server, port, threads, tx int) (result, error) {
		dir := h.installed(h.t, "java")
		db := s.db
		if s.engine == "firebird" {
			db = strings.TrimPrefix(db, "/")
			db = "/" + db
		}
		u := fmt.Sprintf(urlFormat, s.host, port, strings.TrimPrefix(db, "/"))
		if s.engine == "firebird" {
			u = fmt.Sprintf(urlFormat, s.host, port, db)
		}
		cp := filepath.Join(dir, "lib", "*") + string(os.PathListSeparator) + filepath.Join(dir, "classes")
		creds, env := s.credentialArgs()
		return command("java", append([]string{"-cp", cp, "JdbcClient", "--url", u, "--user", s.user,
			"--threads", strconv.Itoa(threads), "--tx", strconv.Itoa(tx), "--rows", strconv.Itoa(rows)}, creds...), env...)
	}
}
