package results_test

// Tests that the two backends agree: the same runs written to SQLite and to PostgreSQL read
// back equal, render the same report, fill the views with the same rows and answer the
// documented example queries alike; and Import copies between them once.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
	"github.com/dblat/dblat/internal/report"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/results/storetest"
	"github.com/dblat/dblat/internal/spec"
)

// fixtureStudy is the name the documented example queries use.
const fixtureStudy = "quickstart-latency"

var (
	fixtureRTTs    = []time.Duration{0, time.Millisecond, 5 * time.Millisecond}
	fixtureTerms   = []int{1, 4}
	fixtureRepeats = 2
	fixtureTypes   = []string{"new_order", "payment", "order_status", "delivery", "stock_level"}
	// fixtureOddRun is the index of the finished run whose server ran with another
	// shared_buffers, the one the third example query finds.
	fixtureOddRun = 5
)

// studyFixture returns the runs of a small latency study, in the order a study runs them:
// RTT × terminals × repeats, all finished, then one failed and one aborted run. Figures
// come from a seeded random stream; each transaction type has a histogram of 100 values.
func studyFixture(t testing.TB) ([]results.Run, []results.Status) {
	rng := rand.New(rand.NewPCG(1, 2))
	start := time.Date(2026, 2, 1, 9, 0, 0, 0, time.UTC)
	var runs []results.Run
	var statuses []results.Status
	add := func(rtt time.Duration, terms int, status results.Status) {
		cell := fmt.Sprintf("rtt=%s/terminals=%d", spec.FormatDuration(rtt), terms)
		r := storetest.FullRun(t, fixtureStudy, cell, start.Add(time.Duration(len(runs))*7*time.Minute+time.Duration(rng.IntN(1000))))
		r.Params.RTT, r.Params.Terminals, r.Params.Connections, r.Params.Scale = rtt, terms, terms, 1
		r.Link.RTT, r.Link.Up, r.Link.Down = rtt, rtt/2, rtt/2
		r.Link.AchievedP50 = rtt + time.Duration(rng.IntN(50_000))
		r.Link.AchievedP99 = r.Link.AchievedP50 + time.Duration(rng.IntN(100_000))
		r.Server.Settings = map[string]string{"shared_buffers": "16384", "max_connections": "100"}
		if len(runs) == fixtureOddRun {
			r.Server.Settings["shared_buffers"] = "131072"
		}
		r.Summary.NOPM = float64(terms) * 1000 / (1 + float64(rtt)/float64(time.Millisecond)) * (0.9 + 0.2*rng.Float64())
		r.Summary.TPS = r.Summary.NOPM / 60 * 2.2
		r.Summary.TPM = r.Summary.TPS * 60
		r.Tx = nil
		for i, typ := range fixtureTypes {
			base := int64(500*(i+1)) + 14*rtt.Microseconds()
			vals := make([]int64, 100)
			for j := range vals {
				vals[j] = base + rng.Int64N(base)
			}
			s := slices.Sorted(slices.Values(vals))
			r.Tx = append(r.Tx, results.TxSummary{Type: typ, Committed: int64(1000 + rng.IntN(1000)), Rollbacks: int64(rng.IntN(10)),
				MeanUs: float64(base) * 1.5, P50Us: s[49], P90Us: s[89], P95Us: s[94], P99Us: s[98], P999Us: s[99], MaxUs: s[99],
				RoundTrips: 14.5, RoundTripsP50: 14, RoundTripsP99: 20, BytesUp: 1500, BytesDown: 3000, WritesUp: 14,
				Hist: storetest.Hist(t, vals...), WaitHist: storetest.Hist(t, 1, 2)})
		}
		runs = append(runs, r)
		statuses = append(statuses, status)
	}
	for _, rtt := range fixtureRTTs {
		for _, terms := range fixtureTerms {
			for range fixtureRepeats {
				add(rtt, terms, results.StatusFinished)
			}
		}
	}
	add(5*time.Millisecond, 4, results.StatusFailed)
	add(0, 1, results.StatusAborted)
	return runs, statuses
}

