package report

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/dblat/dblat/internal/results"
)

// TestLoad: a study stored in a real results store loads as the report's input the CLI
// builds (the stored study's runs, file, factors and repeats), builds the same report as
// its input read from the test data, and run ids load as runs; a name that is neither is
// the store's ErrNotFound.
func TestLoad(t *testing.T) {
	ctx := context.Background()
	in, opt := storedStudy(t, "quickstart")
	store, err := results.Open(ctx, filepath.Join(t.TempDir(), "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	name := in.Runs[0].Study
	if err := store.SaveStudy(ctx, results.Study{Name: name, File: "quickstart.yaml", Source: in.Source, Factors: in.Factors}); err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, r := range in.Runs {
		status := r.Status
		id, err := store.Begin(ctx, &r)
		if err != nil {
			t.Fatal(err)
		}
		r.ID, r.Status = id, status
		if err := store.Finish(ctx, &r); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}

	l, err := Load(ctx, store, name)
	if err != nil {
		t.Fatal(err)
	}
	if l.What != "study "+name || len(l.Input.Runs) != len(in.Runs) || l.Input.Description != in.Description ||
		!slices.Equal(l.Check.Factors, in.Factors) || l.Check.RepeatMax != opt.Repeat || l.Observed {
		t.Fatalf("loaded %s: %d runs, description %q, check %+v", l.What, len(l.Input.Runs), l.Input.Description, l.Check)
	}
	rep, err := l.Build(Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := storedReport(t, "quickstart")
	if rep.Metric != want.Metric || len(rep.Cells) != len(want.Cells) || rep.Headline.Verdict != want.Headline.Verdict {
		t.Errorf("the loaded report differs from the stored study's: %d cells, %q\nwant %d cells, %q",
			len(rep.Cells), rep.Headline.Verdict, len(want.Cells), want.Headline.Verdict)
	}

	ref := fmt.Sprintf("%d,%d", ids[0], ids[1])
	l, err = Load(ctx, store, ref)
	if err != nil {
		t.Fatal(err)
	}
	if l.What != fmt.Sprintf("runs %d, %d", ids[0], ids[1]) || len(l.Input.Runs) != 2 || l.Input.Study != ref {
		t.Errorf("runs %s loaded as %s, %d runs, study %q", ref, l.What, len(l.Input.Runs), l.Input.Study)
	}
	if _, err := Load(ctx, store, "no-such-study"); !errors.Is(err, results.ErrNotFound) {
		t.Errorf("no such study: %v", err)
	}
}
