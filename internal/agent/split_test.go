package agent

import (
	"errors"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/execution"
)

func TestSplit(t *testing.T) {
	type part struct {
		first, terminals, conns int
		homes                   string
	}
	base := execution.Spec{Workload: "tpcc", Terminals: 30, Duration: time.Second, Seed: 7}
	for _, tc := range []struct {
		name       string
		spec       execution.Spec
		n, wh      int
		want       []part
		wantsError bool
	}{
		{"warehouses partitioned, terminals in proportion", base, 3, 10,
			[]part{{0, 9, 0, "1-3"}, {9, 9, 0, "4-6"}, {18, 12, 0, "7-10"}}, false},
		{"fewer warehouses than agents: homes shared", execution.Spec{Workload: "tpcc", Terminals: 6}, 3, 2,
			[]part{{0, 2, 0, ""}, {2, 2, 0, ""}, {4, 2, 0, ""}}, false},
		{"not TPC-C", execution.Spec{Workload: "select-only", Terminals: 12, Connections: 5}, 3, 1,
			[]part{{0, 4, 1, ""}, {4, 4, 2, ""}, {8, 4, 2, ""}}, false},
		{"fewer terminals than agents", execution.Spec{Workload: "tpcc", Terminals: 2}, 3, 10, nil, true},
		{"open loop", execution.Spec{Workload: "tpcc", Terminals: 9, Rate: 100}, 3, 10, nil, true},
		{"home warehouses given", execution.Spec{Workload: "tpcc", Terminals: 9, Options: map[string]string{"home-warehouses": "1-2"}}, 3, 10, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Split(tc.spec, tc.n, tc.wh)
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
				p := part{a.Spec.FirstTerminal, a.Spec.Terminals, a.Spec.Connections, a.Spec.Options["home-warehouses"]}
				if p != tc.want[i] || a.Index != i || a.Parts != tc.n || a.Spec.Seed != tc.spec.Seed {
					t.Errorf("part %d: %+v (index %d of %d), want %+v", i, p, a.Index, a.Parts, tc.want[i])
				}
			}
		})
	}
}
