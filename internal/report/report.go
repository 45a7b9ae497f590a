package report

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dblat/dblat/internal/analysis"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/spec"
)

// Input is what a report is built from: one study's runs and how the study varied them.
type Input struct {
	// Study and Description name the study in the report's heading.
	Study       string
	Description string
	// Factors are the factor keys the study varies (results.FactorRTT, "set.ServerMode", …),
	// in the order the study file names them; runs are grouped into cells by their levels
	// (results.FactorValue). Empty means: infer them from the runs (see Build).
	Factors []string
	// Source is the study file's text, shown verbatim at the end of the HTML; optional.
	Source string
	// Runs are all runs of the study, whatever their status, each with its Tx rows (as
	// results.Store.List returns them). Samples are not used.
	Runs []results.Run
	// Options change how charts are drawn (axis scales); the zero value chooses itself.
	Options Options
}

// Metric names of the throughput figure a report compares.
const (
	MetricNOPM = results.MetricNOPM // TPC-C New-Order transactions committed per minute
	MetricTPS  = results.MetricTPS  // transactions completed per second
)

// The times a report's response-time figures may show (Report.Latency).
const (
	// LatencyService is the service time: from checking out a connection for a
	// transaction's first try to its end.
	LatencyService = "service"
	// LatencyResponse is the response time: from the transaction's intended start (its
	// arrival in an open-loop run) to its end, what the user waited.
	LatencyResponse = "response"
)

// Report is the data behind every chart and table of a report. Build fills it
// deterministically: the same runs give the same Report, in the same order.
type Report struct {
	Study       string `json:"study"`
	Description string `json:"description,omitempty"`
	// Headline is what the report opens with: the study's question, the verdict, the knees
	// and the headline table.
	Headline Headline `json:"headline"`
	// Metric is MetricNOPM when every run is TPC-C, else MetricTPS.
	Metric string `json:"metric"`
	// Latency is the time the response-time charts and tables show: LatencyResponse when
	// any run is open-loop (or Options.Latency asks for it), else LatencyService.
	Latency string `json:"latency"`
	// Workloads are the distinct workload names of the runs, sorted.
	Workloads []string `json:"workloads"`
	// Factors are the factors the study varies with the levels found in its runs.
	Factors []Factor `json:"factors"`
	Counts  Counts   `json:"counts"`
	// Cells are the combinations of factor levels that have runs, ordered by the factors'
	// levels (first factor slowest).
	Cells []Cell `json:"cells"`
	// TxTypes are the transaction types found in finished runs: TPC-C's in the spec's order
	// (New-Order, Payment, Order-Status, Delivery, Stock-Level), then any other sorted.
	TxTypes []string `json:"tx_types"`
	// Charts are the throughput charts followed by the response-time charts.
	Charts []Chart `json:"charts"`
	// Config is the configuration of each series as the servers reported it.
	Config Config `json:"config"`
	// Runs lists every run, finished or not, by start time.
	Runs []RunRow `json:"runs"`
	// Agents lists each agent's part of the runs that several agents drove; BuildWithAnalysis
	// fills it from the parts it is given (analysis.CheckOptions.Parts).
	Agents []AgentRow `json:"agents,omitempty"`
	// Warnings are credibility findings (filled by package analysis; rendered when
	// non-empty).
	Warnings []Warning `json:"warnings"`
	// Notes explain how the figures were computed: intervals, pooling, axis choices.
	Notes []string `json:"notes"`
	// Scripts are the distinct texts the runs ran (the script workload's scripts and init
	// scripts), each once per file and hash, with the runs that ran it.
	Scripts []ScriptText `json:"scripts,omitempty"`
	// Source is the study file text, if given.
	Source string `json:"source,omitempty"`
	// AtRate is the response time against RTT of each series of open-loop runs at a fixed
	// offered rate, with its saturation RTT and the model's departures
	// (analysis.ResponseAtRate); empty without such runs or without RTT as a factor.
	AtRate []analysis.RateSeries `json:"response_at_rate,omitempty"`
	// Observed holds, for each finished run that stores an observation of an application
	// (dblat proxy --observe), what was seen and the predictions of what a farther
	// database would cost it; its charts are in Charts (ChartPredicted).
	Observed []Observed `json:"observed,omitempty"`
	// Operations are the operations dblat started during the runs' windows, each with its
	// run's figures before, during and after it.
	Operations []OperationRow `json:"operations,omitempty"`
	// Analysis is the latency model, pool sizing and response-time limits of the same runs
	// (set by BuildWithAnalysis; nil from Build).
	Analysis *analysis.Analysis `json:"analysis,omitempty"`
	// Options are the chart options the report was built with.
	Options Options `json:"options"`

	// memory is set when a run had a memory limit (results.FactorMemory): the cells then
	// say what the server's cache did (Cell.Cache).
	memory bool
}

