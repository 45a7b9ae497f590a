package cli_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"math"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/cli"
	"github.com/dblat/dblat/internal/engine/firebird/fbtest"
	"github.com/dblat/dblat/internal/engine/mariadb/mariadbtest"
	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
	"github.com/dblat/dblat/internal/observe"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/workload/script"
)

// proxyRun is a `dblat proxy` running in-process.
type proxyRun struct {
	addr           string
	signals        chan os.Signal
	report         chan os.Signal
	stdout, stderr *syncBuffer
	done           chan int
}

// startProxy runs `dblat proxy --upstream upstream args...` in e and returns once it
// listens.
func (e *env) startProxy(upstream string, args ...string) *proxyRun {
	e.t.Helper()
	p := &proxyRun{signals: make(chan os.Signal, 2), report: make(chan os.Signal, 1), stdout: &syncBuffer{},
		stderr: &syncBuffer{}, done: make(chan int, 1)}
	st := &cli.State{Stdout: p.stdout, Stderr: p.stderr, Signals: p.signals, Report: p.report,
		Getenv: func(k string) string {
			switch k {
			case "DBLAT_STATE":
				return filepath.Join(e.dir, "state")
			case "DBLAT_RESULTS":
				return e.resultsPath()
			}
			return ""
		}}
	go func() {
		p.done <- cli.Main(st, append([]string{"proxy", "--upstream", upstream, "--print-every", "0"}, args...))
	}()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if line, _, ok := strings.Cut(p.stdout.String(), "\n"); ok {
			p.addr = line
			return p
		}
		select {
		case code := <-p.done:
			e.t.Fatalf("dblat proxy exited %d: %s", code, p.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	e.t.Fatalf("dblat proxy did not listen: %s", p.stderr.String())
	return nil
}

// stop interrupts the proxy and waits for it to exit 0.
func (p *proxyRun) stop(t *testing.T) {
	t.Helper()
	p.signals <- syscall.SIGINT
	select {
	case code := <-p.done:
		if code != 0 {
			t.Fatalf("dblat proxy exited %d:\n%s", code, p.stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("dblat proxy did not stop:\n%s", p.stderr.String())
	}
}

func (p *proxyRun) port() string {
	_, port, _ := strings.Cut(p.addr, ":")
	return port
}

// tool runs a client program, failing the test with its output if it fails, and skipping
// it (or failing under DBLAT_REQUIRE_SERVERS=1) when the program is not installed.
func tool(t *testing.T, name string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		if pgtest.Required() {
			t.Fatalf("%s is not installed", name)
		}
		t.Skipf("skipping: %s is not installed", name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), "PGCONNECT_TIMEOUT=10", "PGOPTIONS=")
	if name == "pgbench" || name == "psql" {
		cmd.Env = append(cmd.Env, pgtest.ClientEnv(t)...)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

var processedRe = regexp.MustCompile(`number of transactions actually processed: (\d+)`)

// benchShape returns the observation's most frequent shape.
func benchShape(t *testing.T, o *observe.Observation) observe.Shape {
	t.Helper()
	if len(o.Shapes) == 0 {
		t.Fatalf("no shape observed: %+v", o)
	}
	return o.Shapes[0]
}

// TestProxyObservePgbench: pgbench's tpcb-like and select-only, in its three query modes,
// 4 clients, through `dblat proxy --rtt 0 --observe`: the transactions observed are those
// pgbench processed, 7 and 1 round trips each; the observation is written on SIGUSR1 and at
// stop, stored as a run that results show, report, results diff and predict read; the
// recording parses as a script.
func TestProxyObservePgbench(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	host, port, _ := strings.Cut(u.Host, ":")
	db := strings.TrimPrefix(u.Path, "/")
	tool(t, "pgbench", "-i", "-q", "-s", "1", "-h", host, "-p", port, "-U", "dblat", db)
	e := newEnv(t)
	first := true
	var runs []string
	for _, c := range []struct {
		name   string
		script []string
		rts    int64
	}{
		{"tpcb-like", nil, 7},
		{"select-only", []string{"-S"}, 1},
	} {
		for _, mode := range []string{"simple", "extended", "prepared"} {
			t.Run(c.name+"/"+mode, func(t *testing.T) {
				obsFile := filepath.Join(e.dir, c.name+"-"+mode+".json")
				recFile := filepath.Join(e.dir, c.name+"-"+mode+".sql")
				p := e.startProxy(u.Host, "--rtt", "0", "--observe", obsFile, "--record", recFile)
				// The first run's observation is predicted for its 4 clients below: they run
				// for a time, so that each spans the whole window, however unevenly a busy
				// machine schedules them (a count each ends them at different times, and a
				// client that ran half as long counts as half a client).
				length := []string{"-t", "25"}
				if first {
					length = []string{"-T", "1"}
				}
				args := append(append([]string{"-n", "-c", "4", "-j", "2", "-M", mode, "-h", "127.0.0.1", "-p", p.port(), "-U", "dblat"}, length...), c.script...)
				out := tool(t, "pgbench", append(args, db)...)
				m := processedRe.FindStringSubmatch(out)
				if m == nil {
					t.Fatalf("pgbench said no count:\n%s", out)
				}
				processed, _ := strconv.ParseInt(m[1], 10, 64)
				if first {
					// SIGUSR1 writes the observation without stopping.
					p.report <- syscall.SIGUSR1
					waitFor(t, 15*time.Second, func() bool { _, err := os.Stat(obsFile); return err == nil },
						func() string { return "no observation file after SIGUSR1:\n" + p.stderr.String() })
				}
				p.stop(t)
				o, err := observe.ReadFile(obsFile)
				if err != nil {
					t.Fatal(err)
				}
				s := benchShape(t, o)
				// pgbench ended every transaction before it closed: none in flight at stop.
				if s.Count != processed || s.RoundTripsP50 != c.rts || o.Protocol != "PostgreSQL" {
					t.Errorf("observed %d transactions of %.2f (p50 %d) round trips in %s, want %d of %d:\n%s",
						s.Count, s.RoundTripsMean, s.RoundTripsP50, o.Protocol, processed, c.rts, p.stdout.String())
				}
				if mode == "simple" && s.RoundTripsMax != c.rts {
					t.Errorf("simple mode: at most %d round trips, want exactly %d", s.RoundTripsMax, c.rts)
				}
				if !strings.Contains(p.stdout.String(), "observed ") || !strings.Contains(p.stderr.String(), "stored as run") {
					t.Errorf("no table or no run stored:\n%s\n%s", p.stdout.String(), p.stderr.String())
				}
				raw, _ := os.ReadFile(obsFile)
				if bytes.Contains(raw, []byte("pgbench_accounts WHERE aid = 1")) || regexp.MustCompile(`aid = \d`).Match(raw) {
					t.Errorf("the observation holds values:\n%s", raw)
				}
				rec, err := os.ReadFile(recFile)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := script.Parse(recFile, rec); err != nil {
					t.Errorf("the recording does not parse: %v\n%s", err, rec)
				}
				if fi, err := os.Stat(recFile); err != nil || fi.Mode().Perm() != 0o600 {
					t.Errorf("the recording's mode is %v, want 0600 (it holds values)", fi.Mode())
				}
				id := regexp.MustCompile(`stored as run (\d+)`).FindStringSubmatch(p.stderr.String())
				if id == nil {
					t.Fatalf("not stored:\n%s", p.stderr.String())
				}
				runs = append(runs, id[1])
				if first {
					first = false
					checkObservedRun(t, e, obsFile, id[1])
				}
			})
		}
	}
	if len(runs) >= 2 {
		out := e.must("results", "diff", runs[0], runs[1])
		if !strings.Contains(out, "round trips per transaction") {
			t.Errorf("results diff of two observations:\n%s", out)
		}
	}
}

// checkObservedRun: an observation stored as a run is what results show, report and
// predict read, and predict's JSON carries the fields the issue names.
func checkObservedRun(t *testing.T, e *env, file, id string) {
	t.Helper()
	if out := e.must("results", "show", id); !strings.Contains(out, "observed through dblat proxy") || !strings.Contains(out, "pgbench_accounts") {
		t.Errorf("results show:\n%s", out)
	}
	var rep struct {
		Observed []struct {
			Run         int64 `json:"run"`
			Predictions []struct {
				TPS float64 `json:"tps"`
			} `json:"predictions"`
		} `json:"observed"`
		Charts []struct {
			Kind string `json:"kind"`
		} `json:"charts"`
	}
	if err := json.Unmarshal([]byte(e.must("report", id, "--format", "json")), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Observed) != 1 || len(rep.Observed[0].Predictions) < 3 || rep.Observed[0].Predictions[2].TPS <= 0 {
		t.Errorf("report: %+v", rep)
	}
	// The report of an observation opens with it and its prediction.
	html := filepath.Join(e.dir, "observed.html")
	e.must("report", id, "-o", html)
	if b, _ := os.ReadFile(html); !bytes.Contains(b, []byte("<h1>PostgreSQL application at ")) || !bytes.Contains(b, []byte(`id="predicted-`+id+`"`)) {
		t.Error("the HTML report does not open with the observation and its prediction chart")
	}
	if out := e.must("report", id); !strings.HasPrefix(out, "PostgreSQL application at ") || !strings.Contains(out, "\n  At +5 ms of round-trip time") {
		t.Errorf("the summary does not open with the observation and the verdict:\n%s", out)
	}
	for _, src := range []string{file, id} {
		out := e.must("predict", "--observed", src, "--rtt", "5ms,20ms", "--format", "json")
		sc := bufio.NewScanner(strings.NewReader(out))
		n := 0
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Fatalf("%v: %s", err, sc.Text())
			}
			for _, k := range []string{"rtt_ns", "clients", "tps", "latency_ms", "shapes"} {
				if _, ok := m[k]; !ok {
					t.Errorf("predict --format json: no %s", k)
				}
			}
			n++
		}
		if n != 2 {
			t.Errorf("predict printed %d objects for 2 RTTs:\n%s", n, out)
		}
	}
	if out := e.must("predict", "--observed", file, "--rtt", "20ms"); !strings.Contains(out, "at 20ms added RTT with 4 clients") {
		t.Errorf("predict:\n%s", out)
	}
	e.fails(2, []string{"--observed", "no such file"}, "predict", "--observed", filepath.Join(e.dir, "none.json"), "--rtt", "1ms")
	e.fails(2, []string{"--rtt"}, "predict", "--observed", file)
}

// TestProxyObserveBadInput: flags that cannot work get one line, exit 2.
func TestProxyObserveBadInput(t *testing.T) {
	e := newEnv(t)
	e.fails(2, []string{"--engine", "--observe"}, "proxy", "--upstream", "127.0.0.1:1", "--engine", "postgres")
	e.fails(2, []string{"--engine", "use one of"}, "proxy", "--upstream", "127.0.0.1:1", "--observe", "o.json", "--engine", "oracle")
	e.fails(2, []string{"--observe", "does not exist"}, "proxy", "--upstream", "127.0.0.1:1", "--observe", "/nonexistent/o.json")
	e.fails(2, []string{"same file"}, "proxy", "--upstream", "127.0.0.1:1", "--observe", "o.json", "--record", "o.json")
}

var perClientRe = regexp.MustCompile(`Average number of queries per client: (\d+)`)

// TestProxyObserveMysqlslap: mysqlslap's 4 clients through `dblat proxy --engine mariadb
// --observe`: every query is an autocommit transaction of one round trip, all of them
// observed.
func TestProxyObserveMysqlslap(t *testing.T) {
	dsn := mariadbtest.NewDatabase(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	db := strings.TrimPrefix(u.Path, "/")
	e := newEnv(t)
	obsFile := filepath.Join(e.dir, "slap.json")
	p := e.startProxy(u.Host, "--rtt", "0", "--engine", "mariadb", "--observe", obsFile)
	out := tool(t, "mysqlslap", append(mariadbtest.ToolArgs(t), "-h", "127.0.0.1", "-P", p.port(), "-u", "dblat", "--concurrency=4",
		"--iterations=1", "--number-of-queries=40", "--create-schema="+db, "--delimiter=;",
		"--create=CREATE TABLE slap (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(10))",
		"--query=INSERT INTO slap (v) VALUES ('x');SELECT COUNT(*) FROM slap WHERE v = 'x'")...)
	p.stop(t)
	m := perClientRe.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("mysqlslap said no count:\n%s", out)
	}
	per, _ := strconv.ParseInt(m[1], 10, 64)
	o, err := observe.ReadFile(obsFile)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, s := range o.Shapes {
		if s.Shape == "INSERT INTO slap (v) VALUES (?)" || s.Shape == "SELECT COUNT(*) FROM slap WHERE v = ?" {
			n += s.Count
			if s.RoundTripsMax != 1 || s.Autocommits != s.Count {
				t.Errorf("%s: %d round trips at most, %d of %d autocommit", s.Shape, s.RoundTripsMax, s.Autocommits, s.Count)
			}
		}
	}
	if n != 4*per || o.Protocol != "MySQL/MariaDB" {
		t.Errorf("observed %d queries in %q, mysqlslap ran %d per client × 4:\n%s", n, o.Protocol, per, p.stdout.String())
	}
}

// TestProxyObserveLibmariadb: a C client on libmariadb (mariadbtest.StmtClient), 4 threads
// of BEGIN, 14 SELECTs by primary key and COMMIT, through `dblat proxy --rtt 0 --observe
// --record`: with prepared statements (metadata cached from the second execute on, the case
// of issue #35) and without, every transaction the client committed is observed with 16
// round trips, and the statement prepared before a connection's first transaction adds one
// to that one only. The prepared recording replays with 16 round trips.
func TestProxyObserveLibmariadb(t *testing.T) {
	bin := mariadbtest.StmtClient(t)
	dsn := mariadbtest.NewDatabase(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	db := strings.TrimPrefix(u.Path, "/")
	srv := mariadbtest.Server(t)
	mariadbtest.RunStmtClient(t, bin, "127.0.0.1", srv.Port, db, "-S")
	e := newEnv(t)
	const threads, perThread, selects = 4, 25, 14
	var recording string
	for _, mode := range []string{"prepared", "text"} {
		t.Run(mode, func(t *testing.T) {
			obsFile := filepath.Join(e.dir, "libmariadb-"+mode+".json")
			recFile := filepath.Join(e.dir, "libmariadb-"+mode+".sql")
			p := e.startProxy(u.Host, "--rtt", "0", "--observe", obsFile, "--record", recFile, "--no-store")
			args := []string{"-c", strconv.Itoa(threads), "-t", strconv.Itoa(perThread), "-s", strconv.Itoa(selects)}
			if mode == "text" {
				args = append(args, "-T")
			}
			port, _ := strconv.Atoi(p.port())
			committed := mariadbtest.RunStmtClient(t, bin, "127.0.0.1", port, db, args...)
			p.stop(t)
			o, err := observe.ReadFile(obsFile)
			if err != nil {
				t.Fatal(err)
			}
			if o.Unfollowed.Connections != 0 || len(o.Shapes) != 1 || o.Protocol != "MySQL/MariaDB" {
				t.Fatalf("%d connections not followed, %d shapes in %q:\n%s", o.Unfollowed.Connections, len(o.Shapes), o.Protocol, p.stdout.String()+p.stderr.String())
			}
			s := o.Shapes[0]
			// Prepared: each connection's prepare joins its first transaction.
			wantMax, wantMean := int64(16), 16.0
			if mode == "prepared" {
				wantMax, wantMean = 17, 16+float64(threads)/float64(threads*perThread)
			}
			t.Logf("%s: observed %d transactions (the client committed %d), %.2f round trips each (p50 %d, max %d)",
				mode, s.Count, committed, s.RoundTripsMean, s.RoundTripsP50, s.RoundTripsMax)
			if committed != threads*perThread || s.Count != committed || s.Commits != committed || s.StatementsMean != selects+2 ||
				s.RoundTripsP50 != 16 || s.RoundTripsMax != wantMax || math.Abs(s.RoundTripsMean-wantMean) > 1e-9 {
				t.Errorf("observed %+v, want %d transactions of %d statements, 16 round trips (at most %d, %.2f on average)",
					s, committed, selects+2, wantMax, wantMean)
			}
			if mode == "prepared" {
				recording = recFile
			}
		})
	}
	if recording == "" {
		return
	}
	e.must("run", "script", "-f", recording, "--target", dsn, "--terminals", "4", "--duration", "2s", "--warmup", "0s")
	var runs []results.Run
	if err := json.Unmarshal([]byte(e.must("results", "export")), &runs); err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if r.Params.Workload != "script" {
			continue
		}
		var rts, n float64
		for _, tx := range r.Tx {
			rts += tx.RoundTrips * float64(tx.Committed)
			n += float64(tx.Committed)
		}
		t.Logf("replay: %.2f round trips per transaction over %.0f", rts/n, n)
		if n == 0 || rts/n != 16 {
			t.Errorf("replay: %.2f round trips per transaction over %.0f, want 16 as the client's", rts/n, n)
		}
		return
	}
	t.Fatal("no script run stored")
}

// TestProxyObserveFirebirdTPCC: dblat's own TPC-C on Firebird through `dblat proxy
// --engine firebird --observe` (its clients connect with wire_crypt=false): the TPC-C
// transactions observed are the runner's, plus at most one in flight per terminal when its
// window closed, with the runner's round trips per transaction. A client that encrypts is forwarded, not followed, with one line saying
// how to connect.
func TestProxyObserveFirebirdTPCC(t *testing.T) {
	t.Parallel()
	dsn := fbtest.NewDatabase(t, "Super")
	e := newEnv(t)
	e.must("load", "tpcc", "--target", dsn, "--warehouses", "1")
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	obsFile := filepath.Join(e.dir, "fb.json")
	p := e.startProxy(u.Host, "--rtt", "0", "--engine", "firebird", "--observe", obsFile, "--no-store")
	pu := *u
	pu.Host = p.addr
	q := pu.Query()
	q.Set("wire_crypt", "false")
	pu.RawQuery = q.Encode()
	const terminals = 2
	e.must("run", "tpcc", "--target", pu.String(), "--terminals", strconv.Itoa(terminals), "--duration", "3s", "--warmup", "0s")
	// An encrypting client: its traffic passes, and the proxy says why it is not followed.
	q.Del("wire_crypt")
	pu.RawQuery = q.Encode()
	if code, out, errs := e.run("check", "tpcc", "--target", pu.String()); code != 0 {
		t.Logf("check through an encrypting connection: exit %d\n%s\n%s", code, out, errs)
	}
	p.stop(t)
	if !strings.Contains(p.stderr.String(), "wire_crypt=false") {
		t.Errorf("no line about wire encryption:\n%s", p.stderr.String())
	}
	var runs []results.Run
	if err := json.Unmarshal([]byte(e.must("results", "export")), &runs); err != nil {
		t.Fatal(err)
	}
	var done int64
	var summary results.Summary
	var runnerTrips, runnerTx float64 // over the committed and rolled-back transactions
	for _, r := range runs {
		if r.Params.Workload == "tpcc" && r.Status == results.StatusFinished {
			summary = r.Summary
			done = r.Summary.Committed + r.Summary.Rollbacks
			for _, n := range r.Summary.Errors {
				done += n
			}
			for _, tx := range r.Tx {
				n := float64(tx.Committed + tx.Rollbacks)
				runnerTrips += tx.RoundTrips * n
				runnerTx += n
			}
		}
	}
	o, err := observe.ReadFile(obsFile)
	if err != nil {
		t.Fatal(err)
	}
	// TPC-C's transactions, not the runner's queries about the server before and after.
	tpcc := regexp.MustCompile(`(?i)^START TRANSACTION; .*\b(new_order|order_line|district|stock|warehouse|customer|orders|history)\b`)
	var seen int64
	var seenTrips float64
	for _, s := range o.Shapes {
		if tpcc.MatchString(s.Shape) {
			seen += s.Count
			seenTrips += s.RoundTripsMean * float64(s.Count)
		}
	}
	t.Logf("observed %d TPC-C transactions; the runner: %d committed, %d rolled back, errors %v", seen, summary.Committed, summary.Rollbacks, summary.Errors)
	if done == 0 || seen < done || seen > done+terminals {
		t.Errorf("observed %d TPC-C transactions, the runner counted %d (+ up to %d in flight):\n%s", seen, done, terminals, p.stdout.String())
	}
	// Round trips per transaction, as the proxy saw them on the wire and as the runner's
	// metered connections counted them. The proxy's include the transactions in flight at
	// the window's end (at most one per terminal, each of at most the longest shape's round
	// trips), which move its mean by at most their share of the whole: the tolerance is
	// that, or 2 % where that is less (other edges of the warm-up-free window).
	if runnerTx > 0 && seen > 0 {
		proxy, runner := seenTrips/float64(seen), runnerTrips/runnerTx
		longest := 0.0
		for _, s := range o.Shapes {
			longest = max(longest, s.RoundTripsMean)
		}
		tol := max(0.02*runner, terminals*longest/float64(seen))
		t.Logf("round trips per TPC-C transaction: %.2f through the proxy, %.2f by the runner (tolerance %.2f)", proxy, runner, tol)
		if math.Abs(proxy-runner) > tol {
			t.Errorf("round trips per TPC-C transaction: %.2f observed by the proxy, %.2f counted by the runner", proxy, runner)
		}
	}
	if o.Unfollowed.Connections == 0 {
		t.Errorf("the encrypting client's connections were followed: %+v", o.Unfollowed)
	}
}

// TestReplayRecording records pgbench's tpcb-like through the proxy and replays the
// recording with `dblat run script -f`: 7 round trips per transaction, as pgbench's.
func TestReplayRecording(t *testing.T) {
	t.Parallel()
	dsn := pgtest.NewDatabase(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	host, port, _ := strings.Cut(u.Host, ":")
	db := strings.TrimPrefix(u.Path, "/")
	tool(t, "pgbench", "-i", "-q", "-s", "1", "-h", host, "-p", port, "-U", "dblat", db)
	e := newEnv(t)
	rec := filepath.Join(e.dir, "tpcb.sql")
	p := e.startProxy(u.Host, "--rtt", "0", "--record", rec)
	tool(t, "pgbench", "-n", "-c", "4", "-j", "2", "-t", "50", "-h", "127.0.0.1", "-p", p.port(), "-U", "dblat", db)
	p.stop(t)
	e.must("run", "script", "-f", rec, "--target", dsn, "--terminals", "4", "--duration", "5s", "--warmup", "1s")
	var runs []results.Run
	if err := json.Unmarshal([]byte(e.must("results", "export")), &runs); err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if r.Params.Workload != "script" {
			continue
		}
		var rts, n float64
		for _, tx := range r.Tx {
			rts += tx.RoundTrips * float64(tx.Committed)
			n += float64(tx.Committed)
		}
		// The recording's rare shapes (pgbench's own start-up queries) weigh next to nothing.
		if n == 0 || rts/n < 6.9 || rts/n > 7.1 {
			t.Errorf("replay: %.2f round trips per transaction over %.0f, want 7 as pgbench's", rts/n, n)
		}
		return
	}
	t.Fatal("no script run stored")
}