// writeFixture writes the study's runs and definition to s and returns the runs as written.
func writeFixture(t *testing.T, s results.Store) []results.Run {
	t.Helper()
	runs, statuses := studyFixture(t)
	for i := range runs {
		storetest.Write(t, s, &runs[i], statuses[i], storetest.Samples(3, "", "new_order"))
		runs[i].Samples = nil
	}
	if err := s.SaveStudy(context.Background(), results.Study{Name: fixtureStudy, File: "examples/quickstart.yaml",
		Source: "study: quickstart-latency\n", Factors: []string{results.FactorRTT, results.FactorTerminals}}); err != nil {
		t.Fatal(err)
	}
	return runs
}

// bothStores returns a fresh SQLite and a fresh PostgreSQL store holding the fixture.
func bothStores(t *testing.T) (sqlite, pg results.Store) {
	t.Helper()
	sqlite = storetest.Open(t, backends[0].newStore(t))
	pg = storetest.Open(t, backends[1].newStore(t))
	writeFixture(t, sqlite)
	writeFixture(t, pg)
	return sqlite, pg
}

func TestSchemaStepsAgree(t *testing.T) {
	sq, pg := results.StepVersions()
	increasing := func(v []int) bool {
		for i := 1; i < len(v); i++ {
			if v[i] <= v[i-1] {
				return false
			}
		}
		return len(v) > 0
	}
	for i, v := range sq {
		if v != i+1 { // Open applies sqliteSteps[user_version:]
			t.Errorf("SQLite step %d has version %d, want %d", i, v, i+1)
		}
	}
	if !increasing(sq) || !increasing(pg) {
		t.Errorf("steps not in order: SQLite %v, PostgreSQL %v", sq, pg)
	}
	if sq[len(sq)-1] != results.SchemaVersion() || pg[len(pg)-1] != results.SchemaVersion() {
		t.Errorf("last steps: SQLite %d, PostgreSQL %d; both must be SchemaVersion %d",
			sq[len(sq)-1], pg[len(pg)-1], results.SchemaVersion())
	}
}

// TestBackendsAgree writes the same study to both backends: List, Get, CellCounts and Study
// return equal results, and every report format renders byte for byte the same.
func TestBackendsAgree(t *testing.T) {
	ctx := context.Background()
	sq, pg := bothStores(t)
	lists := make([][]results.Run, 2)
	for i, s := range []results.Store{sq, pg} {
		list, err := s.List(ctx, results.Filter{Study: fixtureStudy})
		if err != nil {
			t.Fatal(err)
		}
		lists[i] = list
	}
	if len(lists[0]) != len(lists[1]) || len(lists[0]) == 0 {
		t.Fatalf("List: %d runs from SQLite, %d from PostgreSQL", len(lists[0]), len(lists[1]))
	}
	for i := range lists[0] {
		a, b := storetest.Norm(lists[0][i]), storetest.Norm(lists[1][i])
		if a.UID == b.UID {
			t.Errorf("run %d has the same UID in two stores it was written to apart", i)
		}
		b.ID, b.UID = a.ID, a.UID // the stores' own identities
		if !reflect.DeepEqual(a, b) {
			t.Errorf("List run %d differs:\nSQLite     %+v\nPostgreSQL %+v", i, a, b)
		}
		ga, err := sq.Get(ctx, lists[0][i].ID, true)
		if err != nil {
			t.Fatal(err)
		}
		gb, err := pg.Get(ctx, lists[1][i].ID, true)
		if err != nil {
			t.Fatal(err)
		}
		gb.ID, gb.UID = ga.ID, ga.UID
		if !reflect.DeepEqual(storetest.Norm(*ga), storetest.Norm(*gb)) || len(ga.Samples) == 0 {
			t.Errorf("Get run %d differs or has no samples", i)
		}
	}
	ca, err := sq.CellCounts(ctx, fixtureStudy)
	if err != nil {
		t.Fatal(err)
	}
	cb, err := pg.CellCounts(ctx, fixtureStudy)
	if err != nil || !reflect.DeepEqual(ca, cb) {
		t.Errorf("CellCounts differ: %v, %v (%v)", ca, cb, err)
	}
	sa, err := sq.Study(ctx, fixtureStudy)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := pg.Study(ctx, fixtureStudy)
	if err != nil {
		t.Fatal(err)
	}
	sa.Created, sa.Updated, sb.Created, sb.Updated = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	if !reflect.DeepEqual(sa, sb) {
		t.Errorf("Study differs: %+v, %+v", sa, sb)
	}

	// The report of either store is the same, in every format.
	render := func(s results.Store) map[string][]byte {
		rec, err := s.Study(ctx, fixtureStudy)
		if err != nil {
			t.Fatal(err)
		}
		runs, err := s.List(ctx, results.Filter{Study: rec.Name})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := report.Build(report.Input{Study: rec.Name, Factors: rec.Factors, Source: rec.Source, Runs: runs})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string][]byte{}
		for _, format := range []string{"text", "json", "csv", "html"} {
			var b bytes.Buffer
			if err := report.Write(&b, rep, format); err != nil {
				t.Fatal(err)
			}
			out[format] = b.Bytes()
		}
		return out
	}
	ra, rb := render(sq), render(pg)
	for format, a := range ra {
		if len(a) == 0 || !bytes.Equal(a, rb[format]) {
			t.Errorf("%s report differs between SQLite (%d bytes) and PostgreSQL (%d bytes)", format, len(a), len(rb[format]))
		}
	}
	if !bytes.Contains(ra["text"], []byte(fixtureStudy)) {
		t.Errorf("text report does not name the study:\n%s", ra["text"])
	}
}

