package results_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/dblat/dblat/internal/results"
)

func TestParseIDs(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []int64
	}{
		{"12", []int64{12}},
		{"12,13, 14", []int64{12, 13, 14}},
		{"12,x", nil},
		{"", nil},
		{"study-name", nil},
	} {
		got, err := results.ParseIDs(c.in)
		if c.want == nil {
			if !errors.Is(err, results.ErrNotRunID) {
				t.Errorf("ParseIDs(%q) = %v, %v; want ErrNotRunID", c.in, got, err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("ParseIDs(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	if _, err := results.ParseID(" 12"); !errors.Is(err, results.ErrNotRunID) {
		t.Errorf("ParseID takes a run id as written, no spaces: %v", err)
	}
}
