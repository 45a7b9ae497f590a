package study

import (
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/latency"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/spec"
)

func mustParse(t testing.TB, src string) *Study {
	t.Helper()
	s, err := Parse("x.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func keys(cells []Cell) []string {
	var out []string
	for _, c := range cells {
		out = append(out, c.Key)
	}
	return out
}

func labels(s *Study, cells []Cell) []string {
	var out []string
	for _, c := range cells {
		out = append(out, s.Label(c))
	}
	return out
}

func TestCellsFull(t *testing.T) {
	s := mustParse(t, head+"base: {terminals: 10}\nfactors:\n  rtt: [0, 1ms, 5ms, 20ms]\n  terminals: [1, 4, 16]\n  set.shared_buffers: [128MB, 1GB]\n")
	cells := s.Cells()
	if len(cells) != 4*3*2 {
		t.Fatalf("%d cells, want 24", len(cells))
	}
	want := []string{
		"rtt=0 terminals=1 set.shared_buffers=128MB", "rtt=0 terminals=1 set.shared_buffers=1GB",
		"rtt=0 terminals=4 set.shared_buffers=128MB",
	}
	if got := labels(s, cells)[:3]; !reflect.DeepEqual(got, want) {
		t.Errorf("first cells %q, want %q (first factor slowest)", got, want)
	}
	last := cells[len(cells)-1]
	wantParams := s.Base.clone()
	wantParams.RTT, wantParams.Terminals, wantParams.Connections = 20*time.Millisecond, 16, 16
	wantParams.Link = &latency.Config{RTT: 20 * time.Millisecond, DelayConnect: true, Seed: 1}
	wantParams.Settings["shared_buffers"] = "1GB"
	if !reflect.DeepEqual(last.Params, wantParams) || last.Varied != "" {
		t.Errorf("last cell %+v\nwant %+v", last.Params, wantParams)
	}
	if k := keys(cells); len(slices.Compact(slices.Sorted(slices.Values(k)))) != len(k) {
		t.Error("cell keys are not unique")
	}
	for _, c := range cells {
		// Levels agree with what the results store will read back from the run.
		run := &results.Run{Params: results.Params{Drive: spec.Drive{Terminals: c.Params.Terminals}, RTT: c.Params.RTT, Options: map[string]string{"set.shared_buffers": c.Params.Settings["shared_buffers"]}}}
		for k, v := range c.Levels {
			if got := results.FactorValue(run, k); got != v {
				t.Errorf("cell %s: level %s=%s but FactorValue says %q", s.Label(c), k, v, got)
			}
		}
		if c.Key != CellKey(c.Params) {
			t.Errorf("cell %s: key %s, CellKey %s", s.Label(c), c.Key, CellKey(c.Params))
		}
	}
	// The base's values of varied parameters do not matter in a full design.
	s2 := mustParse(t, head+"base: {terminals: 99, rtt: 7ms}\nfactors:\n  rtt: [0, 1ms, 5ms, 20ms]\n  terminals: [1, 4, 16]\n  set.shared_buffers: [128MB, 1GB]\n")
	if !slices.Equal(keys(cells), keys(s2.Cells())) {
		t.Error("base values of factors changed the keys of a full design")
	}
}

func TestCellsOFAT(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string // labels
		varied    []string
	}{
		{"base value listed", "base: {terminals: 10, rtt: 1ms}\nfactors:\n  terminals: [5, 10, 20]\n  rtt: [0, 1ms]\n",
			// 1 + (3−1) + (2−1) = 4
			[]string{"terminals=10 rtt=1ms", "terminals=5 rtt=1ms", "terminals=20 rtt=1ms", "terminals=10 rtt=0"},
			[]string{"", "terminals", "terminals", "rtt"}},
		{"base value not listed", "base: {terminals: 10}\nfactors:\n  terminals: [5, 20]\n",
			// 1 + 2: the base is a cell even when no factor lists its value
			[]string{"terminals=10", "terminals=5", "terminals=20"}, []string{"", "terminals", "terminals"}},
		{"default server setting", "factors:\n  set.work_mem: [4MB, 64MB]\n",
			[]string{"set.work_mem=(default)", "set.work_mem=4MB", "set.work_mem=64MB"}, []string{"", "set.work_mem", "set.work_mem"}},
		{"connections follow terminals", "base: {terminals: 10}\nfactors:\n  terminals: [10, 20]\n  connections: [5, 10]\n",
			[]string{"terminals=10 connections=10", "terminals=20 connections=20", "terminals=10 connections=5"},
			[]string{"", "terminals", "connections"}},
		{"no factors", "", []string{"base"}, []string{""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := mustParse(t, head+"design: ofat\n"+tc.src)
			cells := s.Cells()
			if got := labels(s, cells); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("cells %q\nwant %q", got, tc.want)
			}
			var varied []string
			for _, c := range cells {
				varied = append(varied, c.Varied)
				if c.Params.Connections == 0 {
					t.Errorf("cell %s: connections not resolved", s.Label(c))
				}
			}
			if !reflect.DeepEqual(varied, tc.varied) {
				t.Errorf("varied %q, want %q", varied, tc.varied)
			}
			if k := keys(cells); len(slices.Compact(slices.Sorted(slices.Values(k)))) != len(k) {
				t.Error("cell keys are not unique")
			}
		})
	}
}

