package results

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

func openTemp(t testing.TB) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "results.db")
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

// normTime drops the monotonic reading and location, keeping the instant.
func normTime(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return time.Unix(0, t.UnixNano()).UTC()
}

func norm(r Run) Run {
	r.Started, r.Ended = normTime(r.Started), normTime(r.Ended)
	return r
}

func histString(t testing.TB, values ...int64) string {
	t.Helper()
	h := hdrhistogram.New(1, 60_000_000, 3)
	for _, v := range values {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	s, err := EncodeHist(h)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// fullRun returns a run with every field set; Status, ID and Ended are left for the test.
func fullRun(t testing.TB, study, cell string, started time.Time) Run {
	return Run{
		Study:   study,
		CellKey: cell,
		Started: started,
		Params: Params{
			Workload: "tpcc", Scale: 10, Terminals: 32, Connections: 16,
			Duration: 5 * time.Minute, Warmup: 30 * time.Second, Seed: 42,
			Mix:   map[string]float64{"new_order": 45, "payment": 43, "order_status": 4, "delivery": 4, "stock_level": 4},
			Think: true, RTT: 1500 * time.Microsecond,
			Options: map[string]string{"mode": "client"},
		},
		Link: &Link{Kind: "proxy", RTT: 1500 * time.Microsecond, Up: 750 * time.Microsecond, Down: 750 * time.Microsecond,
			Jitter: 100 * time.Microsecond, Distribution: "normal", BandwidthUp: 12_500_000, BandwidthDown: 12_500_000,
			DelayConnect: true, AchievedP50: 1510 * time.Microsecond, AchievedP99: 1620 * time.Microsecond, Samples: 200,
			RoundTrips: 123456, BytesUp: 1 << 20, BytesDown: 1 << 21},
		Server: Server{
			Engine: "postgres", Target: "postgres://bench@db:5432/tpcc", Managed: true,
			Version: "PostgreSQL 17.2", Settings: map[string]string{"shared_buffers": "8GB"},
			DatabaseBytes: 1 << 30,
		},
		Client: Client{
			Hostname: "bench-1", OS: "linux", Kernel: "6.1.0", CPUModel: "EPYC", Cores: 2,
			MemoryBytes: 8 << 30, GoVersion: "go1.26", DblatVersion: "0.1.0", PID: os.Getpid(),
			CPUSeconds: 12.5,
		},
		StatsBefore: map[string]float64{"xact_commit": 1000, "blks_hit": 1e9 + 0.5},
		StatsAfter:  map[string]float64{"xact_commit": 91000, "blks_hit": 2e9},
		Summary: Summary{Metric: MetricNOPM,
			Elapsed: 5*time.Minute + 3*time.Millisecond, Committed: 90000, Rollbacks: 400,
			Errors: map[string]int64{"retryable": 12}, TPS: 300.1, TPM: 18006, NOPM: 8100.25,
			ErrorExamples: map[string][]string{"retryable": {"deadlock detected (SQLSTATE 40P01)"}},
		},
		Tx: []TxSummary{
			{Type: "new_order", Committed: 40000, Rollbacks: 400, Errors: map[string]int64{"retryable": 10},
				MeanUs: 2100.5, P50Us: 1900, P90Us: 3000, P95Us: 3500, P99Us: 5000, P999Us: 9000, MaxUs: 20000,
				WaitMeanUs: 3.25, WaitP99Us: 40, RoundTrips: 14.5, RoundTripsP50: 14, RoundTripsP99: 22,
				BytesUp: 2048.5, BytesDown: 4096.25, WritesUp: 12.75, Hist: histString(t, 1900, 3000, 20000), WaitHist: histString(t, 3, 40)},
			{Type: "payment", Committed: 38000, MeanUs: 900, P50Us: 800, P90Us: 1200, P95Us: 1500,
				P99Us: 2500, P999Us: 4000, MaxUs: 9000, Hist: histString(t, 800, 9000)},
			{Type: "stock_level", Committed: 12000, Errors: map[string]int64{}, MeanUs: 5000.75},
		},
	}
}

func samples(n int, types ...string) []Sample {
	var out []Sample
	for i := range n {
		for _, ty := range types {
			out = append(out, Sample{
				Offset: time.Duration(i-2) * 5 * time.Second, // two warm-up intervals
				Type:   ty, Committed: int64(100 + i), Errors: int64(i % 3),
				P50Us: 1000 + int64(i), P99Us: 5000 + int64(i), MaxUs: 9000 + int64(i),
			})
		}
	}
	return out
}

func TestRoundTrip(t *testing.T) {
	s, _ := openTemp(t)
	ctx := context.Background()
	base := time.Date(2025, 3, 1, 12, 0, 0, 123456789, time.FixedZone("CET", 3600))

	cases := []struct {
		name    string
		run     func() Run
		status  Status
		reason  string
		batches [][]Sample
	}{
		{
			name:    "full finished run",
			run:     func() Run { return fullRun(t, "s1", "pg/tpcc/w10", base) },
			status:  StatusFinished,
			batches: [][]Sample{samples(2, "", "new_order"), samples(3, "payment")},
		},
		{
			name: "failed run, nil maps, no tx, no samples",
			run: func() Run {
				return Run{Started: base.Add(time.Hour), Params: Params{Workload: "tpcc"},
					Server: Server{Engine: "postgres"}, Client: Client{PID: os.Getpid(), Hostname: "h"}}
			},
			status: StatusFailed,
			reason: "connection refused, line 2\nand more",
		},
		{
			name: "aborted run, empty non-nil maps kept distinct from nil",
			run: func() Run {
				r := fullRun(t, "s2", "", base.Add(2*time.Hour))
				r.StatsBefore, r.StatsAfter = map[string]float64{}, nil
				r.Params.Mix, r.Params.Options, r.Server.Settings = nil, map[string]string{}, map[string]string{}
				r.Summary.Errors = map[string]int64{}
				return r
			},
			status:  StatusAborted,
			reason:  "interrupted",
			batches: [][]Sample{samples(1, "")},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.run()
			id, err := s.Begin(ctx, &r)
			if err != nil {
				t.Fatalf("Begin: %v", err)
			}
			if id == 0 || r.ID != id || r.Status != StatusRunning {
				t.Fatalf("Begin: id %d, r.ID %d, status %q", id, r.ID, r.Status)
			}
			got, err := s.Get(ctx, id, true)
			if err != nil {
				t.Fatalf("Get running: %v", err)
			}
			if got.Status != StatusRunning || len(got.Tx) != 0 || !got.Ended.IsZero() {
				t.Errorf("running run read back as status %q, %d tx, ended %v", got.Status, len(got.Tx), got.Ended)
			}

			var all []Sample
			for _, b := range tc.batches {
				if err := s.AddSamples(ctx, id, b); err != nil {
					t.Fatalf("AddSamples: %v", err)
				}
				all = append(all, b...)
			}
			r.Status, r.Reason = tc.status, tc.reason
			r.Ended = r.Started.Add(r.Params.Duration + time.Second)
			if err := s.Finish(ctx, &r); err != nil {
				t.Fatalf("Finish: %v", err)
			}

			want := r
			want.Samples = all
			got, err = s.Get(ctx, id, true)
			if err != nil {
				t.Fatalf("Get: %v", err)
			}
			if !reflect.DeepEqual(norm(*got), norm(want)) {
				t.Errorf("round trip mismatch:\n got %+v\nwant %+v", norm(*got), norm(want))
			}
			if got.Started.Location() != time.UTC {
				t.Errorf("Started location %v, want UTC", got.Started.Location())
			}

			got, err = s.Get(ctx, id, false)
			if err != nil {
				t.Fatalf("Get without samples: %v", err)
			}
			want.Samples = nil
			if !reflect.DeepEqual(norm(*got), norm(want)) {
				t.Errorf("Get without samples mismatch:\n got %+v\nwant %+v", norm(*got), norm(want))
			}

			// A run ends exactly once, and takes no samples after.
			if err := s.Finish(ctx, &r); err == nil || !strings.Contains(err.Error(), "already "+string(tc.status)) {
				t.Errorf("second Finish: %v, want 'already %s'", err, tc.status)
			}
			if err := s.AddSamples(ctx, id, samples(1, "")); err == nil {
				t.Error("AddSamples after Finish succeeded")
			}
		})
	}
}

func TestBeginDefaults(t *testing.T) {
	s, _ := openTemp(t)
	r := Run{Status: StatusFinished, Ended: time.Now()}
	before := time.Now()
	if _, err := s.Begin(context.Background(), &r); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	if r.Client.PID != os.Getpid() || r.Client.Hostname != host || r.Started.Before(before) ||
		r.Status != StatusRunning || !r.Ended.IsZero() {
		t.Errorf("Begin defaults: pid %d host %q started %v status %q ended %v",
			r.Client.PID, r.Client.Hostname, r.Started, r.Status, r.Ended)
	}
}

func TestNonFiniteStoredAsZero(t *testing.T) {
	s, _ := openTemp(t)
	ctx := context.Background()
	r := fullRun(t, "", "", time.Now())
	if _, err := s.Begin(ctx, &r); err != nil {
		t.Fatal(err)
	}
	nan := func() float64 { var z float64; return z / z }()
	r.Status, r.Summary.TPS, r.StatsAfter["x"], r.Tx[0].MeanUs = StatusFinished, nan, nan, nan
	if err := s.Finish(ctx, &r); err != nil {
		t.Fatalf("Finish with NaN: %v", err)
	}
	got, err := s.Get(ctx, r.ID, false)
	if err != nil {
		t.Fatal(err)
	}
	if got.Summary.TPS != 0 || got.StatsAfter["x"] != 0 || got.Tx[0].MeanUs != 0 {
		t.Errorf("NaN read back as %v %v %v, want 0", got.Summary.TPS, got.StatsAfter["x"], got.Tx[0].MeanUs)
	}
}

func TestErrors(t *testing.T) {
	s, _ := openTemp(t)
	ctx := context.Background()
	r := fullRun(t, "", "", time.Now())
	if _, err := s.Begin(ctx, &r); err != nil {
		t.Fatal(err)
	}
	missing := r
	missing.ID, missing.Status = 999, StatusFinished

	cases := []struct {
		name     string
		err      error
		notFound bool
		contains string
	}{
		{"Get missing", func() error { _, err := s.Get(ctx, 999, true); return err }(), true, "run 999"},
		{"Finish missing", s.Finish(ctx, &missing), true, "run 999"},
		{"AddSamples missing", s.AddSamples(ctx, 999, samples(1, "")), true, "run 999"},
		{"Finish running status", s.Finish(ctx, &r), false, "not an end state"},
		{"duplicate tx types", func() error {
			d := r
			d.Status, d.Tx = StatusFinished, []TxSummary{{Type: "a"}, {Type: "a"}}
			return s.Finish(ctx, &d)
		}(), false, "tx type \"a\""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.err == nil {
				t.Fatal("no error")
			}
			if errors.Is(tc.err, ErrNotFound) != tc.notFound {
				t.Errorf("errors.Is(ErrNotFound) = %v, want %v: %v", !tc.notFound, tc.notFound, tc.err)
			}
			if !strings.Contains(tc.err.Error(), tc.contains) {
				t.Errorf("error %q does not contain %q", tc.err, tc.contains)
			}
		})
	}
	// The failed duplicate-type Finish must have changed nothing.
	got, err := s.Get(ctx, r.ID, false)
	if err != nil || got.Status != StatusRunning || len(got.Tx) != 0 {
		t.Errorf("after failed Finish: %v, status %q, %d tx", err, got.Status, len(got.Tx))
	}
}

