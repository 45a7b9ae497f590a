package clients_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/cli"
	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/engine/firebird"
	"github.com/dblat/dblat/internal/engine/firebird/fbtest"
	"github.com/dblat/dblat/internal/engine/mariadb"
	"github.com/dblat/dblat/internal/engine/mariadb/mariadbtest"
	"github.com/dblat/dblat/internal/engine/postgres"
	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
	"github.com/dblat/dblat/internal/observe"
	"github.com/dblat/dblat/internal/results"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Shutdown()
	mariadbtest.Shutdown()
	fbtest.Shutdown()
	os.Exit(code)
}

// rows is the size of the clients' table: ids are drawn uniformly from it, so that 4
// clients rarely update the same row at once.
const rows = 10000

// server is a fresh database on a dblat-managed server, holding the clients' table.
type server struct {
	engine string // postgres, mariadb, firebird
	dsn    string // dblat's DSN for it
	host   string
	port   int
	db     string // database name, or Firebird's database file
	user   string
	// credentials is the file the clients read the password from, as the engine's own
	// clients do: the server's pgpass file (PGPASSFILE), its MySQL option file
	// (--defaults-extra-file) or its SYSDBA password file (isql's -fetch_password). No
	// client gets the password on its command line.
	credentials string
}

// credentialArgs returns the arguments and environment that tell a client program of the
// matrix where s's password is: PGPASSFILE for PostgreSQL's (libpq and the drivers that
// read its password file), --option-file for MariaDB's, --password-file for Firebird's.
func (s *server) credentialArgs() (args, env []string) {
	switch s.engine {
	case "postgres":
		return nil, []string{"PGPASSFILE=" + s.credentials}
	case "mariadb":
		return []string{"--option-file", s.credentials}, nil
	}
	return []string{"--password-file", s.credentials}, nil
}

// result is what a client program prints: its own count and timing.
type result struct {
	Version   string  `json:"version"`
	Committed int64   `json:"committed"`
	ElapsedS  float64 `json:"elapsed_s"`
	LatencyMs float64 `json:"latency_ms_mean"` // 0 when the client cannot time a transaction alone
	TPS       float64 `json:"tps"`
}

// client is one client library in one mode.
type client struct {
	name, engine string
	// fast clients run in `make test`; the rest only with DBLAT_CLIENTS=all.
	fast bool
	// rts is the round trips of a transaction once the connection is warm (the observed
	// median), and why; replay those of `dblat run script` replaying the recording.
	rts    int64
	why    string
	replay float64
	// nagle: the client writes a request behind one the server does not answer, and
	// Nagle's algorithm holds it until the delayed ACK: the observation must say so.
	nagle bool
	// tls says how the client's TLS or wire encryption is off for the proxy.
	tls string
	// run runs threads connections of tx transactions each against port.
	run func(h *harness, s *server, port, threads, tx int) (result, error)
}

// harness is what every client's test shares.
type harness struct {
	t       *testing.T
	dir     string
	cache   string // scripts/clients.sh's cache directory, "" when not installed
	all     bool   // DBLAT_CLIENTS=all: every client
	predict bool   // DBLAT_CLIENTS_PREDICT=1: the predictions too
	mu      sync.Mutex
	servers map[string]*server
	bins    map[string]string
	rows    []row
}

// row is one line of the compatibility table.
type row struct {
	client, version, engine, observed, rts, tls string
	errs                                        [4]string // +2 ms 1, 4 clients; +20 ms 1, 4 clients
	notes                                       []string
}

func TestClients(t *testing.T) {
	h := &harness{t: t, dir: t.TempDir(), servers: map[string]*server{}, bins: map[string]string{},
		all: os.Getenv("DBLAT_CLIENTS") == "all", predict: os.Getenv("DBLAT_CLIENTS_PREDICT") == "1", cache: os.Getenv("DBLAT_CLIENTS_CACHE")}
	for _, c := range matrix() {
		if !c.fast && !h.all {
			continue
		}
		t.Run(c.name, func(t *testing.T) { h.client(t, c) })
	}
	if path := os.Getenv("DBLAT_CLIENTS_TABLE"); path != "" {
		if err := os.WriteFile(path, []byte(h.table()), 0o644); err != nil {
			t.Error(err)
		}
	}
	t.Log("\n" + h.table())
}

// checkTx and checkThreads are the observed run's size: 4 connections of 40 transactions.
const (
	checkTx      = 40
	checkThreads = 4
)

