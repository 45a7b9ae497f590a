package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/analysis"
	"github.com/dblat/dblat/internal/results"
)

// TestAgentsSection: a run that two agents drove gets a row per part in the HTML and JSON,
// with each part's own figures; a failed part shows its reason and no figures; a report
// without such runs has no Agents section.
func TestAgentsSection(t *testing.T) {
	in := fixInput(t)
	run := in.Runs[0]
	start := run.Started
	done := run
	done.Params.Terminals, done.Summary.Committed = 6, 1234
	done.Client.CPUSeconds = 0.5 // 1234 committed + rollbacks: about 400 µs each
	done.Link = &results.Link{AchievedP50: 10 * time.Millisecond,
		LatenessUp: &results.Lateness{N: 10, P99: 42 * time.Microsecond}, LatenessDown: &results.Lateness{N: 10, P99: 57 * time.Microsecond}}
	parts := map[int64][]results.Part{run.ID: {
		{RunID: run.ID, Agent: "east-1", Index: 0, State: results.PartDone, StartAt: start, Started: start.Add(780 * time.Microsecond), Result: &done},
		{RunID: run.ID, Agent: "west-2", Index: 1, State: results.PartFailed, Reason: "stopped heart-beating"},
	}}
	rep, _, err := BuildWithAnalysis(in, analysis.CheckOptions{Parts: parts})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Agents) != 2 || rep.Agents[0].Terminals != 6 || rep.Agents[0].Throughput != results.MetricValue(&done, rep.Metric) ||
		rep.Agents[0].LinkP50 != 10*time.Millisecond || !rep.Agents[0].Started || rep.Agents[0].StartedAfter != 780*time.Microsecond ||
		rep.Agents[1].Terminals != 0 || rep.Agents[1].Reason != "stopped heart-beating" {
		t.Fatalf("agent rows: %+v", rep.Agents)
	}
	var html bytes.Buffer
	if err := WriteHTML(&html, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<a href="#agents">Agents</a>`, `<section id="agents">`, "<td class=\"name\">east-1</td>", "<td class=\"num\">1234</td>",
		"42 / 57", "<td>failed: stopped heart-beating</td>"} {
		if !strings.Contains(html.String(), want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	var js bytes.Buffer
	if err := WriteJSON(&js, rep); err != nil || !strings.Contains(js.String(), `"agent": "west-2"`) {
		t.Errorf("JSON lacks the agents (%v)", err)
	}

	plain, _, err := BuildWithAnalysis(in, analysis.CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	html.Reset()
	if err := WriteHTML(&html, plain); err != nil || strings.Contains(html.String(), `id="agents"`) || len(plain.Agents) != 0 {
		t.Errorf("a report without agents' runs has an Agents section (%v)", err)
	}
}