func TestList(t *testing.T) {
	s, _ := openTemp(t)
	ctx := context.Background()
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	// id: study, cell, status, started offset. Run 5 shares run 4's start time.
	specs := []struct {
		study, cell string
		status      Status
		at          time.Duration
	}{
		{"a", "c1", StatusFinished, 1 * time.Hour},
		{"a", "c2", StatusFailed, 3 * time.Hour},
		{"b", "c1", StatusFinished, 2 * time.Hour},
		{"a", "c1", StatusRunning, 4 * time.Hour},
		{"", "", StatusFinished, 4 * time.Hour},
		// Sub-second precision must order correctly too.
		{"b", "c1", StatusFinished, 2*time.Hour + 500*time.Millisecond},
	}
	for _, sp := range specs {
		r := fullRun(t, sp.study, sp.cell, t0.Add(sp.at))
		if _, err := s.Begin(ctx, &r); err != nil {
			t.Fatal(err)
		}
		if err := s.AddSamples(ctx, r.ID, samples(2, "")); err != nil {
			t.Fatal(err)
		}
		if sp.status != StatusRunning {
			r.Status = sp.status
			if err := s.Finish(ctx, &r); err != nil {
				t.Fatal(err)
			}
		}
	}
	cases := []struct {
		name string
		f    Filter
		want []int64
	}{
		{"all newest first, ties by id", Filter{}, []int64{5, 4, 2, 6, 3, 1}},
		{"study", Filter{Study: "a"}, []int64{4, 2, 1}},
		{"study and cell", Filter{Study: "a", CellKey: "c1"}, []int64{4, 1}},
		{"cell", Filter{CellKey: "c1"}, []int64{4, 6, 3, 1}},
		{"status", Filter{Status: StatusFinished}, []int64{5, 6, 3, 1}},
		{"running", Filter{Status: StatusRunning}, []int64{4}},
		{"limit", Filter{Limit: 2}, []int64{5, 4}},
		{"study+status+limit", Filter{Study: "b", Status: StatusFinished, Limit: 1}, []int64{6}},
		{"no match", Filter{Study: "zzz"}, []int64{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			runs, err := s.List(ctx, tc.f)
			if err != nil {
				t.Fatal(err)
			}
			ids := []int64{}
			for _, r := range runs {
				ids = append(ids, r.ID)
				if r.Samples != nil {
					t.Errorf("run %d: List returned samples", r.ID)
				}
				wantTx := 3
				if r.Status == StatusRunning {
					wantTx = 0
				}
				if len(r.Tx) != wantTx {
					t.Errorf("run %d: %d tx rows, want %d", r.ID, len(r.Tx), wantTx)
				}
				full, err := s.Get(ctx, r.ID, false)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(norm(*full), norm(r)) {
					t.Errorf("run %d: List and Get differ", r.ID)
				}
			}
			if !reflect.DeepEqual(ids, tc.want) {
				t.Errorf("ids %v, want %v", ids, tc.want)
			}
		})
	}
}

