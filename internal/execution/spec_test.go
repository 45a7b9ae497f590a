package execution

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/engine"
	_ "github.com/dblat/dblat/internal/engine/all"
	"github.com/dblat/dblat/internal/latency"
	"github.com/dblat/dblat/internal/spec"
	"github.com/dblat/dblat/internal/study"
	_ "github.com/dblat/dblat/internal/workload/all"
)

func mustEngine(t *testing.T, name string) engine.Engine {
	t.Helper()
	e, err := engine.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestCheckRefusesWhatCannotRun: what a run asks for is checked against the workload's and
// the engine's declarations without a server; each problem is tagged with the path of the
// field it concerns (which front ends turn into a flag or a line), and its detail names it.
func TestCheckRefusesWhatCannotRun(t *testing.T) {
	base := func(wl string) spec.Run {
		return spec.Run{Params: spec.Params{Drive: spec.Drive{Terminals: 4, Duration: time.Second, MaxTries: 1}, Workload: wl}}
	}
	opts := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	for _, c := range []struct {
		name       string
		engine     string
		managed    bool
		run        func(s *spec.Run)
		path, want string // "" = accepted
	}{
		{"tpcc defaults", "postgres", true, func(*spec.Run) {}, "", ""},
		{"unknown workload", "postgres", true, func(s *spec.Run) { s.Workload = "tpc-c" }, "workload", `did you mean tpcc?`},
		{"misspelt option", "postgres", true, func(s *spec.Run) { s.Options = opts("mdoe", "batched") }, "options[mdoe]", `is not an option of workload tpcc on postgres (did you mean mode?)`},
		{"bad mode", "postgres", true, func(s *spec.Run) { s.Options = opts("mode", "bulk") }, "options[mode]", `must be client, batched or procedure, got "bulk"`},
		{"another engine's option", "postgres", true, func(s *spec.Run) { s.Options = opts("interpolate_params", "true") }, "options[interpolate_params]", `is not an option of workload tpcc on postgres`},
		{"engine's option", "mariadb", false, func(s *spec.Run) { s.Options = opts("interpolate_params", "yes") }, "", ""},
		{"managed-only option on a DSN", "firebird", false, func(s *spec.Run) { s.Options = opts("sweep", "true") }, "options[sweep]", "needs a managed server"},
		{"managed-only option at its default", "firebird", false, func(s *spec.Run) { s.Options = opts("sweep", "false") }, "", ""},
		{"unix through the link", "postgres", true, func(s *spec.Run) { s.Options = opts("transport", "unix"); s.Link = &latency.Config{} }, "options[transport]", "cannot go through the latency link"},
		{"unix on firebird", "firebird", true, func(s *spec.Run) { s.Options = opts("transport", "unix") }, "options[transport]", "listens on TCP only"},
		{"unix on a DSN", "mariadb", false, func(s *spec.Run) { s.Options = opts("transport", "unix") }, "options[transport]", "needs a managed server"},
		{"unknown transport", "mariadb", true, func(s *spec.Run) { s.Options = opts("transport", "udp") }, "options[transport]", `got "udp"`},
		{"mix of a one-type workload", "postgres", true, func(s *spec.Run) { *s = base("select-only"); s.Options = opts("mix", "1") }, "options[mix]", "one transaction type"},
		{"mix with a stranger", "postgres", true, func(s *spec.Run) { s.Options = opts("mix", "new_order=1,refund=1") }, "options[mix]", `unknown transaction "refund"`},
		{"think without think times", "postgres", true, func(s *spec.Run) { *s = base("ping"); s.Think = true }, "think", "no think times"},
		{"protocol on an engine with one", "mariadb", true, func(s *spec.Run) { *s = base("select-only"); s.Options = opts("protocol", "simple") }, "options[protocol]", "mariadb has one"},
		{"protocol on postgres", "postgres", true, func(s *spec.Run) { *s = base("select-only"); s.Options = opts("protocol", "simple") }, "", ""},
		{"mode the engine cannot run", "mariadb", true, func(s *spec.Run) { s.Options = opts("mode", "batched"); s.Workload = "tpcc" }, "", ""},
		{"blob option on select-only", "postgres", true, func(s *spec.Run) { *s = base("select-only"); s.Options = opts("blobs_per_tx", "2") }, "options[blobs_per_tx]", `is not an option of workload select-only`},
		{"zero terminals", "postgres", true, func(s *spec.Run) { s.Terminals = 0 }, "terminals", "must be at least 1"},
		{"zero window", "postgres", true, func(s *spec.Run) { s.Duration = 0 }, "duration", "must be positive"},
		{"pool larger than the terminals", "postgres", true, func(s *spec.Run) { s.Connections = 5 }, "connections", "more than the 4 terminals"},
		{"open loop", "firebird", false, func(s *spec.Run) {
			s.Rate, s.Arrival, s.LatencyLimit, s.MaxTries = 500, "poisson", time.Second, 5
		}, "", ""},
		{"negative rate", "postgres", true, func(s *spec.Run) { s.Rate = -1 }, "rate", "must be a positive number"},
		{"unknown arrival", "postgres", true, func(s *spec.Run) { s.Rate, s.Arrival = 10, "uniform" }, "arrival", `must be constant or poisson, got "uniform"`},
		{"rate with think times", "postgres", true, func(s *spec.Run) { s.Rate, s.Think = 10, true }, "rate", "give either"},
		{"negative latency limit", "postgres", true, func(s *spec.Run) { s.LatencyLimit = -time.Second }, "latency_limit", "must not be negative"},
		{"zero max tries", "postgres", true, func(s *spec.Run) { s.MaxTries = 0 }, "max_tries", "must be at least 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := base("tpcc")
			c.run(&s)
			_, err := check(&s, mustEngine(t, c.engine), c.managed)
			if c.want == "" {
				if err != nil {
					t.Errorf("refused: %v", err)
				}
				return
			}
			if _, ok := err.(*InputError); !ok {
				t.Fatalf("error %T (%v) is not an *InputError (the CLI's usage exit)", err, err)
			}
			list, ok := spec.AsList(err)
			if !ok || len(list) != 1 {
				t.Fatalf("want one field error, got %v", err)
			}
			if list[0].Field != c.path || !strings.Contains(list[0].Detail, c.want) {
				t.Errorf("got %s %q, want %s with %q", list[0].Field, list[0].Detail, c.path, c.want)
			}
		})
	}
}

