package study

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"slices"
	"strconv"

	"github.com/dblat/dblat/internal/latency"
	"github.com/dblat/dblat/internal/managed"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/spec"
)

// Cells expands the design into its cells: for DesignFull the cartesian product of the
// levels with the first factor varying slowest; for DesignOFAT the base cell first, then each
// factor in file order with each of its levels that differs from the base's value. A study
// without factors has one cell, the base. The result is computed afresh on every call.
func (s *Study) Cells() []Cell {
	if s.Design == DesignOFAT {
		return s.ofatCells()
	}
	return s.fullCells()
}

// newCell resolves p, gives it the study's path to the server (Linked), and labels the
// cell with every factor's resolved value, so that Levels always agree with Params (and with
// results.FactorValue of the stored run).
func (s *Study) newCell(p Params, varied string) Cell {
	p.Link = nil
	if s.Linked() && p.Run.Transport() != spec.TransportUnix {
		p.Link = &latency.Config{DelayConnect: true} // its shape: the link fields (Resolve)
	}
	p.Run.Resolve()
	levels := make(map[string]string, len(s.Factors))
	for _, f := range s.Factors {
		levels[f.Key] = p.Value(f.Key)
	}
	return Cell{Key: CellKey(p), Levels: levels, Varied: varied, Params: p}
}