// Factor is one varied factor and the levels its runs have, sorted by
// results.SortFactorValues and written as study files write them ("100µs", "20").
type Factor struct {
	Key    string   `json:"key"`
	Label  string   `json:"label"`
	Levels []string `json:"levels"`
}

// Counts are the numbers of runs by status.
type Counts struct {
	Runs     int `json:"runs"`
	Finished int `json:"finished"`
	Failed   int `json:"failed"`
	Aborted  int `json:"aborted"`
	Running  int `json:"running"`
}

// Cell is one combination of factor levels and the aggregate of its finished runs. Failed,
// aborted and running runs are counted in Runs but enter no figure.
type Cell struct {
	// Key is "factor=level" pairs in factor order, separated by spaces.
	Key string `json:"key"`
	// Levels holds one level per Report.Factors entry.
	Levels []string `json:"levels"`
	// Runs counts the cell's runs of any status; Finished lists the ids of those that enter
	// the figures, ascending.
	Runs     int     `json:"runs"`
	Finished []int64 `json:"finished"`
	// SetAside are the IDs of the cell's finished runs that a study set aside as disturbed
	// (results.Run.SetAside): in no figure of the cell.
	SetAside []int64 `json:"set_aside,omitempty"`
	// Throughput is Report.Metric over the finished repeats.
	Throughput Estimate `json:"throughput"`
	// AchievedRTT is the RTT the link added, as each run measured it (analysis.AchievedRTT:
	// the requested RTT plus the link's mean lateness each way during the window),
	// averaged over the finished repeats and rounded to the microsecond. In JSON,
	// nanoseconds.
	AchievedRTT time.Duration `json:"achieved_rtt"`
	// Tx holds the per-transaction-type figures, by type name.
	Tx []TxCell `json:"tx,omitempty"`
	// Open-loop cells: Overloaded counts the finished runs that were overload points
	// (results.Summary.Overload), Offered and Achieved are the arrivals due and started
	// per second of the window (means over the finished runs).
	Overloaded int     `json:"overloaded,omitempty"`
	Offered    float64 `json:"offered_rate,omitempty"`
	Achieved   float64 `json:"achieved_rate,omitempty"`
	// RetryRate is the share of the transactions that ended in the finished runs which
	// needed more than one try (results.Summary.Retried).
	RetryRate float64 `json:"retry_rate,omitempty"`
	// Link is what the link did in the finished runs, nil when none recorded it.
	Link *CellLink `json:"link,omitempty"`
	// Cache is the memory the server had and what its cache did in the finished runs; nil
	// when none recorded either.
	Cache *CellCache `json:"cache,omitempty"`
}

