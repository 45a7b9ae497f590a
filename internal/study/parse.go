package study

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/dblat/dblat/internal/managed"
	"github.com/dblat/dblat/internal/option"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/spec"
)

// Keys of each block, in the order the documentation lists them.
var (
	topKeys = []string{"study", "description", "design", "repeat", "precision", "budget", "seed", "order", "cooldown",
		"between_runs", "max_failures", "disturbed", "reruns", "client_procs", "agents", "server", "target", "profiles", "base", "factors"}
	serverKeys = []string{"engine", "name", "version", "install", "storage", "memory", "encryption", "settings"}
	// baseKeys are the run's fields (package spec) with the workload, mode, mix and options.
	baseKeys = append([]string{"workload", "mode", "mix", "options"}, spec.Keys()...)
	// plainFactors are the factor keys without a prefix: the run's fields a study may vary,
	// and the server's.
	plainFactors = append(spec.FactorKeys(), results.FactorEngine, results.FactorTarget, results.FactorVersion, results.FactorInstall,
		results.FactorMemory, results.FactorEncryption)
	// runKeys are the plain keys of the run itself, which base.options and opt.NAME must
	// not spell as options (mode and mix are both).
	runKeys = append([]string{spec.OptionMode, spec.OptionMix}, spec.Keys()...)
	// hints map words people write to the key dblat uses.
	hints = map[string]string{
		"latency": "rtt", "delay": "rtt", "clients": "terminals", "threads": "terminals",
		"users": "terminals", "pool": "connections", "scale": "warehouses",
		"mode": "opt.mode", "mix": "opt.mix", "warm_up": "warmup", "window": "duration",
		"settings": "set.NAME", "cool_down": "cooldown", "repeats": "repeat",
		"repetitions": "repeat", "confidence": "precision", "time_budget": "budget", "version": results.FactorVersion, "install": results.FactorInstall,
		"installation": results.FactorInstall, "tps": "rate", "rps": "rate", "arrival_rate": "rate",
		"arrivals": "arrival", "tries": "max_tries", "retries": "max_tries",
		"max_retries": "max_tries", "latency-limit": "latency_limit", "max-tries": "max_tries",
		"script": "scripts", "files": "scripts", "file": "scripts", "builtin": "builtins",
		"define": "defines", "variables": "defines", "vars": "defines", "schema": "init",
		"bw": "bandwidth", "rate_limit": "bandwidth", "capacity": "bandwidth", "packet_loss": "loss",
		"drop": "loss", "network": "profile", "net": "profile", "delay_distribution": "distribution",
		"latency_up": "up", "latency_down": "down", "one_way": "up",
		"memory": results.FactorMemory, "ram": results.FactorMemory, "memory_limit": results.FactorMemory,
		"encryption": results.FactorEncryption, "encrypted": results.FactorEncryption, "tde": results.FactorEncryption,
		"operation": "during", "backup": "during",
	}
)

// defaultBase is the base before the file says anything: the run fields' defaults
// (spec.Defaults), on TPC-C at the scale of one warehouse (a study loads the data it runs
// on, so its scale is never "all loaded").
func defaultBase() Params {
	run := spec.Run{Params: spec.Defaults()}
	run.Workload, run.Scale, run.Options = "tpcc", 1, map[string]string{}
	return Params{Run: run, Settings: map[string]string{}}
}

// Load reads and parses the study file at path.
func Load(path string) (*Study, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse parses and validates a study file's contents; name is the file name used in errors.
// On failure the error is an ErrorList of every problem found (at most 20), each an *Error
// with file:line:column.
func Parse(name string, data []byte) (*Study, error) {
	p := &parser{file: name, pos: map[string]pos{}}
	s := &Study{
		File: name, Design: DesignFull, Repeat: DefaultRepeat, RepeatMin: DefaultRepeat, Seed: DefaultSeed,
		Order: OrderRandom, BetweenRuns: BetweenRestore, MaxFailures: DefaultMaxFailures,
		Disturbed: DisturbedKeep, Reruns: DefaultReruns,
		Base: defaultBase(), Source: bytes.Clone(data), pos: p.pos,
	}
	if p.root = p.decode(data); p.root != nil {
		p.top(s, p.root)
		if len(p.errs) == 0 {
			p.check(s)
		}
		if _, ok := s.cellCount(); ok && resolve(p.root).Kind == yaml.MappingNode {
			p.checkCells(s)
		}
	}
	if len(p.errs) > 0 {
		slices.SortStableFunc(p.errs, func(a, b *Error) int { return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col)) })
		return nil, p.errs
	}
	return s, nil
}

