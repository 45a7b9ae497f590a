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
		if got := versionOf(&c.bi); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
