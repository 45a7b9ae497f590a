package report

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/spec"
)

// Config is the configuration each series ran with, as the server and the client reported
// it: what differs between series, and what all runs share.
type Config struct {
	// SeriesFactors are the factors whose level combinations make the series: every factor
	// except RTT and terminals, which vary within a series.
	SeriesFactors []string `json:"series_factors"`
	// Series names the series, in level order ("all runs" when there is only one).
	Series []string `json:"series"`
	// Differ holds the items whose values are not the same everywhere, one value per
	// series; runs of one series that disagree show as "a | b".
	Differ []ConfigItem `json:"differ"`
	// Common holds the items that are the same in every series (Values has one element;
	// "10 | 20" when they vary alike within every series).
	Common []ConfigItem `json:"common"`
}

// ConfigItem is one configuration item.
type ConfigItem struct {
	// Kind is "run" (workload parameters), "client", "server" (engine, version, target) or
	// "setting" (a server setting as read back from the server).
	Kind   string   `json:"kind"`
	Name   string   `json:"name"`
	Values []string `json:"values"`
}

// notReported stands for an item a run did not record.
const notReported = "(not reported)"

// configItem reads one item from a run.
type configItem struct {
	kind, name string
	get        func(*results.Run) string
}

var runItems = []configItem{
	{"run", "workload", func(r *results.Run) string { return r.Params.Workload }},
	{"run", "warehouses", func(r *results.Run) string { return strconv.Itoa(r.Params.Scale) }},
	{"run", "terminals", func(r *results.Run) string { return strconv.Itoa(r.Params.Terminals) }},
	{"run", "connections", func(r *results.Run) string { return strconv.Itoa(r.Params.Connections) }},
	{"run", "duration", func(r *results.Run) string { return spec.FormatDuration(r.Params.Duration) }},
	{"run", "warmup", func(r *results.Run) string { return spec.FormatWarmup(r.Params.Warmup, r.Params.WarmupAuto) }},
	{"run", "think", func(r *results.Run) string { return strconv.FormatBool(r.Params.Think) }},
	{"run", "rtt", func(r *results.Run) string { return spec.FormatDuration(r.Params.RTT) }},
	{"server", "engine", func(r *results.Run) string { return r.Server.Engine }},
	{"server", "version", func(r *results.Run) string { return r.Server.Version }},
	{"server", "target", func(r *results.Run) string { return r.Server.Target }},
	{"server", "managed", func(r *results.Run) string { return strconv.FormatBool(r.Server.Managed) }},
	{"client", "host", func(r *results.Run) string { return r.Client.Hostname }},
	{"client", "cpu", func(r *results.Run) string {
		if r.Client.CPUModel == "" && r.Client.Cores == 0 {
			return ""
		}
		return fmt.Sprintf("%s × %d", r.Client.CPUModel, r.Client.Cores)
	}},
	{"client", "os", func(r *results.Run) string { return strings.TrimSpace(r.Client.OS + " " + r.Client.Kernel) }},
	{"client", "go", func(r *results.Run) string { return r.Client.GoVersion }},
	{"client", "dblat", func(r *results.Run) string { return r.Client.DblatVersion }},
}

// config builds the configuration section from the runs of each series: the finished ones,
// or all of them for a series with none finished.
func (r *Report) config(runs []results.Run) Config {
	var sf []int
	for i, f := range r.Factors {
		if f.Key != results.FactorRTT && f.Key != results.FactorTerminals {
			sf = append(sf, i)
		}
	}
	cfg := Config{SeriesFactors: []string{}, Series: []string{}, Differ: []ConfigItem{}, Common: []ConfigItem{}}
	for _, i := range sf {
		cfg.SeriesFactors = append(cfg.SeriesFactors, r.Factors[i].Key)
	}
	if len(runs) == 0 {
		return cfg
	}

	// Runs by series, in level order.
	type series struct {
		idx       []int
		fin, all  []*results.Run
		name, key string
	}
	bykey := map[string]*series{}
	var order []*series
	for i := range runs {
		run := &runs[i]
		idx := make([]int, len(sf))
		for j, f := range sf {
			idx[j] = indexOf(r.Factors[f].Levels, results.FactorValue(run, r.Factors[f].Key))
		}
		k := fmt.Sprint(idx)
		s := bykey[k]
		if s == nil {
			s = &series{idx: idx, key: k, name: r.comboName(sf, idx)}
			if s.name == "" {
				s.name = allRuns
			}
			bykey[k] = s
			order = append(order, s)
		}
		s.all = append(s.all, run)
		if run.Counted() {
			s.fin = append(s.fin, run)
		}
	}
	sort.Slice(order, func(i, j int) bool { return slices.Compare(order[i].idx, order[j].idx) < 0 })

	// RTT and terminals vary within every series by design: listing them would say nothing.
	var items []configItem
	for _, it := range runItems {
		if it.kind == "run" && r.factorIndex(it.name) >= 0 {
			continue
		}
		items = append(items, it)
	}
	settings := map[string]bool{}
	for i := range runs {
		for k := range runs[i].Server.Settings {
			settings[k] = true
		}
	}
	for _, k := range slices.Sorted(maps.Keys(settings)) {
		items = append(items, configItem{"setting", k, func(r *results.Run) string {
			v, ok := r.Server.Settings[k]
			if !ok {
				return notReported
			}
			return v
		}})
	}

	for _, s := range order {
		cfg.Series = append(cfg.Series, s.name)
	}
	for _, it := range items {
		vals := make([]string, len(order))
		for j, s := range order {
			use := s.fin
			if len(use) == 0 {
				use = s.all
			}
			seen := map[string]bool{}
			for _, run := range use {
				seen[it.get(run)] = true
			}
			vs := slices.Sorted(maps.Keys(seen))
			vals[j] = strings.Join(vs, " | ")
		}
		same := true
		for _, v := range vals {
			if v != vals[0] {
				same = false
			}
		}
		if same {
			if vals[0] == "" && it.kind != "setting" {
				continue // not recorded by anyone: nothing to show
			}
			cfg.Common = append(cfg.Common, ConfigItem{Kind: it.kind, Name: it.name, Values: vals[:1]})
		} else {
			cfg.Differ = append(cfg.Differ, ConfigItem{Kind: it.kind, Name: it.name, Values: vals})
		}
	}
	return cfg
}

func indexOf(levels []string, l string) int {
	for i, x := range levels {
		if x == l {
			return i
		}
	}
	return -1
}
