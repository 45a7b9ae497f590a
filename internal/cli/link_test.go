package cli_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/cli"
	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
)

// TestLinkFlagErrors: a link flag that cannot be is one line naming the flag and the fix,
// the same for dblat run, dblat proxy and dblat calibrate (one validation).
func TestLinkFlagErrors(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct {
		args, want []string
	}{
		{[]string{"--jitter", "1ms", "--distribution", "gauss"}, []string{"--distribution", "must be uniform, normal or paretonormal"}},
		{[]string{"--rtt", "1ms", "--distribution", "normal"}, []string{"--distribution shapes the jitter, and there is none: give --jitter too"}},
		{[]string{"--rtt", "5ms", "--up", "1ms"}, []string{"--rtt is 5ms, but --up and --down add up to 1ms"}},
		{[]string{"--profile", "crossaz"}, []string{`--profile "crossaz" is not a profile (did you mean cross-az?)`}},
		{[]string{"--bandwidth", "100"}, []string{"--bandwidth", `needs a unit: "100"`}},
		{[]string{"--loss", "100%"}, []string{"--loss", "below 100%"}},
	} {
		e.fails(cli.ExitUsage, c.want, append([]string{"run", "tpcc", "--target", "pg1"}, c.args...)...)
		e.fails(cli.ExitUsage, c.want, append([]string{"proxy", "--upstream", "127.0.0.1:1"}, c.args...)...)
		if c.args[0] != "--rtt" {
			e.fails(cli.ExitUsage, c.want, append([]string{"calibrate", "--rtt", "1ms"}, c.args...)...)
		}
	}
	e.fails(cli.ExitUsage, []string{"--direct bypasses the link"}, "run", "tpcc", "--target", "pg1", "--direct", "--loss", "1%")
	e.fails(cli.ExitUsage, []string{"--rtt lists RTTs", "--up and --down"}, "calibrate", "--rtt", "1ms", "--up", "1ms")
}

// TestRunStoresTheLinkShape: a run through a shaped link stores its shape as set and as
// achieved, and dblat run and results show print both; a profile gives a run its network's
// shape, a flag given beside it overriding the profile's value.
func TestRunStoresTheLinkShape(t *testing.T) {
	t.Parallel()
	dsn := pgtest.NewDatabase(t)
	e := newEnv(t)
	e.must("load", "simple", "select-only", "--target", dsn, "--scale", "1")
	out := e.must("run", "simple", "select-only", "--target", dsn, "--terminals", "2", "--duration", "2s", "--warmup", "0s",
		"--rtt", "1ms", "--jitter", "200us", "--bandwidth", "10mbit", "--loss", "0.5%")
	r := e.lastRun()
	if r.Params.RTT != time.Millisecond || r.Params.Jitter != 200*time.Microsecond || r.Params.Bandwidth != 1_250_000 ||
		r.Params.Loss != 0.005 || r.Link == nil || r.Link.Achieved == nil || r.Link.RTO != 201*time.Millisecond {
		t.Fatalf("stored run: %+v, link %+v", r.Params, r.Link)
	}
	if up := r.Link.Achieved.Up; !up.Delay.Measured || up.Sent == 0 || up.PeakRate > 1_250_000*1.01 {
		t.Errorf("achieved up: %+v", up)
	}
	show := e.must("results", "show", strconv.FormatInt(r.ID, 10))
	for _, s := range []string{out, show} {
		if !strings.Contains(s, "path rtt 1ms, jitter 200µs uniform, bandwidth 10mbit, loss 0.5% (measured") ||
			!regexp.MustCompile(`(?m)^\s+link up: delay \S+ mean, sd \S+, p99 .*(jitter \S+ of 200µs asked).*at the peak; \d+ of [\d,]+ segments lost`).MatchString(s) {
			t.Errorf("the run's shape is not shown:\n%s", s)
		}
	}
	e.must("run", "simple", "select-only", "--target", dsn, "--terminals", "1", "--duration", "1s", "--warmup", "0s",
		"--profile", "cross-az", "--jitter", "100us")
	if p := e.lastRun().Params; p.Profile != "cross-az" || p.RTT != 2*time.Millisecond || p.Jitter != 100*time.Microsecond {
		t.Errorf("a cross-az run with jitter stored %+v", p)
	}
}