type parser struct {
	file string
	root *yaml.Node
	errs ErrorList
	pos  map[string]pos
	full bool // maxErrors reached
}

func (p *parser) add(line, col int, format string, args ...any) {
	if p.full {
		return
	}
	if len(p.errs) == maxErrors {
		p.errs = append(p.errs, &Error{File: p.file, Line: line, Col: col, Msg: "too many errors"})
		p.full = true
		return
	}
	p.errs = append(p.errs, &Error{File: p.file, Line: line, Col: col, Msg: fmt.Sprintf(format, args...)})
}

func (p *parser) errAt(n *yaml.Node, format string, args ...any) {
	p.add(n.Line, n.Column, format, args...)
}

func (p *parser) errPath(path, format string, args ...any) {
	at := p.pos[path]
	p.add(at.line, at.col, format, args...)
}

var yamlLine = regexp.MustCompile(`(?s)^yaml: line (\d+): (.*)$`)

func (p *parser) yamlErr(err error) {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		p.add(line, 0, "%s", m[2])
		return
	}
	p.add(0, 0, "%s", strings.TrimPrefix(msg, "yaml: "))
}

// decode returns the file's single document's top node, or nil after reporting why not.
func (p *parser) decode(data []byte) (root *yaml.Node) {
	defer func() {
		// yaml/v3 (as gopkg.in/yaml.v3) has panicked on malformed input before (CVE-2022-28948); a study file must
		// never take the process down.
		if r := recover(); r != nil {
			p.add(0, 0, "cannot parse YAML: %v", r)
			root = nil
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			p.add(0, 0, "the file is empty")
		} else {
			p.yamlErr(err)
		}
		return nil
	}
	var more yaml.Node
	switch err := dec.Decode(&more); {
	case errors.Is(err, io.EOF):
	case err != nil:
		p.yamlErr(err)
		return nil
	default:
		at := &more
		if len(more.Content) > 0 {
			at = more.Content[0]
		}
		p.errAt(at, "a second YAML document: a study file holds one study")
		return nil
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		p.add(0, 0, "the file is empty")
		return nil
	}
	return doc.Content[0]
}

// resolve follows aliases (*anchor) to the node they name.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 100; i++ {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if isNull(n) {
			return "nothing"
		}
		return fmt.Sprintf("%q", n.Value)
	}
	return "something else"
}

// mapping walks the mapping n found at path where ("" for the top). It records each key's
// position, reports keys given twice and keys not in known (unless known is nil), and calls
// fn for every other key in file order. A null n is an empty mapping.
func (p *parser) mapping(n *yaml.Node, where string, known []string, fn func(key string, k, v *yaml.Node)) {
	at := n
	n = resolve(n)
	if isNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		p.errAt(at, "%s must be a mapping of keys to values, got %s", where, kindName(n))
		return
	}
	first := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), n.Content[i+1]
		if k.Kind != yaml.ScalarNode || isNull(k) {
			p.errAt(n.Content[i], "keys must be plain words, got %s", kindName(k))
			continue
		}
		key := k.Value
		if k.Tag == "!!merge" {
			p.errAt(k, "merge keys (<<) are not supported: write the keys out")
			continue
		}
		if prev, dup := first[key]; dup {
			noun := "key"
			if where == "factors" {
				noun = "factor"
			}
			p.errAt(k, "%s %q given twice (first at line %d)", noun, key, prev.Line)
			continue
		}
		first[key] = k
		if known != nil && !contains(known, key) {
			in := ""
			if where != "" {
				in = " in " + where
			}
			p.errAt(k, "unknown key %q%s%s", key, in, suggest(key, known))
			continue
		}
		path := key
		if where != "" {
			path = where + "." + key
		}
		p.pos[path] = pos{k.Line, k.Column}
		p.pos[path+valueSuffix] = pos{v.Line, v.Column}
		fn(key, k, v)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// scalar returns the value of a single-value node, reporting lists, mappings and missing
