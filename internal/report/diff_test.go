package report

import (
	"bytes"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/spec"
)

// diffRun is a finished TPC-C run for the diff tests.
func diffRun(id int64, rtt time.Duration, nopm float64, buffers string) results.Run {
	return results.Run{ID: id, Study: "s-" + buffers, Status: results.StatusFinished,
		Params:  results.Params{Drive: spec.Drive{Terminals: 4, Connections: 4}, Workload: "tpcc", RTT: rtt, Scale: 1},
		Server:  results.Server{Engine: "postgres", Version: "15", Settings: map[string]string{"shared_buffers": buffers}},
		Summary: results.Summary{NOPM: nopm, TPS: nopm / 27},
		Tx:      []results.TxSummary{{Type: "new_order", Committed: 100, P50Us: 2000, P99Us: 9000, RoundTrips: 14}}}
}

// TestDiffRuns: two studies of the same matrix that differ in one setting. Cells are
// matched by RTT; only the setting (and the study's name) is a configuration difference;
// the change of NOPM has Welch's interval, here by hand: A = 100, 110, 120 and B = 130, 140,
// 150 (sd 10 each) give B − A = 30 with se = √(100/3 + 100/3) = 8.165 and 4 degrees of
// freedom (t = 2.776), so 30 ± 22.67: "higher". The 10 ms cell has one run per side: a
// change without an interval. A cell only B has is named.
func TestDiffRuns(t *testing.T) {
	var a, b []results.Run
	for i, x := range []float64{100, 110, 120} {
		a = append(a, diffRun(int64(1+i), 0, x, "128MB"))
		b = append(b, diffRun(int64(11+i), 0, x+30, "1GB"))
	}
	a = append(a, diffRun(4, 10*time.Millisecond, 50, "128MB"))
	b = append(b, diffRun(14, 10*time.Millisecond, 40, "1GB"), diffRun(15, 20*time.Millisecond, 20, "1GB"))
	failed := diffRun(5, 10*time.Millisecond, 1, "128MB")
	failed.Status = results.StatusFailed
	a = append(a, failed)

	d, err := DiffRuns(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(d.Factors, ",") != "rtt" {
		t.Errorf("factors %v, want rtt", d.Factors)
	}
	var cfg []string
	for _, it := range d.Config {
		cfg = append(cfg, it.Name+"="+it.Values[0]+"→"+it.Values[1])
	}
	if strings.Join(cfg, ",") != "shared_buffers=128MB→1GB" {
		t.Errorf("config differences %v", cfg)
	}
	if d.A.Label != "study s-128MB" || d.A.Finished != 4 || len(d.A.Runs) != 5 {
		t.Errorf("side A %+v", d.A)
	}
	if len(d.Cells) != 2 || d.Cells[0].Key != "rtt=0" || d.Cells[1].Key != "rtt=10ms" || strings.Join(d.OnlyB, ",") != "rtt=20ms" {
		t.Fatalf("cells %+v, only B %v", d.Cells, d.OnlyB)
	}
	c := d.Cells[0].Figures[0]
	if c.Figure != "NOPM" || c.A.Mean != 110 || c.B.Mean != 140 || c.Delta != 30 || math.Abs(c.Pct-27.27) > 0.01 {
		t.Errorf("NOPM change %+v", c)
	}
	if c.CI == nil || math.Abs(c.CI.Half-22.67) > 0.01 || c.Verdict != DiffHigher {
		t.Errorf("NOPM interval %+v, verdict %q; want ± 22.67, higher", c.CI, c.Verdict)
	}
	c = d.Cells[1].Figures[0]
	if c.CI != nil || c.Verdict != "" || c.Pct != -20 {
		t.Errorf("single runs: %+v", c)
	}
	// The percentiles did not change: an interval of zero width is "no difference" only
	// when it includes zero, which a zero difference does.
	for _, f := range d.Cells[0].Figures[1:] {
		if f.Delta != 0 || f.Verdict != DiffSame {
			t.Errorf("%s: %+v", f.Figure, f)
		}
	}

	var out bytes.Buffer
	if err := WriteDiff(&out, d); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"A: study s-128MB, 5 runs (4 finished): 1–5",
		"setting  shared_buffers  128MB  1GB",
		"110 (3)  140 (3)  +27.3 %  +6.7 % … +47.9 %  higher",
		"Configuration: 1 item differs",
		"Only in B: rtt=20ms",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("diff text lacks %q:\n%s", want, out.String())
		}
	}
}