// TxCell is one transaction type's figures in one cell, pooled over its finished runs. A
// type that completed no transaction in the cell (Done false) has no latency: writers show
// "–", not 0.
type TxCell struct {
	Type string `json:"type"`
	// Runs is the number of finished runs that recorded this type.
	Runs      int   `json:"runs"`
	Committed int64 `json:"committed"`
	Rollbacks int64 `json:"rollbacks"`
	Errors    int64 `json:"errors"`
	// Pooled is true when the latencies below come from the runs' HDR histograms merged
	// into one distribution; false when some run had no histogram and they are the means
	// of the runs' own percentiles instead.
	Pooled bool `json:"pooled"`
	// Latencies in microseconds: the time Report.Latency names. Service time excludes the
	// connection wait; response time includes it and any wait for a terminal.
	MeanUs float64 `json:"mean_us"`
	P50Us  int64   `json:"p50_us"`
	P90Us  int64   `json:"p90_us"`
	P99Us  int64   `json:"p99_us"`
	MaxUs  int64   `json:"max_us"`
	// Connection-pool wait: mean weighted by transactions, p99 pooled like the latencies.
	WaitMeanUs float64 `json:"wait_mean_us"`
	WaitP99Us  int64   `json:"wait_p99_us"`
	// Wire cost per committed transaction, means weighted by committed transactions; zero
	// when the connections were not metered.
	RoundTrips float64 `json:"round_trips"`
	BytesUp    float64 `json:"bytes_up"`
	BytesDown  float64 `json:"bytes_down"`
	// When the latencies above are response times: the service time's median and 99th
	// percentile, and the schedule lag's 99th percentile (pooled like them).
	ServiceP50Us int64 `json:"service_p50_us,omitempty"`
	ServiceP99Us int64 `json:"service_p99_us,omitempty"`
	LagP99Us     int64 `json:"lag_p99_us,omitempty"`
	// Retries counts the tries beyond the first, Retried the transactions that needed more
	// than one (sums over the finished runs).
	Retries int64 `json:"retries,omitempty"`
	Retried int64 `json:"retried,omitempty"`
	// Conflicts counts the tries that failed with a retryable error (a serialization
	// failure, deadlock, update or lock conflict): the retries, and the transactions that
	// failed every try.
	Conflicts int64 `json:"conflicts,omitempty"`
}

// ended is how many transactions of the type ended: committed, rolled back or failed.
func (t *TxCell) ended() int64 { return t.Committed + t.Rollbacks + t.Errors }

// RetriesPerTx is the retries per transaction that ended; 0 when none ended.
func (t *TxCell) RetriesPerTx() float64 { return perTx(t.Retries, t.ended()) }

// ConflictsPerTx is the retryable failures (Conflicts) per transaction that ended: a
// transaction that met two update conflicts before it committed counts two.
func (t *TxCell) ConflictsPerTx() float64 { return perTx(t.Conflicts, t.ended()) }

func perTx(n, ended int64) float64 {
	if ended == 0 {
		return 0
	}
	return float64(n) / float64(ended)
}

// ScriptText is one text the runs of a report ran (results.Script), with the ids of the
// runs that ran it.
type ScriptText struct {
	results.Script
	Runs []int64 `json:"runs"`
}

// RunRow is one line of the run table.
type RunRow struct {
	ID      int64          `json:"id"`
	Started time.Time      `json:"started"`
	Status  results.Status `json:"status"`
	Reason  string         `json:"reason,omitempty"`
	// Levels holds the run's level of each Report.Factors entry.
	Levels []string `json:"levels"`
	// Throughput is Report.Metric as the run recorded it (partial for unfinished runs).
	Throughput float64 `json:"throughput"`
	// ElapsedS is the measured window achieved, in seconds.
	ElapsedS float64 `json:"elapsed_s"`
	// WarmupS is the warm-up the run had before it, in seconds (for an automatic warm-up,
	// what the steady-state rule chose), and WarmupAuto says it was automatic.
	WarmupS    float64 `json:"warmup_s"`
	WarmupAuto bool    `json:"warmup_auto,omitempty"`
	// Overload marks an open-loop run that did not sustain its rate.
	Overload bool `json:"overload,omitempty"`
}

// Warning is one credibility finding about the runs of a report. Build leaves
// Report.Warnings empty; package analysis appends to it.
type Warning struct {
	// Check names the check that found it ("mixed-builds", "client-bound", …).
	Check string `json:"check"`
	// Severity is "info", "warning" or "error".
	Severity string `json:"severity"`
	// Message says what is wrong in one sentence; Evidence gives the values that show it
	// and Fix what to change (either may be empty).
	Message  string `json:"message"`
	Evidence string `json:"evidence,omitempty"`
	Fix      string `json:"fix,omitempty"`
	// Cells and Runs point at what the finding is about, if anything in particular.
	Cells []string `json:"cells,omitempty"`
	Runs  []int64  `json:"runs,omitempty"`
}

