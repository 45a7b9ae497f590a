package study

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/spec"
	suggestpkg "github.com/dblat/dblat/internal/suggest"
)

// Error is a problem in a study file, at a position. It prints as "file:line:col: msg" (or
// "file:line: msg" when the column is unknown, "file: msg" when the line is).
type Error struct {
	File      string
	Line, Col int // 1-based; 0 when unknown
	Msg       string
}

func (e *Error) Error() string {
	switch {
	case e.Line == 0:
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	case e.Col == 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
}

// ErrorList is every problem Parse found, in file order of discovery, one per line.
// errors.As(err, new(*Error)) finds the first.
type ErrorList []*Error

func (l ErrorList) Error() string {
	s := make([]string, len(l))
	for i, e := range l {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}

// Unwrap returns the individual errors.
func (l ErrorList) Unwrap() []error {
	out := make([]error, len(l))
	for i, e := range l {
		out[i] = e
	}
	return out
}

// maxErrors bounds how many problems one Parse reports.
const maxErrors = 20

type pos struct{ line, col int }

// valueSuffix marks, in a study's positions, where a key's value is written ("base.rtt=")
// rather than the key itself.
const valueSuffix = "="

// Errorf returns an *Error positioned at path in the study file, for problems the caller
// finds (an engine that does not exist, a setting the engine rejects). Paths are
// "study", "design", "repeat", "seed", "order", "cooldown", "between_runs", "max_failures",
// "agents", "target", "server", "server.engine", "server.name", "server.settings.NAME", "base",
// "base.KEY", "base.options.NAME", "factors", "factors.KEY" (the factor) and
// "factors.KEY[i]" (its i-th level, 0-based). An unknown path gives the file without a line.
func (s *Study) Errorf(path, format string, args ...any) error {
	p := s.pos[path]
	return &Error{File: s.File, Line: p.line, Col: p.col, Msg: fmt.Sprintf(format, args...)}
}

// suggest returns " (did you mean X?)" for the candidate nearest to word, or "".
func suggest(word string, candidates []string) string {
	if h, ok := hints[strings.ToLower(word)]; ok && contains(candidates, h) {
		return fmt.Sprintf(" (did you mean %s?)", h)
	}
	best, bestD := "", 3
	for _, c := range candidates {
		if strings.EqualFold(c, word) {
			return fmt.Sprintf(" (did you mean %s?)", c)
		}
		limit := 2
		if len(c) <= 4 {
			limit = 1
		}
		if d := suggestpkg.Distance(strings.ToLower(word), strings.ToLower(c)); d <= limit && d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %s?)", best)
}

// FieldError positions a problem with a field of the run that cell c asks for (nil: the
// base), given by its path as package spec tags it ("terminals", "options[mode]",
// "workload", "target", "link"): at the level c has of the factor that varies the field, else
// at its base key (the base block when the file does not write it). detail reads after the
// field's name as the file writes it.
func (s *Study) FieldError(path string, c *Cell, detail string) *Error {
	factor, base, label := fieldKeys(path)
	at := ""
	for _, f := range s.Factors {
		if f.Key != factor {
			continue
		}
		at = "factors." + f.Key
		if c != nil {
			if i := slices.Index(f.Levels, c.Levels[f.Key]); i >= 0 {
				at = fmt.Sprintf("factors.%s[%d]", f.Key, i)
				label = f.Key + " level"
			}
		}
	}
	if at == "" {
		at = base
		for at != "" {
			if _, ok := s.pos[at]; ok {
				break
			}
			i := strings.LastIndexByte(at, '.')
			if i < 0 {
				at = ""
				break
			}
			at = at[:i]
		}
	}
	p, ok := s.pos[at+valueSuffix]
	if !ok || !strings.HasPrefix(at, "base.") {
		p = s.pos[at]
	}
	name := func(path string) string {
		_, _, l := fieldKeys(path)
		return strings.TrimPrefix(l, "option ")
	}
	return &Error{File: s.File, Line: p.line, Col: p.col, Msg: label + " " + spec.Expand(detail, name)}
}

// fieldKeys maps a spec path to the factor key that varies it, its key in the file's base
// block, and its name as the file writes it.
func fieldKeys(path string) (factor, base, label string) {
	if name, ok := spec.OptionName(path); ok {
		switch name {
		case spec.OptionMode, spec.OptionMix:
			return results.OptionPrefix + name, "base." + name, name
		}
		return results.OptionPrefix + name, "base.options." + name, "option " + name
	}
	switch path {
	case spec.LinkPath.String():
		return results.FactorRTT, "base.rtt", "rtt"
	case spec.TargetPath.String():
		return results.FactorTarget, "target", "target"
	}
	return path, "base." + path, path
}