// TestDiffStored: the Firebird study's Classic runs against its Super runs, as text, byte
// for byte: the matrix of RTT × terminals on each side, the architecture and the page
// buffers it implies as the only differences.
func TestDiffStored(t *testing.T) {
	in, _ := storedStudy(t, "fb-three-arch")
	var a, b []results.Run
	for _, r := range in.Runs {
		switch r.Params.Options["set.ServerMode"] {
		case "Classic":
			a = append(a, r)
		case "Super":
			b = append(b, r)
		}
	}
	d, err := DiffRuns(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(d.Factors, ",") != "rtt,terminals" || len(d.Cells) != 4 {
		t.Errorf("factors %v, %d cells", d.Factors, len(d.Cells))
	}
	for _, it := range d.Config {
		if it.Name == "terminals" || it.Name == "rtt" || it.Values[0] == it.Values[1] {
			t.Errorf("configuration lists %+v", it)
		}
	}
	var out bytes.Buffer
	if err := WriteDiff(&out, d); err != nil {
		t.Fatal(err)
	}
	golden(t, "fb-classic-vs-super.diff.golden", out.Bytes())
}

func TestDiffErrors(t *testing.T) {
	ok := []results.Run{diffRun(1, 0, 100, "x")}
	failed := diffRun(2, 0, 1, "x")
	failed.Status = results.StatusAborted
	for _, tc := range []struct {
		a, b []results.Run
		want string
	}{
		{nil, ok, "side A has no runs"},
		{ok, nil, "side B has no runs"},
		{ok, []results.Run{failed}, "side B has no finished run"},
	} {
		if _, err := DiffRuns(tc.a, tc.b); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want %q", err, tc.want)
		}
	}
}

func TestIDRanges(t *testing.T) {
	if got := idRanges([]int64{1, 2, 3, 5, 7, 8}); got != "1–3, 5, 7–8" {
		t.Errorf("idRanges: %s", got)
	}
}

// TestDiffLocationAndUnits: two studies on two managed servers differ in the servers'
// directories and ports by construction; those are listed apart as location, not as
// configuration. A change from zero is written in the figure's unit, not as a bare
// "+2.0009".
func TestDiffLocationAndUnits(t *testing.T) {
	at := func(r results.Run, dir, port string) results.Run {
		r.Server.Settings = map[string]string{"shared_buffers": "128MB", "data_directory": dir + "/data",
			"hba_file": dir + "/data/pg_hba.conf", "port": port}
		return r
	}
	a := []results.Run{at(diffRun(1, 0, 100, "x"), "/s/servers/pg1", "5433")}
	b := []results.Run{at(diffRun(2, 2*time.Millisecond, 90, "x"), "/s/servers/pg2", "5434")}
	b[0].Study = "s-y"
	b[0].Link = &results.Link{Kind: "inline", RTT: 2 * time.Millisecond, AchievedP50: 2000900 * time.Nanosecond, Samples: 100}
	d, err := DiffRuns(a, b)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range d.Config {
		if it.Name == "data_directory" || it.Name == "hba_file" || it.Name == "port" {
			t.Errorf("configuration lists the location setting %s", it.Name)
		}
	}
	if len(d.Location) != 3 {
		t.Errorf("location %+v, want data_directory, hba_file and port", d.Location)
	}
	var out bytes.Buffer
	if err := WriteDiff(&out, d); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Location, which differs between any two servers and is not compared: data_directory, hba_file, port") {
		t.Errorf("diff text lacks the location line:\n%s", out.String())
	}
	if !regexp.MustCompile(`achieved RTT \(ms\)\s+0\.00 \(1\)\s+2\.0 \(1\)\s+\+2\.0 ms\s`).MatchString(out.String()) {
		t.Errorf("the achieved RTT's change from zero should be +2.0 ms:\n%s", out.String())
	}
	if strings.Contains(out.String(), "+2.0009") {
		t.Errorf("a change from zero without its unit:\n%s", out.String())
	}
}
