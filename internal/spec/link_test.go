package spec

import (
	"strings"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/latency"
)

// linkRun is a run through the link with the given link fields set (key → value as a
// study file writes it).
func linkRun(t *testing.T, fields map[string]string) Run {
	t.Helper()
	r := Run{Params: Defaults(), Link: &latency.Config{DelayConnect: true}}
	r.Workload = "tpcc"
	for k, v := range fields {
		f, ok := Lookup(k)
		if !ok {
			t.Fatalf("no field %s", k)
		}
		if err := f.Set(&r.Params, v); err != nil {
			t.Fatalf("%s %s: %v", k, v, err)
		}
	}
	r.Resolve()
	return r
}

// TestLinkFields: the link's fields read, write back and become the link's configuration;
// up and down make the RTT; the link keeps what is its own (DelayConnect).
func TestLinkFields(t *testing.T) {
	r := linkRun(t, map[string]string{"up": "1ms", "down": "3ms", "jitter": "200us", "distribution": "normal",
		"bandwidth": "100mbit", "loss": "0.5%"})
	want := latency.Config{Up: time.Millisecond, Down: 3 * time.Millisecond, Jitter: 200 * time.Microsecond,
		Distribution: latency.Normal, BandwidthUp: 12_500_000, BandwidthDown: 12_500_000, Loss: 0.005, Seed: 1, DelayConnect: true}
	if *r.Link != want || r.RTT != 4*time.Millisecond {
		t.Errorf("link %+v rtt %v, want %+v and 4ms", *r.Link, r.RTT, want)
	}
	if errs := r.Validate(); len(errs) > 0 {
		t.Errorf("valid run refused: %v", errs)
	}
	for key, want := range map[string]string{"rtt": "4ms", "up": "1ms", "down": "3ms", "jitter": "200µs",
		"distribution": "normal", "bandwidth": "100mbit", "loss": "0.5%", "profile": ""} {
		f, _ := Lookup(key)
		if got := f.Value(&r.Params); got != want {
			t.Errorf("%s reads back %q, want %q", key, got, want)
		}
	}
	// Defaults: a link of 0 through which a run still goes, shaped by nothing.
	d := Defaults()
	if d.Shaped() || d.LinkConfig() != (latency.Config{Seed: 1}) {
		t.Errorf("defaults shaped %v, link %+v", d.Shaped(), d.LinkConfig())
	}
	for _, key := range LinkKeys() {
		f, _ := Lookup(key)
		if got := f.Value(&d); got != f.Default {
			t.Errorf("%s at its default reads %q, declared %q", key, got, f.Default)
		}
		if !f.Factor || (key != "rtt" && !f.Late) {
			t.Errorf("%s: a link field is a factor, and Late but for rtt (cell keys of older studies stay)", key)
		}
	}
}

// TestLinkValidate: one line per problem, naming the field.
func TestLinkValidate(t *testing.T) {
	for _, c := range []struct {
		fields map[string]string
		direct bool
		want   string
	}{
		{map[string]string{"distribution": "normal"}, false, "distribution shapes the jitter, and there is none: give {jitter} too"},
		{map[string]string{"rtt": "5ms", "up": "1ms"}, false, "rtt is 5ms, but {up} and {down} add up to 1ms"},
		{map[string]string{"jitter": "-1ms"}, false, "jitter must not be negative"},
		{map[string]string{"loss": "1%"}, true, "loss of 1% needs the latency link"},
		{map[string]string{"bandwidth": "1mbit"}, true, "bandwidth of 1mbit needs the latency link"},
	} {
		r := linkRun(t, c.fields)
		if c.direct {
			r.Link = nil
		}
		var got []string
		for _, e := range r.Validate() {
			got = append(got, e.Field+" "+e.Detail)
		}
		if len(got) != 1 || !strings.HasPrefix(got[0], c.want) {
			t.Errorf("%v: %q, want one %q", c.fields, got, c.want)
		}
	}
	for _, bad := range []struct{ key, value, want string }{
		{"bandwidth", "100mbps", "ambiguous"},
		{"bandwidth", "100", "needs a unit"},
		{"loss", "100%", "below 100%"},
		{"distribution", "gauss", "must be uniform, normal or paretonormal"},
		{"profile", "a b", "must be a profile's name"},
	} {
		f, _ := Lookup(bad.key)
		var p Params
		if err := f.Set(&p, bad.value); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s %q: %v, want %q", bad.key, bad.value, err, bad.want)
		}
	}
}

// TestProfiles: every built-in profile reads with its fields' readers, says where its
// figures come from, and gives a run its whole shape; the fields given beside it win.
func TestProfiles(t *testing.T) {
	for _, pr := range Profiles {
		if err := pr.Check(); err != nil || pr.Source == "" || pr.Summary == "" {
			t.Errorf("profile %s: %v, source %q", pr.Name, err, pr.Source)
		}
	}
	pr, ok := LookupProfile("lan-100mbit-loaded", nil)
	if !ok {
		t.Fatal("no lan-100mbit-loaded")
	}
	p := Defaults()
	p.Jitter, p.Loss, p.RTT = time.Millisecond, 0.01, 7*time.Millisecond
	if err := pr.Apply(&p, func(k string) bool { return k == "loss" }); err != nil {
		t.Fatal(err)
	}
	if p.RTT != 3500*time.Microsecond || p.Jitter != 250*time.Microsecond || p.Bandwidth != 12_500_000 || p.Loss != 0.01 || p.Profile != pr.Name {
		t.Errorf("applied: %+v", p)
	}
	if got := pr.Text(); got != "rtt 3.5ms, jitter 250µs uniform, bandwidth 100mbit" {
		t.Errorf("text %q", got)
	}
	own := []Profile{{Name: "dc", Values: map[string]string{"rtt": "1ms"}}}
	if q, ok := LookupProfile("dc", own); !ok || q.Values["rtt"] != "1ms" {
		t.Error("own profile not found")
	}
	for _, bad := range []Profile{{Name: "x", Values: map[string]string{"terminals": "3"}}, {Name: "y", Values: map[string]string{"rtt": "3"}}} {
		if err := bad.Check(); err == nil {
			t.Errorf("%+v checked", bad)
		}
	}
}
