package study

import (
	"strings"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/latency"
	"github.com/dblat/dblat/internal/results"
)

// TestLinkFactors: bandwidth × jitter at 1 ms plans four linked cells, each with its link's
// shape, its levels as a stored run reads them back, and a key of its own.
func TestLinkFactors(t *testing.T) {
	s := mustParse(t, head+"base: {rtt: 1ms}\nfactors:\n  bandwidth: [1mbit, unlimited]\n  jitter: [0, 500us]\n")
	cells := s.Cells()
	if len(cells) != 4 || !s.Linked() {
		t.Fatalf("%d cells, linked %v", len(cells), s.Linked())
	}
	want := []string{"bandwidth=1mbit jitter=0", "bandwidth=1mbit jitter=500µs", "bandwidth=unlimited jitter=0", "bandwidth=unlimited jitter=500µs"}
	if got := labels(s, cells); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("cells %q, want %q", got, want)
	}
	l := cells[1].Params.Link
	if l == nil || l.RTT != time.Millisecond || l.BandwidthUp != 125_000 || l.BandwidthDown != 125_000 || l.Jitter != 500*time.Microsecond || !l.DelayConnect {
		t.Errorf("link %+v", l)
	}
	seen := map[string]bool{}
	for _, c := range cells {
		seen[c.Key] = true
		run := &results.Run{Params: c.Params.Run.Params}
		for k, v := range c.Levels {
			if got := results.FactorValue(run, k); got != v {
				t.Errorf("cell %s: %s reads back %q", s.Label(c), k, got)
			}
		}
	}
	if len(seen) != 4 {
		t.Error("cell keys are not unique")
	}
	// A study that writes only a jitter goes through the link too.
	if s := mustParse(t, head+"factors:\n  jitter: [0, 1ms]\n"); !s.Linked() {
		t.Error("a jitter factor does not make the study linked")
	}
}

// TestCellKeysStable: the link's new fields, at their defaults, leave the keys of studies
// written before them as they were, so their stored runs still count.
func TestCellKeysStable(t *testing.T) {
	s, err := Load("../../examples/seed003-pgbench.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"20758090b31ca5fd", "156c25193b2e123e", "158afcdfaf381ac3"} // before the link's shape was fields
	if got := keys(s.Cells()); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("keys %v, want %v", got, want)
	}
}

// TestProfileFactor: a profile gives the cell the network's whole shape, a link field's
// factor overrides the profile's value of it, and a study's own profile is a level like a
// built-in one.
func TestProfileFactor(t *testing.T) {
	s := mustParse(t, head+`profiles:
  dolphin: {rtt: 300us, description: a Dolphin interconnect, source: seed 004}
design: ofat
base: {profile: lan-100mbit-loaded}
factors:
  profile: [lan-100mbit-loaded, lan-1gbe, dolphin, same-host]
  bandwidth: [100mbit, unlimited]
`)
	byLabel := map[string]*latency.Config{}
	for _, c := range s.Cells() {
		byLabel[s.Label(c)] = c.Params.Link
	}
	for label, want := range map[string]latency.Config{
		"profile=lan-100mbit-loaded bandwidth=100mbit":   {RTT: 3500 * time.Microsecond, Jitter: 250 * time.Microsecond, BandwidthUp: 12_500_000, BandwidthDown: 12_500_000},
		"profile=lan-1gbe bandwidth=1gbit":               {RTT: 1100 * time.Microsecond, BandwidthUp: 125_000_000, BandwidthDown: 125_000_000},
		"profile=dolphin bandwidth=unlimited":            {RTT: 300 * time.Microsecond},
		"profile=same-host bandwidth=unlimited":          {},
		"profile=lan-100mbit-loaded bandwidth=unlimited": {RTT: 3500 * time.Microsecond, Jitter: 250 * time.Microsecond},
	} {
		l := byLabel[label]
		want.DelayConnect, want.Seed = true, 1
		if l == nil || *l != want {
			t.Errorf("%s: link %+v, want %+v (cells %v)", label, l, want, labels(s, s.Cells()))
		}
	}
	if len(byLabel) != 5 {
		t.Errorf("%d cells: %v", len(byLabel), labels(s, s.Cells()))
	}
}

// TestLinkParseErrors: a profile or a link field that cannot be is named at its line.
func TestLinkParseErrors(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"unknown profile", head + "factors:\n  profile: [cross-az, crossregion]\n",
			`x.yaml:4:23: unknown profile "crossregion" (did you mean cross-region?)`},
		{"profile beside fields", head + "base:\n  profile: cross-az\n  rtt: 1ms\n",
			"x.yaml:5:3: base.rtt and base.profile both shape the link"},
		{"built-in name", head + "profiles:\n  cross-az: {rtt: 1ms}\n", `x.yaml:4:3: profile "cross-az" is built in`},
		{"not a link field", head + "profiles:\n  p: {terminals: 3}\n", `x.yaml:4:7: unknown key "terminals" in profiles.p`},
		{"bad value", head + "profiles:\n  p: {bandwidth: 100}\n", `x.yaml:4:18: bandwidth needs a unit: "100" (write 100mbit, 1gbit, 12.5MB/s)`},
		{"bad loss", head + "factors:\n  loss: [0, 100%]\n", `x.yaml:4:13: loss level must be at least 0 and below 100%`},
		{"distribution alone", head + "base: {rtt: 1ms, distribution: normal}\n", "x.yaml:3:32: distribution shapes the jitter, and there is none: give jitter too"},
		{"unix with a delay", head + "base: {rtt: 1ms, options: {transport: unix}}\n", "x.yaml:3:13: rtt of 1ms needs the latency link, which is TCP: a unix transport cannot go through it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("x.yaml", []byte(tc.src))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v\nwant %s", err, tc.want)
			}
		})
	}
}
