package report

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/spec"
)

// TestScriptsAndConflicts: a report of script runs lists each distinct script text once,
// with the runs that ran it, and gives each transaction type's retries and conflicts per
// transaction that ended, where any conflict happened (retried or failed).
func TestScriptsAndConflicts(t *testing.T) {
	orders := results.Script{Kind: results.ScriptFile, Name: "orders", Path: "orders-random.sql", Weight: 1, Text: "SELECT 1;\n"}
	orders.SHA256 = results.ScriptSum(orders.Text)
	edited := orders
	edited.Text = "SELECT 2;\n"
	edited.SHA256 = results.ScriptSum(edited.Text)
	run := func(id int64, tries int, sc results.Script, committed, retries, failed int64) results.Run {
		return results.Run{ID: id, Status: results.StatusFinished, Started: time.Date(2026, 1, 1, 0, 0, int(id), 0, time.UTC),
			Params:  results.Params{Workload: "script", Drive: spec.Drive{Terminals: 5, Duration: time.Second, MaxTries: tries}},
			Server:  results.Server{Engine: "firebird"},
			Summary: results.Summary{Metric: results.MetricTPS, Elapsed: time.Second, Committed: committed, TPS: float64(committed), Retries: retries},
			Tx: []results.TxSummary{{Type: "orders", Committed: committed, Retries: retries, Retried: retries,
				Errors: map[string]int64{"retryable": failed, "other": 1}}},
			Scripts: []results.Script{sc}}
	}
	r, err := Build(Input{Study: "s", Factors: []string{"max_tries"}, Runs: []results.Run{
		run(1, 1, orders, 90, 0, 9), run(2, 10, orders, 100, 40, 0), run(3, 10, edited, 100, 20, 0)}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Scripts) != 2 || r.Scripts[0].Path != "orders-random.sql" || len(r.Scripts[0].Runs) != 2 || r.Scripts[1].Runs[0] != 3 {
		t.Errorf("scripts %+v", r.Scripts)
	}
	one, ten := findTx(&r.Cells[0], "orders"), findTx(&r.Cells[1], "orders")
	// max_tries 1: 9 conflicts over 90 + 9 + 1 ended; 10: 60 retries over 200 + 2 ended.
	if math.Abs(one.ConflictsPerTx()-0.09) > 1e-12 || one.RetriesPerTx() != 0 ||
		math.Abs(ten.ConflictsPerTx()-60.0/202) > 1e-12 || ten.RetriesPerTx() != ten.ConflictsPerTx() {
		t.Errorf("per transaction: %+v %+v", one, ten)
	}
	var text, html bytes.Buffer
	if err := WriteText(&text, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"retries/tx", "conflicts/tx", "0.090", "0.297", "orders-random.sql", orders.SHA256[:12], "1-2"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, text.String())
		}
	}
	if err := WriteHTML(&html, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(html.String(), `<section id="scripts">`) || !strings.Contains(html.String(), "<pre>SELECT 2;\n</pre>") {
		t.Error("the HTML report has no scripts section with their texts")
	}
}
