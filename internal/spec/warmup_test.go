package spec

import (
	"strings"
	"testing"
	"time"
)

// TestWarmupField reads and writes the warmup field: a duration, auto (with the default
// ceiling) or "auto DURATION", in canonical form, and Validate refuses an automatic
// warm-up without a ceiling.
func TestWarmupField(t *testing.T) {
	f, _ := Lookup("warmup")
	for _, tc := range []struct {
		in, canonical string
		d             time.Duration
		auto          bool
	}{
		{"10s", "10s", 10 * time.Second, false},
		{"0", "0", 0, false},
		{"auto", "auto 1m0s", DefaultWarmupCeiling, true},
		{" auto  30s ", "auto 30s", 30 * time.Second, true},
		{"auto 1m", "auto 1m0s", time.Minute, true},
	} {
		var p Params
		if err := f.Set(&p, tc.in); err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if p.Warmup != tc.d || p.WarmupAuto != tc.auto || f.Value(&p) != tc.canonical {
			t.Errorf("%q: warm-up %v auto %v, canonical %q; want %v %v %q", tc.in, p.Warmup, p.WarmupAuto, f.Value(&p), tc.d, tc.auto, tc.canonical)
		}
		// The canonical form reads back to the same.
		var q Params
		if err := f.Set(&q, f.Value(&p)); err != nil || q.Warmup != p.Warmup || q.WarmupAuto != p.WarmupAuto {
			t.Errorf("%q: canonical %q reads back as %v %v (%v)", tc.in, f.Value(&p), q.Warmup, q.WarmupAuto, err)
		}
	}
	for in, want := range map[string]string{"auto x": "auto's ceiling is not a duration", "automatic": "is not a duration", "5": "needs a unit"} {
		var p Params
		if err := f.Set(&p, in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
	d := Drive{Terminals: 1, Duration: time.Second, MaxTries: 1, WarmupAuto: true}
	if errs := d.Validate(); len(errs) != 1 || errs[0].Field != "warmup" || !strings.Contains(errs[0].Detail, "positive ceiling") {
		t.Errorf("auto without a ceiling: %v", errs)
	}
}
