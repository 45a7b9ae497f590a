package execution

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/engine"
	_ "github.com/dblat/dblat/internal/engine/all"
	"github.com/dblat/dblat/internal/latency"
	"github.com/dblat/dblat/internal/study"
	"github.com/dblat/dblat/internal/workload"
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
// the engine's declarations without a server, with an error that names the problem.
func TestCheckRefusesWhatCannotRun(t *testing.T) {
	base := func(wl string) Spec { return Spec{Workload: wl, Terminals: 4, Duration: time.Second} }
	for _, c := range []struct {
		name    string
		engine  string
		managed bool
		spec    func(s *Spec)
		want    string // "" = accepted
	}{
		{"tpcc defaults", "postgres", true, func(*Spec) {}, ""},
		{"unknown workload", "postgres", true, func(s *Spec) { s.Workload = "tpc-c" }, `did you mean tpcc?`},
		{"misspelt option", "postgres", true, func(s *Spec) { s.Options = map[string]string{"mdoe": "batched"} }, `unknown option "mdoe" for workload tpcc on postgres (did you mean mode?)`},
		{"bad mode", "postgres", true, func(s *Spec) { s.Options = map[string]string{"mode": "bulk"} }, `option mode "bulk" is not one of client, batched, procedure`},
		{"another engine's option", "postgres", true, func(s *Spec) { s.Options = map[string]string{"interpolate_params": "true"} }, `unknown option "interpolate_params" for workload tpcc on postgres`},
		{"engine's option", "mariadb", false, func(s *Spec) { s.Options = map[string]string{"interpolate_params": "yes"} }, ""},
		{"managed-only option on a DSN", "firebird", false, func(s *Spec) { s.Options = map[string]string{"sweep": "true"} }, "needs a managed server"},
		{"managed-only option at its default", "firebird", false, func(s *Spec) { s.Options = map[string]string{"sweep": "false"} }, ""},
		{"unix through the link", "postgres", true, func(s *Spec) { s.Transport = TransportUnix; s.Link = &latency.Config{} }, "cannot go through the latency link"},
		{"unix on firebird", "firebird", true, func(s *Spec) { s.Transport = TransportUnix }, "listens on TCP only"},
		{"unix on a DSN", "mariadb", false, func(s *Spec) { s.Transport = TransportUnix }, "needs a managed server"},
		{"unknown transport", "mariadb", true, func(s *Spec) { s.Transport = "udp" }, `transport "udp"`},
		{"mix of a one-type workload", "postgres", true, func(s *Spec) { *s = base("select-only"); s.Mix = workload.Mix{"select": 1} }, "takes no mix"},
		{"mix with a stranger", "postgres", true, func(s *Spec) { s.Mix = workload.Mix{"new_order": 1, "refund": 1} }, `no transaction "refund"`},
		{"think without think times", "postgres", true, func(s *Spec) { *s = base("ping"); s.Think = true }, "no think times"},
		{"protocol on an engine with one", "mariadb", true, func(s *Spec) { *s = base("select-only"); s.Options = map[string]string{"protocol": "simple"} }, "one query protocol"},
		{"protocol on postgres", "postgres", true, func(s *Spec) { *s = base("select-only"); s.Options = map[string]string{"protocol": "simple"} }, ""},
		{"blob option on select-only", "postgres", true, func(s *Spec) { *s = base("select-only"); s.Options = map[string]string{"blobs_per_tx": "2"} }, `unknown option "blobs_per_tx" for workload select-only`},
		{"zero terminals", "postgres", true, func(s *Spec) { s.Terminals = 0 }, "terminals must be at least 1"},
		{"zero window", "postgres", true, func(s *Spec) { s.Duration = 0 }, "duration must be positive"},
		{"open loop", "firebird", false, func(s *Spec) {
			s.Rate, s.Arrival, s.LatencyLimit, s.MaxTries = 500, "poisson", time.Second, 5
		}, ""},
		{"negative rate", "postgres", true, func(s *Spec) { s.Rate = -1 }, "rate must be a positive number"},
		{"unknown arrival", "postgres", true, func(s *Spec) { s.Rate, s.Arrival = 10, "uniform" }, `arrival "uniform": use constant or poisson`},
		{"arrival without a rate", "postgres", true, func(s *Spec) { s.Arrival = "poisson" }, "give a rate too"},
		{"rate with think times", "postgres", true, func(s *Spec) { s.Rate, s.Think = 10, true }, "give either, not both"},
		{"negative latency limit", "postgres", true, func(s *Spec) { s.LatencyLimit = -time.Second }, "latency limit must not be negative"},
		{"negative max tries", "postgres", true, func(s *Spec) { s.MaxTries = -1 }, "max tries must be at least 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := base("tpcc")
			c.spec(&s)
			_, err := check(&s, mustEngine(t, c.engine), c.managed)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.want != "" && err == nil:
				t.Errorf("accepted; want an error with %q", c.want)
			case c.want != "" && !strings.Contains(err.Error(), c.want):
				t.Errorf("error %q lacks %q", err, c.want)
			case err != nil:
				if _, ok := err.(*InputError); !ok {
					t.Errorf("error %T is not an *InputError (the CLI's usage exit)", err)
				}
			}
		})
	}
}

