package study

import (
	"strings"
	"testing"
)

// TestParseAgents: agents: N drives every run with N agents; it must be a count, and it
// does not change the cells' keys (it schedules runs, it does not change what one measures).
func TestParseAgents(t *testing.T) {
	plain, err := Parse("x.yaml", []byte(head))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse("x.yaml", []byte(head+"agents: 3\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Agents != 3 || plain.Agents != 0 {
		t.Errorf("agents %d and %d, want 3 and 0", s.Agents, plain.Agents)
	}
	a, b := plain.Cells(), s.Cells()
	if len(a) != len(b) || a[0].Key != b[0].Key {
		t.Errorf("agents changed the cells: %v vs %v", a, b)
	}
	for _, bad := range []string{"0", "two", "[1, 2]"} {
		_, err := Parse("x.yaml", []byte(head+"agents: "+bad+"\n"))
		if err == nil || !strings.Contains(err.Error(), "x.yaml:3:") || !strings.Contains(err.Error(), "agents") {
			t.Errorf("agents: %s: %v", bad, err)
		}
	}
}
