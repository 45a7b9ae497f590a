package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/spec"
	_ "github.com/dblat/dblat/internal/workload/all" // scale names and think times
)

// TestRunSummaryGolden pins the text of WriteRunSummary, RunLine, RunSize and RunPath for
// the runs of the stored studies and for synthetic runs that take every branch
// (testdata/run-summary-runs.json): an aborted TPC-C run with think times in too short a
// window, retries, a latency limit, error examples, CPU and steal, and a calibrated link; a
// blob run (no scale) with a type it never ran; a script run over the Unix socket; an
// overloaded open loop whose link measured below zero; an observed application; a failed
// run that measured nothing. The golden file was written by `dblat run`'s summary before it
// moved here from package cli: its bytes are what users have been reading.
func TestRunSummaryGolden(t *testing.T) {
	var out bytes.Buffer
	for _, name := range []string{"run-summary-runs.json", "quickstart-runs.json", "fb-three-arch-runs.json"} {
		raw, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		var runs []results.Run
		if err := json.Unmarshal(raw, &runs); err != nil {
			t.Fatal(err)
		}
		for i := range runs {
			r := &runs[i]
			fmt.Fprintf(&out, "=== %s run %d\n", name, r.ID)
			if err := WriteRunSummary(&out, r); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&out, "line: %s\nsize: %s\npath: %s\n", RunLine(r), RunSize(r), RunPath(r))
		}
	}
	golden(t, "run-summary.golden", out.Bytes())
}

// failingWriter fails every write.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, os.ErrClosed }

// TestRunSummaryWriteError: a failed write is returned, not dropped.
func TestRunSummaryWriteError(t *testing.T) {
	r := &results.Run{ID: 1, Params: results.Params{Workload: "tpcc"}}
	if err := WriteRunSummary(failingWriter{}, r); err == nil {
		t.Error("WriteRunSummary to a failing writer returned no error")
	}
}

// TestPathText: a table's PATH column for each way to the server, stored or planned.
func TestPathText(t *testing.T) {
	for _, c := range []struct {
		path string
		rtt  time.Duration
		want string
	}{
		{spec.PathLink, 5 * time.Millisecond, "link 5ms"},
		{spec.PathLink, 0, "link 0"},
		{spec.PathDirect, 0, "direct"},
		{spec.PathUnix, 0, "unix"},
	} {
		if got := PathText(c.path, c.rtt); got != c.want {
			t.Errorf("PathText(%s, %v) = %q, want %q", c.path, c.rtt, got, c.want)
		}
	}
	r := &results.Run{Params: results.Params{RTT: 2 * time.Millisecond}, Link: &results.Link{}}
	if got := RunPathText(r); got != "link 2ms" {
		t.Errorf("RunPathText of a linked run = %q", got)
	}
	r.Link = nil
	if got := RunPathText(r); got != "direct" {
		t.Errorf("RunPathText of a direct run = %q", got)
	}
}
