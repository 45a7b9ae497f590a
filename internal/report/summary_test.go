package report

import (
	"bytes"
	"strings"
	"testing"
)

// TestSummaryGolden: the console summary of the stored studies, byte for byte; the
// quickstart's fits one screen (at most 40 lines, none wider than 100 columns), opens with
// the study and its question, and ends with the report's path.
func TestSummaryGolden(t *testing.T) {
	for _, name := range storedStudies {
		t.Run(name, func(t *testing.T) {
			r := storedReport(t, name)
			var b bytes.Buffer
			if err := WriteSummary(&b, r, "/home/me/"+name+".html"); err != nil {
				t.Fatal(err)
			}
			golden(t, name+".summary.golden", b.Bytes())
			lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
			if name == "quickstart" && len(lines) > 40 {
				t.Errorf("the quickstart's summary is %d lines, want at most 40", len(lines))
			}
			for i, l := range lines {
				if n := len([]rune(l)); n > summaryWidth {
					t.Errorf("line %d is %d columns: %s", i+1, n, l)
				}
			}
			if !strings.HasPrefix(lines[0], r.Study+": ") || !strings.Contains(b.String(), "Report: /home/me/"+name+".html\n") {
				t.Errorf("summary lacks its heading or the report's path:\n%s", b.String())
			}
			for _, want := range []string{"Verdict", "Credibility: ", r.Headline.Table.Corner} {
				if !strings.Contains(b.String(), want) {
					t.Errorf("summary lacks %q", want)
				}
			}
		})
	}
}

// TestSummaryShort: a report without runs, checks or a path still writes a summary that
// says so, and no line of a long study's summary exceeds the width.
func TestSummaryShort(t *testing.T) {
	r, err := Build(Input{Study: "empty"})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteSummary(&b, r, ""); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "No run has finished yet") || strings.Contains(b.String(), "Report:") ||
		strings.Contains(b.String(), "Credibility") {
		t.Errorf("empty study:\n%s", b.String())
	}
	r = buildFixture(t)
	b.Reset()
	if err := WriteSummary(&b, r, "x.html"); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "measured, interpolated"); n != len(r.Headline.Knees) || n > summaryKnees {
		t.Errorf("%d knee lines for %d series:\n%s", n, len(r.Headline.Knees), b.String())
	}
}

func TestWrap(t *testing.T) {
	got := wrap("NOPM falls 10 % by 0.5 ms and 50 % by 5.9 ms", 22)
	want := []string{"NOPM falls 10 % by", "0.5 ms and 50 % by", "5.9 ms"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("wrap: %q, want %q (a number keeps its unit)", got, want)
	}
	if got := cut("abcdef", 4); got != "abc…" {
		t.Errorf("cut: %q", got)
	}
}
