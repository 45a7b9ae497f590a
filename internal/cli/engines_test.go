package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dblat/dblat/internal/engine/firebird/fbtest"
	"github.com/dblat/dblat/internal/engine/mariadb/mariadbtest"
	"github.com/dblat/dblat/internal/results"
)

// lastRun returns the newest stored run.
func (e *env) lastRun() results.Run {
	e.t.Helper()
	var runs []results.Run
	if err := json.Unmarshal([]byte(e.must("results", "export")), &runs); err != nil {
		e.t.Fatal(err)
	}
	if len(runs) == 0 {
		e.t.Fatal("no runs stored")
	}
	return runs[0]
}

// loadRunCheck loads one warehouse into a managed server, runs TPC-C briefly, checks the
// consistency conditions and returns the stored run.
func (e *env) loadRunCheck(name string, runArgs ...string) results.Run {
	e.t.Helper()
	e.must("load", "tpcc", "--target", name, "--warehouses", "1")
	args := append([]string{"run", "tpcc", "--target", name, "--terminals", "4", "--duration", "2s", "--warmup", "0s"}, runArgs...)
	out := e.must(args...)
	if !regexp.MustCompile(`NOPM [1-9]\d*`).MatchString(out) {
		e.t.Errorf("%s: no New-Order committed:\n%s", name, out)
	}
	e.must("check", "tpcc", "--target", name)
	return e.lastRun()
}

func TestFirebirdInAllThreeArchitectures(t *testing.T) {
	t.Parallel()
	fbtest.Server(t, "Super") // skip or fail early when Firebird is not installed
	for _, arch := range []string{"Super", "SuperClassic", "Classic"} {
		t.Run(arch, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			name := "fb-" + strings.ToLower(arch)
			e.must("server", "start", "firebird", "--name", name, "--set", "ServerMode="+arch, "--set", "PageSize=8192")
			r := e.loadRunCheck(name)
			if got := r.Server.Settings["ServerMode"]; got != arch {
				t.Errorf("architecture read back as %q, want %s", got, arch)
			}
			if got := r.Server.Settings["PageSize"]; got != "8192" {
				t.Errorf("page size read back as %q, want 8192 (settings %v)", got, r.Server.Settings)
			}
			if r.StatsAfter["mon$database.next_transaction"] <= r.StatsBefore["mon$database.next_transaction"] {
				t.Errorf("header statistics not recorded: before %v after %v", r.StatsBefore, r.StatsAfter)
			}
			if arch == "Super" {
				e.must("run", "tpcc", "--target", name, "--terminals", "2", "--duration", "1s", "--warmup", "0s", "--sweep", "--gstat")
				r := e.lastRun()
				if r.StatsBefore["gstat.total.records"] <= 0 || r.StatsAfter["gstat.total.records"] < r.StatsBefore["gstat.total.records"] ||
					r.Params.Options["swept_before"] != "true" {
					t.Errorf("gstat -r or sweep not recorded: before %v, after %v, options %v",
						r.StatsBefore["gstat.total.records"], r.StatsAfter["gstat.total.records"], r.Params.Options)
				}
			}
			e.must("server", "stop", name)
		})
	}
}

func TestMariaDBTransportsAndInterpolation(t *testing.T) {
	t.Parallel()
	mariadbtest.Server(t) // skip or fail early when MariaDB is not installed
	e := newEnv(t)
	e.must("server", "start", "mariadb", "--name", "m1", "--set", "innodb_buffer_pool_size=64M", "--set", "innodb_flush_log_at_trx_commit=2")
	r := e.loadRunCheck("m1")
	if r.Server.Settings["innodb_flush_log_at_trx_commit"] != "2" || r.StatsAfter["status.Com_commit"] <= r.StatsBefore["status.Com_commit"] {
		t.Errorf("settings or statistics not read back: %v / %v", r.Server.Settings["innodb_flush_log_at_trx_commit"], r.StatsAfter)
	}
	e.must("run", "tpcc", "--target", "m1", "--terminals", "2", "--duration", "1s", "--warmup", "0s", "--transport", "unix")
	if r := e.lastRun(); r.Params.Options["transport"] != "unix" || r.Summary.Committed == 0 {
		t.Errorf("unix socket run: %+v", r.Params.Options)
	}
	e.must("run", "tpcc", "--target", "m1", "--terminals", "2", "--duration", "1s", "--warmup", "0s", "--interpolate-params", "--rtt", "1ms")
	if r := e.lastRun(); r.Params.Options["interpolate_params"] != "true" || r.Link == nil {
		t.Errorf("interpolated run through the link: %+v %+v", r.Params.Options, r.Link)
	}
	e.fails(2, []string{"unix", "latency link"}, "run", "tpcc", "--target", "m1", "--transport", "unix", "--rtt", "1ms")
	e.fails(2, []string{"unknown MariaDB setting", "innodb_buffer_pool_size"}, "server", "start", "mariadb", "--name", "m2", "--set", "innodb_bufer_pool_size=1G")
}

func TestStudyWithTransportFactor(t *testing.T) {
	t.Parallel()
	mariadbtest.Server(t)
	e := newEnv(t)
	path := e.dir + "/transport.yaml"
	src := `study: transport
repeat: 1
between_runs: keep
server:
  engine: mariadb
  settings: {innodb_buffer_pool_size: 64M, innodb_flush_log_at_trx_commit: "2"}
base:
  workload: tpcc
  warehouses: 1
  terminals: 2
  duration: 1s
  warmup: 0s
factors:
  opt.transport: [tcp, unix]
`
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := e.must("study", "plan", path); !strings.Contains(out, "direct") || !strings.Contains(out, "unix") {
		t.Errorf("plan does not say which path each cell takes:\n%s", out)
	}
	e.must("study", "run", path, "-o", filepath.Join(e.dir, "transport.html"))
	seen := map[string]bool{}
	for _, r := range e.runsOf("transport") {
		seen[r.Params.Options["transport"]] = r.Status == results.StatusFinished
		if r.Link != nil {
			t.Errorf("run %d over %s went through the latency link in a study without an RTT", r.ID, r.Params.Options["transport"])
		}
	}
	if !seen["tcp"] || !seen["unix"] {
		t.Errorf("finished runs by transport: %v", seen)
	}
	// The transport is the factor: the paths differ by it alone, which the check accepts.
	if _, out, _ := e.run("check", "study", "transport"); strings.Contains(out, "mixed-params") {
		t.Errorf("the transport study's own check finds mixed parameters:\n%s", out)
	}
}