// values against label.
func (p *parser) scalar(n *yaml.Node, label string) (string, bool) {
	at := n
	n = resolve(n)
	switch {
	case n.Kind != yaml.ScalarNode:
		p.errAt(at, "%s must be a single value, got %s", label, kindName(n))
		return "", false
	case isNull(n):
		p.errAt(at, "%s has no value", label)
		return "", false
	}
	return n.Value, true
}

// field parses a scalar with check and reports its error after label.
func field[T any](p *parser, n *yaml.Node, label string, check func(string) (T, error)) (T, bool) {
	var zero T
	raw, ok := p.scalar(n, label)
	if !ok {
		return zero, false
	}
	v, err := check(raw)
	if err != nil {
		p.errAt(n, "%s %v", label, err)
		return zero, false
	}
	return v, true
}

// studyKeys declare the study file's own keys that hold one value of a kind package option
// reads (the others, study, description, repeat and precision, have syntaxes of their own):
// their readers, defaults and ranges are every option's.
var studyKeys = option.Set{
	{Name: "design", Kind: option.String, Default: DesignFull, Values: []string{DesignOFAT, DesignFull}},
	{Name: "repeat", Kind: option.Int, Default: strconv.Itoa(DefaultRepeat), Min: 1},
	{Name: "budget", Kind: option.Duration, Min: 1},
	{Name: "seed", Kind: option.Int, Default: strconv.Itoa(DefaultSeed), Min: option.Unbounded},
	{Name: "order", Kind: option.String, Default: OrderRandom, Values: []string{OrderRandom, OrderGrouped}},
	{Name: "cooldown", Kind: option.Duration, Default: "0"},
	{Name: "between_runs", Kind: option.String, Default: BetweenRestore, Values: []string{BetweenRestore, BetweenKeep}},
	{Name: "max_failures", Kind: option.Int, Default: strconv.Itoa(DefaultMaxFailures), Min: 1},
	{Name: "disturbed", Kind: option.String, Default: DisturbedKeep, Values: []string{DisturbedKeep, DisturbedRerun, DisturbedStop}},
	{Name: "reruns", Kind: option.Int, Default: strconv.Itoa(DefaultReruns), Min: 0},
	{Name: "client_procs", Kind: option.Int, Default: "0", Min: 0},
	// storage is server.storage: where the managed server keeps its data.
	{Name: "storage", Kind: option.String, Values: managed.Storages},
	{Name: "agents", Kind: option.Int, Default: "0", Min: 1},
}

// key reads the value of the study key name (studyKeys) in canonical form, reporting a
// problem after the key's name.
func (p *parser) key(n *yaml.Node, name string) (string, bool) {
	o, _ := studyKeys.Lookup(name)
	return field(p, n, name, o.Canonical)
}

// setKey reads the study key name into *dst with read, which reads its canonical form.
func setKey[T any](p *parser, n *yaml.Node, name string, dst *T, read func(string) (T, error)) {
	if c, ok := p.key(n, name); ok {
		*dst, _ = read(c)
	}
}

func asText(s string) (string, error) { return s, nil }

func asInt64(s string) (int64, error) { return strconv.ParseInt(s, 10, 64) }

func checkName(s string) (string, error) {
	if !validName.MatchString(s) {
		return "", fmt.Errorf("must be letters, digits, '.', '_' or '-' (at most 63, starting with a letter or digit), got %q", s)
	}
	return s, nil
}

func anyText(s string) (string, error) { return s, nil }

func set[T any](dst *T) func(T, bool) {
	return func(v T, ok bool) {
		if ok {
			*dst = v
		}
	}
}

