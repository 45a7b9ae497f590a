package firebird

import (
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The files in testdata are real output of fbsvcmgr action_db_stats sts_record_versions
// (what gstat -r prints) from Firebird 3.0.11: gstat_r_versions.txt with a snapshot
// transaction open after three rounds of updates of table "Garbage t" (quoted, with a blank),
// gstat_r_swept.txt after the sweep, gstat_rs_system.txt with sts_sys_relations (gstat -s)
// too, gstat_r_empty.txt of a database without user tables.

func readGstat(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// garbageStats is what gstat_r_versions.txt says.
var garbageStats = map[string]float64{
	"gstat.Garbage t.records":            2000,
	"gstat.Garbage t.avg_record_length":  22.37,
	"gstat.Garbage t.versions":           4500,
	"gstat.Garbage t.max_versions":       3,
	"gstat.Garbage t.avg_version_length": 13.84,
	"gstat.Garbage t.data_pages":         40,
	"gstat.Garbage t.fill_pct":           73,
	"gstat.ITEMS.records":                2000,
	"gstat.ITEMS.avg_record_length":      31.99,
	"gstat.ITEMS.versions":               0,
	"gstat.ITEMS.max_versions":           0,
	"gstat.ITEMS.avg_version_length":     0,
	"gstat.ITEMS.data_pages":             24,
	"gstat.ITEMS.fill_pct":               50,
	"gstat.total.records":                4000,
	"gstat.total.versions":               4500,
}

func TestParseRecordStats(t *testing.T) {
	swept := maps.Clone(garbageStats)
	swept["gstat.Garbage t.versions"] = 0
	swept["gstat.Garbage t.max_versions"] = 0
	swept["gstat.Garbage t.avg_version_length"] = 0
	swept["gstat.total.versions"] = 0
	swept["gstat.Garbage t.data_pages"] = 32 // the sweep freed space: 40 pages 73% full before
	swept["gstat.Garbage t.fill_pct"] = 39

	versions := readGstat(t, "gstat_r_versions.txt")
	// gstat run locally prints no trailing blanks; a file may have gone through Windows.
	trailing := regexp.MustCompile(`(?m)[ \t]+$`)
	local := trailing.ReplaceAllString(versions, "")
	crlf := strings.ReplaceAll(versions, "\n", "\r\n")

	for _, tc := range []struct {
		name, out string
		want      map[string]float64
	}{
		{"versions", versions, garbageStats},
		{"without trailing blanks", local, garbageStats},
		{"CRLF", crlf, garbageStats},
		{"swept", readGstat(t, "gstat_r_swept.txt"), swept},
		// The system tables are left out; Garbage t still had its versions then.
		{"with system tables", readGstat(t, "gstat_rs_system.txt"), garbageStats},
		{"no user tables", readGstat(t, "gstat_r_empty.txt"), map[string]float64{"gstat.total.records": 0, "gstat.total.versions": 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseRecordStats(tc.out)
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got, tc.want) {
				t.Errorf("got  %v\nwant %v", got, tc.want)
			}
		})
	}
}

func TestParseRecordStatsRejects(t *testing.T) {
	versions := readGstat(t, "gstat_r_versions.txt")
	// gstat -d: the page analysis without -r's record and version lines.
	noR := regexp.MustCompile(`(?m)^\s*Average (record|version) length:.*\n`).ReplaceAllString(versions, "")
	headerOnly, _, _ := strings.Cut(versions, "Analyzing database pages")
	for _, tc := range []struct{ name, out, want string }{
		{"header only (-h)", headerOnly, "no page analysis"},
		{"an error message", "Your user name and password are not defined. Ask your database administrator to set up a Firebird login.\n", "no page analysis"},
		{"without -r", noR, "no record and version statistics for table Garbage t"},
		{"bad number", strings.Replace(versions, "total versions: 4500", "total versions: 45x0", 1), `"total versions: 45x0"`},
		{"table twice", strings.Replace(versions, "ITEMS (129)", "Garbage t (129)", 1), "twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseRecordStats(tc.out)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, %v; want an error saying %q", got, err, tc.want)
			}
		})
	}
}

// TestParseRecordStatsIndexesApart checks that an index's lines, which share labels such as
// "Fill distribution" with the table's, never count for the table.
func TestParseRecordStatsIndexesApart(t *testing.T) {
	versions := readGstat(t, "gstat_r_versions.txt")
	// An index line with labels of the table's: it must be ignored.
	out := strings.Replace(versions, "\tRoot page: 232,", "\tData pages: 999, average fill: 1%, Root page: 232,", 1)
	got, err := parseRecordStats(out)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(got, garbageStats) {
		t.Errorf("got  %v\nwant %v", got, garbageStats)
	}
}

func TestSystemTable(t *testing.T) {
	for name, want := range map[string]bool{"RDB$PAGES": true, "MON$ATTACHMENTS": true, "SEC$USERS": true,
		"PLG$SRP": true, "ORDER_LINE": false, "Garbage t": false, "RDB": false} {
		if systemTable(name) != want {
			t.Errorf("systemTable(%q) = %v", name, !want)
		}
	}
}