// Build computes the report of in.Runs. It is a pure function: it reads nothing but its
// input and its result is sorted, so the same runs always give the same report.
//
// A report of observed applications alone (ObservedOnly) is their predictions: its headline
// is the first observation's question and the observations' verdicts, its charts the
// predictions', its notes the model's.
//
// Rules: only finished runs enter means, percentiles and wire figures; failed, aborted and
// running runs appear in the run table with their reason. Runs are grouped into cells by
// their levels of in.Factors (results.Group, as package analysis groups them). The
// throughput metric is NOPM when every run is TPC-C, else TPS. When in.Factors is empty the
// factors are inferred: every standard factor key and every option key whose value differs
// between runs.
//
// Build fails on a malformed factor list or on a stored histogram that does not decode,
// naming the run.
func Build(in Input) (*Report, error) {
	factors := in.Factors
	if len(factors) == 0 {
		factors = results.InferFactors(in.Runs)
	}
	if err := checkFactors(factors); err != nil {
		return nil, err
	}
	if err := in.Options.check(); err != nil {
		return nil, err
	}
	r := &Report{
		Study:       in.Study,
		Description: in.Description,
		Source:      in.Source,
		Metric:      results.MetricOf(in.Runs),
		Latency:     latencyOf(in),
		Workloads:   []string{},
		Factors:     []Factor{},
		Cells:       []Cell{},
		TxTypes:     []string{},
		Charts:      []Chart{},
		Runs:        []RunRow{},
		Warnings:    []Warning{},
		Notes:       []string{},
		Options:     in.Options,
	}

	// Factor levels, sorted.
	workloads := map[string]bool{}
	for i := range in.Runs {
		workloads[in.Runs[i].Params.Workload] = true
	}
	r.Workloads = slices.Sorted(maps.Keys(workloads))
	for i := range in.Runs {
		r.count(in.Runs[i].Status)
	}

	// Cells, as package analysis groups them too.
	r.memory = slices.ContainsFunc(in.Runs, func(run results.Run) bool {
		return run.Server.MemoryLimit > 0 || run.Params.Options[results.FactorMemory] != ""
	})
	g := results.Group(in.Runs, factors)
	for f, key := range g.Factors {
		r.Factors = append(r.Factors, Factor{Key: key, Label: factorLabel(key), Levels: g.Levels[f]})
	}
	types := map[string]bool{}
	for _, gc := range g.Cells {
		c, err := r.cell(gc)
		if err != nil {
			return nil, err
		}
		for _, t := range c.Tx {
			types[t.Type] = true
		}
		r.Cells = append(r.Cells, c)
	}
	r.TxTypes = txOrder(slices.Sorted(maps.Keys(types)))

	r.Scripts = scriptTexts(in.Runs)
	r.Operations = r.operations(in.Runs)

	// The run table, by start time.
	rows := make([]*results.Run, len(in.Runs))
	for i := range in.Runs {
		rows[i] = &in.Runs[i]
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if !rows[i].Started.Equal(rows[j].Started) {
			return rows[i].Started.Before(rows[j].Started)
		}
		return rows[i].ID < rows[j].ID
	})
	for _, run := range rows {
		r.Runs = append(r.Runs, RunRow{
			ID: run.ID, Started: run.Started.UTC(), Status: run.Status, Reason: run.Reason,
			Levels: r.levelsOf(run), Throughput: round(r.metric(run), 4),
			ElapsedS: round(run.Summary.Elapsed.Seconds(), 3), Overload: run.Params.OpenLoop() && run.Summary.Overload,
			WarmupS: round(run.WarmupHad().Seconds(), 3), WarmupAuto: run.Params.WarmupAuto,
		})
	}

	obs, obsCharts, err := r.observed(in.Runs)
	if err != nil {
		return nil, err
	}
	r.Observed = obs
	r.Config = r.config(in.Runs)
	if r.ObservedOnly() {
		// Applications dblat only watched: no throughput to chart against factors, no
		// latency model to fit; the predictions are the report.
		r.Charts = obsCharts
		r.Notes = append(observedNotes(), "No credibility check, no latency model fitted over runs: they judge runs dblat drove (their warm-up, calibration and repeats), not an application it only watched.")
		r.Headline = r.observedHeadline()
		return r, nil
	}
	fits := analysis.FitLatency(in.Runs, factors)
	r.AtRate = analysis.ResponseAtRate(in.Runs, factors)
	r.Charts = append(r.charts(fits, in.Runs), obsCharts...)
	// A report of a run or two draws each one's timeline; a study's, the disturbed runs'.
	r.Charts = append(r.Charts, r.timelines(in.Runs, len(in.Runs) <= 2)...)
	r.Notes = r.notes(len(in.Factors) == 0 && len(factors) > 0)
	if len(obs) > 0 {
		r.Notes = append(r.Notes, observedNotes()...)
	}
	r.Headline = r.headline(fits)
	return r, nil
}