// TestCheckStoresEveryOptionWithItsDefault: a run records each declared option's value,
// defaults included, so that runs compare like for like by what they did.
func TestCheckStoresEveryOptionWithItsDefault(t *testing.T) {
	s := Spec{Workload: "tpcc", Terminals: 1, Duration: time.Second, Options: map[string]string{"gstat": "on"},
		Record: map[string]string{"set.ServerMode": "Classic"}}
	p, err := check(&s, mustEngine(t, "firebird"), true)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"mode": "client", "gstat": "true", "sweep": "false", "transport": "tcp",
		"set.ServerMode": "Classic"} {
		if p.stored[k] != want {
			t.Errorf("stored %s = %q, want %q (all: %v)", k, p.stored[k], want, p.stored)
		}
	}
}

// TestSpecOfOpenLoop: the open-loop and retry keys of a study reach the Spec; a problem
// with them is reported at its line.
func TestSpecOfOpenLoop(t *testing.T) {
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
		s, err := SpecOf(st, cell, "srv")
		if err != nil {
			t.Fatal(err)
		}
		if s.Rate != 750 || s.Arrival != "constant" || s.LatencyLimit != 80*time.Millisecond || s.MaxTries != 4 {
			t.Errorf("cell %s: spec %+v", st.Label(cell), s)
		}
		if _, err := check(&s, mustEngine(t, "postgres"), true); err != nil {
			t.Errorf("cell %s: %v", st.Label(cell), err)
		}
	}
	bad, err := study.Parse("t.yaml", []byte("study: t\nserver: {engine: postgres}\nbase:\n  think: true\n  rate: 10\n"))
	if err != nil {
		t.Fatal(err)
	}
	core, _ := newCore(t)
	_, err = core.Plan(context.Background(), bad)
	if err == nil || !strings.Contains(err.Error(), "t.yaml:4:3: think times pace a closed loop") {
		t.Errorf("Plan of think with a rate: %v", err)
	}
}

// TestSpecOf: a study cell becomes the same Spec a command line would build.
func TestSpecOf(t *testing.T) {
	st, err := study.Parse("t.yaml", []byte(`study: t
server: {engine: mariadb, settings: {innodb_buffer_pool_size: 256M}}
base: {workload: tpcc, warehouses: 2, terminals: 8, duration: 5s, warmup: 1s, mode: batched, mix: "50,40,4,3,3", options: {interpolate_params: true}}
factors:
  rtt: [0, 1ms]
  opt.transport: [tcp, unix]
`))
	if err != nil {
		t.Fatal(err)
	}
	var tcp, unix int
	for _, cell := range st.Cells() {
		s, err := SpecOf(st, cell, "srv")
		if err != nil {
			t.Fatal(err)
		}
		if s.Scale != 2 || s.Terminals != 8 || s.Connections != 8 || s.Options["mode"] != "batched" ||
			s.Options["interpolate_params"] != "true" || s.Record["set.innodb_buffer_pool_size"] != "256M" ||
			s.Record["mix"] != "50,40,4,3,3" || s.Mix["new_order"] != 50 || s.Mix["stock_level"] != 3 || s.Study != "t" || s.Cell != cell.Key {
			t.Errorf("cell %s: spec %+v", st.Label(cell), s)
		}
		switch s.Transport {
		case TransportTCP:
			tcp++
			if s.Link == nil || s.Link.RTT != cell.Params.RTT {
				t.Errorf("tcp cell %s: link %+v, want RTT %v (every TCP cell goes through the link)", st.Label(cell), s.Link, cell.Params.RTT)
			}
		case TransportUnix:
			unix++
			if s.Link != nil {
				t.Errorf("unix cell %s goes through the link", st.Label(cell))
			}
		}
		if _, ok := s.Options["transport"]; ok {
			t.Errorf("transport left among the options: %v", s.Options)
		}
	}
	if tcp != 2 || unix != 2 {
		t.Errorf("%d tcp and %d unix cells, want 2 each", tcp, unix)
	}
}
