package results

import (
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Factor keys name what a study varies. Server settings and workload options use a prefix:
// "set.shared_buffers" is the requested value of a server setting (Params.Options["set.…"]),
// "opt.mode" a workload or engine option (Params.Options["mode"]).
const (
	FactorRTT         = "rtt"
	FactorTerminals   = "terminals"
	FactorConnections = "connections"
	FactorWarehouses  = "warehouses"
	FactorDuration    = "duration"
	FactorWarmup      = "warmup"
	FactorEngine      = "engine"
	FactorThink       = "think"
	FactorTarget      = "target"
	// FactorVersion and FactorInstall vary the managed server's version and installation
	// (study files' server.version and server.install); their requested values are kept
	// in Params.Options under the same keys.
	FactorVersion = ServerPrefix + "version"
	FactorInstall = ServerPrefix + "install"
	// ServerPrefix marks what chooses a managed server's binaries.
	ServerPrefix = "server."
	// FactorRate is the open-loop arrival rate in transactions per second ("0": closed loop),
	// FactorArrival its arrival process, FactorLatencyLimit the latency limit and
	// FactorMaxTries the tries per transaction.
	FactorRate         = "rate"
	FactorArrival      = "arrival"
	FactorLatencyLimit = "latency_limit"
	FactorMaxTries     = "max_tries"
	// SettingPrefix marks a server setting factor; its requested value is kept in
	// Params.Options under the same key ("set.shared_buffers").
	SettingPrefix = "set."
	// OptionPrefix marks a workload or engine option factor ("opt.mode" → Options["mode"]).
	OptionPrefix = "opt."
)

// FactorValue returns the value run had for factor key, formatted the way study files write
// it, or "" when the run does not record that factor.
func FactorValue(r *Run, key string) string {
	p := &r.Params
	switch key {
	case FactorRTT:
		return FormatDuration(p.RTT)
	case FactorTerminals:
		return strconv.Itoa(p.Terminals)
	case FactorConnections:
		return strconv.Itoa(p.Connections)
	case FactorWarehouses:
		return strconv.Itoa(p.Scale)
	case FactorDuration:
		return FormatDuration(p.Duration)
	case FactorWarmup:
		return FormatDuration(p.Warmup)
	case FactorEngine:
		return r.Server.Engine
	case FactorThink:
		return strconv.FormatBool(p.Think)
	case FactorTarget:
		return r.Server.Target
	case FactorRate:
		return FormatRate(p.Rate)
	case FactorArrival:
		return p.Arrival
	case FactorLatencyLimit:
		return FormatDuration(p.LatencyLimit)
	case FactorMaxTries:
		return strconv.Itoa(max(p.MaxTries, 1))
	}
	if strings.HasPrefix(key, SettingPrefix) || strings.HasPrefix(key, ServerPrefix) {
		return p.Options[key]
	}
	if k, ok := strings.CutPrefix(key, OptionPrefix); ok {
		return p.Options[k]
	}
	return ""
}

// OptionFactor returns the factor key of a key of Params.Options: requested settings
// ("set.…") and the server's version and installation ("server.…") are stored under their
// factor's key, workload and engine options under their bare name ("mode" is opt.mode).
func OptionFactor(key string) string {
	if strings.HasPrefix(key, SettingPrefix) || strings.HasPrefix(key, ServerPrefix) {
		return key
	}
	return OptionPrefix + key
}

// InferFactors returns the factor keys whose values differ between runs: the standard keys
// first (RTT, terminals, then the rest), then settings ("set.…"), the server's version and
// installation ("server.…") and options ("opt.…") sorted by name.
func InferFactors(runs []Run) []string {
	candidates := []string{
		FactorRTT, FactorTerminals, FactorConnections, FactorWarehouses, FactorEngine,
		FactorTarget, FactorThink, FactorDuration, FactorWarmup,
		FactorRate, FactorArrival, FactorLatencyLimit, FactorMaxTries,
	}
	opts := map[string]bool{}
	for i := range runs {
		for k := range runs[i].Params.Options {
			opts[OptionFactor(k)] = true
		}
	}
	candidates = append(candidates, slices.Sorted(maps.Keys(opts))...)
	var out []string
	for _, key := range candidates {
		for i := 1; i < len(runs); i++ {
			if FactorValue(&runs[i], key) != FactorValue(&runs[0], key) {
				out = append(out, key)
				break
			}
		}
	}
	return out
}

// FormatDuration writes d compactly and exactly: "0", "100µs", "1.5ms", "20ms", "2s", "1m30s".
func FormatDuration(d time.Duration) string {
	switch {
	case d == 0:
		return "0"
	case d%time.Second == 0 || d >= time.Second:
		return d.String()
	case d%time.Millisecond == 0:
		return strconv.FormatInt(int64(d/time.Millisecond), 10) + "ms"
	case d >= time.Millisecond:
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', -1, 64) + "ms"
	default:
		return strconv.FormatFloat(float64(d)/float64(time.Microsecond), 'f', -1, 64) + "µs"
	}
}

// FormatRate writes an arrival rate in transactions per second as study files write it:
// "1000", "2.5", "0" (a closed-loop run).
func FormatRate(r float64) string { return strconv.FormatFloat(r, 'f', -1, 64) }

// SortFactorValues orders values numerically when they all parse as numbers or durations,
// else lexically.
func SortFactorValues(vals []string) {
	num := func(s string) (float64, bool) {
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f, true
		}
		if d, err := time.ParseDuration(s); err == nil {
			return float64(d), true
		}
		return 0, false
	}
	allNum := true
	for _, v := range vals {
		if _, ok := num(v); !ok {
			allNum = false
			break
		}
	}
	sort.SliceStable(vals, func(i, j int) bool {
		if allNum {
			a, _ := num(vals[i])
			b, _ := num(vals[j])
			return a < b
		}
		return vals[i] < vals[j]
	})
}