// TestCheckStoresEveryOptionWithItsDefault: a run records each declared option's value,
// defaults included, so that runs compare like for like by what they did.
func TestCheckStoresEveryOptionWithItsDefault(t *testing.T) {
	s := spec.Run{Params: spec.Params{Drive: spec.Drive{Terminals: 1, Duration: time.Second, MaxTries: 1}, Workload: "tpcc", Options: map[string]string{"gstat": "on"}}, Record: map[string]string{"set.ServerMode": "Classic"}}
	p, err := check(&s, mustEngine(t, "firebird"), true)
	if err != nil {
		t.Fatal(err)
	}
	stored := s.Stored(1, nil, p.stored).Options
	for k, want := range map[string]string{"mode": "client", "gstat": "true", "sweep": "false", "transport": "tcp",
		"set.ServerMode": "Classic"} {
		if stored[k] != want {
			t.Errorf("stored %s = %q, want %q (all: %v)", k, stored[k], want, stored)
		}
	}
}

// TestRunOfOpenLoop: the open-loop and retry keys of a study reach the run; a problem with
// them is reported at its line, found by the field's path, not by the message.
func TestRunOfOpenLoop(t *testing.T) {
	st, err := study.Parse("t.yaml", []byte(`study: t
server: {engine: postgres}
base: {workload: select-only, rate: 750, latency_limit: 80ms, max_tries: 4}
factors:
  rtt: [0, 1ms]
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, cell := range st.Cells() {
		s := RunOf(st, cell, "srv")
		if s.Rate != 750 || s.Arrival != "constant" || s.LatencyLimit != 80*time.Millisecond || s.MaxTries != 4 {
			t.Errorf("cell %s: run %+v", st.Label(cell), s)
		}
		if _, err := check(&s, mustEngine(t, "postgres"), true); err != nil {
			t.Errorf("cell %s: %v", st.Label(cell), err)
		}
	}
	_, err = study.Parse("t.yaml", []byte("study: t\nserver: {engine: postgres}\nbase:\n  think: true\n  rate: 10\n"))
	if err == nil || !strings.Contains(err.Error(), "t.yaml:5:9: rate and think do not combine") {
		t.Errorf("think with a rate: %v", err)
	}
	bad, err := study.Parse("t.yaml", []byte("study: t\nserver: {engine: postgres}\nbase:\n  workload: ping\n  think: true\n"))
	if err != nil {
		t.Fatal(err)
	}
	core, _ := newCore(t)
	_, err = core.Plan(context.Background(), bad)
	if err == nil || !strings.Contains(err.Error(), "t.yaml:5:10: think is not a pacing of ping") {
		t.Errorf("Plan of think times on ping: %v", err)
	}
}

// TestRunOf: a study cell becomes the run a command line would build, with the study's one
// path to the server: a study that writes an RTT sends every TCP cell through the link, at
// RTT 0 too; a Unix-socket cell never goes through it.
func TestRunOf(t *testing.T) {
	st, err := study.Parse("t.yaml", []byte(`study: t
server: {engine: mariadb, settings: {innodb_buffer_pool_size: 256M}}
base: {workload: tpcc, warehouses: 2, terminals: 8, duration: 5s, warmup: 1s, mode: batched, mix: "50,40,4,3,3", options: {interpolate_params: true}}
factors:
  rtt: [0]
  opt.transport: [tcp, unix]
`))
	if err != nil {
		t.Fatal(err)
	}
	var tcp, unix int
	for _, cell := range st.Cells() {
		s := RunOf(st, cell, "srv")
		if _, err := check(&s, mustEngine(t, "mariadb"), true); err != nil {
			t.Fatal(err)
		}
		if s.Scale != 2 || s.Terminals != 8 || s.Connections != 8 || s.Options["mode"] != "batched" ||
			s.Options["interpolate_params"] != "true" || s.Record["set.innodb_buffer_pool_size"] != "256M" ||
			s.Options["mix"] != "50,40,4,3,3" || s.Mix["new_order"] != 50 || s.Mix["stock_level"] != 3 || s.Study != "t" || s.Cell != cell.Key {
			t.Errorf("cell %s: run %+v", st.Label(cell), s)
		}
		switch s.Path() {
		case spec.PathLink:
			tcp++
			if s.Link.RTT != cell.Params.RTT {
				t.Errorf("tcp cell %s: link %+v, want RTT %v", st.Label(cell), s.Link, cell.Params.RTT)
			}
		case spec.PathUnix:
			unix++
		default:
			t.Errorf("cell %s takes the path %s", st.Label(cell), s.Path())
		}
	}
	if tcp != 1 || unix != 1 {
		t.Errorf("%d tcp and %d unix cells, want 1 each", tcp, unix)
	}
	// Seed 004's question without an RTT: TCP against a Unix socket, both direct.
	st, err = study.Parse("t.yaml", []byte("study: t\nserver: {engine: mariadb}\nfactors:\n  opt.transport: [tcp, unix]\n"))
	if err != nil {
		t.Fatal(err)
	}
	paths := map[string]bool{}
	for _, cell := range st.Cells() {
		s := RunOf(st, cell, "srv")
		paths[s.Path()] = true
	}
	if !paths[spec.PathDirect] || !paths[spec.PathUnix] || len(paths) != 2 {
		t.Errorf("transport study without an RTT takes paths %v, want direct and unix", paths)
	}
}
