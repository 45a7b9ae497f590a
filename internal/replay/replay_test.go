package replay_test

import (
	"context"
	"errors"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/dblat/dblat/internal/capture"
	"github.com/dblat/dblat/internal/capture/capturetest"
	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/engine/firebird/fbtest"
	"github.com/dblat/dblat/internal/engine/mariadb"
	"github.com/dblat/dblat/internal/engine/mariadb/mariadbtest"
	"github.com/dblat/dblat/internal/engine/postgres"
	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
	"github.com/dblat/dblat/internal/latency"
	"github.com/dblat/dblat/internal/replay"
	"github.com/dblat/dblat/internal/wire"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Shutdown()
	mariadbtest.Shutdown()
	fbtest.Shutdown()
	os.Exit(code)
}

// pgbenchCapture loads pgbench's tables into a new database, keeps a pristine copy, and
// captures with tcpdump pgbench's tpcb-like transactions run by extra's arguments; it
// returns the database's DSN, the recording and how many transactions pgbench ran.
func pgbenchCapture(t *testing.T, extra ...string) (string, *replay.Recording, int64) {
	return pgbenchCaptureB(t, extra...)
}

// pgbenchCaptureB is pgbenchCapture for a test or a benchmark.
func pgbenchCaptureB(t testing.TB, extra ...string) (string, *replay.Recording, int64) {
	t.Helper()
	dsn, rec, n, _ := pgbenchCaptureCPU(t, extra...)
	return dsn, rec, n
}

