// Package storetest is the conformance suite every results store backend passes: one set
// of tests, run against SQLite and against a managed PostgreSQL by package results' tests,
// so that the two behave alike for everything above them (runner, study resume, reports).
//
// Use it from a _test.go file:
//
//	func TestMain(m *testing.M) { storetest.Child(); os.Exit(m.Run()) }
//	func TestConformance(t *testing.T) { storetest.Run(t, func(t testing.TB) string { … }) }
//
// The suite covers every Store method, its errors, MarkAbandoned, study resume counts,
// Import, exact round trips of every Run field, and concurrent writers: goroutines on
// several Stores and several processes (the test binary re-executed as a child, which is
// what Child is for). It opens stores only through results.Open, by location. It knows
// nothing of either backend; their own tests (schema, paths, DSNs) live in package results.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/dblat/dblat/internal/results"
)

// NewStore returns the location of a new, empty store for t (removed when t ends).
type NewStore func(t testing.TB) string

// Run runs the conformance suite, each test on a fresh store from newStore.
func Run(t *testing.T, newStore NewStore) {
	tests := []struct {
		name string
		fn   func(t *testing.T, loc string)
	}{
		{"RoundTrip", testRoundTrip},
		{"BeginDefaults", testBeginDefaults},
		{"NonFiniteStoredAsZero", testNonFinite},
		{"Errors", testErrors},
		{"List", testList},
		{"MarkAbandoned", testMarkAbandoned},
		{"Studies", testStudies},
		{"CellCounts", testCellCounts},
		{"ConcurrentGoroutines", testConcurrentGoroutines},
		{"ConcurrentProcesses", testConcurrentProcesses},
		{"ConcurrentFirstOpen", testConcurrentFirstOpen},
		{"Import", func(t *testing.T, loc string) { testImport(t, loc, newStore(t)) }},
		{"AgentsAndParts", testAgentsAndParts},
		{"FixtureCoversModel", func(t *testing.T, _ string) { testFixtureCoversModel(t) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newStore(t)) })
	}
}

// Open opens the store at loc for t and closes it when t ends.
func Open(t testing.TB, loc string) results.Store {
	t.Helper()
	s, err := results.Open(context.Background(), loc)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// Write stores r as a run that began, took samples and ended with status, the way the
// runner does, and sets r.ID, r.UID and r.Samples.
func Write(t testing.TB, s results.Store, r *results.Run, status results.Status, samples []results.Sample) {
	t.Helper()
	ctx := context.Background()
	if _, err := s.Begin(ctx, r); err != nil {
		t.Fatalf("Begin: %v", err)
	}
	if len(samples) > 0 {
		if err := s.AddSamples(ctx, r.ID, samples); err != nil {
			t.Fatalf("AddSamples: %v", err)
		}
	}
	r.Samples, r.Status = samples, status
	if status == results.StatusRunning {
		return
	}
	if r.Ended.IsZero() {
		r.Ended = r.Started.Add(r.Params.Duration + time.Second)
	}
	if err := s.Finish(ctx, r); err != nil {
		t.Fatalf("Finish: %v", err)
	}
}

func testRoundTrip(t *testing.T, loc string) {
	s := Open(t, loc)
	base := time.Date(2025, 3, 1, 12, 0, 0, 123456789, time.FixedZone("CET", 3600))

	cases := []struct {
		name    string
		run     func() results.Run
		status  results.Status
		reason  string
		batches [][]results.Sample
	}{
		{
			name:    "full finished run",
			run:     func() results.Run { return FullRun(t, "s1", "pg/tpcc/w10", base) },
			status:  results.StatusFinished,
			batches: [][]results.Sample{Samples(2, "", "new_order"), Samples(3, "payment")},
		},
		{
			name: "failed run, nil maps, no tx, no samples",
			run: func() results.Run {
				return results.Run{Started: base.Add(time.Hour), Params: results.Params{Workload: "tpcc"},
					Server: results.Server{Engine: "postgres"}, Client: results.Client{PID: os.Getpid(), Hostname: "h"}}
			},
			status: results.StatusFailed,
			reason: "connection refused, line 2\nand more",
		},
		{
			name: "aborted run, empty non-nil maps kept distinct from nil",
			run: func() results.Run {
				r := FullRun(t, "s2", "", base.Add(2*time.Hour))
				r.StatsBefore, r.StatsAfter = map[string]float64{}, nil
				r.Params.Mix, r.Params.Options, r.Server.Settings = nil, map[string]string{}, map[string]string{}
				r.Summary.Errors = map[string]int64{}
				r.Link = nil
				return r
			},
			status:  results.StatusAborted,
			reason:  "interrupted",
			batches: [][]results.Sample{Samples(1, "")},
		},
		{
			name:    "more samples in one call than one INSERT takes",
			run:     func() results.Run { return FullRun(t, "s4", "c", base.Add(3*time.Hour)) },
			status:  results.StatusFinished,
			batches: [][]results.Sample{Samples(700, "", "new_order"), Samples(1, "")},
		},
		{
			name: "times before 1970 and to the nanosecond, given UID",
			run: func() results.Run {
				r := FullRun(t, "s3", "c", time.Date(1969, 12, 31, 23, 59, 59, 999999999, time.UTC))
				r.UID = uuid.NewString()
				return r
			},
			status: results.StatusFinished,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			roundTrip(t, s, tc.run(), tc.status, tc.reason, tc.batches)
		})
	}
}