// client observes c at RTT 0, checks the counts and round trips, replays its recording and,
// with DBLAT_CLIENTS=all, compares predictions with measurements at +2 and +20 ms.
func (h *harness) client(t *testing.T, c client) {
	s := h.server(t, c.engine)
	obs, rec := filepath.Join(h.dir, slug(c.name)+".json"), filepath.Join(h.dir, slug(c.name)+".sql")
	p := h.startProxy(t, s, "--rtt", "0", "--observe", obs, "--record", rec)
	res, err := c.run(h, s, p.port, checkThreads, checkTx)
	p.stop(t)
	if err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
	o, err := observe.ReadFile(obs)
	if err != nil {
		t.Fatal(err)
	}
	n, mean, p50 := clientShapes(o)
	r := row{client: c.name, version: res.Version, engine: c.engine, tls: c.tls}
	r.observed = fmt.Sprintf("%d of %d", n, res.Committed)
	t.Logf("%s (%s): observed %d transactions of %d committed, %.2f round trips each (p50 %d; want %d: %s)",
		c.name, res.Version, n, res.Committed, mean, p50, c.rts, c.why)
	if res.Committed != checkThreads*checkTx || n != res.Committed {
		t.Errorf("observed %d transactions, the client committed %d of %d:\n%s", n, res.Committed, checkThreads*checkTx, p.stdout.String())
	}
	if p50 != c.rts {
		t.Errorf("%d round trips per transaction observed (mean %.2f), want %d: %s\n%s", p50, mean, c.rts, c.why, p.stdout.String())
	}
	replayed := h.replay(t, s, rec)
	r.rts = fmt.Sprintf("%d → %s", p50, strconv.FormatFloat(replayed, 'f', -1, 64))
	// The recording holds the drivers' set-up transactions too, at their frequency: they
	// move the replay's mean by at most their share.
	tol := max(0.005, (1-float64(n)/float64(max(1, o.Transactions)))*max(c.replay, 1))
	if math.Abs(replayed-c.replay) > tol {
		t.Errorf("the replay took %.3f round trips per transaction, want %g", replayed, c.replay)
	}
	for _, note := range observeNotes(o) {
		t.Logf("%s: the observation notes: %s", c.name, note)
		r.notes = append(r.notes, note)
	}
	if c.nagle && !strings.Contains(strings.Join(r.notes, "\n"), "Nagle") {
		t.Errorf("the observation does not name the delayed ACK:\n%s", p.stdout.String())
	}
	if h.predict {
		h.predictions(t, c, s, res, p50, &r)
	}
	h.mu.Lock()
	h.rows = append(h.rows, r)
	h.mu.Unlock()
}

// clientShapes sums the observed transactions that ran the clients' UPDATE (the drivers'
// own set-up queries are other shapes) and returns their count, mean round trips and the
// most frequent such shape's median.
func clientShapes(o *observe.Observation) (n int64, mean float64, p50 int64) {
	var best int64
	for _, s := range o.Shapes {
		if !strings.Contains(strings.ToUpper(s.Shape), "UPDATE DBLAT_CLIENTS") {
			continue
		}
		n += s.Count
		mean += s.RoundTripsMean * float64(s.Count)
		if s.Count > best {
			best, p50 = s.Count, s.RoundTripsP50
		}
	}
	if n > 0 {
		mean /= float64(n)
	}
	return n, mean, p50
}

// observeNotes returns what the observation says about time it could not place (split
// requests), one line each.
func observeNotes(o *observe.Observation) []string {
	var out []string
	for _, s := range o.Shapes {
		if strings.Contains(strings.ToUpper(s.Shape), "UPDATE DBLAT_CLIENTS") {
			out = append(out, s.Diagnoses...)
		}
	}
	return append(out, o.Diagnoses...)
}

// replay replays rec with `dblat run script` on s's database and returns its round trips per
// transaction (over every transaction it ran, of every branch).
func (h *harness) replay(t *testing.T, s *server, rec string) float64 {
	t.Helper()
	resultsDB := filepath.Join(h.dir, filepath.Base(rec)+".db")
	out, errs, code := h.dblat(resultsDB, "run", "script", "-f", rec, "--target", s.dsn, "--terminals", "2",
		"--duration", "500ms", "--warmup", "0s")
	if code != 0 {
		t.Fatalf("dblat run script -f %s: exit %d\n%s\n%s", rec, code, out, errs)
	}
	out, errs, code = h.dblat(resultsDB, "results", "export")
	if code != 0 {
		t.Fatalf("results export: %s", errs)
	}
	var runs []results.Run
	if err := json.Unmarshal([]byte(out), &runs); err != nil {
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
		if n == 0 {
			t.Fatalf("the replay committed nothing: %+v", r.Summary)
		}
		return math.Round(rts/n*1000) / 1000
	}
	t.Fatal("no script run stored")
	return 0
}

