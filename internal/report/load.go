package report

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/dblat/dblat/internal/analysis"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/study"
)

// Loaded is a report's input as read from a results store (Load, LoadStudy, LoadRuns):
// the runs and what names them, and what the credibility checks judge them by.
type Loaded struct {
	// What names what was loaded, for messages: "study NAME", "run 12", "runs 12, 13".
	What string
	// Input is the report's input; its Options are the zero value, for the caller to set.
	Input Input
	// Check is what the credibility checks and the analysis judge the runs by: the study's
	// factors and repeats, the parts of the runs agents drove.
	Check analysis.CheckOptions
	// Observed is set when every run is an application observed (workload observed): its
	// report is its prediction, which the credibility checks of driven runs do not judge.
	Observed bool
}

// Load reads a report's input from store: the study named ref, or, when the store holds
// no study of that name, the runs whose ids ref gives ("12" or "12,13,14"). Its error is
// the store's (results.ErrNotFound for a study that is not there and no run ids).
func Load(ctx context.Context, store results.Store, ref string) (*Loaded, error) {
	l, err := LoadStudy(ctx, store, ref)
	if ids, idErr := results.ParseIDs(ref); idErr == nil && errors.Is(err, results.ErrNotFound) {
		return LoadRuns(ctx, store, ids)
	}
	return l, err
}

// LoadStudy reads a stored study's runs, whatever their status, each finished run with its
// samples and signals (the credibility checks judge the warm-up by the samples; the report
// draws the disturbed runs'), with the description and repeats its stored file gives, and
// the parts of the runs agents drove.
func LoadStudy(ctx context.Context, store results.Store, name string) (*Loaded, error) {
	rec, err := store.Study(ctx, name)
	if err != nil {
		return nil, err
	}
	runs, err := store.List(ctx, results.Filter{Study: rec.Name})
	if err != nil {
		return nil, err
	}
	for i := range runs {
		if runs[i].Status != results.StatusFinished {
			continue
		}
		full, err := store.Get(ctx, runs[i].ID, true)
		if err != nil {
			return nil, err
		}
		runs[i].Samples, runs[i].Signals = full.Samples, full.Signals
	}
	l := &Loaded{What: "study " + rec.Name,
		Input: Input{Study: rec.Name, Factors: rec.Factors, Source: rec.Source, Runs: runs},
		Check: analysis.CheckOptions{Factors: rec.Factors}}
	if st, err := study.Parse(rec.File, []byte(rec.Source)); err == nil {
		l.Input.Description = st.Description
		// A cell of sequential repeats that met its precision stops at the minimum.
		l.Check.Repeat, l.Check.RepeatMax = st.RepeatMin, st.Repeat
	}
	if l.Check.Parts, err = results.PartsOf(ctx, store, runs); err != nil {
		return nil, err
	}
	return l, nil
}

// LoadRuns reads stored runs that need not belong to a study, with their samples, in the
// order of ids.
func LoadRuns(ctx context.Context, store results.Store, ids []int64) (*Loaded, error) {
	if len(ids) == 0 {
		return nil, errors.New("report: no runs to load")
	}
	var runs []results.Run
	var names []string
	for _, id := range ids {
		r, err := store.Get(ctx, id, true)
		if err != nil {
			return nil, err
		}
		runs = append(runs, *r)
		names = append(names, strconv.FormatInt(id, 10))
	}
	l := &Loaded{What: "run " + names[0],
		Input: Input{Study: strings.Join(names, ","), Description: "Stored runs " + strings.Join(names, ", "), Runs: runs}}
	if len(names) > 1 {
		l.What = "runs " + strings.Join(names, ", ")
	}
	l.Observed = true
	for i := range runs {
		l.Observed = l.Observed && runs[i].Params.Workload == results.WorkloadObserved
	}
	if l.Observed {
		l.Input.Description = "An application observed through dblat proxy --observe (runs " + strings.Join(names, ", ") + ")"
	}
	return l, nil
}

// Build builds the loaded report with opts: with its analysis and credibility findings
// (BuildWithAnalysis), or, for observed applications, their predictions alone (Build).
func (l *Loaded) Build(opts Options) (*Report, error) {
	in := l.Input
	in.Options = opts
	if l.Observed {
		return Build(in)
	}
	rep, _, err := BuildWithAnalysis(in, l.Check)
	return rep, err
}