func (p *parser) top(s *Study, n *yaml.Node) {
	if r := resolve(n); r.Kind != yaml.MappingNode {
		p.errAt(n, "a study file is a mapping (study:, server:, base:, factors:, ...), got %s", kindName(r))
		return
	}
	p.mapping(n, "", topKeys, func(key string, _, v *yaml.Node) {
		switch key {
		case "study":
			set(&s.Name)(field(p, v, "study", checkName))
		case "description":
			if r := resolve(v); !isNull(r) {
				set(&s.Description)(field(p, v, "description", anyText))
			}
		case "design":
			setKey(p, v, key, &s.Design, asText)
		case "repeat":
			raw, ok := p.scalar(v, "repeat")
			if !ok {
				return
			}
			if lo, hi, err := parseRepeat(raw); err != nil {
				p.errAt(v, "repeat %v", err)
			} else {
				s.RepeatMin, s.Repeat = lo, hi
			}
		case "precision":
			set(&s.Precision)(field(p, v, "precision", parsePrecision))
		case "budget":
			setKey(p, v, key, &s.Budget, option.ParseDuration)
		case "seed":
			setKey(p, v, key, &s.Seed, asInt64)
		case "order":
			setKey(p, v, key, &s.Order, asText)
		case "cooldown":
			setKey(p, v, key, &s.Cooldown, option.ParseDuration)
		case "between_runs":
			setKey(p, v, key, &s.BetweenRuns, asText)
		case "max_failures":
			setKey(p, v, key, &s.MaxFailures, option.ParseInt)
		case "disturbed":
			setKey(p, v, key, &s.Disturbed, asText)
		case "reruns":
			setKey(p, v, key, &s.Reruns, option.ParseInt)
		case "client_procs":
			setKey(p, v, key, &s.ClientProcs, option.ParseInt)
		case "agents":
			setKey(p, v, key, &s.Agents, option.ParseInt)
		case "server":
			p.server(s, v)
		case "target":
			set(&s.Target)(field(p, v, "target", checkTarget))
		case "profiles":
			p.profiles(s, v)
		case "base":
			p.base(&s.Base, v)
		case "factors":
			p.factors(s, v)
		}
	})
	_, hasRepeat := p.pos["repeat"]
	switch {
	case s.Precision > 0 && !hasRepeat:
		s.RepeatMin, s.Repeat = DefaultRepeatMin, DefaultRepeatMax
	case s.Precision == 0 && s.RepeatMin < s.Repeat:
		p.errPath("repeat", "repeat %d..%d needs precision: P%% (how tight each cell's 95 %% interval must be before its repeats stop), or give one number", s.RepeatMin, s.Repeat)
	}
	if _, ok := p.pos["server"]; ok && s.Server.Name == "" {
		s.Server.Name = s.Name
	}
	s.Base.Engine, s.Base.Target = s.Server.Engine, s.Target
	for _, key := range spec.LinkKeys() {
		if _, ok := p.pos["base."+key]; ok || s.hasFactor(key) {
			s.linked = true
		}
	}
	p.checkProfiles(s)
	s.Base.Version, s.Base.Install = s.Server.Version, s.Server.Install
	s.Base.Memory, s.Base.Encryption = s.Server.Memory, s.Server.Encryption
	s.Base.Settings = maps.Clone(s.Server.Settings)
	if s.Base.Settings == nil {
		s.Base.Settings = map[string]string{}
	}
}

func (p *parser) server(s *Study, n *yaml.Node) {
	p.mapping(n, "server", serverKeys, func(key string, _, v *yaml.Node) {
		switch key {
		case "engine":
			set(&s.Server.Engine)(field(p, v, "engine", checkWord))
		case "name":
			set(&s.Server.Name)(field(p, v, "name", checkName))
		case "version":
			set(&s.Server.Version)(field(p, v, "server.version", checkVersion))
		case "install":
			set(&s.Server.Install)(field(p, v, "server.install", checkValue))
		case "storage":
			o, _ := studyKeys.Lookup("storage")
			set(&s.Server.Storage)(field(p, v, "server.storage", o.Canonical))
		case "memory":
			set(&s.Server.Memory)(field(p, v, "server.memory", checkMemory))
		case "encryption":
			set(&s.Server.Encryption)(field(p, v, "server.encryption", checkSwitch))
		case "settings":
			s.Server.Settings = p.settings(v, "server.settings", "setting")
		}
	})
}

// settings reads a mapping of names to values (server settings, options).
func (p *parser) settings(n *yaml.Node, where, noun string) map[string]string {
	m := map[string]string{}
	p.mapping(n, where, nil, func(name string, k, v *yaml.Node) {
		if !validSetting.MatchString(name) {
			p.errAt(k, "%s name %q: use letters, digits, '_', '.' or '-'", noun, name)
			return
		}
		if where == "base.options" && contains(runKeys, name) {
			p.errAt(k, "option %q is written base.%s", name, name)
			return
		}
		if val, ok := field(p, v, noun+" "+name, checkValue); ok {
			m[name] = val
		}
	})
	return m
}