// roundTrip stores r through its whole life (Begin, samples in batches, Finish with status
// and reason) and reads it back, with and without its samples, equal to what was written;
// a second Finish and later samples are refused.
func roundTrip(t *testing.T, s results.Store, r results.Run, status results.Status, reason string, batches [][]results.Sample) {
	ctx := context.Background()
	uid := r.UID
	id, err := s.Begin(ctx, &r)
	if err != nil {
		t.Fatalf("Begin: %v", err)
	}
	if id == 0 || r.ID != id || r.Status != results.StatusRunning {
		t.Fatalf("Begin: id %d, r.ID %d, status %q", id, r.ID, r.Status)
	}
	if uid != "" && r.UID != uid {
		t.Errorf("Begin replaced the given UID %s by %s", uid, r.UID)
	}
	got, err := s.Get(ctx, id, true)
	if err != nil {
		t.Fatalf("Get running: %v", err)
	}
	if got.Status != results.StatusRunning || len(got.Tx) != 0 || !got.Ended.IsZero() || got.UID != r.UID {
		t.Errorf("running run read back as status %q, %d tx, ended %v, uid %q", got.Status, len(got.Tx), got.Ended, got.UID)
	}

	var all []results.Sample
	for _, b := range batches {
		if err := s.AddSamples(ctx, id, b); err != nil {
			t.Fatalf("AddSamples: %v", err)
		}
		all = append(all, b...)
	}
	r.Status, r.Reason = status, reason
	r.Ended = r.Started.Add(r.Params.Duration + time.Second + 1)
	if err := s.Finish(ctx, &r); err != nil {
		t.Fatalf("Finish: %v", err)
	}

	want := r
	want.Samples = all
	got, err = s.Get(ctx, id, true)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if !reflect.DeepEqual(Norm(*got), Norm(want)) {
		t.Errorf("round trip mismatch:\n got %+v\nwant %+v", Norm(*got), Norm(want))
	}
	if got.Started.Location() != time.UTC || got.Ended.Location() != time.UTC {
		t.Errorf("times in %v and %v, want UTC", got.Started.Location(), got.Ended.Location())
	}

	got, err = s.Get(ctx, id, false)
	if err != nil {
		t.Fatalf("Get without samples: %v", err)
	}
	want.Samples, want.Signals = nil, nil
	if !reflect.DeepEqual(Norm(*got), Norm(want)) {
		t.Errorf("Get without samples mismatch:\n got %+v\nwant %+v", Norm(*got), Norm(want))
	}

	// A run ends exactly once, and takes no samples after.
	if err := s.Finish(ctx, &r); err == nil || !strings.Contains(err.Error(), "already "+string(status)) {
		t.Errorf("second Finish: %v, want 'already %s'", err, status)
	}
	if err := s.AddSamples(ctx, id, Samples(1, "")); err == nil {
		t.Error("AddSamples after Finish succeeded")
	}
}

func testBeginDefaults(t *testing.T, loc string) {
	s := Open(t, loc)
	ctx := context.Background()
	r := results.Run{Status: results.StatusFinished, Ended: time.Now()}
	before := time.Now()
	if _, err := s.Begin(ctx, &r); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	if r.Client.PID != os.Getpid() || r.Client.Hostname != host || r.Started.Before(before) ||
		r.Status != results.StatusRunning || !r.Ended.IsZero() {
		t.Errorf("Begin defaults: pid %d host %q started %v status %q ended %v",
			r.Client.PID, r.Client.Hostname, r.Started, r.Status, r.Ended)
	}
	u, err := uuid.Parse(r.UID)
	if err != nil || u.Version() != 4 {
		t.Errorf("Begin set UID %q (%v), want a random UUID", r.UID, err)
	}
	// A UID names one run: beginning another run with it fails and stores nothing.
	dup := results.Run{UID: r.UID}
	if _, err := s.Begin(ctx, &dup); err == nil {
		t.Error("Begin with a stored UID succeeded")
	}
	if dup.UID != r.UID || dup.Status != "" {
		t.Errorf("failed Begin left UID %q status %q", dup.UID, dup.Status)
	}
	fresh := results.Run{}
	if _, err := s.Begin(ctx, &fresh); err != nil || fresh.UID == r.UID || fresh.UID == "" {
		t.Errorf("second Begin: %v, UID %q after %q", err, fresh.UID, r.UID)
	}
	runs, err := s.List(ctx, results.Filter{})
	if err != nil || len(runs) != 2 {
		t.Errorf("List after a refused Begin: %d runs, %v; want 2", len(runs), err)
	}
}

