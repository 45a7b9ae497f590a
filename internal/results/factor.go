package results

import (
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dblat/dblat/internal/spec"
)

// Factor keys name what a study varies: a run parameter by its key in spec.Fields (those
// with Factor set: spec.FactorKeys), the engine, the target, the server's binaries, and
// server settings and workload options by a prefix: "set.shared_buffers" is the requested
// value of a server setting (Params.Options["set.…"]), "opt.mode" a workload or engine
// option (Params.Options["mode"]). FactorRTT … FactorThink name the run parameters that
// the readers of runs (reports, analysis, studies) treat apart; they are spec.Fields keys.
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
	// FactorStorage records where a managed server kept its data when not on disk
	// ("memory": no durability measured); absent for a server on disk.
	FactorStorage = ServerPrefix + "storage"
	// FactorMemory varies the memory limit a managed server runs under ("512MB", or
	// "none" for the machine's memory; study files' server.memory), and FactorEncryption
	// whether it keeps its data encrypted at rest ("on", "off"; server.encryption). Their
	// requested values are kept in Params.Options under the same keys, a server's limit
	// and encryption also where no study asked (dblat run on such a server); absent for a
	// server without either.
	FactorMemory     = ServerPrefix + "memory"
	FactorEncryption = ServerPrefix + "encryption"
	// ServerPrefix marks what chooses a managed server's binaries.
	ServerPrefix = "server."
	// SettingPrefix marks a server setting factor; its requested value is kept in
	// Params.Options under the same key ("set.shared_buffers").
	SettingPrefix = "set."
	// OptionPrefix marks a workload or engine option factor ("opt.mode" → Options["mode"]).
	OptionPrefix = "opt."
)

// FactorValue returns the value run had for factor key, formatted the way study files write
// it, or "" when the run does not record that factor.
func FactorValue(r *Run, key string) string {
	if f, ok := spec.Lookup(key); ok {
		return f.Value(&r.Params)
	}
	switch key {
	case FactorEngine:
		return r.Server.Engine
	case FactorTarget:
		return r.Server.Target
	}
	if strings.HasPrefix(key, SettingPrefix) || strings.HasPrefix(key, ServerPrefix) {
		return r.Params.Options[key]
	}
	if k, ok := strings.CutPrefix(key, OptionPrefix); ok {
		return r.Params.Options[k]
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
	candidates := []string{FactorRTT, FactorTerminals, FactorConnections, FactorWarehouses, FactorEngine, FactorTarget}
	for _, k := range spec.FactorKeys() {
		if !slices.Contains(candidates, k) {
			candidates = append(candidates, k)
		}
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

// SortFactorValues orders values numerically when they all parse as numbers, durations,
// bandwidths (unlimited last) or percentages (a loss), else lexically.
func SortFactorValues(vals []string) {
	num := func(s string) (float64, bool) {
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f, true
		}
		if d, err := time.ParseDuration(s); err == nil {
			return float64(d), true
		}
		if s == spec.Unlimited {
			return math.Inf(1), true
		}
		if b, err := spec.ParseBandwidth(s); err == nil {
			return float64(b), true
		}
		if strings.HasSuffix(s, "%") {
			if p, err := spec.ParseLoss(s); err == nil {
				return p, true
			}
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