func (p *parser) base(b *Params, n *yaml.Node) {
	p.mapping(n, "base", baseKeys, func(key string, _, v *yaml.Node) {
		switch key {
		case "workload":
			set(&b.Workload)(field(p, v, key, checkWord))
		case spec.OptionMode, spec.OptionMix:
			check := checkWord
			if key == spec.OptionMix {
				check = checkMix
			}
			if val, ok := field(p, v, key, check); ok {
				b.Options[key] = val
			}
		case "options":
			for k, val := range p.settings(v, "base.options", "option") {
				b.Options[k] = val
			}
		default: // a field of the run: its syntax here, its range on the cells
			f, _ := spec.Lookup(key)
			if f.List() {
				p.listField(f, &b.Run.Params, v)
				return
			}
			raw, ok := p.scalar(v, key)
			if !ok {
				return
			}
			if err := f.Set(&b.Run.Params, raw); err != nil {
				p.errAt(v, "%s %v", key, err)
			}
		}
	})
}

// listField reads a field that holds several values (spec.Field.List): a list of them, a
// single one, or, for NAME=VALUE values (defines), a mapping of names to values.
func (p *parser) listField(f *spec.Field, params *spec.Params, n *yaml.Node) {
	add := func(at *yaml.Node, raw string) {
		if err := f.Add(params, raw); err != nil {
			p.errAt(at, "%s %v", f.Name, err)
		}
	}
	at, n := n, resolve(n)
	switch {
	case n.Kind == yaml.SequenceNode:
		for _, e := range n.Content {
			if raw, ok := p.scalar(e, f.Name+" item"); ok {
				add(e, raw)
			}
		}
	case n.Kind == yaml.MappingNode && f.Kind == option.Pairs:
		p.mapping(at, "base."+f.Name, nil, func(name string, _, v *yaml.Node) {
			if raw, ok := p.scalar(v, f.Name+" "+name); ok {
				add(v, name+"="+raw)
			}
		})
	default:
		if raw, ok := p.scalar(at, f.Name); ok {
			add(at, raw)
		}
	}
}

// levelText reads a factor's level: a single value, or, for a field that holds several
// (spec.Field.List), a list of them written as its canonical text.
func (p *parser) levelText(key string, e *yaml.Node) (string, bool) {
	f, ok := spec.Lookup(key)
	if r := resolve(e); !ok || !f.List() || r.Kind != yaml.SequenceNode {
		return p.scalar(e, key+" level")
	}
	var scratch spec.Params
	for _, x := range resolve(e).Content {
		raw, ok := p.scalar(x, key+" level item")
		if !ok {
			return "", false
		}
		if err := f.Add(&scratch, raw); err != nil {
			p.errAt(x, "%s level %v", key, err)
			return "", false
		}
	}
	return f.Value(&scratch), true
}

// factorKeyProblem returns why key cannot name a factor, or "".
func factorKeyProblem(key string) string {
	if contains(plainFactors, key) {
		return ""
	}
	if name, ok := strings.CutPrefix(key, results.OptionPrefix); ok && contains(spec.Keys(), name) {
		return fmt.Sprintf("factor %q is written %s: it is a parameter of the run, not an option", key, name)
	}
	for _, prefix := range []string{results.SettingPrefix, results.OptionPrefix} {
		if name, ok := strings.CutPrefix(key, prefix); ok {
			if !validSetting.MatchString(name) {
				return fmt.Sprintf("factor %q: after %q comes a name of letters, digits, '_', '.' or '-'", key, prefix)
			}
			return ""
		}
	}
	switch key {
	case "workload":
		return `"workload" cannot be a factor: a study runs one workload (write one study per workload)`
	case "seed":
		return `"seed" cannot be a factor: base.seed is the terminals' seed and repeats are the samples`
	}
	if hint := suggest(key, append(plainFactors[:len(plainFactors):len(plainFactors)], optMode, optMix)); hint != "" {
		return fmt.Sprintf("unknown factor %q%s", key, hint)
	}
	return fmt.Sprintf("unknown factor %q: factors are %s, set.SETTING and opt.OPTION", key, strings.Join(plainFactors, ", "))
}