func userVersion(t *testing.T, path string) int {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v int
	if err := db.QueryRow("PRAGMA user_version").Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func journalMode(t *testing.T, path string) string {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var m string
	if err := db.QueryRow("PRAGMA journal_mode").Scan(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

func execRaw(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

func TestMigrationAndReopen(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name  string
		setup func(t *testing.T, path string)
	}{
		{"missing file", func(t *testing.T, path string) {}},
		{"empty file", func(t *testing.T, path string) {
			if err := os.WriteFile(path, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"missing parent directories", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "r.db")
			if tc.setup == nil {
				path = filepath.Join(t.TempDir(), "a", "b", "r.db")
			} else {
				tc.setup(t, path)
			}
			s, err := Open(ctx, path)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			r := fullRun(t, "keep", "cell", time.Now())
			if _, err := s.Begin(ctx, &r); err != nil {
				t.Fatal(err)
			}
			r.Status = StatusFinished
			if err := s.Finish(ctx, &r); err != nil {
				t.Fatal(err)
			}
			var mode string
			if err := s.db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
				t.Errorf("journal_mode %q, %v; want wal", mode, err)
			}
			var fk int
			if err := s.db.QueryRow("PRAGMA foreign_keys").Scan(&fk); err != nil || fk != 1 {
				t.Errorf("foreign_keys %d, %v; want 1", fk, err)
			}
			s.Close()
			if v := userVersion(t, path); v != SchemaVersion() {
				t.Errorf("user_version %d, want %d", v, SchemaVersion())
			}

			for i := range 2 { // re-open is idempotent and keeps the data
				s, err := Open(ctx, path)
				if err != nil {
					t.Fatalf("re-open %d: %v", i, err)
				}
				got, err := s.Get(ctx, r.ID, false)
				if err != nil {
					t.Fatalf("re-open %d: Get: %v", i, err)
				}
				if !reflect.DeepEqual(norm(*got), norm(r)) {
					t.Errorf("re-open %d: run changed", i)
				}
				s.Close()
			}
		})
	}
}

func TestCrashRecovery(t *testing.T) {
	ctx := context.Background()
	s, path := openTemp(t)
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil { // Run waits: the process is reaped, its PID free
		t.Fatal(err)
	}
	deadPID := cmd.Process.Pid
	host, _ := os.Hostname()

	begin := func(pid int, hostname string) int64 {
		r := fullRun(t, "crash", "", time.Now())
		r.Client.PID, r.Client.Hostname = pid, hostname
		id, err := s.Begin(ctx, &r)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.AddSamples(ctx, id, samples(2, "")); err != nil {
			t.Fatal(err)
		}
		return id
	}
	dead := begin(deadPID, host)
	alive := begin(os.Getpid(), host)
	elsewhere := begin(deadPID, host+"-other-host")
	s.Close()

	s2, err := Open(ctx, path) // simulated restart after the crash
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	cases := []struct {
		name   string
		id     int64
		status Status
		reason string
	}{
		{"dead process on this host", dead, StatusAborted, fmt.Sprintf("dblat process %d ended before the run finished", deadPID)},
		{"live process", alive, StatusRunning, ""},
		{"other host", elsewhere, StatusRunning, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := s2.Get(ctx, tc.id, true)
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != tc.status || r.Reason != tc.reason {
				t.Errorf("status %q reason %q, want %q %q", r.Status, r.Reason, tc.status, tc.reason)
			}
			if len(r.Samples) != 2 {
				t.Errorf("%d samples kept, want 2", len(r.Samples))
			}
		})
	}
	if n, err := s2.MarkAbandoned(ctx); err != nil || n != 0 {
		t.Errorf("second MarkAbandoned: %d, %v; want 0", n, err)
	}
	// The live run can still finish normally.
	r, _ := s2.Get(ctx, alive, false)
	r.Status = StatusFinished
	if err := s2.Finish(ctx, r); err != nil {
		t.Errorf("Finish live run after re-open: %v", err)
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	regular := filepath.Join(dir, "regular-file")
	if err := os.WriteFile(regular, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	garbage := filepath.Join(dir, "garbage.db")
	garbageText := []byte(strings.Repeat("this is not a database\n", 200))
	if err := os.WriteFile(garbage, garbageText, 0o644); err != nil {
		t.Fatal(err)
	}
	foreign := filepath.Join(dir, "foreign.db")
	execRaw(t, foreign, "CREATE TABLE theirs (x)", "INSERT INTO theirs VALUES (1)")
	newer := filepath.Join(dir, "newer.db")
	s, err := Open(ctx, newer)
	if err != nil {
		t.Fatal(err)
	}
	r := fullRun(t, "", "", time.Now())
	if _, err := s.Begin(ctx, &r); err != nil {
		t.Fatal(err)
	}
	s.Close()
	execRaw(t, newer, fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion()+1))

	cases := []struct {
		name     string
		path     string
		contains []string
		is       error
	}{
		{"under a regular file", filepath.Join(regular, "sub", "x.db"),
			[]string{filepath.Join(regular, "sub", "x.db"), "cannot create: not a directory", "--results"}, nil},
		{"a directory", dir, []string{dir, "is a directory", "--results"}, nil},
		{"not a database", garbage, []string{garbage, "not a SQLite database", "--results"}, nil},
		{"another program's database", foreign, []string{foreign, "not a dblat results database", "--results"}, nil},
		{"newer schema", newer, []string{newer, fmt.Sprintf("schema version %d", SchemaVersion()+1), "upgrade dblat"}, ErrSchemaTooNew},
		{"empty path", "", []string{"no path", "--results"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Open(ctx, tc.path)
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded")
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("error is not one line: %q", msg)
			}
			for _, c := range tc.contains {
				if !strings.Contains(msg, c) {
					t.Errorf("error %q does not contain %q", msg, c)
				}
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %q is not %v", msg, tc.is)
			}
		})
	}
	// Refusing must not have touched anything.
	if b, _ := os.ReadFile(garbage); string(b) != string(garbageText) {
		t.Error("garbage file modified")
	}
	execRaw(t, foreign, "SELECT x FROM theirs")
	if m := journalMode(t, foreign); m != "delete" {
		t.Errorf("foreign database journal_mode changed to %q", m)
	}
	if v := userVersion(t, newer); v != SchemaVersion()+1 {
		t.Errorf("newer database user_version now %d", v)
	}
	execRaw(t, newer, fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion()))
	s, err = Open(ctx, newer)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Get(ctx, r.ID, false); err != nil {
		t.Errorf("run lost after refused open: %v", err)
	}
}