// predictions observes c at RTT 0 with 1 and 4 connections, runs it through the proxy at
// +2 ms and +20 ms, and compares what the client measured there (its own mean transaction
// latency and throughput) with what `dblat predict --observed` predicts from the
// observation: within 5 %, the median over repeats (DBLAT_CLIENTS_REPEATS, 3 by default).
// The prediction is made at the RTT the link achieved (the requested one plus its mean
// lateness each way, as the proxy reports it at stop): the model is what is checked, not
// the machine's timer latency; both are logged.
func (h *harness) predictions(t *testing.T, c client, s *server, check result, rts int64, r *row) {
	repeats := 3
	if v, err := strconv.Atoi(os.Getenv("DBLAT_CLIENTS_REPEATS")); err == nil && v > 0 {
		repeats = v
	}
	base := check.LatencyMs
	if base <= 0 { // isql: the time a transaction takes in a closed loop of checkThreads
		base = 1000 * float64(checkThreads) / max(check.TPS, 1e-9)
	}
	for ti, threads := range []int{1, 4} {
		var latErrs, tpsErrs [2][]float64
		bound := false // predict said its figures are bounds
		for rep := range repeats {
			obs := filepath.Join(h.dir, fmt.Sprintf("%s-%d-%d.json", slug(c.name), threads, rep))
			p := h.startProxy(t, s, "--rtt", "0", "--observe", obs)
			res0, err := c.run(h, s, p.port, threads, txFor(2000, base))
			p.stop(t)
			if err != nil {
				t.Fatalf("%s, %d clients at RTT 0: %v", c.name, threads, err)
			}
			var measured [2]result
			var achieved [2]float64 // ms
			for ri, rtt := range []float64{2, 20} {
				p := h.startProxy(t, s, "--rtt", fmt.Sprintf("%gms", rtt))
				res, err := c.run(h, s, p.port, threads, txFor(3000, base+float64(rts)*rtt))
				p.stop(t)
				if err != nil {
					t.Fatalf("%s, %d clients at +%g ms: %v", c.name, threads, rtt, err)
				}
				measured[ri] = res
				achieved[ri] = rtt + p.lateness(t)
			}
			preds := h.forecast(t, obs, threads, fmt.Sprintf("%.4fms,%.4fms", achieved[0], achieved[1]))
			asked := h.forecast(t, obs, threads, "2ms,20ms")
			t.Logf("%s, %d clients at RTT 0 (repeat %d): the client measured %.3f ms, %.1f tx/s; the proxy observed %.3f ms, %.1f tx/s",
				c.name, threads, rep+1, res0.LatencyMs, res0.TPS, preds[0].ObservedLatencyMs, preds[0].ObservedTPS)
			if rep == 0 {
				for _, n := range preds[0].Notes {
					t.Logf("%s: predict notes: %s", c.name, n)
				}
			}
			for ri, rtt := range []float64{2, 20} {
				pred, res := preds[ri], measured[ri]
				bound = bound || pred.UpperBound
				tpsErr := pred.TPS/res.TPS - 1
				latErr := math.NaN()
				if res.LatencyMs > 0 {
					latErr = pred.LatencyMs/res.LatencyMs - 1
				}
				latErrs[ri], tpsErrs[ri] = append(latErrs[ri], latErr), append(tpsErrs[ri], tpsErr)
				// What the model missed, per round trip: the time a loaded machine takes to
				// wake a client or server that waited, which RTT 0 does not show.
				perRT := (res.LatencyMs - pred.LatencyMs) / float64(rts)
				t.Logf("%s, %d clients at +%g ms (achieved %.3f ms): predicted %.3f ms, %.1f tx/s (at the requested RTT %.3f ms, %.1f tx/s); "+
					"the client measured %.3f ms, %.1f tx/s over %d transactions: latency %+.1f %%, throughput %+.1f %% (%+.3f ms a round trip; %s)",
					c.name, threads, rtt, achieved[ri], pred.LatencyMs, pred.TPS, asked[ri].LatencyMs, asked[ri].TPS,
					res.LatencyMs, res.TPS, res.Committed, 100*latErr, 100*tpsErr, perRT, loadavg())
			}
		}
		for ri, rtt := range []float64{2, 20} {
			latErr, tpsErr := median(latErrs[ri]), median(tpsErrs[ri])
			cell := fmt.Sprintf("tps %+.1f %%", 100*tpsErr)
			if !math.IsNaN(latErr) {
				cell = fmt.Sprintf("%+.1f / %+.1f %%", 100*latErr, 100*tpsErr)
			}
			miss := math.Abs(tpsErr) > 0.05 || !math.IsNaN(latErr) && math.Abs(latErr) > 0.05
			switch {
			case bound && !math.IsNaN(latErr) && latErr <= 0 && tpsErr >= 0:
				cell += " (bound)" // predict said so, and the bounds held
				miss = false
			case miss:
				cell += " ✗"
			}
			r.errs[ri*2+ti] = cell
			t.Logf("%s, %d clients at +%g ms: median over %d repeats: latency %+.1f %%, throughput %+.1f %%",
				c.name, threads, rtt, repeats, 100*latErr, 100*tpsErr)
			if miss {
				t.Errorf("%s, %d clients at +%g ms: the prediction misses by more than 5 %% (median of %d): latency %+.1f %%, throughput %+.1f %%",
					c.name, threads, rtt, repeats, 100*latErr, 100*tpsErr)
			}
		}
	}
}

