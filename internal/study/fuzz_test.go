package study

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// FuzzParse checks that no input panics, that every rejection is an ErrorList of positioned
// errors, and that every accepted study expands into cells with unique keys and a full plan.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("../../examples/*.yaml")
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{
		head,
		head + "design: ofat\nbase: {terminals: 4, connections: 2}\nfactors: {connections: [1, 2, 4], terminals: [4, 8]}\n",
		head + "factors: {engine: [postgres, mariadb], set.a: [x, y], opt.b: ['1', '2'], think: [true, false]}\n",
		"study: t\ntarget: pg1\ndesign: ofat\nfactors: {target: [pg1, pg2], rtt: [0, 1us]}\n",
		head + "base: &b {terminals: 3}\nfactors: {terminals: [*b]}\n",
		head + "factors: {rtt: [1ms, 1000us, 0.001s]}\n",
		"study: x\n---\nstudy: y\n",
		"{",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("fuzz.yaml", data)
		if err != nil {
			var l ErrorList
			if !errors.As(err, &l) || len(l) == 0 || len(l) > maxErrors+1 {
				t.Fatalf("error %T %v is not a non-empty ErrorList", err, err)
			}
			if s != nil {
				t.Fatal("a study returned with an error")
			}
			return
		}
		cells := s.Cells()
		if len(cells) == 0 || len(cells) > MaxCells {
			t.Fatalf("%d cells", len(cells))
		}
		seen := map[string]int{}
		for i, c := range cells {
			if j, dup := seen[c.Key]; dup {
				t.Fatalf("cells %d (%s) and %d (%s) share key %s", j, s.Label(cells[j]), i, s.Label(c), c.Key)
			}
			seen[c.Key] = i
			if c.Params.Terminals < 1 || c.Params.Connections < 1 || c.Params.Connections > c.Params.Terminals || c.Params.Duration <= 0 {
				t.Fatalf("cell %s has bad params %+v", s.Label(c), c.Params)
			}
			if len(c.Levels) != len(s.Factors) {
				t.Fatalf("cell %s has %d levels for %d factors", s.Label(c), len(c.Levels), len(s.Factors))
			}
			// A cell's levels are levels of its factors: canonical levels parse back to
			// themselves.
			for _, f := range s.Factors {
				if (s.Design == DesignFull || c.Varied == f.Key) && !slices.Contains(f.Levels, c.Levels[f.Key]) {
					t.Fatalf("cell %s: %s=%q is not one of %q", s.Label(c), f.Key, c.Levels[f.Key], f.Levels)
				}
			}
		}
		plan := s.Plan(nil)
		if len(plan) != len(cells)*s.RepeatMin || len(plan) > MaxRuns || s.RepeatMin > s.Repeat {
			t.Fatalf("%d runs for %d cells × %d..%d", len(plan), len(cells), s.RepeatMin, s.Repeat)
		}
		if s.Estimate(plan, Overhead{Run: time.Second, Restart: time.Second}) < 0 {
			t.Fatal("negative estimate")
		}
		// Parsing what was accepted again gives the same cells.
		s2, err := Parse("fuzz.yaml", data)
		if err != nil || len(s2.Cells()) != len(cells) || s2.Cells()[0].Key != cells[0].Key {
			t.Fatalf("second parse differs: %v", err)
		}
	})
}
