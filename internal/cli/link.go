package cli

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/dblat/dblat/internal/latency"
	"github.com/dblat/dblat/internal/spec"
	"github.com/dblat/dblat/internal/suggest"
)

// linkOptions are the flags that put a latency link between the terminals and the server:
// the link's fields (spec.LinkKeys: --rtt, --up, --down, --jitter, --distribution,
// --bandwidth, --loss, --profile), read straight into a run's parameters, and how the
// link runs (--direct, --delay-connect).
type linkOptions struct {
	p            *spec.Params
	direct       bool
	delayConnect bool
	// given is set when a link flag was given: even --rtt 0 goes through the link then,
	// so that its overhead is part of what is measured.
	given bool
	// changed are the link fields whose flags were given.
	changed map[string]bool
}

// linkFlags are the link's fields that have flags of their own, in the order help lists
// them; skip leaves some out (dblat calibrate's --rtt takes several values).
func linkFlags(skip ...string) []*spec.Field {
	var out []*spec.Field
	for i := range spec.Fields {
		if f := &spec.Fields[i]; f.Link && !slices.Contains(skip, f.Name) {
			out = append(out, f)
		}
	}
	return out
}

// add registers the link's flags, reading into p, the parameters they belong to (a run's,
// or the link's own for dblat proxy and dblat calibrate); skip leaves fields out.
func (o *linkOptions) add(cmd *cobra.Command, p *spec.Params, skip ...string) {
	o.p = p
	f := cmd.Flags()
	for _, fld := range linkFlags(skip...) {
		fieldFlag(f, fld, p, fld.FlagName(), "", fld.Usage)
	}
	f.BoolVar(&o.direct, "direct", false, "connect straight to the server, with no link (the default when no link flag is given)")
	f.BoolVar(&o.delayConnect, "delay-connect", true, "connection set-up costs one RTT, as on a real network")
}

// resolve records which link flags were given and gives the parameters the profile's shape
// (the fields given beside it kept); call it in RunE.
func (o *linkOptions) resolve(cmd *cobra.Command) error {
	o.changed = map[string]bool{}
	for _, fld := range linkFlags() {
		if fl := cmd.Flags().Lookup(fld.FlagName()); fl != nil && fl.Changed {
			o.changed[fld.Name] = true
			o.given = true
		}
	}
	if o.direct && o.given {
		return usagef("--direct bypasses the link: drop it, or drop the link's flags (--%s)", strings.Join(spec.LinkKeys(), ", --"))
	}
	if o.p.Profile != "" {
		pr, ok := spec.LookupProfile(o.p.Profile, nil)
		if !ok {
			names := spec.ProfileNames(nil)
			msg := fmt.Sprintf("--profile %q is not a profile", o.p.Profile)
			if c := suggest.Closest(o.p.Profile, names, 3); c != "" {
				msg += fmt.Sprintf(" (did you mean %s?)", c)
			}
			return usagef("%s; the profiles: %s", msg, strings.Join(names, ", "))
		}
		if err := pr.Apply(o.p, func(key string) bool { return o.changed[key] }); err != nil {
			return usageError{err}
		}
	}
	return nil
}

func (o *linkOptions) enabled() bool { return o.given && !o.direct }

// link returns the link a run goes through, or nil for a direct connection: what the link
// keeps of its own; spec.Run.Resolve gives it the parameters' shape.
func (o *linkOptions) link() *latency.Config {
	if !o.enabled() {
		return nil
	}
	return &latency.Config{DelayConnect: o.delayConnect}
}

// config checks the link's fields as a run's are checked (spec.Run.Validate), each problem
// named by its flag, and returns the link they describe.
func (o *linkOptions) config() (latency.Config, error) {
	r := spec.Run{Params: *o.p, Link: &latency.Config{DelayConnect: o.delayConnect}}
	r.Workload = "link"
	r.Resolve()
	var errs field.ErrorList
	for _, e := range r.Validate() {
		if f, ok := spec.Lookup(e.Field); (ok && f.Link) || e.Field == spec.LinkPath.String() {
			errs = append(errs, e)
		}
	}
	if err := spec.Errors(errs); err != nil {
		return latency.Config{}, flagErrors(err, linkFlagName)
	}
	return *r.Link, nil
}

// linkFlagName names the flag of a link field's path.
func linkFlagName(path string) string {
	if f, ok := spec.Lookup(path); ok && f.FlagName() != "" {
		return "--" + f.FlagName()
	}
	return "--rtt"
}

// latenessText writes a lateness distribution as its mean (what throughput answers to: the
// RTT a run achieved is the requested one plus the mean lateness each way) and percentiles,
// in microseconds.
func latenessText(s latency.Summary) string {
	if s.N == 0 {
		return "no delayed data"
	}
	us := func(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d)/1e3) }
	return fmt.Sprintf("mean %s p50 %s p90 %s p99 %s p99.9 %s max %s µs (%d chunks)", us(s.Mean), us(s.P50), us(s.P90), us(s.P99), us(s.P999), us(s.Max), s.N)
}

// holdCPUForLink holds the CPUs out of deep idle states while a link that delays runs, as
// runs and calibrations do (--no-cpu-latency-hold says not to), so that its releases wake
// on time; it returns the function that lets go. At RTT 0 nothing waits on a timer, and
// the application observed runs as it would without dblat.
func (a *app) holdCPUForLink(cfg latency.Config) func() {
	if a.noCPUHold || cfg.AddedRTT() == 0 {
		return func() {}
	}
	h, err := latency.HoldCPULatency()
	if err != nil {
		a.info("note: CPUs not held out of deep idle states (%v): the link's releases may be late by a CPU's wake-up", err)
		return func() {}
	}
	return h.Release
}
