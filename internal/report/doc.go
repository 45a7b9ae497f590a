// Package report turns stored runs into what a person reads: a study's report, a one-screen
// console summary of it, one run's summary, and the comparison of two sets of runs.
//
// Build takes a study's runs (as the results store returns them, Tx rows included) and
// returns a Report: the data behind every chart and table, sorted so that the same runs
// always give the same bytes. BuildWithAnalysis adds package analysis' latency model, pool
// sizing, response-time limits and credibility findings. The report opens with a Headline:
// the study's question (from its factors), a verdict paragraph (where throughput falls 10 %
// and 50 % as RTT is added, what share more terminals keep, how the other factors' levels
// compare, what the credibility check found), the knees per series and the headline table.
//
// Charts are figures, one per question, each of one or more panels (small multiples) with
// one legend: throughput against the RTT the link achieved (other factors as lines,
// terminals as panels), throughput against terminals (one line per RTT), throughput
// against each varied field of the link's shape (jitter, bandwidth, loss, profile), and
// response time as a row of panels per transaction type (p50 and p99), against jitter
// where a study varies it. Points carry 95 % intervals over
// repeats; the fitted latency model is drawn where it fits; numeric axes turn logarithmic
// when their positive values span more than 10^LogSpan (Options override).
//
// Writers: WriteHTML (one self-contained page: inline CSS, inline SVG drawn with
// gonum.org/v1/plot, the chart font embedded once, no scripts and no external URLs, so it
// reads offline and prints; the headline first, then findings, then details), WriteSummary
// (one screen of text: headline table, knees, verdict, findings, the page's path),
// WriteText (everything as text), WriteJSON and WriteCSV. DiffRuns and WriteDiff compare two
// runs, two sets of repeats or two studies: the configuration items that differ and each
// figure's change, with Welch's 95 % interval where both sides have repeats.
//
// An application observed through dblat proxy --observe (a run of workload "observed")
// is reported as what was predicted of it (Observed, package observe's model): a report of
// such runs alone (ObservedOnly) opens with the observation's title (protocol, upstream,
// when, how long, how many clients) and its question, a verdict read at HeadlineRTT, the
// predicted response time and throughput against added RTT (all transactions and the few
// shapes that take most of the time), what would help and the caveats, then the
// predictions at each RTT and the shapes in a table, the busiest first and the rest
// collapsed; it leaves out the throughput charts, knees, cells and credibility check that
// apply only to runs dblat drove. WriteSummary and WriteText open with the same.
//
// One run: WriteRunSummary writes its headline figures, what qualifies them (a window too
// short for think times, retries, errors, client CPU, the link's timing, the scripts it
// ran, the link's shape and what it achieved each way: AchievedLines) and a line per
// transaction type, as `dblat run` prints it when the run ends and
// `dblat results show` opens with; RunLine is its one-line form (a study prints one per run),
// RunSize and RunPath the pieces a run's first progress line names, PathText (RunPathText)
// the word or two a table's PATH column shows (results list, study plan). They look up the
// workload registry's declarations (scale names, the headline type, think times) only.
//
// Load (LoadStudy, LoadRuns) reads a report's input from a results store: a stored study's
// runs with the samples and signals of the finished ones, its file's description and
// repeats and the parts of the runs agents drove, or stored runs by id; Loaded.Build then
// builds the report any command builds, so that a caller outside package cli can too. Load
// only reads. Everything else here is a pure function of its input: nothing reads a clock,
// the environment, a store or the network, so a report can be rebuilt at any time and
// repetitions merged later. It does not judge comparisons itself — Report.Warnings is filled by package
// analysis' credibility checks and only rendered here.
//
// Neighbours: package results on one side (the Run model and the Store Load reads, factor
// keys, HDR histogram decoding), package study (a stored study file's description and
// repeats), package analysis (the model, knees and checks) and package observe (an
// observed application's Observation and its predictions); package cli on the other
// (`dblat report`, `dblat quickstart`, `dblat study run`, `dblat results diff`, and
// `dblat run` and `dblat results show` for one run).
package report