// TestConcurrentWriters drives two Stores on one file (as two processes would) from
// several goroutines at once; SQLite locking must serialise them without errors.
func TestConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	s1, path := openTemp(t)
	s2, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	var wg sync.WaitGroup
	errc := make(chan error, 64)
	for g := range 6 {
		st := []*Store{s1, s2}[g%2]
		wg.Go(func() {
			r := fullRun(t, "conc", "", time.Now())
			if _, err := st.Begin(ctx, &r); err != nil {
				errc <- err
				return
			}
			for range 10 {
				if err := st.AddSamples(ctx, r.ID, samples(1, "", "a", "b")); err != nil {
					errc <- err
					return
				}
				if _, err := st.List(ctx, Filter{Study: "conc"}); err != nil {
					errc <- err
					return
				}
			}
			r.Status = StatusFinished
			errc <- st.Finish(ctx, &r)
		})
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		if err != nil {
			t.Error(err)
		}
	}
	runs, err := s1.List(ctx, Filter{Study: "conc", Status: StatusFinished})
	if err != nil || len(runs) != 6 {
		t.Fatalf("List: %d runs, %v; want 6", len(runs), err)
	}
	for _, r := range runs {
		full, err := s2.Get(ctx, r.ID, true)
		if err != nil || len(full.Samples) != 30 {
			t.Errorf("run %d: %d samples, %v; want 30", r.ID, len(full.Samples), err)
		}
	}
}

