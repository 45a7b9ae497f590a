package engine_test

import (
	"testing"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/engine/firebird"
)

var fb firebird.Engine

// TestSameSetting: requested values and read-backs compare across spellings.
func TestSameSetting(t *testing.T) {
	for _, c := range []struct {
		asked, got       string
		same, comparable bool
	}{
		{"128MB", "16384 8kB", true, true},
		{"1GB", "131072 8kB", true, true},
		{"7MB", "7168 kB", true, true},
		{"256M", "268435456", true, true}, // MariaDB reads sizes back in bytes
		{"200M", "268435456", false, true},
		{"16384", "16384 8kB", false, false}, // pages asked, size read back
		{"5min", "300 s", true, true},
		{"on", "1", true, true},
		{"off", "ON", false, true},
		{"32768", "16384", false, true},
		{"ThreadedShared", "SuperClassic", true, true},
		{"Classic", "SuperClassic|Classic", false, false},
		{"read committed", "read committed", true, true},
	} {
		s, ok := engine.SameSetting(c.asked, c.got, fb.Comparison().Canonical)
		if s != c.same || ok != c.comparable {
			t.Errorf("SameSetting(%q, %q) = %v, %v; want %v, %v", c.asked, c.got, s, ok, c.same, c.comparable)
		}
	}
}