// forecast runs `dblat predict --observed obs --clients threads --rtt rtts` and returns its
// forecasts, one per RTT.
func (h *harness) forecast(t *testing.T, obs string, threads int, rtts string) []observe.Forecast {
	t.Helper()
	out, errs, code := h.dblat(filepath.Join(h.dir, "predict.db"), "predict", "--observed", obs, "--rtt", rtts,
		"--clients", strconv.Itoa(threads), "--format", "json")
	if code != 0 {
		t.Fatalf("predict --rtt %s: %s", rtts, errs)
	}
	var fs []observe.Forecast
	dec := json.NewDecoder(strings.NewReader(out))
	for dec.More() {
		var f observe.Forecast
		if err := dec.Decode(&f); err != nil {
			t.Fatal(err)
		}
		fs = append(fs, f)
	}
	if len(fs) != strings.Count(rtts, ",")+1 {
		t.Fatalf("predict printed %d forecasts for %s:\n%s", len(fs), rtts, out)
	}
	return fs
}

// loadavg returns the machine's load averages (/proc/loadavg), to say how busy it was.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "load unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "load unknown"
	}
	return "load " + strings.Join(f[:3], " ")
}

// median returns the median of xs (NaN for none, or when any is NaN).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	ys := append([]float64(nil), xs...)
	for _, y := range ys {
		if math.IsNaN(y) {
			return math.NaN()
		}
	}
	sort.Float64s(ys)
	if n := len(ys); n%2 == 0 {
		return (ys[n/2-1] + ys[n/2]) / 2
	}
	return ys[len(ys)/2]
}

var latenessRe = regexp.MustCompile(`lateness \(how late the link released data\): up mean ([\d.]+) .*; down mean ([\d.]+) `)

// lateness returns the link's mean lateness up plus down, in milliseconds, from the line
// the stopped proxy printed (0 when it delayed nothing).
func (p *proxy) lateness(t *testing.T) float64 {
	m := latenessRe.FindStringSubmatch(p.stderr.String())
	if m == nil {
		t.Logf("no lateness line from the proxy:\n%s", p.stderr.String())
		return 0
	}
	up, _ := strconv.ParseFloat(m[1], 64)
	down, _ := strconv.ParseFloat(m[2], 64)
	return (up + down) / 1000
}

// txFor returns the transactions per connection that take about ms milliseconds at
// latency each, between 20 and 2000.
func txFor(ms, latency float64) int {
	if latency <= 0 {
		return 200
	}
	return int(min(2000, max(20, ms/latency)))
}