// BenchmarkFinish measures Finish of a TPC-C-like run: 5 tx types with histograms and 300
// samples already stored. Begin and AddSamples run outside the timer.
func BenchmarkFinish(b *testing.B) {
	s, _ := openTemp(b)
	ctx := context.Background()
	types := []string{"new_order", "payment", "order_status", "delivery", "stock_level"}
	proto := fullRun(b, "bench", "cell", time.Now())
	proto.Tx = nil
	for _, ty := range types {
		vals := make([]int64, 0, 1000)
		for i := range 1000 {
			vals = append(vals, int64(500+i*37%20000))
		}
		proto.Tx = append(proto.Tx, TxSummary{Type: ty, Committed: 1000, P50Us: 1000, P99Us: 5000,
			Hist: histString(b, vals...), WaitHist: histString(b, 1, 2, 3)})
	}
	batch := samples(10, types...) // 50 rows
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		r := proto
		if _, err := s.Begin(ctx, &r); err != nil {
			b.Fatal(err)
		}
		for range 6 { // 300 samples
			if err := s.AddSamples(ctx, r.ID, batch); err != nil {
				b.Fatal(err)
			}
		}
		r.Status = StatusFinished
		b.StartTimer()
		if err := s.Finish(ctx, &r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAddSamples measures one interval's flush: 6 samples (all types + 5 types).
func BenchmarkAddSamples(b *testing.B) {
	s, _ := openTemp(b)
	ctx := context.Background()
	r := fullRun(b, "bench", "cell", time.Now())
	if _, err := s.Begin(ctx, &r); err != nil {
		b.Fatal(err)
	}
	batch := samples(1, "", "new_order", "payment", "order_status", "delivery", "stock_level")
	b.ReportAllocs()
	for b.Loop() {
		if err := s.AddSamples(ctx, r.ID, batch); err != nil {
			b.Fatal(err)
		}
	}
}

// zeroFields lists the leaf fields of v that hold their zero value, descending into
// structs, the first element of slices, and requiring maps to be non-empty.
func zeroFields(prefix string, v reflect.Value) []string {
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			break
		}
		var out []string
		for i := range v.NumField() {
			out = append(out, zeroFields(prefix+"."+v.Type().Field(i).Name, v.Field(i))...)
		}
		return out
	case reflect.Slice:
		if v.Len() == 0 {
			return []string{prefix}
		}
		return zeroFields(prefix+"[0]", v.Index(0))
	case reflect.Map:
		if v.Len() == 0 {
			return []string{prefix}
		}
		return nil
	}
	if v.IsZero() {
		return []string{prefix}
	}
	return nil
}

// TestRoundTripCoversModel guards against a field added to the model but not to the
// schema: the round-trip fixture must set every field, so a field the store drops fails
// TestRoundTrip. Extend fullRun (and the schema) when this fails.
func TestRoundTripCoversModel(t *testing.T) {
	r := fullRun(t, "study", "cell", time.Now())
	r.ID, r.Status, r.Reason, r.Ended = 1, StatusFinished, "why", time.Now()
	r.Samples = samples(5, "x")[4:]
	if z := zeroFields("Run", reflect.ValueOf(r)); len(z) > 0 {
		t.Errorf("fullRun leaves fields zero, so their storage is untested: %v", z)
	}
}

func TestOddPath(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "a b#c?d%20e", "r?.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := os.Stat(path); err != nil {
		t.Errorf("database not at the literal path: %v", err)
	}
}
