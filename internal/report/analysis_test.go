package report

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/analysis"
	// The engines register what their settings mean, which the credibility checks read.
	_ "github.com/dblat/dblat/internal/engine/all"
)

// TestFindingCellsAreReportCells: the cells a finding names are cells of the report, under
// the same keys, given factors or inferred ones (both group with results.Group).
func TestFindingCellsAreReportCells(t *testing.T) {
	for _, factors := range [][]string{fixFactors, nil} {
		in := fixInput(t)
		in.Factors = factors
		r, err := Build(in)
		if err != nil {
			t.Fatal(err)
		}
		keys := map[string]bool{}
		for _, c := range r.Cells {
			keys[c.Key] = true
		}
		named := 0
		for _, f := range analysis.Check(in.Runs, analysis.CheckOptions{Factors: factors, Repeat: 3}) {
			for _, c := range f.Cells {
				named++
				if !keys[c] {
					t.Errorf("factors %v: %s names cell %q, not among the report's %v", factors, f.Rule, c, keys)
				}
			}
		}
		if named == 0 {
			t.Errorf("factors %v: no finding names a cell", factors)
		}
	}
}

// TestBuildWithAnalysis: the fixture's findings reach the report's warnings (three
// repeats per cell; page buffers that follow ServerMode; runs without a recorded link) and
// are rendered by the existing writers; the analysis' notes join the method notes.
func TestBuildWithAnalysis(t *testing.T) {
	r, a, err := BuildWithAnalysis(fixInput(t), analysis.CheckOptions{Repeat: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Warnings) != len(a.Findings) || len(r.Warnings) == 0 {
		t.Fatalf("%d warnings for %d findings", len(r.Warnings), len(a.Findings))
	}
	var checks []string
	for _, w := range r.Warnings {
		checks = append(checks, w.Check+":"+w.Severity)
	}
	for _, want := range []string{
		analysis.RuleMixedSettings + ":warning", // DefaultDbCachePages 256 or 2048 with ServerMode
		analysis.RuleRTT + ":error",             // no link recorded
		analysis.RuleFewRepeats + ":warning",    // two cells short of the 3 asked for
		analysis.RuleFewRepeats + ":info",       // 3 asked, fewer than 5
	} {
		if !slices.Contains(checks, want) {
			t.Errorf("no %s among %v", want, checks)
		}
	}
	if r.Warnings[0].Severity != "error" || r.Warnings[0].Fix == "" || r.Warnings[0].Evidence == "" {
		t.Errorf("first warning %+v", r.Warnings[0])
	}
	if !slices.Contains(r.Notes, a.Notes[0]) {
		t.Error("analysis notes missing")
	}
	var b bytes.Buffer
	if err := WriteText(&b, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "[warning] "+analysis.RuleMixedSettings+": DefaultDbCachePages changes with set.ServerMode") {
		t.Errorf("text report lacks the finding:\n%s", b.String())
	}
	// The verdict ends with what the findings amount to.
	if !strings.HasSuffix(r.Headline.Verdict, "(see Findings).") || !strings.Contains(r.Headline.Verdict, "Do not quote these figures yet") {
		t.Errorf("verdict does not speak of the errors: %s", r.Headline.Verdict)
	}
}

func TestWarningOf(t *testing.T) {
	f := analysis.Finding{Rule: "r", Severity: analysis.Error, Message: "m", Evidence: "e", Fix: "x",
		Runs: []int64{1, 2}, Cells: []string{"rtt=0"}}
	w := WarningOf(f)
	if w.Check != "r" || w.Severity != "error" || w.Message != "m" || w.Evidence != "e" || w.Fix != "x" ||
		!slices.Equal(w.Runs, f.Runs) || !slices.Equal(w.Cells, f.Cells) {
		t.Errorf("%+v", w)
	}
}

// TestAnalysisHTML: the sections render with the fixture's data, values escaped; nil
// renders nothing.
func TestAnalysisHTML(t *testing.T) {
	in := fixInput(t)
	a := analysis.Analyze(in.Runs, analysis.CheckOptions{Factors: in.Factors})
	a.Fits[0].Why = "<script>x</script>"
	h, err := AnalysisHTML(a)
	if err != nil {
		t.Fatal(err)
	}
	s := string(h)
	for _, want := range []string{`<section id="latency-model">`, `<section id="pool-sizing">`, `<section id="response-limits">`,
		"<h3>terminals=10, set.ServerMode=Classic</h3>", "&lt;script&gt;"} {
		if !strings.Contains(s, want) {
			t.Errorf("missing %q", want)
		}
	}
	if strings.Contains(s, "<script>") {
		t.Error("unescaped value")
	}
	if h, err := AnalysisHTML(nil); h != "" || err != nil {
		t.Errorf("nil: %q %v", h, err)
	}
}

func TestLimitRows(t *testing.T) {
	rows := limitRows([]analysis.ResponseLimit{
		{Cell: "rtt=0", TxType: "new_order", P90: 2 * time.Millisecond, OK: true, Pooled: true},
		{Cell: "rtt=100ms", TxType: "new_order", P90: 6 * time.Second, OK: false, Pooled: true},
		{Cell: "rtt=100ms", TxType: "delivery", P90: 7 * time.Second, OK: false},
	})
	if len(rows) != 2 || rows[0].Verdict != "ok" || rows[0].P90[0] != "2.000" || rows[0].P90[1] != "–" ||
		!rows[1].Over || rows[1].Verdict != "over: new_order, delivery" || rows[1].P90[3] != "7000.0*" {
		t.Errorf("%+v", rows)
	}
}