func testNonFinite(t *testing.T, loc string) {
	s := Open(t, loc)
	ctx := context.Background()
	r := FullRun(t, "", "", time.Now())
	if _, err := s.Begin(ctx, &r); err != nil {
		t.Fatal(err)
	}
	nan := func() float64 { var z float64; return z / z }()
	r.Status, r.Summary.TPS, r.StatsAfter["x"], r.Tx[0].MeanUs = results.StatusFinished, nan, nan, nan
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

func testErrors(t *testing.T, loc string) {
	s := Open(t, loc)
	ctx := context.Background()
	r := FullRun(t, "", "", time.Now())
	if _, err := s.Begin(ctx, &r); err != nil {
		t.Fatal(err)
	}
	const missingID = 999_999
	missing := r
	missing.ID, missing.Status = missingID, results.StatusFinished
	name := fmt.Sprintf("run %d", missingID)

	cases := []struct {
		name     string
		err      error
		notFound bool
		contains string
	}{
		{"Get missing", func() error { _, err := s.Get(ctx, missingID, true); return err }(), true, name},
		{"Finish missing", s.Finish(ctx, &missing), true, name},
		{"AddSamples missing", s.AddSamples(ctx, missingID, Samples(1, "")), true, name},
		{"Study missing", func() error { _, err := s.Study(ctx, "nope"); return err }(), true, `"nope"`},
		{"Finish running status", s.Finish(ctx, &r), false, "not an end state"},
		{"Begin nil", func() error { _, err := s.Begin(ctx, nil); return err }(), false, "nil run"},
		{"duplicate tx types", func() error {
			d := r
			d.Status, d.Tx = results.StatusFinished, []results.TxSummary{{Type: "a"}, {Type: "a"}}
			return s.Finish(ctx, &d)
		}(), false, "tx type \"a\""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.err == nil {
				t.Fatal("no error")
			}
			if errors.Is(tc.err, results.ErrNotFound) != tc.notFound {
				t.Errorf("errors.Is(ErrNotFound) = %v, want %v: %v", !tc.notFound, tc.notFound, tc.err)
			}
			if !strings.Contains(tc.err.Error(), tc.contains) {
				t.Errorf("error %q does not contain %q", tc.err, tc.contains)
			}
		})
	}
	// The failed duplicate-type Finish must have changed nothing, and the run can still end.
	got, err := s.Get(ctx, r.ID, false)
	if err != nil || got.Status != results.StatusRunning || len(got.Tx) != 0 {
		t.Fatalf("after failed Finish: %v, %+v", err, got)
	}
	r.Status = results.StatusFinished
	if err := s.Finish(ctx, &r); err != nil {
		t.Errorf("Finish after a failed Finish: %v", err)
	}
}

func testList(t *testing.T, loc string) {
	s := Open(t, loc)
	ctx := context.Background()
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	// Run 5 shares run 4's start time (ties go by id); run 3 began a nanosecond after run 6.
	specs := []struct {
		study, cell string
		status      results.Status
		at          time.Duration
	}{
		{"a", "c1", results.StatusFinished, 1 * time.Hour},
		{"a", "c2", results.StatusFailed, 3 * time.Hour},
		{"b", "c1", results.StatusFinished, 2*time.Hour + 1},
		{"a", "c1", results.StatusRunning, 4 * time.Hour},
		{"", "", results.StatusFinished, 4 * time.Hour},
		{"b", "c1", results.StatusFinished, 2 * time.Hour},
	}
	ids := make([]int64, len(specs))
	for i, sp := range specs {
		r := FullRun(t, sp.study, sp.cell, t0.Add(sp.at))
		Write(t, s, &r, sp.status, Samples(2, ""))
		ids[i] = r.ID
	}
	runs := func(ns ...int) []int64 {
		out := []int64{}
		for _, n := range ns {
			out = append(out, ids[n-1])
		}
		return out
	}
	cases := []struct {
		name string
		f    results.Filter
		want []int64
	}{
		{"all newest first, ties by id", results.Filter{}, runs(5, 4, 2, 3, 6, 1)},
		{"study", results.Filter{Study: "a"}, runs(4, 2, 1)},
		{"study and cell", results.Filter{Study: "a", CellKey: "c1"}, runs(4, 1)},
		{"cell", results.Filter{CellKey: "c1"}, runs(4, 3, 6, 1)},
		{"status", results.Filter{Status: results.StatusFinished}, runs(5, 3, 6, 1)},
		{"running", results.Filter{Status: results.StatusRunning}, runs(4)},
		{"limit", results.Filter{Limit: 2}, runs(5, 4)},
		{"study+status+limit", results.Filter{Study: "b", Status: results.StatusFinished, Limit: 1}, runs(3)},
		{"no match", results.Filter{Study: "zzz"}, runs()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			list, err := s.List(ctx, tc.f)
			if err != nil {
				t.Fatal(err)
			}
			got := []int64{}
			for _, r := range list {
				got = append(got, r.ID)
				if r.Samples != nil {
					t.Errorf("run %d: List returned samples", r.ID)
				}
				wantTx := 3
				if r.Status == results.StatusRunning {
					wantTx = 0
				}
				if len(r.Tx) != wantTx {
					t.Errorf("run %d: %d tx rows, want %d", r.ID, len(r.Tx), wantTx)
				}
				full, err := s.Get(ctx, r.ID, false)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(Norm(*full), Norm(r)) {
					t.Errorf("run %d: List and Get differ", r.ID)
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ids %v, want %v", got, tc.want)
			}
		})
	}
}

// deadPID returns the PID of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=") // not a child: exits at once
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

