// Package report turns the stored runs of a study into reports: throughput against RTT and
// against terminals with 95 % confidence intervals over repeats, response-time percentiles per
// transaction type, round trips and bytes per transaction, the configuration each series ran
// with, and a table of every run.
//
// Everything here is a pure function of its input. Build takes the runs (as the results store
// returns them, Tx rows included) and returns a Report: the data behind every chart and table,
// sorted so that the same runs always give the same bytes. WriteText, WriteJSON, WriteCSV and
// WriteHTML render a Report; none of them reads a clock, the environment or the network, so a
// report can be rebuilt at any time and repetitions merged later. The HTML is self-contained:
// inline CSS, inline SVG charts drawn with gonum.org/v1/plot, the chart font embedded once,
// no scripts and no external URLs, so it reads offline and prints.
//
// What it does not do: it does not open a store (the CLI reads runs with results.Store.List
// and passes them in), it does not run anything, and it does not judge comparisons —
// Report.Warnings is filled by the credibility checks of package analysis and only rendered
// here.
//
// Neighbours: package results on one side (the Run model, factor keys, HDR histogram
// decoding); package cli on the other (`dblat report <study> -o file.html`,
// `--format text|json|csv|html`).
package report
