package agent

import (
	"errors"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/execution"
	"github.com/dblat/dblat/internal/spec"
	"github.com/dblat/dblat/internal/workload"
	_ "github.com/dblat/dblat/internal/workload/all"
)

func TestSplit(t *testing.T) {
	type part struct {
		first, terminals, conns int
		homes                   string
	}
	base := spec.Run{Params: spec.Params{Drive: spec.Drive{Terminals: 30, Duration: time.Second, Seed: 7}, Workload: "tpcc"}}
	for _, tc := range []struct {
		name       string
		run        spec.Run
		n, wh      int
		want       []part
		wantsError bool
	}{
		{"warehouses partitioned, terminals in proportion", base, 3, 10,
			[]part{{0, 9, 0, "1-3"}, {9, 9, 0, "4-6"}, {18, 12, 0, "7-10"}}, false},
		{"fewer warehouses than agents: homes shared", spec.Run{Params: spec.Params{Drive: spec.Drive{Terminals: 6}, Workload: "tpcc"}}, 3, 2,
			[]part{{0, 2, 0, ""}, {2, 2, 0, ""}, {4, 2, 0, ""}}, false},
		{"not TPC-C", spec.Run{Params: spec.Params{Drive: spec.Drive{Terminals: 12, Connections: 5}, Workload: "select-only"}}, 3, 1,
			[]part{{0, 4, 1, ""}, {4, 4, 2, ""}, {8, 4, 2, ""}}, false},
		{"fewer terminals than agents", spec.Run{Params: spec.Params{Drive: spec.Drive{Terminals: 2}, Workload: "tpcc"}}, 3, 10, nil, true},
		{"open loop", spec.Run{Params: spec.Params{Drive: spec.Drive{Terminals: 9, Rate: 100}, Workload: "tpcc"}}, 3, 10, nil, true},
		{"home warehouses given", spec.Run{Params: spec.Params{Drive: spec.Drive{Terminals: 9}, Workload: "tpcc", Options: map[string]string{"home-warehouses": "1-2"}}}, 3, 10, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			def, err := workload.Lookup(tc.run.Workload)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Split(tc.run, def, tc.n, tc.wh)
			if tc.wantsError {
				var ie *execution.InputError
				if !errors.As(err, &ie) {
					t.Fatalf("want an input error, got %v", err)
				}
				return
			}
			if err != nil || len(got) != len(tc.want) {
				t.Fatalf("%d parts, %v", len(got), err)
			}
			for i, a := range got {
				p := part{a.Run.FirstTerminal, a.Run.Terminals, a.Run.Connections, a.Run.Options["home-warehouses"]}
				if p != tc.want[i] || a.Index != i || a.Parts != tc.n || a.Run.Seed != tc.run.Seed {
					t.Errorf("part %d: %+v (index %d of %d), want %+v", i, p, a.Index, a.Parts, tc.want[i])
				}
			}
		})
	}
}