func testMarkAbandoned(t *testing.T, loc string) {
	ctx := context.Background()
	s := Open(t, loc)
	dead := deadPID(t)
	host, _ := os.Hostname()

	begin := func(s results.Store, pid int, hostname string) int64 {
		r := FullRun(t, "crash", "", time.Now())
		r.Client.PID, r.Client.Hostname = pid, hostname
		Write(t, s, &r, results.StatusRunning, Samples(2, ""))
		return r.ID
	}
	deadHere := begin(s, dead, host)
	alive := begin(s, os.Getpid(), host)
	elsewhere := begin(s, dead, host+"-other-host")
	unknown := begin(s, -1, host)
	s.Close()

	s2 := Open(t, loc) // a restart after the crash: Open marks the dead run
	cases := []struct {
		name   string
		id     int64
		status results.Status
		reason string
	}{
		{"dead process on this host", deadHere, results.StatusAborted, fmt.Sprintf("dblat process %d ended before the run finished", dead)},
		{"live process", alive, results.StatusRunning, ""},
		{"other host", elsewhere, results.StatusRunning, ""},
		{"unknown PID", unknown, results.StatusRunning, ""},
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
	// A run begun after Open whose process then died is marked by a later MarkAbandoned.
	late := begin(s2, dead, host)
	if n, err := s2.MarkAbandoned(ctx); err != nil || n != 1 {
		t.Errorf("MarkAbandoned after a late dead run: %d, %v; want 1", n, err)
	}
	if r, err := s2.Get(ctx, late, false); err != nil || r.Status != results.StatusAborted {
		t.Errorf("late dead run: %v, %+v", err, r)
	}
	// Processes opening the store at once, with several dead runs to mark, all succeed and
	// mark each run once.
	var deads []int64
	for range 3 {
		deads = append(deads, begin(s2, dead, host))
	}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range 4 {
		wg.Go(func() {
			s, err := results.Open(ctx, loc)
			if err != nil {
				errs[i] = err
				return
			}
			defer s.Close()
			_, errs[i] = s.MarkAbandoned(ctx)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("concurrent Open %d: %v", i, err)
		}
	}
	for _, id := range deads {
		if r, err := s2.Get(ctx, id, false); err != nil || r.Status != results.StatusAborted {
			t.Errorf("dead run %d after concurrent opens: %v, %+v", id, err, r)
		}
	}
	// The live run can still finish normally; the aborted one cannot.
	r, err := s2.Get(ctx, alive, false)
	if err != nil {
		t.Fatal(err)
	}
	r.Status = results.StatusFinished
	if err := s2.Finish(ctx, r); err != nil {
		t.Errorf("Finish live run after re-open: %v", err)
	}
	r, err = s2.Get(ctx, deadHere, false)
	if err != nil {
		t.Fatal(err)
	}
	r.Status = results.StatusFinished
	if err := s2.Finish(ctx, r); err == nil || !strings.Contains(err.Error(), "already aborted") {
		t.Errorf("Finish of an abandoned run: %v, want 'already aborted'", err)
	}
}

func testStudies(t *testing.T, loc string) {
	ctx := context.Background()
	s := Open(t, loc)
	if list, err := s.Studies(ctx); err != nil || len(list) != 0 {
		t.Errorf("Studies of an empty store: %v, %v", list, err)
	}
	if _, err := s.Study(ctx, "lat"); !errors.Is(err, results.ErrNotFound) {
		t.Fatalf("missing study: %v", err)
	}
	before := time.Now().Truncate(time.Microsecond)
	st := results.Study{Name: "lat", File: "lat.yaml", Source: "study: lat\n", Factors: []string{"rtt", "terminals"}}
	if err := s.SaveStudy(ctx, st); err != nil {
		t.Fatal(err)
	}
	first, err := s.Study(ctx, "lat")
	if err != nil {
		t.Fatal(err)
	}
	st.Source, st.File = "study: lat\nrepeat: 3\n", "other/lat.yaml"
	if err := s.SaveStudy(ctx, st); err != nil {
		t.Fatal(err)
	}
	got, err := s.Study(ctx, "lat")
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "lat" || got.Source != st.Source || got.File != st.File || !reflect.DeepEqual(got.Factors, st.Factors) {
		t.Errorf("got %+v, want %+v", got, st)
	}
	if !got.Created.Equal(first.Created) || got.Created.Before(before) || got.Updated.Before(got.Created) {
		t.Errorf("created %v (first saved %v, test began %v), updated %v", got.Created, first.Created, before, got.Updated)
	}
	for _, n := range []string{"b", "B", "a-1", "a"} {
		if err := s.SaveStudy(ctx, results.Study{Name: n, Factors: []string{}}); err != nil {
			t.Fatal(err)
		}
	}
	list, err := s.Studies(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, st := range list {
		names = append(names, st.Name)
	}
	if want := []string{"B", "a", "a-1", "b", "lat"}; !slices.Equal(names, want) {
		t.Errorf("Studies: %v, want %v (byte order)", names, want)
	}
	if list[4].Source != st.Source {
		t.Errorf("Studies returned %+v", list[4])
	}
}

func testCellCounts(t *testing.T, loc string) {
	ctx := context.Background()
	s := Open(t, loc)
	for i, spec := range []struct {
		cell   string
		status results.Status
	}{
		{"k1", results.StatusFinished}, {"k1", results.StatusFinished}, {"k1", results.StatusFailed},
		{"k2", results.StatusAborted}, {"k2", results.StatusRunning}, {"k3", results.StatusFinished},
	} {
		r := results.Run{Study: "lat", CellKey: spec.cell, Params: results.Params{Workload: "tpcc"},
			Reason: fmt.Sprint("n", i)}
		Write(t, s, &r, spec.status, nil)
	}
	other := results.Run{Study: "other", CellKey: "k1"}
	Write(t, s, &other, results.StatusFinished, nil)

	counts, err := s.CellCounts(ctx, "lat")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[results.Status]int{
		"k1": {results.StatusFinished: 2, results.StatusFailed: 1},
		"k2": {results.StatusAborted: 1, results.StatusRunning: 1},
		"k3": {results.StatusFinished: 1},
	}
	if !reflect.DeepEqual(counts, want) {
		t.Errorf("counts %v, want %v", counts, want)
	}
	if counts, err := s.CellCounts(ctx, "none"); err != nil || len(counts) != 0 {
		t.Errorf("counts of a study without runs: %v, %v", counts, err)
	}
}

// writeRuns writes n runs of study into cell, each with samples, the way one dblat
// process does.
func writeRuns(ctx context.Context, s results.Store, study, cell string, n int) error {
	for range n {
		r := FullRun(nopTB{}, study, cell, time.Now())
		if _, err := s.Begin(ctx, &r); err != nil {
			return err
		}
		for range 5 {
			if err := s.AddSamples(ctx, r.ID, Samples(1, "", "new_order", "payment")); err != nil {
				return err
			}
			if _, err := s.List(ctx, results.Filter{Study: study, Limit: 3}); err != nil {
				return err
			}
		}
		r.Status = results.StatusFinished
		if err := s.Finish(ctx, &r); err != nil {
			return err
		}
	}
	return nil
}

// checkLanded verifies that study holds exactly runs finished runs per cell, each with
// its 15 samples and a distinct UID.
func checkLanded(t *testing.T, s results.Store, study string, cells []string, runs int) {
	t.Helper()
	ctx := context.Background()
	list, err := s.List(ctx, results.Filter{Study: study})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != len(cells)*runs {
		t.Errorf("%d runs stored, want %d", len(list), len(cells)*runs)
	}
	uids := map[string]bool{}
	for _, r := range list {
		if r.Status != results.StatusFinished {
			t.Errorf("run %d is %s", r.ID, r.Status)
		}
		if uids[r.UID] {
			t.Errorf("UID %s stored twice", r.UID)
		}
		uids[r.UID] = true
		full, err := s.Get(ctx, r.ID, true)
		if err != nil || len(full.Samples) != 15 || len(full.Tx) != 3 {
			t.Errorf("run %d: %v, %d samples, %d tx; want 15 and 3", r.ID, err, len(full.Samples), len(full.Tx))
		}
	}
	counts, err := s.CellCounts(ctx, study)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[results.Status]int{}
	for _, c := range cells {
		want[c] = map[results.Status]int{results.StatusFinished: runs}
	}
	if !reflect.DeepEqual(counts, want) {
		t.Errorf("cell counts %v, want %v", counts, want)
	}
}

func testConcurrentGoroutines(t *testing.T, loc string) {
	const writers, runs = 8, 2
	ctx := context.Background()
	stores := []results.Store{Open(t, loc), Open(t, loc)} // two handles, as two processes
	var wg sync.WaitGroup
	errs := make([]error, writers)
	cells := make([]string, writers)
	for g := range writers {
		cells[g] = fmt.Sprint("g", g)
		wg.Go(func() {
			errs[g] = writeRuns(ctx, stores[g%2], "conc", cells[g], runs)
		})
	}
	wg.Wait()
	for g, err := range errs {
		if err != nil {
			t.Errorf("writer %d: %v", g, err)
		}
	}
	checkLanded(t, stores[0], "conc", cells, runs)
}

// childEnv carries a child process's job (a JSON childJob) from testConcurrentProcesses.
const childEnv = "DBLAT_STORETEST_CHILD"

type childJob struct {
	Location string `json:"location"`
	Study    string `json:"study"`
	Cell     string `json:"cell"`
	Runs     int    `json:"runs"`
}

// Child does a child process's writes and exits, when this process was started as one by
// the suite's multi-process test; otherwise it returns at once. Call it first in TestMain.
func Child() {
	v, ok := os.LookupEnv(childEnv)
	if !ok {
		return
	}
	if v == "" {
		os.Exit(0)
	}
	var job childJob
	if err := json.Unmarshal([]byte(v), &job); err != nil {
		fmt.Fprintln(os.Stderr, "storetest child:", err)
		os.Exit(1)
	}
	ctx := context.Background()
	s, err := results.Open(ctx, job.Location)
	if err != nil {
		fmt.Fprintln(os.Stderr, "storetest child:", err)
		os.Exit(1)
	}
	err = writeRuns(ctx, s, job.Study, job.Cell, job.Runs)
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "storetest child:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func testConcurrentProcesses(t *testing.T, loc string) {
	const procs, runs = 4, 3
	s := Open(t, loc) // the schema exists before the children race to write
	cells := make([]string, procs)
	cmds := make([]*exec.Cmd, procs)
	outs := make([]strings.Builder, procs)
	for i := range procs {
		cells[i] = fmt.Sprint("p", i)
		job, err := json.Marshal(childJob{Location: loc, Study: "procs", Cell: cells[i], Runs: runs})
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+string(job))
		cmd.Stdout, cmd.Stderr = &outs[i], &outs[i]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i] = cmd
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("child %d: %v\n%s", i, err, outs[i].String())
		}
	}
	checkLanded(t, s, "procs", cells, runs)
}