func TestCellsOFATCountAndBaseKey(t *testing.T) {
	s := mustParse(t, head+"design: ofat\nbase: {terminals: 10, rtt: 0, warmup: 5s}\n"+
		"factors:\n  rtt: [0, 1ms, 2ms, 3ms]\n  terminals: [1, 10, 100]\n  warmup: [5s, 10s]\n")
	cells := s.Cells()
	if want := 1 + (4 - 1) + (3 - 1) + (2 - 1); len(cells) != want {
		t.Fatalf("%d cells, want %d", len(cells), want)
	}
	// The ofat base cell is the same run as the full design's cell with the same levels.
	full := mustParse(t, head+"base: {warmup: 5s}\nfactors:\n  terminals: [10]\n  rtt: [0, 3ms]\n")
	if cells[0].Key != full.Cells()[0].Key {
		t.Errorf("ofat base key %s, full cell key %s", cells[0].Key, full.Cells()[0].Key)
	}
}

func TestNeedsServerRestart(t *testing.T) {
	s := mustParse(t, head+"factors:\n  set.shared_buffers: [128MB, 1GB]\n  rtt: [0, 1ms]\n")
	c := s.Cells() // 128MB/0, 128MB/1ms, 1GB/0, 1GB/1ms
	for _, tc := range []struct {
		cur  int
		prev *Cell
		want bool
	}{
		{0, nil, true}, {1, &c[0], false}, {2, &c[1], true}, {3, &c[2], false}, {0, &c[3], true},
	} {
		if got := c[tc.cur].NeedsServerRestart(tc.prev); got != tc.want {
			t.Errorf("cell %d after %v: %v, want %v", tc.cur, tc.prev, got, tc.want)
		}
	}
	e := mustParse(t, head+"factors:\n  engine: [postgres, mariadb]\n").Cells()
	if !e[1].NeedsServerRestart(&e[0]) {
		t.Error("another engine needs no restart")
	}
}

// keySet parses src and returns its cells' keys, sorted.
func keySet(t *testing.T, src string) []string {
	t.Helper()
	return slices.Sorted(slices.Values(keys(mustParse(t, src).Cells())))
}