// pgbenchCaptureCPU is pgbenchCaptureB, with the CPU time pgbench and tcpdump took while
// the application ran (the children's, as the kernel accounts them once they are reaped).
func pgbenchCaptureCPU(t testing.TB, extra ...string) (string, *replay.Recording, int64, time.Duration) {
	t.Helper()
	capturetest.Need(t, pgtest.Required(), "pgbench", "tcpdump")
	dsn := pgtest.NewDatabase(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	host, port, _ := strings.Cut(u.Host, ":")
	db := strings.TrimPrefix(u.Path, "/")
	conn := []string{"-h", host, "-p", port, "-U", u.User.Username(), db}
	pgtest.Pgbench(t, append([]string{"-i", "-q", "-s", "1"}, conn...)...)
	ctx := context.Background()
	if err := (postgres.Engine{}).SavePristine(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	before := childrenCPU(t)
	stop := capturetest.Tcpdump(t, "lo", "tcp port "+port)
	n := pgtest.Pgbench(t, append(append([]string{"-n"}, extra...), conn...)...)
	pcap := stop(u.Host)
	cpu := childrenCPU(t) - before
	p, _ := strconv.Atoi(port)
	rec, err := replay.ReadPcap(ctx, pcap, capture.Config{Ports: []uint16{uint16(p)}}, engine.WireProtocols())
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(pcap); err == nil {
		t.Logf("capture: %d bytes, %d connections", fi.Size(), len(rec.Conns))
	}
	return dsn, rec, n, cpu
}

// childrenCPU is the user and system CPU time of this process's reaped children.
func childrenCPU(t testing.TB) time.Duration {
	return rusage(t, syscall.RUSAGE_CHILDREN)
}

// rusage is the user and system CPU time getrusage(who) reports.
func rusage(t testing.TB, who int) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func restore(t *testing.T, dsn string) { restoreB(t, dsn) }

// restoreB puts the database back as pgbench -i left it.
func restoreB(t testing.TB, dsn string) {
	t.Helper()
	if err := (postgres.Engine{}).RestorePristine(context.Background(), dsn); err != nil {
		t.Fatal(err)
	}
}

func protocols() []wire.Protocol { return engine.WireProtocols() }

func direct(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

// TestReplayPgbench: pgbench tpcb-like with 4 clients, captured by tcpdump and replayed on
// a restored copy: every session, the capture's transactions, its round trips per shape,
// no divergence; in commit order too; against a copy with rows deleted, the divergences
// are listed and the replay finishes; at an added RTT the round trips stay and each
// transaction pays them, with the captured pauses kept.
func TestReplayPgbench(t *testing.T) {
	dsn, rec, n := pgbenchCapture(t, "-c", "4", "-t", "60")
	ctx := context.Background()
	cfg := replay.Config{Recording: rec, Protocols: engine.WireProtocols(), DSN: dsn, Dial: direct, Target: "test",
		Fast: true, StallTimeout: 30 * time.Second}

	restore(t, dsn)
	res, err := replay.Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// pgbench's 240 transactions and its two queries at start (the table count and the
	// partition check): each a transaction of its own.
	if res.CaptureTransactions != n+2 || res.Transactions != res.CaptureTransactions {
		t.Errorf("transactions: replay %d, capture %d, pgbench %d", res.Transactions, res.CaptureTransactions, n)
	}
	if res.Divergences != 0 || res.Stopped != 0 || res.NotReplayed != 0 {
		t.Errorf("divergences %d, stopped %d, not replayed %d: %v %+v", res.Divergences, res.Stopped, res.NotReplayed, res.Notes, res.DivergedStatements)
	}
	for _, s := range res.Shapes {
		if s.Capture == nil || s.Capture.Count != s.Count || s.Capture.RoundTripsMean != s.RoundTripsMean {
			t.Errorf("shape %q: replay %d transactions of %.2f round trips, capture %+v", s.Shape.Shape, s.Count, s.RoundTripsMean, s.Capture)
		}
	}
	if len(res.Shapes) == 0 || res.Shapes[0].RoundTripsMean != 7 {
		t.Errorf("tpcb-like takes 7 round trips: %+v", res.Shapes)
	}

	restore(t, dsn)
	ordered := cfg
	ordered.OrderCommits = true
	res, err = replay.Run(ctx, ordered)
	if err != nil {
		t.Fatal(err)
	}
	if res.Transactions != res.CaptureTransactions || res.Divergences != 0 || res.Stopped != 0 {
		t.Errorf("in commit order: %d of %d transactions, %d divergences, %d stopped: %v", res.Transactions, res.CaptureTransactions, res.Divergences, res.Stopped, res.Notes)
	}

	// A changed database: every account of the first 10,000 gone. pgbench picked some of
	// them: their UPDATE finds no row, their SELECT returns none.
	restore(t, dsn)
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "DELETE FROM pgbench_accounts WHERE aid <= 10000"); err != nil {
		t.Fatal(err)
	}
	c.Close(ctx)
	res, err = replay.Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Divergences == 0 || res.Transactions != res.CaptureTransactions || res.Stopped != 0 {
		t.Fatalf("changed database: %d divergences, %d of %d transactions, %d stopped", res.Divergences, res.Transactions, res.CaptureTransactions, res.Stopped)
	}
	seen := map[string]bool{}
	for _, d := range res.DivergenceList {
		seen[d.Statement+": "+d.Captured+" → "+d.Replayed] = true
		if strings.ContainsAny(d.Statement, "0123456789") {
			t.Errorf("a divergence holds a value: %+v", d)
		}
	}
	for _, want := range []string{"UPDATE pgbench_accounts SET abalance = abalance + ? WHERE aid = ?: UPDATE 1 → UPDATE 0",
		"SELECT abalance FROM pgbench_accounts WHERE aid = ?: SELECT 1 → SELECT 0"} {
		if !seen[want] {
			t.Errorf("no divergence %q among %v", want, seen)
		}
	}

	// Through a link adding 2 ms: the same round trips, each paying the RTT.
	restore(t, dsn)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	link, err := latency.Listen(ctx, "127.0.0.1:0", u.Host, latency.Config{Up: time.Millisecond, Down: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	far := cfg
	far.Dial = func(ctx context.Context, _, _ string) (net.Conn, error) { return link.Dial(ctx) }
	far.Up, far.Down, far.Fast = time.Millisecond, time.Millisecond, false // the captured pauses too
	res, err = replay.Run(ctx, far)
	if err != nil {
		t.Fatal(err)
	}
	if res.Transactions != res.CaptureTransactions || res.Divergences != 0 {
		t.Errorf("at 2 ms: %d of %d transactions, %d divergences", res.Transactions, res.CaptureTransactions, res.Divergences)
	}
	s := res.Shapes[0]
	if s.RoundTripsMean != 7 || s.LatencyMsMean < 7*2 || res.Predicted == nil || res.RTTNs != int64(2*time.Millisecond) {
		t.Errorf("at 2 ms: %.2f round trips, %.2f ms a transaction (7 round trips of 2 ms at least), predicted %+v", s.RoundTripsMean, s.LatencyMsMean, res.Predicted)
	}
}

// TestReplayMariaDB: the C client on libmariadb with server-side prepared statements
// (COM_STMT_PREPARE once per connection, COM_STMT_EXECUTE each time), 4 threads, captured by
// tcpdump and replayed on a restored copy: every transaction in as many round trips, no
// divergence (the statement ids are the target's); with rows deleted, the divergences.
func TestReplayMariaDB(t *testing.T) {
	capturetest.Need(t, mariadbtest.Required(), "tcpdump", "gcc", "mariadb_config")
	dsn := mariadbtest.NewDatabase(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	host, port, _ := strings.Cut(u.Host, ":")
	db := strings.TrimPrefix(u.Path, "/")
	bin := filepath.Join(t.TempDir(), "mariadb_client")
	flags, err := exec.Command("mariadb_config", "--cflags", "--libs").Output()
	if err != nil {
		t.Fatal(err)
	}
	cc := exec.Command("gcc", append(append([]string{"-O1", "-o", bin, filepath.Join("..", "..", "clients", "c", "mariadb_client.c")},
		strings.Fields(string(flags))...), "-lpthread")...)
	if out, err := cc.CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	ctx := context.Background()
	sqldb, err := (mariadb.Engine{}).Open(ctx, dsn, engine.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sqldb.Close()
	exec1 := func(q string) {
		t.Helper()
		if _, err := sqldb.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec1("CREATE TABLE dblat_clients (id INT PRIMARY KEY, balance BIGINT NOT NULL) ENGINE=InnoDB")
	exec1("INSERT INTO dblat_clients SELECT seq, 0 FROM seq_1_to_1000")
	exec1("CREATE TABLE pristine AS SELECT * FROM dblat_clients")
	restore := func() {
		exec1("DELETE FROM dblat_clients")
		exec1("INSERT INTO dblat_clients SELECT * FROM pristine")
	}

	stop := capturetest.Tcpdump(t, "lo", "tcp port "+port)
	out, err := exec.Command(bin, "-F", u.Query().Get("option_file"), "-h", host, "-P", port, "-u", u.User.Username(), "-D", db,
		"-c", "4", "-t", "50", "-r", "1000").CombinedOutput()
	if err != nil || !strings.Contains(string(out), `"committed":200`) {
		t.Fatalf("mariadb_client: %v\n%s", err, out)
	}
	pcap := stop(u.Host)
	p, _ := strconv.Atoi(port)
	rec, err := replay.ReadPcap(ctx, pcap, capture.Config{Ports: []uint16{uint16(p)}}, engine.WireProtocols())
	if err != nil {
		t.Fatal(err)
	}
	cfg := replay.Config{Recording: rec, Protocols: engine.WireProtocols(), DSN: dsn, Dial: direct, Target: "test",
		StallTimeout: 30 * time.Second}

	restore()
	res, err := replay.Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// 200 transactions, and each connection's SET autocommit=0.
	if res.CaptureTransactions != 204 || res.Transactions != 204 || res.Divergences != 0 || res.Stopped != 0 {
		t.Errorf("%d transactions of the capture's %d, %d divergences, %d stopped: %v %+v", res.Transactions, res.CaptureTransactions,
			res.Divergences, res.Stopped, res.Notes, res.DivergedStatements)
	}
	for _, s := range res.Shapes {
		if s.Capture == nil || s.Capture.Count != s.Count || s.Capture.RoundTripsMean != s.RoundTripsMean {
			t.Errorf("shape %q: replay %d transactions of %.2f round trips, capture %+v", s.Shape.Shape, s.Count, s.RoundTripsMean, s.Capture)
		}
	}

	restore()
	exec1("DELETE FROM dblat_clients WHERE id <= 8")
	res, err = replay.Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Divergences == 0 || res.Transactions != 204 || res.Stopped != 0 {
		t.Fatalf("changed database: %d divergences, %d transactions, %d stopped", res.Divergences, res.Transactions, res.Stopped)
	}
	for _, d := range res.DivergenceList {
		if !strings.HasPrefix(d.Statement, "SELECT balance") && !strings.HasPrefix(d.Statement, "UPDATE dblat_clients") {
			t.Errorf("divergence of %+v", d)
		}
	}
}

// TestReplayFirebird: isql-fb (fbclient, wire encryption off), 2 clients of 30 transactions
// each, captured by tcpdump and replayed: each session attaches as the target's DSN says
// (Srp) and resends isql's operations in its own attachment; every transaction, as many
// round trips, no error where the captured server gave none.
func TestReplayFirebird(t *testing.T) {
	capturetest.Need(t, fbtest.Required(), "isql-fb", "tcpdump")
	dsn := fbtest.NewDatabase(t, "Super")
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	passwordFile := u.Query().Get("password_file")
	conf := t.TempDir()
	if err := os.WriteFile(filepath.Join(conf, "firebird.conf"), []byte("WireCrypt = Disabled\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "FIREBIRD="+conf)
	host, port, _ := strings.Cut(u.Host, ":")
	addr := host + "/" + port + ":" + u.Path
	isql := func(stdin string) string {
		t.Helper()
		cmd := exec.Command("isql-fb", "-q", "-u", u.User.Username(), "-fetch_password", passwordFile, addr)
		cmd.Env, cmd.Stdin = env, strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		if err != nil || strings.Contains(string(out), "Statement failed") {
			t.Fatalf("isql-fb: %v\n%s", err, out)
		}
		return string(out)
	}
	isql("CREATE TABLE acc (id INT NOT NULL PRIMARY KEY, v INT);\nCOMMIT;\nSET TERM ^;\n" +
		"EXECUTE BLOCK AS DECLARE i INT = 1; BEGIN WHILE (i <= 100) DO BEGIN INSERT INTO acc VALUES (:i, 0); i = i + 1; END END^\n" +
		"SET TERM ;^\nCOMMIT;\n")

	stop := capturetest.Tcpdump(t, "lo", "tcp port "+port)
	var cmds []*exec.Cmd
	for k := range 2 {
		var sc strings.Builder
		for i := range 30 {
			id := strconv.Itoa(1 + k*50 + i)
			sc.WriteString("SET TRANSACTION;\nSELECT v FROM acc WHERE id = " + id + ";\nUPDATE acc SET v = v + 1 WHERE id = " + id + ";\nCOMMIT;\n")
		}
		cmd := exec.Command("isql-fb", "-q", "-u", u.User.Username(), "-fetch_password", passwordFile, addr)
		cmd.Env, cmd.Stdin = env, strings.NewReader(sc.String())
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("isql-fb: %v", err)
		}
	}
	pcap := stop(u.Host)
	ctx := context.Background()
	p, _ := strconv.Atoi(port)
	rec, err := replay.ReadPcap(ctx, pcap, capture.Config{Ports: []uint16{uint16(p)}}, engine.WireProtocols())
	if err != nil {
		t.Fatal(err)
	}
	res, err := replay.Run(ctx, replay.Config{Recording: rec, Protocols: engine.WireProtocols(), DSN: dsn, Dial: direct,
		Target: "test", Fast: true, StallTimeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("%v: %v", err, res.Notes)
	}
	t.Log(res.Summary())
	for _, s := range res.Shapes {
		t.Logf("%d × %.2f round trips: %s", s.Count, s.RoundTripsMean, s.Shape.Shape)
	}
	if res.CaptureTransactions < 60 || res.Transactions != res.CaptureTransactions || res.Divergences != 0 || res.Stopped != 0 || res.NotReplayed != 0 {
		t.Errorf("%d transactions of the capture's %d, %d divergences, %d stopped, %d not replayed: %v %+v", res.Transactions,
			res.CaptureTransactions, res.Divergences, res.Stopped, res.NotReplayed, res.Notes, res.DivergedStatements)
	}
	for _, s := range res.Shapes {
		if s.Capture == nil || s.Capture.Count != s.Count || s.Capture.RoundTripsMean != s.RoundTripsMean {
			t.Errorf("shape %q: replay %d transactions of %.2f round trips, capture %+v", s.Shape.Shape, s.Count, s.RoundTripsMean, s.Capture)
		}
	}
	// The replay's UPDATEs committed on top of the application's: 60 rows at 2.
	if out := isql("SELECT COUNT(*) FROM acc WHERE v = 2;\n"); !strings.Contains(out, " 60") {
		t.Errorf("rows updated twice:\n%s", out)
	}
}

// TestReplayPausesAndCancel: a client that waits a second between two requests and cancels
// a long pg_sleep (a CancelRequest on a connection of its own, with the key the server gave
// its session), captured by tcpdump: replayed as captured the pause is kept and the cancel
// is sent with the target's key, so the statement fails as it did (no divergence) and the
// replay does not wait for the sleep; at --speed 4 the pause and the cancel come 4 times
// sooner.
func TestReplayPausesAndCancel(t *testing.T) {
	capturetest.Need(t, pgtest.Required(), "tcpdump")
	dsn := pgtest.NewDatabase(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	stop := capturetest.Tcpdump(t, "lo", "tcp port "+u.Port())
	pc, err := pgconn.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pc.Exec(ctx, "SELECT 1").ReadAll(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	go func() {
		time.Sleep(300 * time.Millisecond)
		_ = pc.CancelRequest(ctx)
	}()
	_, err = pc.Exec(ctx, "SELECT pg_sleep(30)").ReadAll()
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "57014" {
		t.Fatalf("the cancelled sleep: %v", err)
	}
	pc.Close(ctx)
	pcap := stop(u.Host)
	p, _ := strconv.Atoi(u.Port())
	rec, err := replay.ReadPcap(ctx, pcap, capture.Config{Ports: []uint16{uint16(p)}}, engine.WireProtocols())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		speed    float64
		min, max float64 // seconds
	}{{1, 1, 10}, {4, 0.25, 1}} {
		res, err := replay.Run(ctx, replay.Config{Recording: rec, Protocols: engine.WireProtocols(), DSN: dsn, Dial: direct,
			Target: "test", Speed: c.speed, AutoCorrect: true, StallTimeout: 30 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if res.Divergences != 0 || res.Stopped != 0 || res.Transactions != 2 || len(res.Notes) != 0 {
			t.Errorf("speed %g: %s; notes %v, %+v", c.speed, res.Summary(), res.Notes, res.DivergenceList)
		}
		if res.DurationS < c.min || res.DurationS > c.max {
			t.Errorf("speed %g: the replay took %.2f s (the capture %.2f s), want %g to %g s", c.speed, res.DurationS, res.CaptureDurationS, c.min, c.max)
		}
	}
}
