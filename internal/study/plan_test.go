package study

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

const planSrc = head + `repeat: 3
seed: 42
base: {duration: 10s, warmup: 2s}
factors:
  rtt: [0, 1ms, 5ms, 20ms]
  terminals: [1, 4, 16]
`

func planKeys(plan []Planned) []string {
	var out []string
	for _, r := range plan {
		out = append(out, r.Cell.Key)
	}
	return out
}

func TestPlanAll(t *testing.T) {
	s := mustParse(t, planSrc)
	cells := s.Cells()
	plan := s.Plan(nil)
	if len(plan) != len(cells)*s.Repeat {
		t.Fatalf("%d runs, want %d", len(plan), len(cells)*s.Repeat)
	}
	// Rounds: every cell's r-th repeat comes before any cell's (r+1)-th.
	for i, r := range plan {
		if want := i/len(cells) + 1; r.Repeat != want {
			t.Fatalf("run %d is repeat %d, want %d", i, r.Repeat, want)
		}
	}
	// Each round holds each cell once, and the rounds are shuffled differently.
	round := func(r int) []string { return planKeys(plan[(r-1)*len(cells) : r*len(cells)]) }
	for r := 1; r <= 3; r++ {
		if !slices.Equal(slices.Sorted(slices.Values(round(r))), slices.Sorted(slices.Values(keys(cells)))) {
			t.Errorf("round %d does not hold every cell once", r)
		}
	}
	if slices.Equal(round(1), round(2)) || slices.Equal(round(1), keys(cells)) {
		t.Error("rounds are not shuffled")
	}
	// Deterministic for a seed, different for another.
	if !reflect.DeepEqual(plan, s.Plan(nil)) {
		t.Error("Plan is not deterministic")
	}
	s2 := mustParse(t, strings.Replace(planSrc, "seed: 42", "seed: 43", 1))
	if slices.Equal(planKeys(plan), planKeys(s2.Plan(nil))) {
		t.Error("another seed gave the same order")
	}
	// Independent of the order of factors and levels in the file.
	s3 := mustParse(t, head+"repeat: 3\nseed: 42\nbase: {duration: 10s, warmup: 2s}\nfactors:\n  terminals: [16, 4, 1]\n  rtt: [20ms, 0, 1ms, 5ms]\n")
	if !slices.Equal(planKeys(plan), planKeys(s3.Plan(nil))) {
		t.Error("reordering factors changed the order of runs")
	}
}

func TestPlanResume(t *testing.T) {
	s := mustParse(t, planSrc)
	full := s.Plan(nil)
	cells := s.Cells()

	// After the first k runs finished, the plan is the rest of the original.
	for _, k := range []int{0, 1, 5, len(cells), len(cells) + 7, len(full) - 1, len(full)} {
		done := map[string]int{}
		for _, r := range full[:k] {
			done[r.Cell.Key]++
		}
		if got := s.Plan(done); !reflect.DeepEqual(got, full[k:]) && !(len(got) == 0 && k == len(full)) {
			t.Errorf("after %d runs: plan of %d runs is not the remaining %d", k, len(got), len(full)-k)
		}
	}

	// Satisfied cells are skipped; partly done cells get the missing repeats, numbered on.
	done := map[string]int{cells[0].Key: 3, cells[1].Key: 5, cells[2].Key: 1, "not-in-study": 2}
	plan := s.Plan(done)
	if want := len(full) - 3 - 3 - 1; len(plan) != want {
		t.Fatalf("%d runs, want %d", len(plan), want)
	}
	var reps []int
	for _, r := range plan {
		switch r.Cell.Key {
		case cells[0].Key, cells[1].Key:
			t.Errorf("satisfied cell %s planned", r.Cell.Key)
		case cells[2].Key:
			reps = append(reps, r.Repeat)
		}
	}
	if !slices.Equal(reps, []int{2, 3}) {
		t.Errorf("partly done cell gets repeats %v, want [2 3]", reps)
	}
	if !reflect.DeepEqual(plan, s.Plan(done)) {
		t.Error("Plan with a done-map is not deterministic")
	}
}

func TestPlanGrouped(t *testing.T) {
	src := head + "repeat: 2\norder: grouped\nfactors:\n  set.shared_buffers: [128MB, 256MB, 1GB]\n  rtt: [0, 1ms, 2ms]\n  terminals: [1, 4]\n"
	s := mustParse(t, src)
	plan := s.Plan(nil)
	if n := Restarts(plan); n != 3*2 {
		t.Errorf("grouped: %d restarts, want 6 (3 settings × 2 rounds)", n)
	}
	random := mustParse(t, src[:len(head)]+"repeat: 2\nfactors:\n  set.shared_buffers: [128MB, 256MB, 1GB]\n  rtt: [0, 1ms, 2ms]\n  terminals: [1, 4]\n")
	if n := Restarts(random.Plan(nil)); n <= 6 {
		t.Errorf("random: %d restarts; expected many more than grouped", n)
	}
}

func TestEstimate(t *testing.T) {
	s := mustParse(t, head+"repeat: 2\ncooldown: 3s\nbase: {duration: 10s, warmup: 2s}\nfactors:\n  set.work_mem: [4MB, 64MB]\n  duration: [10s, 20s]\n")
	plan := s.Plan(nil)
	// 2 × (10+2) + 2 × (20+2) = 68 s per round, 136 s in all; 7 cooldowns of 3 s.
	if got, want := s.Estimate(plan, Overhead{}), 136*time.Second+7*3*time.Second; got != want {
		t.Errorf("Estimate = %v, want %v", got, want)
	}
	o := Overhead{Run: time.Second, Restart: 10 * time.Second}
	if got, want := s.Estimate(plan, o), 157*time.Second+8*time.Second+time.Duration(Restarts(plan))*10*time.Second; got != want {
		t.Errorf("Estimate with overhead = %v, want %v", got, want)
	}
	if got := s.Estimate(nil, o); got != 0 {
		t.Errorf("Estimate(nil) = %v", got)
	}
	if got := s.Estimate(plan, Overhead{Run: math.MaxInt64 / 2}); got != math.MaxInt64 {
		t.Errorf("Estimate does not saturate: %v", got)
	}
}