// table is the compatibility table in Markdown.
func (h *harness) table() string {
	var b strings.Builder
	b.WriteString("| client | version | engine | observed | round trips, recorded → replayed | +2 ms, 1 client | +2 ms, 4 | +20 ms, 1 | +20 ms, 4 | TLS / encryption off |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.rows {
		e := r.errs
		for i := range e {
			if e[i] == "" {
				e[i] = "—"
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.client, r.version, r.engine, r.observed, r.rts,
			e[0], e[1], e[2], e[3], r.tls)
	}
	for _, r := range h.rows {
		for _, n := range r.notes {
			fmt.Fprintf(&b, "\n%s: %s\n", r.client, n)
		}
	}
	return b.String()
}

// server returns the database of engine, made on first use: a fresh database on the
// shared managed server with the clients' table of rows rows.
func (h *harness) server(t *testing.T, eng string) *server {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s := h.servers[eng]; s != nil {
		return s
	}
	var dsn string
	var e engine.Engine
	fill := ""
	switch eng {
	case "postgres":
		dsn, e = pgtest.NewDatabase(h.t), postgres.Engine{}
		fill = fmt.Sprintf("INSERT INTO dblat_clients SELECT i, 0 FROM generate_series(1, %d) i", rows)
	case "mariadb":
		dsn, e = mariadbtest.NewDatabase(h.t), mariadb.Engine{}
		fill = fmt.Sprintf("INSERT INTO dblat_clients SELECT seq, 0 FROM seq_1_to_%d", rows)
	case "firebird":
		dsn, e = fbtest.NewDatabase(h.t, "Super"), firebird.Engine{}
		fill = fmt.Sprintf("EXECUTE BLOCK AS DECLARE i INT = 1; BEGIN WHILE (i <= %d) DO BEGIN "+
			"INSERT INTO dblat_clients VALUES (:i, 0); i = i + 1; END END", rows)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err := e.Open(ctx, dsn, engine.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{"CREATE TABLE dblat_clients (id INT NOT NULL PRIMARY KEY, balance INT NOT NULL)", fill} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	port, _ := strconv.Atoi(u.Port())
	s := &server{engine: eng, dsn: dsn, host: u.Hostname(), port: port, db: strings.TrimPrefix(u.Path, "/"),
		user: u.User.Username()}
	switch eng {
	case "postgres":
		s.credentials = postgres.PassFile(pgtest.Server(h.t))
	case "mariadb":
		s.credentials = mariadb.OptionFile(mariadbtest.Server(h.t))
	case "firebird":
		s.db = u.Path
		s.credentials = firebird.PasswordFile(fbtest.Server(h.t, "Super"))
	}
	h.servers[eng] = s
	return s
}

// dblat runs dblat in-process with its own state directory and resultsDB as the results
// store, and returns its output and exit code.
func (h *harness) dblat(resultsDB string, args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	st := &cli.State{Stdout: &out, Stderr: &errb, Signals: make(chan os.Signal),
		Getenv: func(k string) string {
			switch k {
			case "DBLAT_STATE":
				return filepath.Join(h.dir, "state")
			case "DBLAT_RESULTS":
				return resultsDB
			}
			return ""
		}}
	code := cli.Main(st, args)
	return out.String(), errb.String(), code
}

// proxy is a `dblat proxy` running in-process.
type proxy struct {
	port           int
	signals        chan os.Signal
	stdout, stderr *syncBuffer
	done           chan int
}

// startProxy runs `dblat proxy --upstream s --engine s.engine args...` and returns once it
// listens.
func (h *harness) startProxy(t *testing.T, s *server, args ...string) *proxy {
	t.Helper()
	p := &proxy{signals: make(chan os.Signal, 2), stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan int, 1)}
	st := &cli.State{Stdout: p.stdout, Stderr: p.stderr, Signals: p.signals,
		Getenv: func(k string) string {
			if k == "DBLAT_STATE" {
				return filepath.Join(h.dir, "state")
			}
			return ""
		}}
	all := []string{"proxy", "--upstream", fmt.Sprintf("%s:%d", s.host, s.port), "--print-every", "0"}
	if hasFlag(args, "--observe") {
		all = append(all, "--engine", s.engine, "--no-store")
	}
	all = append(all, args...)
	go func() { p.done <- cli.Main(st, all) }()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if line, _, ok := strings.Cut(p.stdout.String(), "\n"); ok {
			_, port, _ := strings.Cut(line, ":")
			p.port, _ = strconv.Atoi(port)
			return p
		}
		select {
		case code := <-p.done:
			t.Fatalf("dblat proxy exited %d: %s", code, p.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("dblat proxy did not listen: %s", p.stderr.String())
	return nil
}

func hasFlag(args []string, f string) bool {
	for _, a := range args {
		if a == f {
			return true
		}
	}
	return false
}

// stop interrupts the proxy and waits for it to exit 0.
func (p *proxy) stop(t *testing.T) {
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

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// command runs a client program and parses the JSON line it printed last.
func command(name string, args []string, env ...string) (result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return result{}, fmt.Errorf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out.String(), errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var r result
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &r); err != nil {
		return result{}, fmt.Errorf("%s: %v in its output:\n%s%s", name, err, out.String(), errb.String())
	}
	return r, nil
}

// need skips t when program is missing (or fails it under DBLAT_REQUIRE_SERVERS=1).
func need(t *testing.T, program string) {
	t.Helper()
	if _, err := exec.LookPath(program); err != nil {
		if pgtest.Required() {
			t.Fatalf("%s is not installed", program)
		}
		t.Skipf("skipping: %s is not installed", program)
	}
}

// slug turns a client's name into a file name.
func slug(name string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '_'
	}, name)
}
