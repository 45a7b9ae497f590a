package results

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func TestStudyRecordsAndCellCounts(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Study(ctx, "lat"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing study: %v", err)
	}
	st := Study{Name: "lat", File: "lat.yaml", Source: "study: lat\n", Factors: []string{"rtt", "terminals"}}
	if err := s.SaveStudy(ctx, st); err != nil {
		t.Fatal(err)
	}
	st.Source = "study: lat\nrepeat: 3\n"
	if err := s.SaveStudy(ctx, st); err != nil {
		t.Fatal(err)
	}
	got, err := s.Study(ctx, "lat")
	if err != nil {
		t.Fatal(err)
	}
	if got.Source != st.Source || !reflect.DeepEqual(got.Factors, st.Factors) || got.Created.IsZero() {
		t.Errorf("got %+v", got)
	}
	for i, status := range []Status{StatusFinished, StatusFinished, StatusFailed} {
		r := &Run{Study: "lat", CellKey: "k1", Params: Params{Workload: "tpcc"}, Link: &Link{Kind: "proxy", RTT: time.Millisecond}}
		if _, err := s.Begin(ctx, r); err != nil {
			t.Fatal(err)
		}
		r.Status, r.Reason = status, "n"+string(rune('0'+i))
		if err := s.Finish(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	counts, err := s.CellCounts(ctx, "lat")
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]map[Status]int{"k1": {StatusFinished: 2, StatusFailed: 1}}; !reflect.DeepEqual(counts, want) {
		t.Errorf("counts %v, want %v", counts, want)
	}
	r, err := s.Get(ctx, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	if r.Link == nil || r.Link.RTT != time.Millisecond || r.Link.Kind != "proxy" {
		t.Errorf("link not stored: %+v", r.Link)
	}
	list, err := s.Studies(ctx)
	if err != nil || len(list) != 1 {
		t.Errorf("Studies: %v %v", list, err)
	}
}
