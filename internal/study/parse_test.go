package study

import (
	"errors"
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/spec"
)

// head is the smallest valid start of a study file (2 lines), so line numbers in the cases
// below count from 3.
const head = "study: t\nserver: {engine: postgres}\n"

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name, src, want string
	}{
		{"empty", "", "x.yaml: the file is empty"},
		{"comment only", "# nothing\n", "x.yaml: the file is empty"},
		{"not a mapping", "- a\n- b\n", "x.yaml:1:1: a study file is a mapping (study:, server:, base:, factors:, ...), got a list"},
		{"yaml syntax", head + "base: [\n", "x.yaml:3: did not find expected node content"},
		{"two documents", "study: a\n---\nstudy: b\n", "x.yaml:3:1: a second YAML document: a study file holds one study"},
		{"missing study", "server: {engine: postgres}\n", `x.yaml:1:1: missing key "study" (the study's name, stored with its runs)`},
		{"bad study name", "study: my study\nserver: {engine: postgres}\n",
			`x.yaml:1:8: study must be letters, digits, '.', '_' or '-' (at most 63, starting with a letter or digit), got "my study"`},
		{"unknown top key", head + "repeats: 3\n", `x.yaml:3:1: unknown key "repeats" (did you mean repeat?)`},
		{"unknown base key", head + "base:\n  workload: tpcc\n  terminal: 5\n",
			`x.yaml:5:3: unknown key "terminal" in base (did you mean terminals?)`},
		{"hinted base key", head + "base:\n  clients: 5\n", `x.yaml:4:3: unknown key "clients" in base (did you mean terminals?)`},
		{"unknown server key", head[:9] + "server:\n  engine: postgres\n  setings: {a: 1}\n",
			`x.yaml:4:3: unknown key "setings" in server (did you mean settings?)`},
		{"key twice", head + "base: {terminals: 10, terminals: 5}\n", `x.yaml:3:23: key "terminals" given twice (first at line 3)`},
		{"wrong types", head + "base:\n  terminals: [1, 2]\n  warmup: {a: 1}\n  workload:\n",
			"x.yaml:4:14: terminals must be a single value, got a list\n" +
				"x.yaml:5:11: warmup must be a single value, got a mapping\n" +
				"x.yaml:6:12: workload has no value"},
		{"bad values", head + "base:\n  terminals: -1\n  connections: -2\n  warehouses: 0\n  duration: 0\n  warmup: fast\n  rtt: -1ms\n  think: often\n  seed: 1.5\n",
			"x.yaml:4:14: terminals must be at least 1, got -1\n" +
				"x.yaml:5:16: connections must not be negative, got -2\n" +
				"x.yaml:6:15: warehouses must be at least 1, got 0\n" +
				"x.yaml:7:13: duration must be positive, got 0\n" +
				`x.yaml:8:11: warmup is not a duration: "fast" (write 1.5ms, 100µs, 20s, 2m)` + "\n" +
				"x.yaml:9:8: rtt must not be negative, got -1ms\n" +
				`x.yaml:10:10: think must be true or false, got "often"` + "\n" +
				`x.yaml:11:9: seed must be a whole number, got "1.5"`},
		{"duration without unit", head + "base: {rtt: 5}\n", "x.yaml:3:13: rtt needs a unit: 5ms or 5s?"},
		{"design", head + "design: fractional\n", `x.yaml:3:9: design must be ofat or full, got "fractional"`},
		{"design typo", head + "design: oat\n", `x.yaml:3:9: design must be ofat or full, got "oat" (did you mean ofat?)`},
		{"repeat", head + "repeat: 0\n", "x.yaml:3:9: repeat must be at least 1, got 0"},
		{"max_failures", head + "max_failures: 0\n", "x.yaml:3:15: max_failures must be at least 1, got 0"},
		{"between_runs", head + "between_runs: reset\n", `x.yaml:3:15: between_runs must be restore or keep, got "reset"`},
		{"cooldown", head + "cooldown: -5s\n", "x.yaml:3:11: cooldown must not be negative, got -5s"},
		{"order", head + "order: shuffled\n", `x.yaml:3:8: order must be random or grouped, got "shuffled"`},
		{"engine syntax", "study: t\nserver: {engine: Postgres}\n",
			`x.yaml:2:18: engine must be a lower-case name (letters, digits, '_', '-'), got "Postgres"`},
		{"server without engine", "study: t\nserver:\n  settings: {shared_buffers: 1GB}\n",
			"x.yaml:2:1: server needs an engine (postgres, mariadb, firebird, ...)"},
		{"setting value", head[:9] + "server:\n  engine: postgres\n  settings: {work_mem: ''}\n",
			"x.yaml:4:24: setting work_mem is empty"},
		{"server and target", head + "target: pg1\n",
			"x.yaml:3:1: give server: (a managed server dblat starts) or target: (an existing server), not both"},
		{"neither server nor target", "study: t\n",
			"x.yaml:1:1: missing server: (a managed server dblat starts) or target: (an existing server)"},
		{"target password", "study: t\ntarget: postgres://me:secret@db/x\n",
			"x.yaml:2:9: target holds a password, and study files are stored with the results: pass it through the environment (PGPASSWORD, ~/.pgpass, ...) or use a managed server"},
		{"target key/value password", "study: t\ntarget: host=db password=secret\n",
			"x.yaml:2:9: target holds a password, and study files are stored with the results: pass it through the environment (PGPASSWORD, ~/.pgpass, ...) or use a managed server"},
		{"unknown factor", head + "factors:\n  terminal: [1, 2]\n", `x.yaml:4:3: unknown factor "terminal" (did you mean terminals?)`},
		{"hinted factor", head + "factors:\n  mode: [client]\n", `x.yaml:4:3: unknown factor "mode" (did you mean opt.mode?)`},
		{"unrelated factor", head + "factors:\n  colour: [red]\n",
			`x.yaml:4:3: unknown factor "colour": factors are rtt, up, down, jitter, distribution, bandwidth, loss, profile, terminals, connections, warehouses, duration, min_transactions, warmup, think, rate, arrival, latency_limit, max_tries, during, scripts, builtins, engine, target, server.version, server.install, server.memory, server.encryption, set.SETTING and opt.OPTION`},
		{"workload factor", head + "factors:\n  workload: [tpcc]\n",
			`x.yaml:4:3: "workload" cannot be a factor: a study runs one workload (write one study per workload)`},
		{"empty setting name", head + "factors:\n  set.: [1]\n",
			`x.yaml:4:3: factor "set.": after "set." comes a name of letters, digits, '_', '.' or '-'`},
		{"empty levels", head + "factors:\n  rtt: []\n  terminals:\n", "x.yaml:4:3: factor rtt has no levels\nx.yaml:5:3: factor terminals has no levels"},
		{"levels not a list", head + "factors:\n  rtt: 5ms\n", `x.yaml:4:8: factor rtt must be a list of levels, like [1, 4, 16], got "5ms"`},
		{"factor twice", head + "factors:\n  rtt: [0]\n  terminals: [1]\n  rtt: [1ms]\n", `x.yaml:6:3: factor "rtt" given twice (first at line 4)`},
		{"duplicate level", head + "factors:\n  terminals: [1, 4, 1]\n", "x.yaml:4:21: terminals level 1 given twice (first at line 4, column 15)"},
		{"duplicate level canonically", head + "factors:\n  rtt:\n    - 1ms\n    - 1000us\n",
			"x.yaml:6:7: rtt level 1ms given twice (first at line 5, column 7)"},
		{"bad levels", head + "factors:\n  rtt: [0, 5, -1ms]\n  terminals: [0]\n  connections: [0]\n  think: [maybe]\n  set.work_mem: [[1]]\n",
			"x.yaml:4:12: rtt level needs a unit: 5ms or 5s?\n" +
				"x.yaml:4:15: rtt level must not be negative, got -1ms\n" +
				"x.yaml:5:15: terminals level must be at least 1, got 0\n" +
				"x.yaml:6:17: connections level must be at least 1, got 0 (0 in base.connections means one per terminal)\n" +
				`x.yaml:7:11: think level must be true or false, got "maybe"` + "\n" +
				"x.yaml:8:18: set.work_mem level must be a single value, got a list"},
		{"settings on a target", "study: t\ntarget: pg1\nfactors:\n  set.shared_buffers: [1GB]\n  engine: [postgres]\n",
			"x.yaml:4:3: server settings need a managed server (server:) that dblat can restart; a target is used as it is\n" +
				"x.yaml:5:3: an engine factor needs a managed server (server:); a target runs the engine it runs"},
		{"target factor with server", head + "factors:\n  target: [a, b]\n", "x.yaml:4:3: a target factor runs on existing servers: remove server:"},
		{"ofat target factor without base", "study: t\ndesign: ofat\nfactors:\n  target: [a, b]\n",
			"x.yaml:4:3: an ofat design needs a base target: for the other factors to vary around"},
		{"options", head + "base:\n  options: {mode: fast, 'a b': 1}\n",
			"x.yaml:4:13: option \"mode\" is written base.mode\nx.yaml:4:25: option name \"a b\": use letters, digits, '_', '.' or '-'"},
		{"merge key", head + "base:\n  <<: {terminals: 3}\n", "x.yaml:4:3: merge keys (<<) are not supported: write the keys out"},
		{"too many cells", head + "factors:\n  terminals: [1,2,3,4,5,6,7,8,9,10]\n  warehouses: [1,2,3,4,5,6,7,8,9,10]\n  rtt: [0,1ms,2ms,3ms,4ms,5ms,6ms,7ms,8ms,9ms]\n  warmup: [0,1s,2s,3s,4s,5s,6s,7s,8s,9s,10s]\n",
			"x.yaml:3:1: the full design has more than 10000 cells: use fewer levels, or an ofat design"},
		{"too many runs", head + "repeat: 50001\nfactors:\n  terminals: [1, 2]\n", "x.yaml:3:1: 2 cells × repeat 50001 is more than 100000 runs"},
		{"pool larger than terminals", head + "factors:\n  terminals: [1, 4]\n  connections: [2]\n",
			"x.yaml:5:17: connections level 2 is more than the 1 terminals: a pool larger than the terminals is never used"},
		{"CRLF line ends", "study: t\r\nserver: {engine: postgres}\r\nbase:\r\n  terminal: 5\r\n",
			`x.yaml:4:3: unknown key "terminal" in base (did you mean terminals?)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse("x.yaml", []byte(tc.src))
			if err == nil {
				t.Fatalf("accepted; want error %q", tc.want)
			}
			if s != nil {
				t.Errorf("returned a study with the error")
			}
			if got := err.Error(); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
			var e *Error
			if !errors.As(err, &e) || e.File != "x.yaml" {
				t.Errorf("errors.As(*Error) = %v", e)
			}
		})
	}
}

func TestParseTooManyErrors(t *testing.T) {
	var b strings.Builder
	b.WriteString(head + "base:\n")
	for i := range 30 {
		b.WriteString("  bad" + string(rune('a'+i%26)) + string(rune('a'+i/26)) + ": 1\n")
	}
	_, err := Parse("x.yaml", []byte(b.String()))
	var l ErrorList
	if !errors.As(err, &l) || len(l) != maxErrors+1 || l[maxErrors].Msg != "too many errors" {
		t.Fatalf("got %d errors, last %v", len(l), l[len(l)-1])
	}
}

func TestParseDefaults(t *testing.T) {
	s, err := Parse("x.yaml", []byte(head))
	if err != nil {
		t.Fatal(err)
	}
	want := &Study{
		File: "x.yaml", Name: "t", Design: DesignFull, Repeat: 5, RepeatMin: 5, Seed: 1, Order: OrderRandom,
		BetweenRuns: BetweenRestore, MaxFailures: 3, Disturbed: DisturbedKeep, Reruns: DefaultReruns, Server: ServerSpec{Engine: "postgres", Name: "t"},
		Base: Params{Engine: "postgres", Run: spec.Run{Params: spec.Params{Workload: "tpcc", Scale: 1,
			Drive:          spec.Drive{Terminals: 10, Duration: time.Minute, Warmup: 10 * time.Second, Seed: 1, MaxTries: 1},
			ConnectTimeout: 30 * time.Second,
			Options:        map[string]string{}}},
			Settings: map[string]string{}},
		Source: []byte(head),
	}
	s.pos = nil
	if !reflect.DeepEqual(s, want) {
		t.Errorf("got  %+v\nwant %+v", s, want)
	}
	if !s.Managed() || !reflect.DeepEqual(s.Engines(), []string{"postgres"}) {
		t.Errorf("Managed %v, Engines %v", s.Managed(), s.Engines())
	}
}

func TestParseEverything(t *testing.T) {
	src := `study: all.keys-1
description: every key
design: ofat
repeat: 3
seed: -7
order: grouped
cooldown: 1.5s
between_runs: keep
max_failures: 2
server:
  engine: postgres
  name: pg-all
  settings:
    shared_buffers: 256MB
    auto_explain.log_min_duration: 10
base:
  workload: tpcc
  warehouses: 4
  terminals: 8
  connections: 4
  duration: 2m
  warmup: 0
  rtt: 0.5ms
  mode: client
  think: true
  mix: " 45, 43,4,4,4"
  seed: 99
  options: {page_size: 8192}
factors:
  rtt: [0.5ms, 0, 100us, 1.5s]
  set.shared_buffers: [256MB, 1GB]
  opt.mode: [client, batched]
  opt.page_size: [8192, 16384]
  engine: [postgres, mariadb]
  think: [true, false]
`
	s, err := Parse("all.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "all.keys-1" || s.Description != "every key" || s.Design != DesignOFAT || s.Repeat != 3 ||
		s.Seed != -7 || s.Order != OrderGrouped || s.Cooldown != 1500*time.Millisecond ||
		s.BetweenRuns != BetweenKeep || s.MaxFailures != 2 || s.Server.Name != "pg-all" {
		t.Errorf("study keys: %+v", s)
	}
	wantBase := Params{Engine: "postgres", Run: spec.Run{Params: spec.Params{Workload: "tpcc", Scale: 4,
		Drive: spec.Drive{Terminals: 8, Connections: 4, Duration: 2 * time.Minute, Seed: 99, MaxTries: 1},
		RTT:   500 * time.Microsecond, Think: true, ConnectTimeout: 30 * time.Second,
		Options: map[string]string{"page_size": "8192", "mode": "client", "mix": "45,43,4,4,4"}}},
		Settings: map[string]string{"shared_buffers": "256MB", "auto_explain.log_min_duration": "10"}}
	if !reflect.DeepEqual(s.Base, wantBase) {
		t.Errorf("base\n got %+v\nwant %+v", s.Base, wantBase)
	}
	wantFactors := []Factor{
		{"rtt", []string{"500µs", "0", "100µs", "1.5s"}},
		{"set.shared_buffers", []string{"256MB", "1GB"}},
		{"opt.mode", []string{"client", "batched"}},
		{"opt.page_size", []string{"8192", "16384"}},
		{"engine", []string{"postgres", "mariadb"}},
		{"think", []string{"true", "false"}},
	}
	if !reflect.DeepEqual(s.Factors, wantFactors) {
		t.Errorf("factors\n got %v\nwant %v", s.Factors, wantFactors)
	}
	if got := s.Engines(); !reflect.DeepEqual(got, []string{"postgres", "mariadb"}) {
		t.Errorf("Engines = %v", got)
	}
	if !maps.Equal(s.Server.Settings, wantBase.Settings) || string(s.Source) != src {
		t.Errorf("server settings %v or source differ", s.Server.Settings)
	}
	// The CLI reports its own findings at the right place.
	for path, want := range map[string]string{
		"server.engine":                  "all.yaml:11:3: unknown engine",
		"server.settings.shared_buffers": "all.yaml:14:5: unknown engine",
		"base.options.page_size":         "all.yaml:28:13: unknown engine",
		"factors.engine":                 "all.yaml:34:3: unknown engine",
		"factors.engine[1]":              "all.yaml:34:22: unknown engine",
		"factors.rtt[3]":                 "all.yaml:30:26: unknown engine",
		"no.such.path":                   "all.yaml: unknown engine",
		"server.settings.auto_explain.log_min_duration": "all.yaml:15:5: unknown engine",
	} {
		if got := s.Errorf(path, "unknown %s", "engine").Error(); got != want {
			t.Errorf("Errorf(%q) = %q, want %q", path, got, want)
		}
	}
}

func TestParseTargetStudy(t *testing.T) {
	s, err := Parse("x.yaml", []byte("study: t\ntarget: postgres://bench@db:5432/tpcc?sslmode=disable\nfactors:\n  rtt: [0, 1ms]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Managed() || s.Base.Target != "postgres://bench@db:5432/tpcc?sslmode=disable" || len(s.Engines()) != 0 {
		t.Errorf("target study: managed %v, base %+v, engines %v", s.Managed(), s.Base, s.Engines())
	}
	s, err = Parse("x.yaml", []byte("study: t\nfactors:\n  target: [pg1, pg2]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Managed() || len(s.Cells()) != 2 {
		t.Errorf("target factor: managed %v, %d cells", s.Managed(), len(s.Cells()))
	}
}

func TestLoad(t *testing.T) {
	if _, err := Load("testdata/does-not-exist.yaml"); err == nil {
		t.Error("Load of a missing file succeeded")
	}
}

func TestParseDurations(t *testing.T) {
	s := mustParse(t, head+"cooldown: 0.0\nbase: {warmup: 0}\nfactors:\n  rtt: [0.0, 100us, 0.25ms, 1.5s, 1m30s, 1ns]\n")
	want := []string{"0", "100µs", "250µs", "1.5s", "1m30s", "0.001µs"}
	if !reflect.DeepEqual(s.Factors[0].Levels, want) {
		t.Errorf("levels %q, want %q", s.Factors[0].Levels, want)
	}
	for i, c := range s.Cells() {
		if c.Levels["rtt"] != want[i] {
			t.Errorf("cell %d: rtt %q does not parse back to itself", i, c.Levels["rtt"])
		}
	}
}

// TestParseOpenLoop reads the open-loop and retry keys, in the base and as factors.
func TestParseOpenLoop(t *testing.T) {
	s := mustParse(t, `study: ol
server: {engine: postgres}
base:
  rate: 500/s
  arrival: poisson
  latency_limit: 200ms
  max_tries: 3
factors:
  rate: [0, 250, 1e3]
  max_tries: [1, 3]
  arrival: [constant, poisson]
  latency_limit: [0, 50ms]
`)
	b := s.Base
	if b.Rate != 500 || b.Arrival != spec.ArrivalPoisson || b.LatencyLimit != 200*time.Millisecond || b.MaxTries != 3 {
		t.Errorf("base %+v", b)
	}
	want := []Factor{{"rate", []string{"0", "250", "1000"}}, {"max_tries", []string{"1", "3"}},
		{"arrival", []string{"constant", "poisson"}}, {"latency_limit", []string{"0", "50ms"}}}
	if !reflect.DeepEqual(s.Factors, want) {
		t.Errorf("factors %v, want %v", s.Factors, want)
	}
	cells := s.Cells()
	if len(cells) != 24 {
		t.Fatalf("%d cells, want 24", len(cells))
	}
	c := cells[len(cells)-1]
	if c.Params.Rate != 1000 || c.Params.MaxTries != 3 || c.Params.Arrival != spec.ArrivalPoisson || c.Levels["rate"] != "1000" {
		t.Errorf("last cell %+v %v", c.Params, c.Levels)
	}

	for _, tc := range []struct{ src, want string }{
		{"base: {rate: -5}\n", "x.yaml:3:14: rate must be a positive number of transactions per second (0: a closed loop), got -5"},
		{"base: {rate: fast}\n", `x.yaml:3:14: rate must be transactions per second, like 1000 or 2.5, got "fast"`},
		{"base: {arrival: poison}\n", `x.yaml:3:17: arrival must be constant or poisson, got "poison" (did you mean poisson?)`},
		{"base: {max_tries: 0}\n", "x.yaml:3:19: max_tries must be at least 1, got 0"},
		{"base: {latency_limit: 5}\n", "x.yaml:3:23: latency_limit needs a unit: 5ms or 5s?"},
		{"base: {options: {max_tries: 3}}\n", `x.yaml:3:18: option "max_tries" is written base.max_tries`},
		{"factors: {opt.max_tries: [1, 3]}\n", `x.yaml:3:11: factor "opt.max_tries" is written max_tries: it is a parameter of the run, not an option`},
		{"base: {retries: 3}\n", `x.yaml:3:8: unknown key "retries" in base (did you mean max_tries?)`},
	} {
		_, err := Parse("x.yaml", []byte(head+tc.src))
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q: error\n%v\nwant\n%s", tc.src, err, tc.want)
		}
	}
}
