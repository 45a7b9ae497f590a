package results_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/results/storetest"
)

func exportRuns(t *testing.T) []results.Run {
	a := storetest.FullRun(t, "s", "c", time.Date(2025, 2, 3, 4, 5, 6, 7, time.UTC))
	a.ID, a.Status, a.Ended = 1, results.StatusFinished, a.Started.Add(time.Hour)
	a.Samples = storetest.Samples(2, "")
	a.Tx[2].Errors = nil // JSON omits empty maps: only nil survives that round trip
	b := results.Run{ID: 2, Status: results.StatusFailed, Reason: "boom, \"quoted\"\nsecond line",
		Started: time.Date(2025, 2, 3, 5, 0, 0, 0, time.UTC)}
	return []results.Run{a, b}
}

func TestExportJSON(t *testing.T) {
	runs := exportRuns(t)
	cases := []struct {
		name string
		runs []results.Run
		want []results.Run
	}{
		{"runs", runs, runs},
		{"nil", nil, []results.Run{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := results.Export(&buf, tc.runs, "json"); err != nil {
				t.Fatal(err)
			}
			var got []results.Run
			if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
				t.Fatalf("parse back: %v\n%s", err, buf.String())
			}
			for i := range got {
				got[i] = storetest.Norm(got[i])
			}
			want := make([]results.Run, len(tc.want))
			for i := range tc.want {
				want[i] = storetest.Norm(tc.want[i])
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("json round trip mismatch:\n got %+v\nwant %+v", got, want)
			}
			if !strings.Contains(buf.String(), "\n  ") && len(tc.runs) > 0 {
				t.Error("json not indented")
			}
		})
	}
}

func TestExportCSV(t *testing.T) {
	runs := exportRuns(t)
	var buf bytes.Buffer
	if err := results.Export(&buf, runs, "csv"); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	// header + (run-wide row + 3 tx rows) for run 1 + run-wide row for run 2
	if len(recs) != 1+4+1 {
		t.Fatalf("%d records, want 6", len(recs))
	}
	if !reflect.DeepEqual(recs[0], results.CSVHeader) {
		t.Errorf("header %v", recs[0])
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	for _, h := range []string{"id", "study", "cell_key", "status", "reason", "started", "engine",
		"server_version", "workload", "scale", "terminals", "connections", "duration_s", "warmup_s",
		"rtt_ms", "tx_type", "committed", "rollbacks", "errors", "tps", "tpm", "nopm",
		"p50_ms", "p90_ms", "p95_ms", "p99_ms", "p999_ms", "max_ms"} {
		if _, ok := col[h]; !ok {
			t.Errorf("missing column %s", h)
		}
	}
	cases := []struct {
		row  int
		col  string
		want string
	}{
		{1, "tx_type", "all"},
		{1, "committed", "90000"},
		{1, "errors", "12"},
		{1, "nopm", "8100.25"},
		{1, "p99_ms", ""},
		{1, "duration_s", "300"},
		{1, "rtt_ms", "1.5"},
		{1, "started", "2025-02-03T04:05:06.000000007Z"},
		{2, "tx_type", "new_order"},
		{2, "p99_ms", "5"},
		{2, "p999_ms", "9"},
		{2, "errors", "10"},
		{2, "nopm", ""},
		{2, "tpm", "8079.919200807992"}, // (40000+400) / 300.003 s * 60
		{3, "tps", "126.66540001266655"},
		{3, "tx_type", "payment"},
		{3, "p50_ms", "0.8"},
		{4, "tx_type", "stock_level"},
		{1, "rate", "850.5"},
		{1, "overload", "true"},
		{1, "retries", "70"},
		{1, "resp_p99_ms", ""},
		{2, "resp_p99_ms", "8"},
		{2, "lag_p99_ms", "3"},
		{2, "retries", "60"},
		{2, "overload", ""},
		{5, "id", "2"},
		{5, "reason", "boom, \"quoted\"\nsecond line"},
		{5, "tx_type", "all"},
		{1, "jitter", "100µs"},
		{2, "distribution", "normal"},
		{1, "bandwidth", "100mbit"},
		{3, "loss", "0.1%"},
		{1, "up", "500µs"},
		{1, "profile", "own-dc"},
		{2, "during", "backup@2m0s"},
		{1, "memory_limit_mb", "512"},
	}
	for _, tc := range cases {
		if got := recs[tc.row][col[tc.col]]; got != tc.want {
			t.Errorf("row %d %s = %q, want %q", tc.row, tc.col, got, tc.want)
		}
	}
}

func TestExportUnknownFormat(t *testing.T) {
	err := results.Export(&bytes.Buffer{}, nil, "xml")
	if err == nil || !strings.Contains(err.Error(), `"xml"`) || !strings.Contains(err.Error(), "json, csv") {
		t.Errorf("error %v, want one naming xml and json, csv", err)
	}
}