func (p *parser) factors(s *Study, n *yaml.Node) {
	p.mapping(n, "factors", nil, func(key string, k, v *yaml.Node) {
		if msg := factorKeyProblem(key); msg != "" {
			p.errAt(k, "%s", msg)
			return
		}
		at := v
		v = resolve(v)
		switch {
		case isNull(v) || (v.Kind == yaml.SequenceNode && len(v.Content) == 0):
			p.errAt(k, "factor %s has no levels", key)
			return
		case v.Kind != yaml.SequenceNode:
			p.errAt(at, "factor %s must be a list of levels, like [1, 4, 16], got %s", key, kindName(v))
			return
		}
		f := Factor{Key: key}
		first := map[string]*yaml.Node{}
		for _, e := range v.Content {
			raw, ok := p.levelText(key, e)
			if !ok {
				continue
			}
			scratch := defaultBase().clone()
			if err := scratch.set(key, raw); err != nil {
				p.errAt(e, "%s level %v", key, err)
				continue
			}
			level := scratch.Value(key)
			if prev, dup := first[level]; dup {
				p.errAt(e, "%s level %s given twice (first at line %d, column %d)", key, level, prev.Line, prev.Column)
				continue
			}
			first[level] = e
			p.pos[fmt.Sprintf("factors.%s[%d]", key, len(f.Levels))] = pos{e.Line, e.Column}
			f.Levels = append(f.Levels, level)
		}
		s.Factors = append(s.Factors, f)
	})
}

// profileKeys are the keys of a study's own profile: its words, then the link's fields.
var profileKeys = append([]string{"description", "source"}, slices.DeleteFunc(spec.LinkKeys(), func(k string) bool { return k == "profile" })...)

// profiles reads the study's own network profiles: each a name with the link fields it
// sets (those it leaves out are at their defaults), a description and a source.
func (p *parser) profiles(s *Study, n *yaml.Node) {
	p.mapping(n, "profiles", nil, func(name string, k, v *yaml.Node) {
		if !validName.MatchString(name) {
			p.errAt(k, "profile name %q: use letters, digits, '.', '_' or '-'", name)
			return
		}
		if _, ok := spec.LookupProfile(name, nil); ok {
			p.errAt(k, "profile %q is built in: give yours another name", name)
			return
		}
		pr := spec.Profile{Name: name, Values: map[string]string{}}
		var scratch spec.Params
		p.mapping(v, "profiles."+name, profileKeys, func(key string, _, x *yaml.Node) {
			raw, ok := p.scalar(x, key)
			if !ok {
				return
			}
			switch key {
			case "description":
				pr.Summary = raw
			case "source":
				pr.Source = raw
			default:
				f, _ := spec.Lookup(key)
				if err := f.Set(&scratch, raw); err != nil {
					p.errAt(x, "%s %v", key, err)
					return
				}
				pr.Values[key] = f.Value(&scratch)
			}
		})
		s.Profiles = append(s.Profiles, pr)
	})
}

// checkProfiles checks that every profile the study names exists, and that its base does
// not both name a profile and give link fields beside it (which would be ambiguous: a
// factor's levels override a profile, the base's keys do not).
func (p *parser) checkProfiles(s *Study) {
	known := func(path, name string) {
		if name == "" {
			return
		}
		if _, ok := spec.LookupProfile(name, s.Profiles); !ok {
			names := spec.ProfileNames(s.Profiles)
			p.errPath(path, "unknown profile %q%s (known: %s)", name, suggest(name, names), strings.Join(names, ", "))
		}
	}
	known("base.profile"+valueSuffix, s.Base.Profile)
	for _, f := range s.Factors {
		if f.Key != "profile" {
			continue
		}
		for i, l := range f.Levels {
			known(fmt.Sprintf("factors.profile[%d]", i), l)
		}
	}
	if s.Base.Profile == "" {
		return
	}
	for _, key := range spec.LinkKeys() {
		if _, ok := p.pos["base."+key]; ok && key != "profile" {
			p.errPath("base."+key, "base.%s and base.profile both shape the link: give the profile alone, the fields alone, or vary %s as a factor (a factor's levels override the profile's)", key, key)
		}
	}
}
