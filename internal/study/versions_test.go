package study

import (
	"strings"
	"testing"

	"github.com/dblat/dblat/internal/results"
)

// TestVersionFactor: server.version as a factor gives one cell per version, each with its
// own key and server configuration, so that a grouped order restarts the server once per
// version and round; a base version is part of every cell.
func TestVersionFactor(t *testing.T) {
	s := mustParse(t, "study: v\norder: grouped\nrepeat: 2\nserver: {engine: postgres, version: 15}\n"+
		"factors:\n  server.version: [13, 15, 17]\n  rtt: [0, 1ms]\n")
	if s.Server.Version != "15" || s.Base.Version != "15" {
		t.Errorf("server %+v, base version %q", s.Server, s.Base.Version)
	}
	cells := s.Cells()
	if len(cells) != 6 {
		t.Fatalf("%d cells, want 6", len(cells))
	}
	keys := map[string]bool{}
	for _, c := range cells {
		keys[c.Key] = true
		if c.Params.Version != c.Levels[results.FactorVersion] || c.Params.Version == "" {
			t.Errorf("cell %s: version %q", s.Label(c), c.Params.Version)
		}
	}
	if len(keys) != 6 {
		t.Errorf("%d distinct keys for 6 cells", len(keys))
	}
	if n := Restarts(s.Plan(nil)); n != 3*2 {
		t.Errorf("grouped: %d server starts, want 6 (3 versions × 2 rounds)", n)
	}
	f, ok := s.BinariesFactor()
	if !ok || f.Key != results.FactorVersion || !f.RestartsServer() {
		t.Errorf("BinariesFactor = %+v, %v", f, ok)
	}
	inst := mustParse(t, "study: i\nserver: {engine: firebird}\nfactors:\n  server.install: [/opt/fb3, /opt/fb5]\n")
	if c := inst.Cells(); len(c) != 2 || c[1].Params.Install != "/opt/fb5" || c[0].Key == c[1].Key {
		t.Errorf("install cells %+v", c)
	}
}

// TestVersionKeepsOldKeys: a study without a version keeps the cell keys it had; one with a
// version gets others.
func TestVersionKeepsOldKeys(t *testing.T) {
	plain := mustParse(t, head)
	v := mustParse(t, "study: t\nserver: {engine: postgres, version: 15}\n")
	if plain.Cells()[0].Key != CellKey(plain.Base) || plain.Cells()[0].Key == v.Cells()[0].Key {
		t.Errorf("keys %s and %s", plain.Cells()[0].Key, v.Cells()[0].Key)
	}
	p := plain.Base
	if serverID(&p) != `"postgres"""` {
		t.Errorf("serverID of a study without version: %q", serverID(&p))
	}
}

func TestVersionErrors(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"both", "study: t\nserver: {engine: postgres, version: 13, install: /opt/pg}\n",
			"x.yaml:2:41: give server.version or server.install, not both"},
		{"bad version", "study: t\nserver: {engine: postgres, version: latest}\n",
			`server.version must be a version number such as 16 or 10.11, got "latest"`},
		{"factor hint", head + "factors:\n  version: [13]\n", `unknown factor "version" (did you mean server.version?)`},
		{"on a target", "study: t\ntarget: pg1\nfactors:\n  server.version: [13, 17]\n",
			"server.version needs a managed server (server:) that dblat starts"},
		{"with engines", "study: t\nserver: {}\nfactors:\n  engine: [postgres, mariadb]\n  server.install: [/a, /b]\n",
			"server.install and an engine factor do not combine"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("x.yaml", []byte(tc.src))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}