func TestCellKeyStable(t *testing.T) {
	a := `study: latency
server:
  engine: postgres
  settings: {shared_buffers: 256MB, work_mem: 4MB}
base:
  terminals: 10
  duration: 60s
factors:
  rtt: [0, 1ms, 5ms]
  terminals: [1, 4]
`
	same := map[string]string{
		"factors and keys reordered, comments, layout": `# a comment
study: latency   # another
factors:
  terminals:
    - 4
    - 1
  rtt: [5ms, 1000us, 0]
base: {duration: 1m, terminals: 10}
server: {settings: {work_mem: 4MB, shared_buffers: 256MB}, engine: postgres}
`,
		"scheduling keys changed": a + "repeat: 9\nseed: 1234\norder: grouped\ncooldown: 30s\nmax_failures: 1\nbetween_runs: keep\ndescription: other\n",
		"study renamed":           "study: renamed\n" + a[len("study: latency\n"):],
		// Defaults written out; server.name is a label, not a parameter.
		"defaults written out, server named": `study: latency
design: full
server:
  engine: postgres
  name: elsewhere
  settings: {shared_buffers: 256MB, work_mem: 4MB}
base:
  workload: tpcc
  warehouses: 1
  terminals: 10
  connections: 0
  duration: 60s
  warmup: 10s
  rtt: 0
  think: false
  seed: 1
  rate: 0
  latency_limit: 0
  max_tries: 1
factors:
  rtt: [0, 1ms, 5ms]
  terminals: [1, 4]
`,
	}
	want := keySet(t, a)
	for name, src := range same {
		if got := keySet(t, src); !slices.Equal(got, want) {
			t.Errorf("%s: keys changed", name)
		}
	}
	different := map[string]string{
		"duration":      "base:\n  duration: 61s\n",
		"warmup":        "base:\n  warmup: 11s\n",
		"warehouses":    "base:\n  warehouses: 2\n",
		"workload seed": "base:\n  seed: 2\n",
		"mode":          "base:\n  mode: batched\n",
		"mix":           "base:\n  mix: 1,1,1,1,1\n",
		"think":         "base:\n  think: true\n",
		"option":        "base:\n  options: {page_size: 4096}\n",
		"workload":      "base:\n  workload: tpcb\n",
		"rate":          "base:\n  rate: 500\n",
		"latency limit": "base:\n  latency_limit: 100ms\n",
		"max tries":     "base:\n  max_tries: 3\n",
	}
	for name, extra := range different {
		src := `study: latency
server:
  engine: postgres
  settings: {shared_buffers: 256MB, work_mem: 4MB}
factors:
  rtt: [0, 1ms, 5ms]
  terminals: [1, 4]
` + extra
		if got := keySet(t, src); slices.ContainsFunc(got, func(k string) bool { return slices.Contains(want, k) }) {
			t.Errorf("changing %s kept some keys", name)
		}
	}
	for name, src := range map[string]string{
		"setting": `study: latency
server: {engine: postgres, settings: {shared_buffers: 512MB, work_mem: 4MB}}
factors: {rtt: [0, 1ms, 5ms], terminals: [1, 4]}
`,
		"engine": `study: latency
server: {engine: mariadb, settings: {shared_buffers: 256MB, work_mem: 4MB}}
factors: {rtt: [0, 1ms, 5ms], terminals: [1, 4]}
`,
	} {
		if got := keySet(t, src); slices.ContainsFunc(got, func(k string) bool { return slices.Contains(want, k) }) {
			t.Errorf("changing the %s kept some keys", name)
		}
	}
}

// TestCellKeyGolden pins the recipe: a changed key orphans every stored run of every study.
func TestCellKeyGolden(t *testing.T) {
	p := Params{Engine: "postgres", Run: spec.Run{Params: spec.Params{Workload: "tpcc", Scale: 1,
		Drive: spec.Drive{Terminals: 10, Duration: time.Minute, Warmup: 10 * time.Second, Seed: 1},
		RTT:   time.Millisecond, Options: map[string]string{"page_size": "8192"}}},
		Settings: map[string]string{"shared_buffers": "256MB"}}
	const want = "b46b2271ba95262e"
	if got := CellKey(p); got != want {
		t.Errorf("CellKey = %s, want %s: the cell-key recipe changed", got, want)
	}
	// The parameters added later leave the key alone at their defaults.
	d := p
	d.MaxTries = 1
	if got := CellKey(d); got != want {
		t.Errorf("CellKey with max tries 1 = %s, want %s", got, want)
	}
	// An open-loop run's arrival process defaults to constant.
	o := p
	o.Rate = 250
	oc := o
	oc.Arrival = spec.ArrivalConstant
	if CellKey(o) != CellKey(oc) || CellKey(o) == want {
		t.Error("rate 250 with and without arrival constant differ, or equal the closed loop")
	}
	q := p
	q.Connections = 10 // 0 means one per terminal
	q.Settings, q.Options = maps.Clone(p.Settings), maps.Clone(p.Options)
	q.Target = ""
	if CellKey(q) != want {
		t.Error("connections 0 and connections = terminals give different keys")
	}
	q.Options["x"] = "y\nz"
	r := q
	r.Options = map[string]string{"page_size": "8192", "x": "y"}
	r.Settings = map[string]string{"shared_buffers": "256MB", "z": ""}
	if CellKey(q) == CellKey(r) {
		t.Error("values are not quoted in the key's text")
	}
}