// queryRows runs query on s and returns its rows with values normalised so that the two
// backends' representations compare: booleans as 0/1, numbers as float64, times as UTC
// text to the microsecond, JSON as canonical text.
func queryRows(t *testing.T, s results.Store, query string) [][]any {
	t.Helper()
	rows, err := results.DBOf(s).QueryContext(context.Background(), query)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out [][]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		for i, v := range vals {
			vals[i] = normValue(v)
		}
		out = append(out, vals)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func normValue(v any) any {
	switch v := v.(type) {
	case bool:
		if v {
			return 1.0
		}
		return 0.0
	case int64:
		return float64(v)
	case time.Time:
		return v.UTC().Truncate(time.Microsecond).Format(time.RFC3339Nano)
	case []byte:
		return normValue(string(v))
	case string:
		if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
			return normValue(t)
		}
		if strings.HasPrefix(v, "{") || strings.HasPrefix(v, "[") {
			var j any
			if json.Unmarshal([]byte(v), &j) == nil {
				b, _ := json.Marshal(j) // sorted keys, one spacing
				return string(b)
			}
		}
	}
	return v
}

// sameRows compares normalised rows, floats to a relative 1e-12 (sums and averages may
// add in another order).
func sameRows(a, b [][]any) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
		for j := range a[i] {
			x, xok := a[i][j].(float64)
			y, yok := b[i][j].(float64)
			if xok && yok {
				if math.Abs(x-y) > 1e-12*math.Max(math.Abs(x), math.Abs(y)) {
					return false
				}
				continue
			}
			if !reflect.DeepEqual(a[i][j], b[i][j]) {
				return false
			}
		}
	}
	return true
}

