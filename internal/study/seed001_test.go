package study

import (
	"strings"
	"testing"

	"github.com/dblat/dblat/internal/results"
)

// TestServerMemoryAndEncryption: a study's server may have a memory limit and encryption,
// as keys of server: and as factors server.memory and server.encryption; their levels are
// canonical, each level is another server configuration, and the levels that ask for the
// server's own (none, off) keep the cell keys of a study that does not name them.
func TestServerMemoryAndEncryption(t *testing.T) {
	plain, err := Parse("p.yaml", []byte(head+"base: {warehouses: 2}\n"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse("m.yaml", []byte(head+"base: {warehouses: 2}\nfactors:\n  server.memory: [none, 0.5GB]\n  server.encryption: [off, on]\n"))
	if err != nil {
		t.Fatal(err)
	}
	cells := s.Cells()
	if len(cells) != 4 {
		t.Fatalf("%d cells, want 4", len(cells))
	}
	if got := s.Factors[0].Levels; got[0] != "none" || got[1] != "512MB" {
		t.Errorf("memory levels %v, want [none 512MB]", got)
	}
	if cells[0].Key != plain.Cells()[0].Key {
		t.Errorf("the cell without a limit or encryption has key %s, the same study without them %s", cells[0].Key, plain.Cells()[0].Key)
	}
	keys := map[string]bool{}
	for i, c := range cells {
		keys[c.Key] = true
		if i > 0 && !c.NeedsServerRestart(&cells[i-1]) {
			t.Errorf("cell %s after %s needs no restart", s.Label(c), s.Label(cells[i-1]))
		}
	}
	if len(keys) != 4 {
		t.Errorf("%d distinct cell keys for 4 cells", len(keys))
	}
	if c := cells[3]; c.Params.Memory != "512MB" || c.Params.Encryption != "on" || c.Levels[results.FactorEncryption] != "on" {
		t.Errorf("last cell %+v, levels %v", c.Params, c.Levels)
	}
	base, err := Parse("b.yaml", []byte("study: t\nserver: {engine: mariadb, memory: 1gb, encryption: yes}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p := base.Cells()[0].Params; p.Memory != "1GB" || p.Encryption != "on" {
		t.Errorf("server: memory and encryption read %q, %q", p.Memory, p.Encryption)
	}
}

// TestDuring: an operation during the window is a field of the run and a factor; its
// level names the operation and its offset, which must fall within the window; sweep is
// vacuum; a run without one keeps its cell key.
func TestDuring(t *testing.T) {
	plain, err := Parse("p.yaml", []byte(head+"base: {duration: 1m}\n"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse("d.yaml", []byte(head+"base: {duration: 1m}\nfactors:\n  during: [none, backup@30s, sweep@10s]\n"))
	if err != nil {
		t.Fatal(err)
	}
	cells := s.Cells()
	if got := s.Factors[0].Levels; strings.Join(got, " ") != "none backup@30s vacuum@10s" {
		t.Errorf("levels %v", got)
	}
	if cells[0].Key != plain.Cells()[0].Key || cells[1].Key == cells[0].Key {
		t.Errorf("keys %s, %s; the study without an operation %s", cells[0].Key, cells[1].Key, plain.Cells()[0].Key)
	}
	if op, at := cells[1].Params.Operation(); op != "backup" || at.Seconds() != 30 {
		t.Errorf("operation %q at %v", op, at)
	}
}

// TestSeed001Errors: what cannot be asked is refused at its line, with the fix.
func TestSeed001Errors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{head + "base: {duration: 1m}\nfactors:\n  during: [backup@2m]\n",
			"x.yaml:5:12: during level starts 2m0s into the window, and the window lasts 1m0s: give an offset within it"},
		{head + "base: {during: defrag@1s}\n", `x.yaml:3:16: during operation must be backup, vacuum, checkpoint or index, got "defrag"`},
		{head + "base: {during: backup}\n", `x.yaml:3:16: during must be OPERATION@OFFSET, like backup@30s (an operation 30 s into the window), got "backup"`},
		{"study: t\nserver: {engine: postgres, memory: 16MB}\n", "x.yaml:2:36: server.memory must be at least 64MB (or none), got 16MB"},
		{"study: t\nserver: {engine: postgres, memory: 512}\n", "x.yaml:2:36: server.memory needs a unit: 512MB or 512GB?, or none"},
		{"study: t\nserver: {engine: mariadb, encryption: aes}\n", `x.yaml:2:39: server.encryption must be on or off, got "aes"`},
		{"study: t\ntarget: pg1\nfactors:\n  server.memory: [1GB]\n",
			"x.yaml:4:3: server.memory needs a managed server (server:) that dblat starts; a target runs as it was started"},
	} {
		_, err := Parse("x.yaml", []byte(tc.src))
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q:\n got %v\nwant %s", tc.src, err, tc.want)
		}
	}
}