// latencyOf chooses the report's latency: Options.Latency, else response time when any
// finished run is open-loop.
func latencyOf(in Input) string {
	if in.Options.Latency != "" {
		return in.Options.Latency
	}
	for i := range in.Runs {
		if in.Runs[i].Counted() && in.Runs[i].Params.OpenLoop() {
			return LatencyResponse
		}
	}
	return LatencyService
}

// checkFactors rejects empty and repeated factor keys.
func checkFactors(keys []string) error {
	seen := map[string]bool{}
	for _, k := range keys {
		if strings.TrimSpace(k) == "" {
			return errors.New("report: empty factor key")
		}
		if seen[k] {
			return fmt.Errorf("report: factor %q named twice", k)
		}
		seen[k] = true
	}
	return nil
}

// metric returns the report's throughput figure of one run.
func (r *Report) metric(run *results.Run) float64 { return results.MetricValue(run, r.Metric) }

func (r *Report) count(s results.Status) {
	r.Counts.Runs++
	switch s {
	case results.StatusFinished:
		r.Counts.Finished++
	case results.StatusFailed:
		r.Counts.Failed++
	case results.StatusAborted:
		r.Counts.Aborted++
	case results.StatusRunning:
		r.Counts.Running++
	}
}

func (r *Report) levelsOf(run *results.Run) []string {
	out := make([]string, len(r.Factors))
	for i, f := range r.Factors {
		out[i] = results.FactorValue(run, f.Key)
	}
	return out
}

// cell aggregates the runs of one combination of levels.
func (r *Report) cell(g *results.Cell) (Cell, error) {
	c := Cell{Key: g.Key, Levels: g.Levels, Runs: len(g.Runs), Finished: []int64{}}
	fin := g.Finished
	xs := make([]float64, len(fin))
	res := make([]float64, len(fin))
	byType := map[string][]txOf{}
	for _, run := range g.SetAside {
		c.SetAside = append(c.SetAside, run.ID)
	}
	for i, run := range fin {
		c.Finished = append(c.Finished, run.ID)
		xs[i] = r.metric(run)
		res[i] = results.Resolution(run, r.Metric)
		for j := range run.Tx {
			t := &run.Tx[j]
			byType[t.Type] = append(byType[t.Type], txOf{run: run.ID, tx: t})
		}
	}
	c.Throughput = estimateWith(xs, res)
	var ended, retried int64
	for _, run := range fin {
		ended += run.Summary.Committed + run.Summary.Rollbacks
		for _, n := range run.Summary.Errors {
			ended += n
		}
		retried += run.Summary.Retried
		if !run.Params.OpenLoop() {
			continue
		}
		if run.Summary.Overload {
			c.Overloaded++
		}
		if el := run.Summary.Elapsed.Seconds(); el > 0 {
			c.Offered += float64(run.Summary.Offered) / el / float64(len(fin))
		}
		c.Achieved += run.Summary.AchievedRate / float64(len(fin))
	}
	c.Offered, c.Achieved = round(c.Offered, 1), round(c.Achieved, 1)
	if ended > 0 && retried > 0 {
		c.RetryRate = round(float64(retried)/float64(ended), 4)
	}
	if len(fin) > 0 {
		var sum float64
		for _, run := range fin {
			sum += float64(analysis.AchievedRTT(run))
		}
		c.AchievedRTT = (time.Duration(math.Round(sum/float64(len(fin))/1e3)) * time.Microsecond)
	}
	c.Link = cellLink(fin)
	if r.memory {
		c.Cache = cellCache(fin)
	}
	for _, typ := range slices.Sorted(maps.Keys(byType)) {
		t, err := poolTx(typ, byType[typ], r.Latency == LatencyResponse)
		if err != nil {
			return Cell{}, err
		}
		c.Tx = append(c.Tx, t)
	}
	return c, nil
}

// txOf is one run's summary of one transaction type.
type txOf struct {
	run int64
	tx  *results.TxSummary
}

// latView is the latency a report shows of one run's summary of one type: its histogram,
// mean, percentiles and maximum.
type latView struct {
	hist                string
	mean                float64
	p50, p90, p99, maxv int64
}

