package cli_test

import (
	"regexp"
	"testing"

	"github.com/dblat/dblat/internal/cli"
)

// TestCalibrateRefusesImpossibleLevelsAndCanFail: a level needs at least one connection and
// one sample (--conns -3, --conns 0 and --samples -5 used to run and print "yes"), and
// --fail-on-miss gives scripts an exit status for a level that misses the target.
func TestCalibrateRefusesImpossibleLevelsAndCanFail(t *testing.T) {
	e := newEnv(t)
	e.fails(cli.ExitUsage, []string{"--conns -3", "at least 1 connection"}, "calibrate", "--rtt", "0", "--conns", "-3", "--samples", "10")
	e.fails(cli.ExitUsage, []string{"--conns 0", "at least 1 connection"}, "calibrate", "--rtt", "0", "--conns", "0", "--samples", "10")
	e.fails(cli.ExitUsage, []string{"--samples -5"}, "calibrate", "--rtt", "0", "--conns", "1", "--samples", "-5")
	e.fails(cli.ExitUsage, []string{"--rtt", "at least one RTT"}, "calibrate", "--rtt", "", "--conns", "1")

	// A bulk transfer of one byte cannot show a gigabit: its time is the link's wake-ups,
	// not the cable's, so the bandwidth check misses.
	miss := []string{"calibrate", "--rtt", "1ms", "--conns", "1", "--samples", "40", "--bandwidth", "1gbit", "--bulk", "1", "--no-cpu-latency-hold"}
	if out := e.must(miss...); !regexp.MustCompile(`(?m)^1ms\s+1\s.*\sNO$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^\s+bandwidth up\s.*\sNO$`).MatchString(out) {
		t.Errorf("a bandwidth read from one byte should miss the target:\n%s", out)
	}
	e.fails(cli.ExitCheckFailed, []string{"1 of 1 levels missed"}, append(miss, "--fail-on-miss")...)
}
