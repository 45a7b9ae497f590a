package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dblat/dblat/internal/analysis"
	"github.com/dblat/dblat/internal/words"
)

// Limits of the console summary: it must fit one screen (about 40 lines of 100 columns)
// for a study the size of the quickstart, and stay short for larger ones.
const (
	summaryWidth    = 100 // columns: paragraphs wrap, finding lines are cut with "…"
	summaryFindings = 6   // finding lines; the rest are counted
	summaryKnees    = 6   // knee lines; more series are summed up by the verdict
	summaryRows     = 12  // headline table rows; more are counted
)

// WriteSummary writes what a person reads after a study: one screen with the study's
// question, the headline table (throughput of every series at every level of the headline
// chart's X), the knees, the verdict, the credibility findings one line each, and where the
// HTML report is (htmlPath; the line is left out when it is ""). It is what `dblat
// quickstart`, `dblat study run` and `dblat report --format text` print; WriteText writes
// everything. For the quickstart study it is at most 40 lines.
//
// A report of observed applications alone (ObservedOnly) opens with each observation
// instead: its title, question and verdict, the predictions, what would help and the
// caveats; the study's headline table, knees and credibility do not apply to it.
func WriteSummary(w io.Writer, r *Report, htmlPath string) error {
	ew := words.NewWriter(w, "report: write summary")
	if r.ObservedOnly() {
		for i := range r.Observed {
			if i > 0 {
				ew.Printf("\n")
			}
			writeObservedSummary(ew, &r.Observed[i])
		}
		writeReplays(ew, r.Observed)
		writeSummaryEnd(ew, r, htmlPath)
		return ew.Err()
	}
	study := r.Study
	if study == "" {
		study = "(unnamed study)"
	}
	ew.Printf("%s: %s, %s (%s)\n", study, strings.Replace(countsText(r.Counts), " (", " runs (", 1), orNone(strings.Join(r.Workloads, ", ")), r.Metric)
	for _, l := range wrap(r.Headline.Question, summaryWidth) {
		ew.Printf("%s\n", l)
	}

	if t := r.Headline.Table; len(t.Rows) > 0 {
		ew.Printf("\n%s by %s (mean ± half-width of the 95 %% interval)\n", r.Metric, t.Corner)
		writePivot(ew, t)
	}

	if len(r.Headline.Knees) > 0 && len(r.Headline.Knees) <= summaryKnees {
		ew.Printf("\nKnees: added RTT (achieved) at which %s has fallen 10 %% / 50 %%\n", r.Metric)
		tw := ew.Table("  ")
		for _, k := range r.Headline.Knees {
			src := "measured, interpolated"
			if k.Knee10 == 0 && k.Knee50 == 0 && (len(k.Knee10Between) == 2 || len(k.Knee50Between) == 2) {
				src = "measured: levels too far apart"
			}
			if k.Fits && (k.ModelKnee10 > 0 || k.ModelKnee50 > 0) {
				src = fmt.Sprintf("model (measured %s / %s)", kneeShort(k.Knee10, k.Knee10Between, k), kneeShort(k.Knee50, k.Knee50Between, k))
			}
			tw.Row(k.Series, kneeShort(k.Best10(), k.Knee10Between, k)+" / "+kneeShort(k.Best50(), k.Knee50Between, k), src)
		}
		tw.Flush()
	}

	for i := range r.AtRate {
		writeRateSummary(ew, &r.AtRate[i], len(r.AtRate) > 1)
	}

	for i := range r.Observed {
		ew.Printf("\n")
		writeObservedSummary(ew, &r.Observed[i])
	}

	ew.Printf("\nVerdict\n")
	for _, l := range wrap(r.Headline.Verdict, summaryWidth-2) {
		ew.Printf("  %s\n", l)
	}

	if r.Analysis != nil || len(r.Warnings) > 0 {
		var n [3]int
		for _, wn := range r.Warnings {
			switch wn.Severity {
			case "error":
				n[2]++
			case "warning":
				n[1]++
			default:
				n[0]++
			}
		}
		ew.Printf("\nCredibility: %s, %s, %s\n", words.Count(n[2], "error"), words.Count(n[1], "warning"), words.Count(n[0], "note"))
		for i, wn := range r.Warnings {
			if i == summaryFindings {
				ew.Printf("  … and %d more\n", len(r.Warnings)-i)
				break
			}
			ew.Printf("%s\n", cut(fmt.Sprintf("  %-7s %s: %s", strings.ToUpper(wn.Severity), wn.Check, wn.Message), summaryWidth))
		}
	}

	writeSummaryEnd(ew, r, htmlPath)
	return ew.Err()
}