// viewOf returns t's service time, or its response time when response is set and t has one
// (runs stored before response times were recorded fall back to their service time, which
// for a closed loop differs from it only by the connection wait).
func viewOf(t *results.TxSummary, response bool) latView {
	if response && (t.RespHist != "" || t.RespMeanUs > 0) {
		return latView{t.RespHist, t.RespMeanUs, t.RespP50Us, t.RespP90Us, t.RespP99Us, t.RespMaxUs}
	}
	return latView{t.Hist, t.MeanUs, t.P50Us, t.P90Us, t.P99Us, t.MaxUs}
}

// retryableClass is the error class of retryable failures as runs store it (engine's
// ClassRetryable).
const retryableClass = "retryable"

// scriptTexts lists the distinct scripts of runs, in the order first met, each with the
// runs that ran it.
func scriptTexts(runs []results.Run) []ScriptText {
	var out []ScriptText
	index := map[string]int{}
	for i := range runs {
		for _, sc := range runs[i].Scripts {
			k := sc.Kind + "\x00" + sc.Name + "\x00" + sc.Path + "\x00" + sc.SHA256
			j, ok := index[k]
			if !ok {
				j = len(out)
				index[k] = j
				out = append(out, ScriptText{Script: sc})
			}
			out[j].Runs = append(out[j].Runs, runs[i].ID)
		}
	}
	return out
}

// poolTx merges the summaries of one transaction type over the finished runs of a cell.
// Percentiles come from the merged HDR histograms (the pooled distribution, which weighs
// every transaction equally — averaging the runs' percentiles would not); when any run that
// completed transactions of the type lacks a histogram they fall back to the mean of those
// runs' own percentiles. Runs that completed none (a short window may draw no Delivery)
// count in Runs only: they have no latency to pool. With response set the latencies are
// response times, and the service time's p50 and p99 and the schedule lag's p99 are added.
func poolTx(typ string, txs []txOf, response bool) (TxCell, error) {
	c := TxCell{Type: typ, Runs: len(txs), Pooled: true}
	var done []txOf // the runs that completed transactions of the type
	var total, waitW, rtW float64
	var waitSum, rtSum, upSum, downSum float64
	hasWait, hasSvc, hasLag := true, true, true
	for _, x := range txs {
		t := x.tx
		c.Committed += t.Committed
		c.Rollbacks += t.Rollbacks
		c.Retries += t.Retries
		c.Retried += t.Retried
		c.Conflicts += t.Retries + t.Errors[retryableClass]
		for _, n := range t.Errors {
			c.Errors += n
		}
		n := float64(t.Committed + t.Rollbacks)
		if n == 0 {
			continue // no transaction: no latency to pool, no histogram stored
		}
		done = append(done, x)
		total += n
		if viewOf(t, response).hist == "" {
			c.Pooled = false
		}
		hasWait = hasWait && t.WaitHist != ""
		hasSvc = hasSvc && t.Hist != ""
		hasLag = hasLag && t.LagHist != ""
		waitSum += t.WaitMeanUs * n
		waitW += n
		cm := float64(t.Committed)
		rtSum += t.RoundTrips * cm
		upSum += t.BytesUp * cm
		downSum += t.BytesDown * cm
		rtW += cm
	}
	if waitW > 0 {
		c.WaitMeanUs = round(waitSum/waitW, 1)
	}
	if rtW > 0 {
		c.RoundTrips = round(rtSum/rtW, 4)
		c.BytesUp = round(upSum/rtW, 2)
		c.BytesDown = round(downSum/rtW, 2)
	}

	if len(done) == 0 {
		return c, nil // Done() is false: writers show "–"
	}
	if c.Pooled {
		h, err := mergeHists(done, func(t *results.TxSummary) string { return viewOf(t, response).hist })
		if err != nil {
			return TxCell{}, err
		}
		c.MeanUs = round(h.Mean(), 1)
		c.P50Us, c.P90Us, c.P99Us = h.ValueAtQuantile(50), h.ValueAtQuantile(90), h.ValueAtQuantile(99)
		c.MaxUs = h.Max()
	} else {
		var mean, p50, p90, p99 float64
		for _, x := range done {
			t := x.tx
			v := viewOf(t, response)
			w := float64(t.Committed + t.Rollbacks)
			mean += v.mean * w
			p50 += float64(v.p50)
			p90 += float64(v.p90)
			p99 += float64(v.p99)
			c.MaxUs = max(c.MaxUs, v.maxv)
		}
		c.MeanUs = round(mean/total, 1)
		n := float64(len(done))
		c.P50Us, c.P90Us, c.P99Us = int64(p50/n+0.5), int64(p90/n+0.5), int64(p99/n+0.5)
	}
	if hasWait {
		h, err := mergeHists(done, func(t *results.TxSummary) string { return t.WaitHist })
		if err != nil {
			return TxCell{}, err
		}
		c.WaitP99Us = h.ValueAtQuantile(99)
	} else {
		for _, x := range done {
			c.WaitP99Us = max(c.WaitP99Us, x.tx.WaitP99Us)
		}
	}
	if !response {
		return c, nil
	}
	if hasSvc {
		h, err := mergeHists(done, func(t *results.TxSummary) string { return t.Hist })
		if err != nil {
			return TxCell{}, err
		}
		c.ServiceP50Us, c.ServiceP99Us = h.ValueAtQuantile(50), h.ValueAtQuantile(99)
	}
	if hasLag {
		h, err := mergeHists(done, func(t *results.TxSummary) string { return t.LagHist })
		if err != nil {
			return TxCell{}, err
		}
		c.LagP99Us = h.ValueAtQuantile(99)
	}
	return c, nil
}

