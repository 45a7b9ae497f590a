package sysinfo

import (
	"runtime/debug"
	"testing"
)

// TestVersionOf: a checkout's build says its revision; a `go install …@vX` build, which has
// no VCS data, says the module version instead of "dev".
func TestVersionOf(t *testing.T) {
	for _, c := range []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"go install @version", debug.BuildInfo{Main: debug.Module{Path: "github.com/dblat/dblat", Version: "v0.3.1"}}, "v0.3.1"},
		{"checkout", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "true"}}}, "0123456789ab-dirty"},
		{"devel without VCS", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "dev"},
	} {
		if got := buildOf(&c.bi).Version; got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestBuildOf: a stamped build gives its commit, the commit's time and whether the tree was
// modified, for `dblat version`.
func TestBuildOf(t *testing.T) {
	b := buildOf(&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261124072813-2b8d8c412865"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "2b8d8c412865ec833188958d65be31587a835968"},
			{Key: "vcs.time", Value: "2026-11-24T07:28:13Z"}, {Key: "vcs.modified", Value: "false"}}})
	want := BuildInfo{Version: "2b8d8c412865", Revision: "2b8d8c412865ec833188958d65be31587a835968", Time: "2026-11-24T07:28:13Z", Go: "go1.26.8"}
	if b != want {
		t.Errorf("buildOf: %+v, want %+v", b, want)
	}
}