// TestViewsAgree reads every view from both backends: the same rows, whose figures are
// the runs' in the units the columns name.
func TestViewsAgree(t *testing.T) {
	sq, pg := bothStores(t)
	views := map[string]string{
		"run_figures":        "id",
		"run_tx_percentiles": "run_id, type",
		"run_settings":       "run_id, name",
		"run_options":        "run_id, name",
	}
	got := map[string][][]any{}
	for view, order := range views {
		t.Run(view, func(t *testing.T) {
			q := "SELECT * FROM " + view + " ORDER BY " + order
			a, b := queryRows(t, sq, q), queryRows(t, pg, q)
			if len(a) == 0 {
				t.Fatal("no rows")
			}
			// uid differs between stores written apart: compare the rest.
			if view == "run_figures" {
				for _, rows := range [][][]any{a, b} {
					for _, r := range rows {
						r[1] = nil
					}
				}
			}
			if !sameRows(a, b) {
				t.Errorf("rows differ:\nSQLite     %v\nPostgreSQL %v", a, b)
			}
			got[view] = a
		})
	}

	ctx := context.Background()
	runs, err := sq.List(ctx, results.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(runs) // by id, as the views were read
	cols := func(s results.Store, view string) map[string]int {
		rows, err := results.DBOf(s).QueryContext(ctx, "SELECT * FROM "+view+" WHERE 1 = 0")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		names, _ := rows.Columns()
		m := map[string]int{}
		for i, n := range names {
			m[n] = i
		}
		return m
	}
	fc := cols(sq, "run_figures")
	if pc := cols(pg, "run_figures"); !reflect.DeepEqual(fc, pc) {
		t.Errorf("run_figures columns differ: %v, %v", fc, pc)
	}
	figures := got["run_figures"]
	if len(figures) != len(runs) {
		t.Fatalf("run_figures: %d rows for %d runs", len(figures), len(runs))
	}
	for i, r := range runs {
		row := figures[i]
		var errs float64
		for _, n := range r.Summary.Errors {
			errs += float64(n)
		}
		want := map[string]any{
			"id": float64(r.ID), "status": string(r.Status), "terminals": float64(r.Params.Terminals),
			"warehouses": float64(r.Params.Scale), "think": 1.0,
			"rtt_ms": float64(r.Params.RTT) / 1e6, "duration_s": r.Params.Duration.Seconds(),
			"elapsed_s": r.Summary.Elapsed.Seconds(), "nopm": r.Summary.NOPM, "tps": r.Summary.TPS,
			"link_kind": r.Link.Kind, "link_rtt_p50_ms": float64(r.Link.AchievedP50) / 1e6,
			"link_rtt_p99_ms": float64(r.Link.AchievedP99) / 1e6, "errors": errs,
		}
		for col, w := range want {
			if !sameRows([][]any{{row[fc[col]]}}, [][]any{{w}}) {
				t.Errorf("run %d: run_figures.%s = %v, want %v", r.ID, col, row[fc[col]], w)
			}
		}
	}
	tc := cols(sq, "run_tx_percentiles")
	byKey := map[string][]any{}
	for _, row := range got["run_tx_percentiles"] {
		byKey[fmt.Sprint(row[tc["run_id"]], row[tc["type"]])] = row
	}
	n := 0
	for _, r := range runs {
		for _, tx := range r.Tx {
			row, ok := byKey[fmt.Sprint(float64(r.ID), tx.Type)]
			n++
			if !ok || row[tc["p99_ms"]] != float64(tx.P99Us)/1e3 ||
				row[tc["p999_ms"]] != float64(tx.P999Us)/1e3 || row[tc["mean_ms"]] != tx.MeanUs/1e3 ||
				!sameRows([][]any{{row[tc["tps"]]}}, [][]any{{float64(tx.Committed+tx.Rollbacks) / r.Summary.Elapsed.Seconds()}}) {
				t.Errorf("run %d %s: run_tx_percentiles row %v", r.ID, tx.Type, row)
			}
		}
	}
	if n != len(got["run_tx_percentiles"]) {
		t.Errorf("run_tx_percentiles: %d rows, want %d", len(got["run_tx_percentiles"]), n)
	}
}

// docQueries returns the SQL blocks of docs/results-schema.md.
func docQueries(t *testing.T) []string {
	t.Helper()
	doc, err := os.ReadFile("../../docs/results-schema.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range regexp.MustCompile("(?s)```sql\n(.*?)```").FindAllStringSubmatch(string(doc), -1) {
		out = append(out, m[1])
	}
	return out
}

// TestDocQueries runs the example queries of docs/results-schema.md on both backends: they
// run unchanged, agree, and answer what the document says they answer.
func TestDocQueries(t *testing.T) {
	queries := docQueries(t)
	if len(queries) != 3 {
		t.Fatalf("docs/results-schema.md has %d sql blocks, want the 3 example queries", len(queries))
	}
	for i, q := range queries {
		if !strings.Contains(q, "'"+fixtureStudy+"'") {
			t.Errorf("query %d does not name the study %s, which the fixture writes", i+1, fixtureStudy)
		}
	}
	sq, pg := bothStores(t)
	answers := make([][][]any, len(queries))
	for i, q := range queries {
		a, b := queryRows(t, sq, q), queryRows(t, pg, q)
		if len(a) == 0 || !sameRows(a, b) {
			t.Errorf("query %d: SQLite %v, PostgreSQL %v", i+1, a, b)
		}
		answers[i] = a
	}

	runs, statuses := studyFixture(t)
	// 1: the mean NOPM of each cell's finished repeats, cells in RTT then terminal order.
	var want [][]any
	for _, rtt := range fixtureRTTs {
		for _, terms := range fixtureTerms {
			var sum, lo, hi float64
			lo, n := math.Inf(1), 0
			for i, r := range runs {
				if r.Params.RTT == rtt && r.Params.Terminals == terms && statuses[i] == results.StatusFinished {
					sum, n = sum+r.Summary.NOPM, n+1
					lo, hi = min(lo, r.Summary.NOPM), max(hi, r.Summary.NOPM)
				}
			}
			want = append(want, []any{float64(rtt) / 1e6, float64(terms), float64(n), sum / float64(n), lo, hi})
		}
	}
	if !sameRows(answers[0], want) {
		t.Errorf("query 1: %v, want %v", answers[0], want)
	}
	// 2: one row per cell and type, over the repeats.
	if len(answers[1]) != len(fixtureRTTs)*len(fixtureTerms)*len(fixtureTypes) {
		t.Errorf("query 2: %d rows, want one per cell and type", len(answers[1]))
	}
	for _, row := range answers[1] {
		if row[3] != float64(fixtureRepeats) || !(row[4].(float64) <= row[5].(float64) && row[5].(float64) <= row[6].(float64)) {
			t.Errorf("query 2 row %v: want %d repeats and min ≤ mean ≤ max", row, fixtureRepeats)
		}
	}
	// 3: shared_buffers differs, in one run; every finished run shows its value.
	finished := 0
	for _, s := range statuses {
		if s == results.StatusFinished {
			finished++
		}
	}
	odd := 0
	for _, row := range answers[2] {
		if row[0] != "shared_buffers" {
			t.Errorf("query 3 lists setting %v, which does not differ", row[0])
		}
		if row[1] == "131072" {
			odd++
			if row[2] != float64(fixtureOddRun+1) { // ids start at 1 in a fresh store
				t.Errorf("query 3: the odd value is run %v's, want run %d's", row[2], fixtureOddRun+1)
			}
		}
	}
	if len(answers[2]) != finished || odd != 1 {
		t.Errorf("query 3: %d rows (%d with the odd value), want %d and 1", len(answers[2]), odd, finished)
	}
}

// TestImportAcrossBackends copies a SQLite store into PostgreSQL twice (the second adds
// nothing), then that into a fresh SQLite file: every store ends up with the same runs.
func TestImportAcrossBackends(t *testing.T) {
	ctx := context.Background()
	src := storetest.Open(t, backends[0].newStore(t))
	written := writeFixture(t, src)
	live := storetest.FullRun(t, fixtureStudy, "live", time.Now())
	storetest.Write(t, src, &live, results.StatusRunning, nil)

	pg := storetest.Open(t, pgtest.NewDatabase(t))
	want := results.ImportStats{Runs: len(written), RunsSkipped: 1, Studies: 1}
	if st, err := results.Import(ctx, pg, src); err != nil || st != want {
		t.Fatalf("first import: %+v, %v; want %+v", st, err, want)
	}
	want = results.ImportStats{RunsPresent: len(written), RunsSkipped: 1, StudiesPresent: 1}
	if st, err := results.Import(ctx, pg, src); err != nil || st != want {
		t.Fatalf("second import: %+v, %v; want %+v", st, err, want)
	}
	back := storetest.Open(t, backends[0].newStore(t))
	want = results.ImportStats{Runs: len(written), Studies: 1}
	if st, err := results.Import(ctx, back, pg); err != nil || st != want {
		t.Fatalf("import back into SQLite: %+v, %v; want %+v", st, err, want)
	}

	finished := func(s results.Store) []results.Run {
		var out []results.Run
		for _, status := range []results.Status{results.StatusFinished, results.StatusFailed, results.StatusAborted} {
			list, err := s.List(ctx, results.Filter{Study: fixtureStudy, Status: status})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range list {
				full, err := s.Get(ctx, r.ID, true)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, storetest.Norm(*full))
			}
		}
		return out
	}
	a := finished(src)
	for name, s := range map[string]results.Store{"PostgreSQL": pg, "SQLite again": back} {
		b := finished(s)
		if len(b) != len(written) || !reflect.DeepEqual(a, b) {
			t.Errorf("%s: %d runs, differing from the source's %d", name, len(b), len(a))
		}
	}
	sa, _ := src.Study(ctx, fixtureStudy)
	sb, err := back.Study(ctx, fixtureStudy)
	if err != nil || !reflect.DeepEqual(sa, sb) {
		t.Errorf("study after two imports: %+v, want %+v (%v)", sb, sa, err)
	}
}