// txOrder puts TPC-C's transaction types first, in the spec's order (limitTypes), and
// keeps the others in their order after them.
func txOrder(types []string) []string {
	out := make([]string, 0, len(types))
	for _, t := range limitTypes {
		if slices.Contains(types, t) {
			out = append(out, t)
		}
	}
	for _, t := range types {
		if !slices.Contains(limitTypes, t) {
			out = append(out, t)
		}
	}
	return out
}

// mergeHists decodes the histogram that get selects from each summary and merges them into
// one. A histogram that does not decode is an error naming its run.
func mergeHists(txs []txOf, get func(*results.TxSummary) string) (*hdrhistogram.Histogram, error) {
	var h *hdrhistogram.Histogram
	for _, x := range txs {
		d, err := results.DecodeHist(get(x.tx))
		if err != nil {
			return nil, fmt.Errorf("report: run %d, transaction %s: %w", x.run, x.tx.Type, err)
		}
		if h == nil {
			h = d
			continue
		}
		if dropped := h.Merge(d); dropped > 0 {
			return nil, fmt.Errorf("report: run %d, transaction %s: %d values out of the merged histogram's range", x.run, x.tx.Type, dropped)
		}
	}
	return h, nil
}

// notes explains how the report's figures were computed.
func (r *Report) notes(inferred bool) []string {
	n := []string{
		fmt.Sprintf("Throughput is %s. Only finished runs enter means, percentiles and wire figures; failed, aborted and running runs are listed in the run table with their reason.", metricDesc(r.Metric)),
		"Intervals are 95 % confidence intervals of the mean over a cell's finished repeats, by Student's t with n−1 degrees of freedom (t = 4.303 for n = 3, 2.776 for n = 5); a cell with a single finished run has a mean but no interval.",
		"Latency percentiles are read from the pooled distribution: the HDR histograms of a cell's finished repeats are merged, so every transaction weighs the same (averaging the runs' percentiles would not). " + latencyNote(r.Latency),
		"Round trips and bytes are per committed transaction, measured on the client's connections, averaged over the repeats weighted by their committed transactions.",
	}
	if inferred {
		keys := make([]string, len(r.Factors))
		for i, f := range r.Factors {
			keys[i] = f.Key
		}
		n = append(n, "No factors were given: they were inferred as the keys whose values differ between runs ("+strings.Join(keys, ", ")+").")
	}
	return n
}

// latencyNote says which time the report's response-time figures are.
func latencyNote(latency string) string {
	if latency == LatencyResponse {
		return "They are response times, from each transaction's intended start (its arrival on an open-loop run's schedule, the end of the keying time under think times, else when the terminal asked for a connection) to its end: what a user waited, including any wait for a terminal or a pooled connection (the schedule lag) and every retry. The transaction tables give the service time (from the connection checkout) and the lag beside them; response = lag + service. In open-loop runs the offered rate does not slow down with the server, so a backlog shows in the response time where a closed loop would hide it."
	}
	return "They are service times, from checking out a connection to the end of the transaction's last try; connection-pool wait is reported separately."
}

