package analysis

import (
	"strings"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/spec"
)

// TestEveryRunParameterCompared: every parameter the run description declares
// (spec.Fields), a new one included, is compared like for like with no code here: a run
// whose value differs from the others' is named with the field's Mismatch, at the severity
// MinorMismatch gives; a factor that varies it on purpose silences it. An Incidental field
// changes no figure and is never named.
func TestEveryRunParameterCompared(t *testing.T) {
	for i := range spec.Fields {
		f := &spec.Fields[i]
		// Two values of the field that read and write back differently.
		var vals []string
		for _, text := range []string{"2", "3", "3ms", "4ms", "true", "false", "a=1", "a=2", "normal", "paretonormal", "1mbit", "2mbit", "0.1%", "0.2%", "backup@1s", "vacuum@1s"} {
			var p spec.Params
			if f.Set(&p, text) != nil {
				continue
			}
			if v := f.Value(&p); len(vals) == 0 || v != vals[0] {
				vals = append(vals, text)
			}
			if len(vals) == 2 {
				break
			}
		}
		if len(vals) != 2 {
			t.Fatalf("%s: no two values to plant", f.Name)
		}
		plant := func() []results.Run {
			runs := cleanStudy()
			for i := range runs {
				text := vals[0]
				if runs[i].ID == 5 {
					text = vals[1]
				}
				if err := f.Set(&runs[i].Params, text); err != nil {
					t.Fatal(err)
				}
			}
			return runs
		}
		name := strings.ReplaceAll(f.Name, "_", " ")
		var found []Finding
		for _, x := range only(Check(plant(), CheckOptions{Factors: []string{results.FactorEngine}}), RuleMixedParams) {
			if strings.HasPrefix(x.Message, name+" differs") {
				found = append(found, x)
			}
		}
		want := Error
		if f.MinorMismatch {
			want = Warning
		}
		if f.Incidental {
			if len(found) != 0 {
				t.Errorf("%s is incidental, yet: %+v", f.Name, found)
			}
			continue
		}
		if len(found) != 1 || found[0].Severity != want || !strings.Contains(found[0].Message, f.Mismatch) ||
			len(found[0].Runs) != 1 || found[0].Runs[0] != 5 {
			t.Errorf("%s planted in run 5: %+v, want one %s finding naming it with %q", f.Name, found, want, f.Mismatch)
		}
		if !f.Factor {
			continue
		}
		for _, x := range only(Check(plant(), CheckOptions{Factors: []string{f.Name}}), RuleMixedParams) {
			if strings.HasPrefix(x.Message, name+" ") {
				t.Errorf("%s is a factor, yet: %s", f.Name, x.Message)
			}
		}
	}
}

// TestProfileFactorIsNotAMix: a study of network profiles (each sets the link's rtt,
// jitter and bandwidth) and of the transport (a Unix socket has no link) compares like for
// like; the same differences without those factors are a mix.
func TestProfileFactorIsNotAMix(t *testing.T) {
	runs := cleanStudy()
	for i := range runs {
		r := &runs[i]
		switch r.ID % 3 {
		case 0:
			r.Params.Profile, r.Params.RTT, r.Params.Jitter, r.Params.Bandwidth = "lan-100mbit-loaded", 3500*time.Microsecond, 250*time.Microsecond, 12_500_000
		case 1:
			r.Params.Profile, r.Params.RTT = "cross-az", 2*time.Millisecond
		default:
			r.Params.Profile, r.Params.RTT, r.Link = "same-host", 0, nil
			r.Params.Options = map[string]string{spec.OptionTransport: spec.TransportUnix}
		}
	}
	if f := only(Check(runs, CheckOptions{Factors: []string{"profile", "opt.transport", results.FactorTerminals}}), RuleMixedParams); len(f) != 0 {
		t.Errorf("a profile study is a mix: %+v", f)
	}
	if f := only(Check(runs, CheckOptions{Factors: []string{results.FactorTerminals}}), RuleMixedParams); len(f) != 5 {
		t.Errorf("profiles that are not factors: %d findings, want the profile, rtt, jitter, bandwidth and link", len(f))
	}
}
