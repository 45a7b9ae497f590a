package spec

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/dblat/dblat/internal/latency"
)

// Values of the link fields that have words of their own.
const (
	// Unlimited is the bandwidth field's value for no limit.
	Unlimited = "unlimited"
	// DefaultDistribution is the jitter's shape when none is given.
	DefaultDistribution = "uniform"
)

// Distributions are the jitter's shapes (latency.Distribution's names), the default first.
var Distributions = []string{"uniform", "normal", "paretonormal"}

// validProfile is a profile's name.
var validProfile = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$`)

// ParseBandwidth reads the bandwidth field: latency.ParseBandwidth's rates ("100mbit",
// "12.5MB/s"), or unlimited (also 0), in bytes per second (0 for unlimited).
func ParseBandwidth(s string) (int64, error) { return latency.ParseBandwidth(s) }

// FormatBandwidth writes a bandwidth in bytes per second as the bandwidth field reads it
// back: "100mbit", "unlimited" for 0.
func FormatBandwidth(b int64) string {
	if b == 0 {
		return Unlimited
	}
	return latency.FormatBandwidth(b)
}

// ParseLoss reads the loss field: a percentage ("0.1%") or a fraction ("0.001"), below
// 100 %.
func ParseLoss(s string) (float64, error) { return latency.ParseLoss(s) }

// Profile is a named network: the values of the link fields it stands for (those it does
// not name are at their defaults) and where its figures come from. Profiles lists the
// built-in ones; a study file may declare its own (profiles:).
type Profile struct {
	Name string
	// Summary says in a few words what the network is.
	Summary string
	// Source says where each figure comes from, and which are assumptions.
	Source string
	// Values are link fields' values as a study file writes them ("rtt": "1.1ms").
	Values map[string]string
}

// Profiles are the built-in networks, from one host to another region, each with the
// published figure its shape is taken from. Jitter and loss are 0 where no source gives
// them (add them as factors to ask what they do), bandwidth unlimited where the network's
// is far above what a database client moves (and a cloud VM's depends on its size).
var Profiles = []Profile{
	{Name: "same-host", Summary: "client and server on one host, over TCP on loopback",
		Source: "seed 004: localhost round trips of about 12 µs, which this machine's own loopback gives (the link adds nothing)",
		Values: map[string]string{}},
	{Name: "lan-1gbe", Summary: "same rack, 1 GbE under load",
		Source: "seed 004: \"under load in 1gbe tests we routinely run at around 1100 microseconds\"; 1 Gbit/s each way",
		Values: map[string]string{"rtt": "1.1ms", "bandwidth": "1gbit"}},
	{Name: "lan-10gbe", Summary: "same rack, 10 GbE",
		Source: "assumption: no source gives a loaded 10 GbE figure; the RTT is seed 004's bound for its fastest network (\"less then 300 microseconds\", a Dolphin interconnect); 10 Gbit/s each way",
		Values: map[string]string{"rtt": "300µs", "bandwidth": "10gbit"}},
	{Name: "lan-100mbit-loaded", Summary: "100 Mb Ethernet under load",
		Source: "seed 004: \"under load 100mb connection routinely has network latency in the 3000-4000 microsecond range\": 3.5 ms, uniform ±250 µs each way so that the RTT stays within that range; 100 Mbit/s each way",
		Values: map[string]string{"rtt": "3.5ms", "jitter": "250µs", "distribution": "uniform", "bandwidth": "100mbit"}},
	{Name: "same-az", Summary: "two hosts in one cloud availability zone",
		Source: "IBM Cloud VPC documentation, \"Network latency\" (inter-AZ tables, 2024): 0.08-0.10 ms on average within a zone",
		Values: map[string]string{"rtt": "90µs"}},
	{Name: "cross-az", Summary: "two availability zones of one cloud region",
		Source: "Azure availability zones overview (before February 2025): \"round-trip latency of less than approximately 2 ms\"; IBM Cloud VPC measured 1.75-2.22 ms between zones (2024); AWS says \"single-digit millisecond\", GCP \"<1 ms RTT at the 95th percentile\" (2019): 2 ms is the providers' upper figure",
		Values: map[string]string{"rtt": "2ms"}},
	{Name: "cross-region", Summary: "two cloud regions of one continent",
		Source: "IBM Cloud VPC documentation, \"Network latency\" (2024): Dallas to Washington DC 31-32 ms on average; Azure's round-trip statistics (October 2019): 5-72 ms between North American regions",
		Values: map[string]string{"rtt": "32ms"}},
}

// LookupProfile returns the profile called name: one of own (a study's), else a built-in.
func LookupProfile(name string, own []Profile) (Profile, bool) {
	for _, list := range [][]Profile{own, Profiles} {
		if i := slices.IndexFunc(list, func(p Profile) bool { return p.Name == name }); i >= 0 {
			return list[i], true
		}
	}
	return Profile{}, false
}

// ProfileNames lists the names of own and the built-in profiles, own first.
func ProfileNames(own []Profile) []string {
	var out []string
	for _, p := range append(slices.Clone(own), Profiles...) {
		out = append(out, p.Name)
	}
	return out
}

// Check reads the profile's values with their fields' readers: each must name a link
// field (not the profile itself) and be one of its values. The error names the field.
func (pr Profile) Check() error {
	var scratch Params
	for _, key := range slices.Sorted(maps.Keys(pr.Values)) {
		f, ok := Lookup(key)
		if !ok || !f.Link || key == "profile" {
			return fmt.Errorf("%q is not a field of a link's shape (%s)", key, strings.Join(slices.DeleteFunc(LinkKeys(), func(k string) bool { return k == "profile" }), ", "))
		}
		if err := f.Set(&scratch, pr.Values[key]); err != nil {
			return fmt.Errorf("%s %v", key, err)
		}
	}
	return nil
}

// Apply gives p the profile's shape: every link field takes the profile's value or, where
// the profile names none, its default; those keep says to keep stay as they are (the
// link fields a user gave beside the profile). p.Profile becomes the profile's name.
func (pr Profile) Apply(p *Params, keep func(key string) bool) error {
	for i := range Fields {
		f := &Fields[i]
		if !f.Link || f.Name == "profile" || (keep != nil && keep(f.Name)) {
			continue
		}
		v, ok := pr.Values[f.Name]
		if !ok {
			v = f.Default
		}
		if err := f.Set(p, v); err != nil {
			return fmt.Errorf("profile %s: %s %v", pr.Name, f.Name, err)
		}
	}
	p.Profile = pr.Name
	return nil
}

// Text describes the profile's shape in its fields' words: "rtt 3.5ms, jitter 250µs
// uniform, bandwidth 100mbit"; "no added delay" for one that names nothing.
func (pr Profile) Text() string {
	var parts []string
	for _, key := range LinkKeys() {
		v, ok := pr.Values[key]
		switch {
		case !ok:
		case key == "distribution":
			if len(parts) > 0 && strings.HasPrefix(parts[len(parts)-1], "jitter ") {
				parts[len(parts)-1] += " " + v
			}
		default:
			parts = append(parts, key+" "+v)
		}
	}
	if len(parts) == 0 {
		return "no added delay"
	}
	return strings.Join(parts, ", ")
}
