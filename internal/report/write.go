package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/dblat/dblat/internal/analysis"
	"github.com/dblat/dblat/internal/words"
)

// Formats are the formats Write accepts.
var Formats = []string{"html", "text", "json", "csv"}

// Write renders r to w in format, one of Formats; any other format is an error naming the
// valid ones.
func Write(w io.Writer, r *Report, format string) error {
	switch format {
	case "html":
		return WriteHTML(w, r)
	case "text":
		return WriteText(w, r)
	case "json":
		return WriteJSON(w, r)
	case "csv":
		return WriteCSV(w, r)
	}
	return fmt.Errorf("report: unknown format %q (valid: %s)", format, strings.Join(Formats, ", "))
}

// WriteJSON writes r as indented JSON: every field of Report, the data behind every chart
// and table. Latencies are in microseconds, RTT positions on chart axes in milliseconds.
func WriteJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("report: write json: %w", err)
	}
	return nil
}

// WriteCSV writes the aggregated cells, one row per cell: its factor levels, its number of
// runs and of finished runs, the mean, standard deviation and 95 % interval of the
// throughput metric (interval columns empty when n < 2), the retry rate when any run retried,
// the offered and achieved rates and the overloaded runs when any run was open-loop, then
// for each transaction type its pooled p50/p90/p99 and mean in milliseconds (named
// response_… with the service time's p99 and the schedule lag's after them when
// Report.Latency is response time), round trips, and bytes up and down per committed
// transaction (empty where the cell has no such transactions).
func WriteCSV(w io.Writer, r *Report) error {
	cw := csv.NewWriter(w)
	m := strings.ToLower(r.Metric)
	head := []string{}
	for _, f := range r.Factors {
		head = append(head, f.Key)
	}
	head = append(head, "runs", "n", m+"_mean", m+"_sd", m+"_ci95_low", m+"_ci95_high", m+"_ci95_half")
	open, retries, resp := r.OpenLoop(), r.Retried(), r.Latency == LatencyResponse
	if retries {
		head = append(head, "retry_rate")
	}
	if open {
		head = append(head, "offered_rate", "achieved_rate", "overloaded_runs")
	}
	cols := []string{"p50_ms", "p90_ms", "p99_ms", "mean_ms", "round_trips", "bytes_up", "bytes_down"}
	if resp {
		cols = []string{"response_p50_ms", "response_p90_ms", "response_p99_ms", "response_mean_ms",
			"service_p99_ms", "lag_p99_ms", "round_trips", "bytes_up", "bytes_down"}
	}
	for _, t := range r.TxTypes {
		for _, col := range cols {
			head = append(head, t+"_"+col)
		}
	}
	if err := cw.Write(head); err != nil {
		return fmt.Errorf("report: write csv: %w", err)
	}
	for i := range r.Cells {
		c := &r.Cells[i]
		row := append([]string{}, c.Levels...)
		e := c.Throughput
		row = append(row, strconv.Itoa(c.Runs), strconv.Itoa(e.N))
		if e.N == 0 {
			row = append(row, "", "", "", "", "")
		} else if e.CI == nil {
			row = append(row, num(e.Mean), "", "", "", "")
		} else {
			row = append(row, num(e.Mean), num(e.SD), num(e.CI.Low), num(e.CI.High), num(e.CI.Half))
		}
		if retries {
			row = append(row, num(c.RetryRate))
		}
		if open {
			row = append(row, num(c.Offered), num(c.Achieved), strconv.Itoa(c.Overloaded))
		}
		for _, typ := range r.TxTypes {
			t := findTx(c, typ)
			if t == nil || !t.Done() {
				row = append(row, make([]string, len(cols))...)
				continue
			}
			row = append(row, usMs(t.P50Us), usMs(t.P90Us), usMs(t.P99Us), num(round(t.MeanUs/1000, 4)))
			if resp {
				row = append(row, usMs(t.ServiceP99Us), usMs(t.LagP99Us))
			}
			row = append(row, num(t.RoundTrips), num(t.BytesUp), num(t.BytesDown))
		}
		if err := cw.Write(row); err != nil {
			return fmt.Errorf("report: write csv: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("report: write csv: %w", err)
	}
	return nil
}

// WriteText writes r in full as plain-text tables for a terminal: the question and verdict,
// warnings, the analysis, throughput per cell, response times and wire cost per
// transaction type, configuration, every run, and notes. WriteSummary writes the part
// that fits one screen. A report of observed applications alone (ObservedOnly) writes each
// observation in full instead of the question, the throughput and the transaction tables,
// then the configuration, the runs and the notes.
func WriteText(w io.Writer, r *Report) error {
	ew := words.NewWriter(w, "report: write text")
	if r.ObservedOnly() {
		for i := range r.Observed {
			if i > 0 {
				ew.Printf("\n")
			}
			writeObservedText(ew, &r.Observed[i])
		}
		writeReplays(ew, r.Observed)
		writeConfigText(ew, r.Config)
		writeRunsText(ew, r)
		writeNotesText(ew, r)
		return ew.Err()
	}
	study := r.Study
	if study == "" {
		study = "(unnamed study)"
	}
	ew.Printf("Study: %s\n", study)
	if r.Description != "" {
		ew.Printf("%s\n", r.Description)
	}
	ew.Printf("Metric: %s. Workload: %s.\n", metricDesc(r.Metric), orNone(strings.Join(r.Workloads, ", ")))
	ew.Printf("Runs: %s.\n", countsText(r.Counts))
	if len(r.Factors) == 0 {
		ew.Printf("Factors: none (every run is one cell).\n")
	}
	for _, f := range r.Factors {
		ew.Printf("Factor %s: %s\n", f.Key, strings.Join(f.Levels, ", "))
	}
	ew.Printf("\nQuestion: %s\n", r.Headline.Question)
	ew.Printf("Verdict: %s\n", r.Headline.Verdict)

	// With the analysis, its text ends with the same findings: print them once.
	if len(r.Warnings) > 0 && (r.Analysis == nil || len(r.Analysis.Findings) != len(r.Warnings)) {
		ew.Printf("\nWarnings\n")
		for _, wn := range r.Warnings {
			ew.Printf("  [%s] %s: %s\n", wn.Severity, wn.Check, wn.Message)
			if wn.Evidence != "" {
				ew.Printf("      evidence: %s\n", wn.Evidence)
			}
			if wn.Fix != "" {
				ew.Printf("      fix: %s\n", wn.Fix)
			}
		}
	}

	if r.Analysis != nil {
		ew.Printf("\n")
		if err := analysis.WriteText(ew, r.Analysis); err != nil {
			return err
		}
	}

	writeThroughputText(ew, r)
	writeTxText(ew, r)
	writeOperationsText(ew, r)

	// Response time at a fixed rate, unless the analysis above wrote it already.
	if r.Analysis == nil || len(r.Analysis.Rates) == 0 {
		for i := range r.AtRate {
			ew.Printf("\n")
			analysis.WriteRate(ew, &r.AtRate[i])
		}
	}

	writeConfigText(ew, r.Config)
	if len(r.Observed) > 0 && !r.ObservedOnly() {
		ew.Printf("\nWhat a farther database would cost (predicted from the observations)\n")
		for i := range r.Observed {
			ew.Printf("\n")
			writeObservedText(ew, &r.Observed[i])
		}
	}
	if len(r.Scripts) > 0 {
		ew.Printf("\nScripts (dblat results show RUN --scripts prints their text)\n")
		tw := ew.Table("  ")
		tw.Row("kind", "name", "file", "weight", "sha256", "runs")
		for _, sc := range r.Scripts {
			tw.Row(sc.Kind, sc.Name, sc.Path, strconv.FormatFloat(sc.Weight, 'g', -1, 64), shortSum(sc.SHA256), runList(sc.Runs))
		}
		tw.Flush()
	}

	writeRunsText(ew, r)
	writeNotesText(ew, r)
	return ew.Err()
}

// writeNotesText writes how the figures were computed.
func writeNotesText(ew *words.Writer, r *Report) {
	ew.Printf("\nNotes\n")
	for _, n := range r.Notes {
		ew.Printf("- %s\n", n)
	}
}

// writeThroughputText writes the throughput of every cell: mean, interval and spread over
// its finished repeats, with the retry rate and the open loop's rates where any run had them.
func writeThroughputText(ew *words.Writer, r *Report) {
	open, retries := r.OpenLoop(), r.Retried()
	ew.Printf("\nThroughput: %s, mean over finished repeats ± half-width of the 95 %% interval\n", r.Metric)
	tw := ew.Table("  ")
	shaped := r.Shaped()
	head := append(factorKeys(r), "achieved rtt", "runs", "n", "mean", "±95%", "sd")
	if retries {
		head = append(head, "retried")
	}
	if open {
		head = append(head, "offered/s", "achieved/s", "overload")
	}
	if shaped {
		head = append(head, "link used up/down mean (peak), jitter, lost")
	}
	cached := r.Cached()
	if cached {
		head = append(head, "server memory, its cache's hits and reads, disk reads")
	}
	tw.Row(head...)
	for i := range r.Cells {
		c := &r.Cells[i]
		e := c.Throughput
		mean, ci, sd, rtt := "–", "–", "–", "–"
		if e.N > 0 {
			mean = fmt.Sprintf("%.1f", e.Mean)
			ci = "n=1, no interval"
			rtt = msText2(c.AchievedRTT)
		}
		if e.CI != nil {
			ci, sd = fmt.Sprintf("%.1f", e.CI.Half), fmt.Sprintf("%.1f", e.SD)
		}
		row := append(levelsText(c.Levels), rtt, strconv.Itoa(c.Runs), strconv.Itoa(e.N), mean, ci, sd)
		if retries {
			row = append(row, pctText(c.RetryRate))
		}
		if open {
			row = append(row, fmtNum(c.Offered), fmtNum(c.Achieved), overloadText(c))
		}
		if shaped {
			row = append(row, c.Link.Text())
		}
		if cached {
			row = append(row, c.Cache.Text())
		}
		tw.Row(row...)
	}
	tw.Flush()
}

// writeOperationsText writes the operations dblat started during the runs' windows, each
// with its run's figures before, during and after it.
func writeOperationsText(ew *words.Writer, r *Report) {
	if len(r.Operations) == 0 {
		return
	}
	ew.Printf("\nOperations during the window: when each ran (s into the window), how it ended, and the run's tx/s and typical p50/p99 (ms) before, during and after it\n")
	tw := ew.Table("  ")
	head := append([]string{"run"}, factorKeys(r)...)
	head = append(head, "operation", "asked", "started", "ended", "outcome")
	for _, p := range phaseNames {
		head = append(head, p+" tx/s", p+" p50", p+" p99")
	}
	tw.Row(head...)
	for _, o := range r.Operations {
		row := append([]string{strconv.FormatInt(o.Run, 10)}, levelsText(o.Levels)...)
		started, ended := "–", "–"
		if o.Operation.Ran() {
			started, ended = fmt.Sprintf("%.1f", o.Operation.Started.Seconds()), fmt.Sprintf("%.1f", o.Operation.Ended.Seconds())
		}
		outcome := o.Operation.Outcome
		if o.Operation.Error != "" {
			outcome += ": " + o.Operation.Error
		} else if o.Operation.Detail != "" {
			outcome += ": " + o.Operation.Detail
		}
		row = append(row, o.Operation.Name, fmt.Sprintf("%.1f", o.Operation.At.Seconds()), started, ended, outcome)
		tw.Row(append(row, phaseCells(o.Phases)...)...)
	}
	tw.Flush()
}

// writeTxText writes a table per transaction type: pooled latencies (response time, service
// time and schedule lag for open loops), retries and conflicts where any, and wire cost.
func writeTxText(ew *words.Writer, r *Report) {
	retries := r.Retried()
	for _, typ := range r.TxTypes {
		if r.Latency == LatencyResponse {
			ew.Printf("\nTransaction %s: pooled response time from the intended start (ms), service time and schedule lag, and wire cost per committed transaction\n", typ)
		} else {
			ew.Printf("\nTransaction %s: pooled service time from the connection checkout (ms) and wire cost per committed transaction\n", typ)
		}
		tw := ew.Table("  ")
		head := append(factorKeys(r), "n", "p50", "p90", "p99", "max", "wait p99")
		if r.Latency == LatencyResponse {
			head = append(factorKeys(r), "n", "p50", "p90", "p99", "max", "service p50", "service p99", "lag p99")
		}
		conflicts := r.Conflicted()
		if retries {
			head = append(head, "retries")
		}
		if conflicts {
			head = append(head, "retries/tx", "conflicts/tx")
		}
		tw.Row(append(head, "round trips", "bytes up", "bytes down")...)
		for i := range r.Cells {
			c := &r.Cells[i]
			t := findTx(c, typ)
			if t == nil {
				continue
			}
			row := append(levelsText(c.Levels), strconv.Itoa(t.Runs))
			if !t.Done() {
				for range len(head) - len(row) + 3 {
					row = append(row, "–")
				}
				tw.Row(row...)
				continue
			}
			row = append(row, msText(t.P50Us), msText(t.P90Us), msText(t.P99Us), msText(t.MaxUs))
			if r.Latency == LatencyResponse {
				row = append(row, msText(t.ServiceP50Us), msText(t.ServiceP99Us), msText(t.LagP99Us))
			} else {
				row = append(row, msText(t.WaitP99Us))
			}
			if retries {
				row = append(row, strconv.FormatInt(t.Retries, 10))
			}
			if conflicts {
				row = append(row, fmt.Sprintf("%.3f", t.RetriesPerTx()), fmt.Sprintf("%.3f", t.ConflictsPerTx()))
			}
			tw.Row(append(row, fmt.Sprintf("%.1f", t.RoundTrips), fmt.Sprintf("%.0f", t.BytesUp), fmt.Sprintf("%.0f", t.BytesDown))...)
		}
		tw.Flush()
	}
}

// writeConfigText writes what differs between the series and what is the same in all.
func writeConfigText(ew *words.Writer, c Config) {
	ew.Printf("\n%s\n", seriesHeading(c))
	if len(c.Differ) > 0 {
		tw := ew.Table("  ")
		tw.Row(append([]string{"differs", "between series:"}, c.Series...)...)
		for _, it := range c.Differ {
			tw.Row(append([]string{it.Kind, it.Name}, it.Values...)...)
		}
		tw.Flush()
	}
	if len(c.Common) > 0 {
		if len(c.SeriesFactors) > 0 {
			ew.Printf("  same in every series:\n")
		}
		tw := ew.Table("  ")
		for _, it := range c.Common {
			tw.Row(it.Kind, it.Name, orNone(it.Values[0]))
		}
		tw.Flush()
	}
}

// writeRunsText writes a line per run.
func writeRunsText(ew *words.Writer, r *Report) {
	ew.Printf("\nRuns\n")
	tw := ew.Table("  ")
	tw.Row(append(append([]string{"id", "started", "status"}, factorKeys(r)...), r.Metric, "warm-up", "elapsed", "reason")...)
	for _, run := range r.Runs {
		tw.Row(append(append([]string{strconv.FormatInt(run.ID, 10), run.Started.Format(time.RFC3339), string(run.Status)},
			levelsText(run.Levels)...), fmt.Sprintf("%.1f", run.Throughput), warmupText(run), fmt.Sprintf("%.1fs", run.ElapsedS), runReason(run))...)
	}
	tw.Flush()
}

// Conflicted reports whether any transaction met a retryable failure (a serialization
// failure, deadlock or update conflict), retried or not: the retries and conflicts per
// transaction are shown then.
func (r *Report) Conflicted() bool {
	for i := range r.Cells {
		for j := range r.Cells[i].Tx {
			if r.Cells[i].Tx[j].Conflicts > 0 {
				return true
			}
		}
	}
	return false
}

// runList writes run ids compactly: "3, 5-9, 12".
func runList(ids []int64) string {
	var parts []string
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", ids[i], ids[j]))
		} else {
			parts = append(parts, strconv.FormatInt(ids[i], 10))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// OpenLoop reports whether any cell holds open-loop runs: their offered and achieved rates
// are shown then.
func (r *Report) OpenLoop() bool {
	for i := range r.Cells {
		if r.Cells[i].Offered > 0 {
			return true
		}
	}
	return false
}

// Shaped reports whether any cell's runs asked the link for more than a delay (jitter, a
// bandwidth limit, loss, a profile): the cells table then says what the link did.
func (r *Report) Shaped() bool {
	for i := range r.Cells {
		if l := r.Cells[i].Link; l != nil && l.Shaped {
			return true
		}
	}
	return false
}

// Retried reports whether any cell's runs retried a transaction: the retry rates are shown
// then.
func (r *Report) Retried() bool {
	for i := range r.Cells {
		if r.Cells[i].RetryRate > 0 {
			return true
		}
	}
	return false
}

// pctText writes a share as a percentage to two significant digits: "2.5 %", "13 %", "–"
// for none.
func pctText(f float64) string {
	if f == 0 {
		return "–"
	}
	// Two significant digits: 100 × 0.1331 is 13.309999999999999 in floating point.
	v := 100 * f
	scale := math.Pow(10, 1-math.Floor(math.Log10(math.Abs(v))))
	return strconv.FormatFloat(math.Round(v*scale)/scale, 'f', -1, 64) + " %"
}

// overloadText says how many of a cell's finished runs were overload points.
func overloadText(c *Cell) string {
	switch {
	case c.Offered == 0:
		return ""
	case c.Overloaded == 0:
		return "no"
	}
	return fmt.Sprintf("%d of %d", c.Overloaded, c.Throughput.N)
}

// runReason is a run's reason, or that it was an overload point.
func runReason(run RunRow) string {
	if run.Reason == "" && run.Overload {
		return "overload point: the offered rate was not sustained"
	}
	return run.Reason
}

func factorKeys(r *Report) []string {
	out := make([]string, len(r.Factors))
	for i, f := range r.Factors {
		out[i] = f.Key
	}
	return out
}

func levelsText(levels []string) []string {
	out := make([]string, len(levels))
	for i, l := range levels {
		out[i] = orNone(l)
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func countsText(c Counts) string {
	parts := []string{fmt.Sprintf("%d finished", c.Finished)}
	for _, p := range []struct {
		n    int
		what string
	}{{c.Failed, "failed"}, {c.Aborted, "aborted"}, {c.Running, "running"}} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.n, p.what))
		}
	}
	return fmt.Sprintf("%d (%s)", c.Runs, strings.Join(parts, ", "))
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// usMs writes microseconds as exact milliseconds ("1.234").
func usMs(us int64) string { return num(float64(us) / 1000) }

// msText writes microseconds as milliseconds with three significant figures or more.
func msText(us int64) string {
	ms := float64(us) / 1000
	switch {
	case ms < 10:
		return fmt.Sprintf("%.3f", ms)
	case ms < 100:
		return fmt.Sprintf("%.2f", ms)
	default:
		return fmt.Sprintf("%.1f", ms)
	}
}

// seriesHeading is the configuration section's heading: "Configuration", or
// "Configuration by ServerMode" when series differ by factors.
func seriesHeading(c Config) string {
	if len(c.SeriesFactors) == 0 {
		return "Configuration"
	}
	names := make([]string, len(c.SeriesFactors))
	for i, k := range c.SeriesFactors {
		names[i] = factorLabel(k)
	}
	return "Configuration by " + listAnd(names, "and")
}

// estText writes a cell estimate for a table: "–" without one, the mean, and ± the
// interval's half-width as a share of the mean when there is an interval ("9,812 ± 2 %").
func estText(e *Estimate) string {
	if e == nil || e.N == 0 {
		return "–"
	}
	s := meanText(e.Mean)
	if e.CI != nil && e.Mean != 0 {
		s += fmt.Sprintf(" ± %.0f %%", math.Abs(e.CI.Half/e.Mean)*100)
	}
	return s
}

// meanText writes a throughput for people: whole numbers with thousands separated from 10
// up (a column of NOPM reads alike from 54 to 8,178), one decimal from 1, two below.
func meanText(v float64) string {
	switch a := math.Abs(v); {
	case a >= 10:
		return fmtNum(math.Round(v))
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// warmupText is a run's warm-up for its table: "5.0s", "7.0s auto".
func warmupText(run RunRow) string {
	if run.WarmupAuto {
		return fmt.Sprintf("%.1fs auto", run.WarmupS)
	}
	return fmt.Sprintf("%.1fs", run.WarmupS)
}