func metricDesc(m string) string {
	if m == MetricNOPM {
		return "NOPM, TPC-C New-Order transactions committed per minute of the measurement window"
	}
	return "TPS, transactions completed (committed plus designed rollbacks) per second of the measurement window"
}

// Done reports whether the type completed any transaction (committed or designed
// rollback) in the cell; without one its latencies and wire figures mean nothing.
func (t *TxCell) Done() bool { return t.Committed+t.Rollbacks > 0 }

// CellLink is what the link did in a cell's finished runs (results.LinkAchieved): the
// bandwidth used each way, on average (the mean over the runs) and at its peak (the highest
// over results.PeakInterval of any run), in bytes per second; the jitter achieved each way
// (the mean over the runs; 0 where none was asked); the segments sent and lost, both ways,
// over the runs.
type CellLink struct {
	MeanUp     float64       `json:"mean_up"`
	MeanDown   float64       `json:"mean_down"`
	PeakUp     float64       `json:"peak_up"`
	PeakDown   float64       `json:"peak_down"`
	JitterUp   time.Duration `json:"jitter_up,omitempty"`
	JitterDown time.Duration `json:"jitter_down,omitempty"`
	Sent       int64         `json:"sent,omitempty"`
	Lost       int64         `json:"lost,omitempty"`
	// Shaped is set when a run asked for more than a delay: jitter, a bandwidth limit,
	// loss or a profile.
	Shaped bool `json:"shaped,omitempty"`
}

// cellLink pools what the links of runs achieved; nil when none recorded it.
func cellLink(runs []*results.Run) *CellLink {
	var l CellLink
	n := 0
	for _, r := range runs {
		if r.Link == nil || r.Link.Achieved == nil {
			continue
		}
		a := r.Link.Achieved
		n++
		p := &r.Params
		l.Shaped = l.Shaped || p.Jitter > 0 || p.Bandwidth > 0 || p.Loss > 0 || p.Profile != ""
		l.MeanUp, l.MeanDown = l.MeanUp+a.Up.MeanRate, l.MeanDown+a.Down.MeanRate
		l.PeakUp, l.PeakDown = max(l.PeakUp, a.Up.PeakRate), max(l.PeakDown, a.Down.PeakRate)
		l.JitterUp, l.JitterDown = l.JitterUp+a.Up.Jitter, l.JitterDown+a.Down.Jitter
		l.Sent, l.Lost = l.Sent+a.Up.Sent+a.Down.Sent, l.Lost+a.Up.Lost+a.Down.Lost
	}
	if n == 0 {
		return nil
	}
	l.MeanUp, l.MeanDown = round(l.MeanUp/float64(n), 0), round(l.MeanDown/float64(n), 0)
	l.PeakUp, l.PeakDown = round(l.PeakUp, 0), round(l.PeakDown, 0)
	l.JitterUp = (l.JitterUp / time.Duration(n)).Round(time.Microsecond)
	l.JitterDown = (l.JitterDown / time.Duration(n)).Round(time.Microsecond)
	return &l
}

// Text says what the link did in a cell in a few words: the bandwidth used up/down in
// Mbit/s, mean (peak), the jitter achieved up/down and the share of segments lost, where
// asked: "0.21/0.95 (0.40/2.1) Mbit/s, jitter 498/503µs, lost 0.11 %"; "–" without.
func (l *CellLink) Text() string {
	if l == nil {
		return "–"
	}
	mbit := func(b float64) string { return strconv.FormatFloat(b*8/1e6, 'g', 3, 64) }
	s := fmt.Sprintf("%s/%s (%s/%s) Mbit/s", mbit(l.MeanUp), mbit(l.MeanDown), mbit(l.PeakUp), mbit(l.PeakDown))
	if l.JitterUp > 0 || l.JitterDown > 0 {
		s += fmt.Sprintf(", jitter %s/%s", spec.FormatDuration(l.JitterUp), spec.FormatDuration(l.JitterDown))
	}
	if l.Sent > 0 {
		s += fmt.Sprintf(", lost %.3g %%", 100*float64(l.Lost)/float64(l.Sent))
	}
	return s
}