// writeSummaryEnd says where the HTML report is and how to print everything.
func writeSummaryEnd(ew *words.Writer, r *Report, htmlPath string) {
	ew.Printf("\n")
	if htmlPath != "" {
		ew.Printf("Report: %s\n", htmlPath)
	}
	if r.Study != "" {
		ew.Printf("Everything, as text: dblat report %s --format text --full\n", r.Study)
	}
}

// writeRateSummary writes one fixed-rate series as a table: RTT levels down, each type's
// response-time p50 / p99 across, and whether the rate was sustained.
func writeRateSummary(ew *words.Writer, rs *analysis.RateSeries, several bool) {
	ew.Printf("\n%s\n  response time p50 / p99 in ms, from the intended start\n", rateTitle(rs, several))
	var types []string
	for _, p := range rs.Points {
		for _, t := range p.Types {
			if !slices.Contains(types, t.Type) {
				types = append(types, t.Type)
			}
		}
	}
	types = txOrder(types)
	tw := ew.Table("  ")
	tw.Row(append(append([]string{"rtt"}, types...), "achieved/s", "rate")...)
	for _, p := range rs.Points {
		row := []string{p.Level}
		for _, typ := range types {
			cell := "–"
			for _, t := range p.Types {
				if t.Type == typ {
					cell = msText(t.P50.Microseconds()) + " / " + msText(t.P99.Microseconds())
				}
			}
			row = append(row, cell)
		}
		state := "sustained"
		if p.Overloaded > 0 {
			state = fmt.Sprintf("OVERLOAD (%d of %d runs)", p.Overloaded, p.Runs)
		}
		tw.Row(append(row, fmtNum(p.Achieved), state)...)
	}
	tw.Flush()
}

// writePivot writes the headline table: series down, X levels across (transposed when
// there are more levels than fit across), at most summaryRows rows.
func writePivot(ew *words.Writer, t Pivot) {
	var rows [][]string
	if len(t.Columns) <= 8 {
		rows = append(rows, append([]string{t.Corner}, t.Columns...))
		for i, row := range t.Rows {
			if i == summaryRows {
				break
			}
			cells := []string{row.Name}
			for _, e := range row.Cells {
				cells = append(cells, estText(e))
			}
			rows = append(rows, cells)
		}
	} else {
		head := []string{t.Corner}
		series := t.Rows[:min(len(t.Rows), summaryRows)]
		for _, row := range series {
			head = append(head, row.Name)
		}
		rows = append(rows, head)
		for j, c := range t.Columns {
			cells := []string{c}
			for _, row := range series {
				cells = append(cells, estText(row.Cells[j]))
			}
			rows = append(rows, cells)
		}
	}
	writeAligned(ew, "  ", rows, func(col int) bool { return col > 0 })
	if len(t.Rows) > summaryRows {
		ew.Printf("  … and %d more series (in the HTML report)\n", len(t.Rows)-summaryRows)
	}
}

// kneeShort writes a knee for the summary: "0–20 ms" when it lies between two levels too far
// apart to place it, "> 20 ms" when it is not reached up to the highest RTT measured.
func kneeShort(d time.Duration, between []time.Duration, k KneeRow) string {
	switch {
	case d > 0:
		return msText2(d)
	case len(between) == 2:
		return msText2(between[0]) + "–" + msText2(between[1])
	}
	return "> " + msText2(k.MaxRTT)
}

// wrap breaks s into lines of at most width columns at spaces, never between a number and
// its unit ("1 ms", "10 %").
func wrap(s string, width int) []string {
	var words []string
	for _, w := range strings.Fields(s) {
		if n := len(words); n > 0 && isUnit(w) {
			words[n-1] += " " + w
			continue
		}
		words = append(words, w)
	}
	var lines []string
	line := ""
	for _, word := range words {
		if line != "" && utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// isUnit reports whether a word is a unit that stays with the number before it.
func isUnit(w string) bool {
	switch strings.TrimRight(w, ".,;:)") {
	case "ms", "µs", "s", "%", "×":
		return true
	}
	return false
}

// cut shortens s to width columns, ending in "…" when it was longer.
func cut(s string, width int) string {
	if utf8.RuneCountInString(s) <= width {
		return s
	}
	r := []rune(s)
	return strings.TrimRight(string(r[:width-1]), " ") + "…"
}

// writeAligned writes rows as a table, two spaces between columns, each column left-aligned
// or right-aligned (numbers) as right says; trailing spaces are trimmed.
func writeAligned(ew *words.Writer, indent string, rows [][]string, right func(col int) bool) {
	var widths []int
	for _, row := range rows {
		for i, c := range row {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	for _, row := range rows {
		var b strings.Builder
		b.WriteString(indent)
		for i, c := range row {
			if i > 0 {
				b.WriteString("  ")
			}
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			if right(i) {
				b.WriteString(pad + c)
			} else {
				b.WriteString(c + pad)
			}
		}
		ew.Printf("%s\n", strings.TrimRight(b.String(), " "))
	}
}