func testConcurrentFirstOpen(t *testing.T, loc string) {
	const openers = 4
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make([]error, openers)
	for i := range openers {
		wg.Go(func() {
			s, err := results.Open(ctx, loc)
			if err != nil {
				errs[i] = err
				return
			}
			defer s.Close()
			r := results.Run{Study: "first", CellKey: fmt.Sprint(i)}
			if _, err := s.Begin(ctx, &r); err != nil {
				errs[i] = err
				return
			}
			r.Status = results.StatusFinished
			errs[i] = s.Finish(ctx, &r)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("opener %d: %v", i, err)
		}
	}
	s := Open(t, loc)
	if list, err := s.List(ctx, results.Filter{Study: "first"}); err != nil || len(list) != openers {
		t.Errorf("List: %d runs, %v; want %d", len(list), err, openers)
	}
}

func testImport(t *testing.T, loc, dstLoc string) {
	ctx := context.Background()
	src := Open(t, loc)
	var want []results.Run
	for i, status := range []results.Status{results.StatusFinished, results.StatusFailed, results.StatusAborted, results.StatusFinished} {
		r := FullRun(t, "imp", fmt.Sprint("c", i%2), time.Date(2025, 5, 1, 0, i, 0, i, time.UTC))
		Write(t, src, &r, status, Samples(i+1, "", "payment"))
		want = append(want, r)
	}
	running := FullRun(t, "imp", "c0", time.Now())
	Write(t, src, &running, results.StatusRunning, Samples(1, ""))
	driven := writeDriven(t, src)
	if err := src.SaveStudy(ctx, results.Study{Name: "imp", File: "imp.yaml", Source: "v1", Factors: []string{"rtt"}}); err != nil {
		t.Fatal(err)
	}

	// The destination: a second store of the same backend, with a run of its own.
	dst := Open(t, dstLoc)
	own := FullRun(t, "own", "x", time.Now())
	Write(t, dst, &own, results.StatusFinished, nil)
	if st, err := results.Import(ctx, dst, src); err != nil ||
		st != (results.ImportStats{Runs: 5, RunsSkipped: 1, Studies: 1}) {
		t.Fatalf("first Import: %+v, %v", st, err)
	}
	if st, err := results.Import(ctx, dst, src); err != nil ||
		st != (results.ImportStats{RunsPresent: 5, RunsSkipped: 1, StudiesPresent: 1}) {
		t.Fatalf("second Import: %+v, %v", st, err)
	}
	got, err := dst.List(ctx, results.Filter{Study: "imp"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d runs imported, want %d", len(got), len(want))
	}
	slices.Reverse(got)
	for i := range want {
		full, err := dst.Get(ctx, got[i].ID, true)
		if err != nil {
			t.Fatal(err)
		}
		w := want[i]
		w.ID = full.ID // IDs are the destination's
		if !reflect.DeepEqual(Norm(*full), Norm(w)) {
			t.Errorf("imported run %d differs:\n got %+v\nwant %+v", i, Norm(*full), Norm(w))
		}
	}
	if list, err := dst.List(ctx, results.Filter{Study: "own"}); err != nil || len(list) != 1 {
		t.Errorf("destination's own run: %v, %v", list, err)
	}
	// A run that agents drove comes with its parts.
	copied, err := dst.List(ctx, results.Filter{Study: "imp-agents"})
	if err != nil || len(copied) != 1 {
		t.Fatalf("imported agents' run: %v, %v", copied, err)
	}
	wantParts, _ := src.Parts(ctx, driven)
	gotParts, err := dst.Parts(ctx, copied[0].ID)
	if err != nil || len(gotParts) != len(wantParts) {
		t.Fatalf("imported parts: %+v, %v; want %d", gotParts, err, len(wantParts))
	}
	for i := range wantParts {
		wantParts[i].RunID = copied[0].ID
		if !reflect.DeepEqual(normPart(gotParts[i]), normPart(wantParts[i])) {
			t.Errorf("imported part %d:\n got %+v\nwant %+v", i, gotParts[i], wantParts[i])
		}
	}
	st, err := dst.Study(ctx, "imp")
	if err != nil || st.Source != "v1" {
		t.Fatalf("imported study: %+v, %v", st, err)
	}
	srcStudy, _ := src.Study(ctx, "imp")
	if !st.Created.Equal(srcStudy.Created) || !st.Updated.Equal(srcStudy.Updated) {
		t.Errorf("imported study times %v %v, want the source's %v %v", st.Created, st.Updated, srcStudy.Created, srcStudy.Updated)
	}

	// A study the source saved again later replaces the destination's; one the destination
	// saved later is kept. The running run, now ended, comes over on the next import.
	time.Sleep(2 * time.Microsecond) // study times are kept to the microsecond
	if err := src.SaveStudy(ctx, results.Study{Name: "imp", File: "imp.yaml", Source: "v2", Factors: []string{"rtt"}}); err != nil {
		t.Fatal(err)
	}
	running.Status = results.StatusFinished
	if err := src.Finish(ctx, &running); err != nil {
		t.Fatal(err)
	}
	if st, err := results.Import(ctx, dst, src); err != nil ||
		st != (results.ImportStats{Runs: 1, RunsPresent: 5, Studies: 1}) {
		t.Fatalf("third Import: %+v, %v", st, err)
	}
	if st, err := dst.Study(ctx, "imp"); err != nil || st.Source != "v2" || !st.Created.Equal(srcStudy.Created) {
		t.Errorf("updated study: %+v, %v (created %v)", st, err, srcStudy.Created)
	}
	time.Sleep(2 * time.Microsecond)
	if err := dst.SaveStudy(ctx, results.Study{Name: "imp", Source: "v3-dst"}); err != nil {
		t.Fatal(err)
	}
	if st, err := results.Import(ctx, dst, src); err != nil ||
		st != (results.ImportStats{RunsPresent: 6, StudiesPresent: 1}) {
		t.Fatalf("fourth Import: %+v, %v", st, err)
	}
	if st, err := dst.Study(ctx, "imp"); err != nil || st.Source != "v3-dst" {
		t.Errorf("study saved later in the destination replaced: %+v, %v", st, err)
	}
	// Importing a store into itself finds everything there.
	if st, err := results.Import(ctx, src, src); err != nil || st.Runs != 0 || st.RunsPresent != 6 {
		t.Errorf("self Import: %+v, %v", st, err)
	}
}

func testFixtureCoversModel(t *testing.T) {
	r := FullRun(t, "study", "cell", time.Now())
	r.ID, r.UID, r.Status, r.Reason, r.Ended = 1, "u", results.StatusFinished, "why", time.Now()
	r.Samples = Samples(5, "x")[4:]
	// A stored run's FirstTerminal is 0: only an agent's part of a run (spec.Run.Stored
	// clears it) numbers its terminals from elsewhere.
	z := slices.DeleteFunc(ZeroFields("Run", reflect.ValueOf(r)), func(f string) bool { return f == "Run.Params.Drive.FirstTerminal" })
	if len(z) > 0 {
		t.Errorf("FullRun leaves fields zero, so their storage is untested: %v", z)
	}
}

// nopTB lets FullRun be called where no test is at hand (a child process): its histograms
// cannot fail to encode.
type nopTB struct{ testing.TB }

func (nopTB) Helper()                           {}
func (nopTB) Fatal(args ...any)                 { panic(fmt.Sprint(args...)) }
func (nopTB) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }

// testAgentsAndParts: agents join and heart-beat; parts are assigned atomically to idle,
// fresh agents only; a part moves forward only and is written once.
// writeDriven stores a finished run of study "imp-agents" that two agents drove, one part
// done and one failed, and returns its ID.
func writeDriven(t *testing.T, s results.Store) int64 {
	t.Helper()
	ctx := context.Background()
	for _, name := range []string{"i1", "i2"} {
		if err := s.JoinAgent(ctx, results.Agent{Name: name, Hostname: "h-" + name, PID: 7}); err != nil {
			t.Fatal(err)
		}
	}
	r := FullRun(t, "imp-agents", "c", time.Date(2025, 5, 1, 1, 0, 0, 0, time.UTC))
	r.Agents = 2
	Write(t, s, &r, results.StatusRunning, nil)
	if err := s.AssignParts(ctx, r.ID, []results.Part{{Agent: "i1", Assignment: `{"terminals":2}`}, {Agent: "i2", Assignment: `{"terminals":3}`}}, time.Minute); err != nil {
		t.Fatal(err)
	}
	for _, a := range []string{"i1", "i2"} {
		if _, err := s.AdvancePart(ctx, results.Part{RunID: r.ID, Agent: a, State: results.PartReady, ClockOffset: 2 * time.Millisecond}); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now().Add(time.Second).Truncate(time.Microsecond)
	if err := s.AnnounceStart(ctx, r.ID, start); err != nil {
		t.Fatal(err)
	}
	res := FullRun(t, "", "", start)
	res.Samples = Samples(2, "")
	for _, p := range []results.Part{
		{RunID: r.ID, Agent: "i1", State: results.PartRunning, Started: start.Add(time.Millisecond)},
		{RunID: r.ID, Agent: "i1", State: results.PartDone, Result: &res},
		{RunID: r.ID, Agent: "i2", State: results.PartFailed, Reason: "lost"},
	} {
		if ok, err := s.AdvancePart(ctx, p); !ok || err != nil {
			t.Fatalf("advance %s to %s: %v, %v", p.Agent, p.State, ok, err)
		}
	}
	r.Status = results.StatusFinished
	if err := s.Finish(ctx, &r); err != nil {
		t.Fatal(err)
	}
	return r.ID
}

// normPart makes a part comparable across stores: its result normalised as Norm does, and
// its assignment's JSON spaced one way (PostgreSQL's jsonb respaces it).
func normPart(p results.Part) results.Part {
	if p.Result != nil {
		r := Norm(*p.Result)
		p.Result = &r
	}
	p.Assignment = strings.ReplaceAll(p.Assignment, " ", "")
	return p
}

func testAgentsAndParts(t *testing.T, loc string) {
	s := Open(t, loc)
	ctx := context.Background()
	now, err := s.Clock(ctx)
	if err != nil || time.Until(now).Abs() > time.Minute {
		t.Fatalf("Clock: %v, %v (this machine: %v)", now, err, time.Now())
	}
	for _, name := range []string{"a2", "a1", "a3"} {
		if err := s.JoinAgent(ctx, results.Agent{Name: name, Hostname: "h-" + name, PID: 7}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Heartbeat(ctx, "a1"); err != nil {
		t.Error(err)
	}
	// A live agent's name is its own: another process is refused, the same one rejoins.
	if err := s.JoinAgent(ctx, results.Agent{Name: "a1", Hostname: "elsewhere", PID: 8}); !errors.Is(err, results.ErrAgentNameTaken) ||
		!strings.Contains(err.Error(), "h-a1, PID 7") {
		t.Errorf("joining under a live agent's name: %v", err)
	}
	if err := s.JoinAgent(ctx, results.Agent{Name: "a1", Hostname: "h-a1", PID: 7}); err != nil {
		t.Errorf("rejoining from the same process: %v", err)
	}
	if err := s.Heartbeat(ctx, "nobody"); !errors.Is(err, results.ErrNotFound) {
		t.Errorf("heartbeat of an unknown agent: %v", err)
	}
	agents, err := s.Agents(ctx)
	if err != nil || len(agents) != 3 || agents[0].Name != "a1" || agents[0].Hostname != "h-a1" || agents[0].Heartbeat.IsZero() {
		t.Fatalf("Agents: %+v, %v", agents, err)
	}
	r := FullRun(t, "", "", time.Now())
	Write(t, s, &r, results.StatusRunning, nil)
	parts := []results.Part{{Agent: "a1", Assignment: `{"terminals":2}`}, {Agent: "a2", Assignment: `{"terminals":3}`}}
	if err := s.AssignParts(ctx, r.ID, parts, time.Minute); err != nil {
		t.Fatal(err)
	}
	// a1 is busy now: a second run gets neither a3 nor a1.
	r2 := FullRun(t, "", "", time.Now())
	Write(t, s, &r2, results.StatusRunning, nil)
	if err := s.AssignParts(ctx, r2.ID, []results.Part{{Agent: "a3", Assignment: "{}"}, {Agent: "a1", Assignment: "{}"}}, time.Minute); !errors.Is(err, results.ErrAgentBusy) {
		t.Errorf("assigning a busy agent: %v", err)
	}
	if p, err := s.AgentPart(ctx, "a3"); p != nil || err != nil {
		t.Errorf("a3 got a part from a refused assignment: %+v, %v", p, err)
	}
	// A stale agent is not assigned either.
	if err := s.AssignParts(ctx, r2.ID, []results.Part{{Agent: "a3", Assignment: "{}"}}, -time.Hour); !errors.Is(err, results.ErrAgentBusy) {
		t.Errorf("assigning a stale agent: %v", err)
	}
	p, err := s.AgentPart(ctx, "a2")
	if err != nil || p == nil || p.RunID != r.ID || p.Index != 1 || p.State != results.PartAssigned || p.Assignment != `{"terminals": 3}` && p.Assignment != `{"terminals":3}` {
		t.Fatalf("AgentPart: %+v, %v", p, err)
	}
	if err := s.AnnounceStart(ctx, r.ID, now); err == nil {
		t.Error("a start announced before the parts were ready")
	}
	for i, a := range []string{"a1", "a2"} {
		if ok, err := s.AdvancePart(ctx, results.Part{RunID: r.ID, Agent: a, State: results.PartReady, ClockOffset: time.Duration(i+1) * time.Millisecond}); !ok || err != nil {
			t.Fatalf("ready: %v, %v", ok, err)
		}
	}
	start := now.Add(time.Second).Truncate(time.Microsecond)
	if err := s.AnnounceStart(ctx, r.ID, start); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.AdvancePart(ctx, results.Part{RunID: r.ID, Agent: "a1", State: results.PartRunning, Started: start.Add(300 * time.Microsecond)}); !ok || err != nil {
		t.Fatalf("running: %v, %v", ok, err)
	}
	res := FullRun(t, "", "", start)
	res.Samples = Samples(3, "")
	for range 2 { // a retry writes nothing
		ok, err := s.AdvancePart(ctx, results.Part{RunID: r.ID, Agent: "a1", State: results.PartDone, Result: &res})
		if err != nil {
			t.Fatal(err)
		}
		res.Summary.Committed++ // a second write would show
		_ = ok
	}
	if ok, err := s.AdvancePart(ctx, results.Part{RunID: r.ID, Agent: "a2", State: results.PartFailed, Reason: "lost"}); !ok || err != nil {
		t.Fatalf("failed: %v, %v", ok, err)
	}
	if ok, _ := s.AdvancePart(ctx, results.Part{RunID: r.ID, Agent: "a2", State: results.PartRunning}); ok {
		t.Error("a failed part moved back to running")
	}
	got, err := s.Parts(ctx, r.ID)
	if err != nil || len(got) != 2 {
		t.Fatalf("Parts: %+v, %v", got, err)
	}
	if g := got[0]; g.Agent != "a1" || g.State != results.PartDone || g.ClockOffset != time.Millisecond || !g.StartAt.Equal(start) ||
		!g.Started.Equal(start.Add(300*time.Microsecond)) || g.Result == nil || g.Result.Summary.Committed != res.Summary.Committed-2 ||
		len(g.Result.Samples) != 3 {
		t.Errorf("part 0: %+v", g)
	}
	if g := got[1]; g.State != results.PartFailed || g.Reason != "lost" || g.Result != nil {
		t.Errorf("part 1: %+v", g)
	}
	agents, _ = s.Agents(ctx)
	for _, a := range agents {
		if a.RunID != 0 {
			t.Errorf("agent %s still holds run %d after its part ended", a.Name, a.RunID)
		}
	}
	if err := s.LeaveAgent(ctx, "a3"); err != nil {
		t.Error(err)
	}
	if agents, _ = s.Agents(ctx); len(agents) != 2 {
		t.Errorf("%d agents after one left, want 2", len(agents))
	}
}