func (s *Study) fullCells() []Cell {
	n, _ := s.cellCount()
	out := make([]Cell, 0, min(n, MaxCells))
	idx := make([]int, len(s.Factors))
	for {
		levels := make(map[string]string, len(s.Factors))
		for i, f := range s.Factors {
			levels[f.Key] = f.Levels[idx[i]]
		}
		out = append(out, s.newCell(s.cellParams(levels), ""))
		i := len(idx) - 1
		for ; i >= 0; i-- {
			if idx[i]++; idx[i] < len(s.Factors[i].Levels) {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			return out
		}
	}
}

func (s *Study) ofatCells() []Cell {
	base := s.newCell(s.cellParams(nil), "")
	out := []Cell{base}
	for _, f := range s.Factors {
		for _, l := range f.Levels {
			if l == base.Levels[f.Key] {
				continue // the base cell already runs this level
			}
			out = append(out, s.newCell(s.cellParams(map[string]string{f.Key: l}), f.Key))
		}
	}
	return out
}

// cellParams returns the base with the given factor levels: first the profile (the cell's
// level of a profile factor, else the base's), which gives the link its whole shape, then
// every other level, so that a link field's level overrides the profile's value of it.
func (s *Study) cellParams(levels map[string]string) Params {
	p := s.Base.clone()
	if l, ok := levels["profile"]; ok {
		_ = p.set("profile", l) // canonical levels always parse
	}
	if p.Profile != "" {
		if pr, ok := spec.LookupProfile(p.Profile, s.Profiles); ok {
			_ = pr.Apply(&p.Run.Params, nil) // checked when parsed
		}
	}
	for _, f := range s.Factors {
		if l, ok := levels[f.Key]; ok && f.Key != "profile" {
			_ = p.set(f.Key, l)
		}
	}
	return p
}

// cellCount returns how many cells the design has; ok is false when that exceeds MaxCells
// (n is then only a lower bound).
func (s *Study) cellCount() (n int, ok bool) {
	n = 1
	for _, f := range s.Factors {
		if s.Design == DesignOFAT {
			n += len(f.Levels) // an upper bound: the base value's level adds no cell
		} else {
			n *= len(f.Levels)
		}
		if n > MaxCells {
			return n, false
		}
	}
	return n, true
}

// CellKey identifies the run p describes. It is the first 16 hex digits of the SHA-256 of a
// canonical text: the line "dblat cell v1", then one line name=value per parameter, sorted by
// name, with values quoted by strconv.Quote: the server (engine, target, server.version,
// server.install, set.NAME per setting), the workload, every spec.Field by its key and
// canonical value (connections resolved), the mode and mix as "mode" and "mix", and the other
// options as opt.NAME. Empty strings are left out, and so are the parameters added after the
// first studies at their defaults (spec.Field.Late: rate 0, latency limit 0, max tries 1),
// so a parameter added later leaves existing keys unchanged, and the parameters that change
// no figure (spec.Field.Incidental). The key therefore depends
// only on what a run does, not on the study file's layout, its factor order, comments,
// repeat or order seed. Changing any parameter changes the key; so does the engine, target
// or any server setting. (The path to the server is not in it: it follows from rtt and the
// transport.)
func CellKey(p Params) string {
	p.Run = p.Run.Clone()
	p.Run.Resolve()
	var lines []string
	add := func(name, value string) {
		if value != "" {
			lines = append(lines, name+"="+strconv.Quote(value))
		}
	}
	add("engine", p.Engine)
	add("target", p.Target)
	add(results.FactorVersion, p.Version)
	add(results.FactorInstall, p.Install)
	// A server's own memory and plain storage leave the keys as they were before these.
	if p.Memory != managed.MemoryNone {
		add(results.FactorMemory, p.Memory)
	}
	if p.Encryption != "off" {
		add(results.FactorEncryption, p.Encryption)
	}
	add("workload", p.Workload)
	for _, f := range spec.Fields {
		if v := f.Value(&p.Run.Params); !f.Incidental && !(f.Late && v == f.Default) {
			add(f.Name, v)
		}
	}
	for k, v := range p.Settings {
		add(results.SettingPrefix+k, v)
	}
	for k, v := range p.Options {
		switch k {
		case spec.OptionMode, spec.OptionMix: // keys older than options
			add(k, v)
		default:
			add(results.OptionPrefix+k, v)
		}
	}
	slices.Sort(lines)
	h := sha256.New()
	h.Write([]byte("dblat cell v1\n"))
	for _, l := range lines {
		h.Write([]byte(l + "\n"))
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// check validates what no single key can: how the blocks fit together and the size and
// consistency of the cells.
func (p *parser) check(s *Study) {
	_, hasServer := p.pos["server"]
	_, hasTarget := p.pos["target"]
	root := func(format string, args ...any) { p.errAt(p.root, format, args...) }
	if s.Name == "" {
		root(`missing key "study" (the study's name, stored with its runs)`)
	}
	if hasServer && hasTarget {
		p.errPath("target", "give server: (a managed server dblat starts) or target: (an existing server), not both")
	}
	targetFactor := s.hasFactor(results.FactorTarget)
	if !hasServer && !hasTarget && !targetFactor {
		root("missing server: (a managed server dblat starts) or target: (an existing server)")
	}
	if targetFactor && hasServer {
		p.errPath("factors."+results.FactorTarget, "a target factor runs on existing servers: remove server:")
	}
	if targetFactor && !hasTarget && s.Design == DesignOFAT {
		p.errPath("factors."+results.FactorTarget, "an ofat design needs a base target: for the other factors to vary around")
	}
	engineFactor := s.hasFactor(results.FactorEngine)
	if hasServer && s.Server.Engine == "" && (!engineFactor || s.Design == DesignOFAT) {
		p.errPath("server", "server needs an engine (postgres, mariadb, firebird, ...)")
	}
	managed := s.Managed()
	version := s.Server.Version != "" || s.hasFactor(results.FactorVersion)
	install := s.Server.Install != "" || s.hasFactor(results.FactorInstall)
	if version && install {
		path := "server.install"
		if s.hasFactor(results.FactorInstall) {
			path = "factors." + results.FactorInstall
		}
		p.errPath(path, "give server.version or server.install, not both: an installation is one version")
	}
	for _, f := range s.Factors {
		if f.Binaries() && s.hasFactor(results.FactorEngine) {
			p.errPath("factors."+f.Key, "%s and an engine factor do not combine: a version or installation belongs to one engine (write one study per engine)", f.Key)
		}
		if managed {
			continue
		}
		if f.Key == results.FactorEngine {
			p.errPath("factors."+f.Key, "an engine factor needs a managed server (server:); a target runs the engine it runs")
		} else if f.Binaries() {
			p.errPath("factors."+f.Key, "%s needs a managed server (server:) that dblat starts; a target runs the version it runs", f.Key)
		} else if f.ServerOnly() {
			p.errPath("factors."+f.Key, "%s needs a managed server (server:) that dblat starts; a target runs as it was started", f.Key)
		} else if f.RestartsServer() && f.Key != results.FactorTarget {
			p.errPath("factors."+f.Key, "server settings need a managed server (server:) that dblat can restart; a target is used as it is")
		}
	}
	n, ok := s.cellCount()
	if !ok {
		p.errPath("factors", "the %s design has more than %d cells: use fewer levels, or an ofat design", s.Design, MaxCells)
	} else if s.Repeat > MaxRuns/n {
		p.errPath("repeat", "%d cells × repeat %d is more than %d runs", n, s.Repeat, MaxRuns)
	}
}

// checkCells checks each cell's run for what needs no server (spec.Run.Validate). It runs
// even when other keys had problems, so that one pass reports them all.
func (p *parser) checkCells(study *Study) {
	// A factor whose levels were all refused (reported already) leaves the base value.
	s := *study
	s.Factors = slices.DeleteFunc(slices.Clone(s.Factors), func(f Factor) bool { return len(f.Levels) == 0 })
	// Each cell's run, checked once for what needs no server: a problem is reported at the
	// level of the factor that causes it (naming the first cell it affects when other
	// factors take part), else at the base key; once, however many cells share it.
	seen := map[string]bool{}
	for _, c := range s.Cells() {
		run := c.Params.Run
		run.Cell = c.Key // validated as the study's run it becomes (RunOf)
		for _, fe := range run.Validate() {
			e := s.FieldError(fe.Field, &c, fe.Detail)
			if seen[e.Error()] {
				continue
			}
			seen[e.Error()] = true
			p.add(e.Line, e.Col, "%s", e.Msg)
		}
	}
}

// sameServer reports whether two cells run on the same server configuration.
func sameServer(a, b *Params) bool {
	return a.Engine == b.Engine && a.Target == b.Target && a.Version == b.Version && a.Install == b.Install &&
		a.Memory == b.Memory && a.Encryption == b.Encryption && maps.Equal(a.Settings, b.Settings)
}
