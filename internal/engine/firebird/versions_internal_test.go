package firebird

import (
	"strings"
	"testing"
)

func TestMajorOf(t *testing.T) {
	for in, want := range map[string]int{
		"LI-V3.0.11.33637 Firebird 3.0": 3, "Firebird 4.0.5": 4, "LI-V5.0.1.1469 Firebird 5.0": 5, "WI-V2.5.9.27139 Firebird 2.5": 2, "": 0,
	} {
		if got := majorOf(in); got != want {
			t.Errorf("majorOf(%q) = %d, want %d", in, got, want)
		}
	}
	if err := supportedVersion("fb", "WI-V2.5.9.27139 Firebird 2.5"); err == nil || !strings.Contains(err.Error(), "3.0 to 5.0") {
		t.Errorf("2.5: %v", err)
	}
}

// TestSettingsByVersion: keys that came with 4.0 and 32 KiB pages are refused on 3.0, which
// would ignore or clamp them silently, and accepted from 4.0 on.
func TestSettingsByVersion(t *testing.T) {
	asked := map[string]string{"readconsistency": "0", "PageSize": "32768", "ServerMode": "Classic"}
	if _, err := checkSettingsFor(3, asked); err == nil {
		t.Error("3.0 accepted 4.0's settings")
	}
	cfg, err := checkSettingsFor(4, asked)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.conf["ReadConsistency"] != "0" || cfg.pageSize != 32768 || cfg.mode != "Classic" {
		t.Errorf("4.0 config %+v", cfg)
	}
	if _, err := checkSettingsFor(5, map[string]string{"ReadConsistancy": "0"}); err == nil || !strings.Contains(err.Error(), "ReadConsistancy") {
		t.Errorf("a misspelt key on 5.0: %v", err)
	}
}

// TestConflictAdvice: seed 002's finding applies to Firebird 4+ with ReadConsistency on.
func TestConflictAdvice(t *testing.T) {
	on := map[string]string{"ReadConsistency": "true"}
	if a, ok := conflicts("Firebird 4.0.5", on); !ok || a.Rule != "fb-read-consistency" || !strings.Contains(a.Detail, "4.0.5") {
		t.Errorf("4.0 with ReadConsistency on: %+v, %v", a, ok)
	}
	if _, ok := conflicts("Firebird 4.0.5", map[string]string{"ReadConsistency": "false"}); ok {
		t.Error("advice with ReadConsistency off")
	}
	if _, ok := conflicts("Firebird 3.0.11", on); ok {
		t.Error("advice on 3.0, which has no ReadConsistency")
	}
}
