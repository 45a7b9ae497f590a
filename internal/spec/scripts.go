package spec

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/dblat/dblat/internal/option"
)

// The script workload's parameters (Params.Scripts, Builtins, Defines, Init) as users write
// them: pgbench's -f FILE[@WEIGHT], -b NAME[@WEIGHT] and -D NAME=VALUE. Only their syntax is
// read here; the workload reads the files and knows the built-in scripts.

// SplitWeight splits a script entry "FILE[@WEIGHT]" (or "NAME[@WEIGHT]") at its last '@'
// followed by digits only, as pgbench does, into the file and its weight (1 when none is
// written). A weight of 0 disables the script.
func SplitWeight(entry string) (name string, weight int, err error) {
	name, weight = entry, 1
	if i := strings.LastIndexByte(entry, '@'); i >= 0 {
		w := entry[i+1:]
		if w == "" || strings.Trim(w, "0123456789") != "" {
			return "", 0, fmt.Errorf("weight %q after @ in %q is not a whole number (write FILE@WEIGHT, such as orders.sql@10)", w, entry)
		}
		n, err := strconv.Atoi(w)
		if err != nil {
			return "", 0, fmt.Errorf("weight %s in %q is too large", w, entry)
		}
		name, weight = entry[:i], n
	}
	if name == "" {
		return "", 0, fmt.Errorf("%q names no file", entry)
	}
	return name, weight, nil
}

// canonicalScript checks one script entry and returns it in canonical form: the name, and
// "@WEIGHT" unless the weight is 1. A comma is refused: a study factor's level lists its
// scripts separated by commas.
func canonicalScript(entry string) (string, error) {
	entry = strings.TrimSpace(entry)
	if entry == "" {
		return "", errors.New("is empty: write FILE[@WEIGHT]")
	}
	if strings.ContainsAny(entry, ",\n\r") {
		return "", fmt.Errorf("%q holds a comma or a line break, which a list of scripts cannot hold: rename the file", entry)
	}
	name, w, err := SplitWeight(entry)
	if err != nil {
		return "", err
	}
	if w == 1 {
		return name, nil
	}
	return name + "@" + strconv.Itoa(w), nil
}

// addList adds one value, checked by canon, to list.
func addList(list *[]string, text string, canon func(string) (string, error)) error {
	v, err := canon(text)
	if err != nil {
		return err
	}
	*list = append(*list, v)
	return nil
}

// setList replaces list with the values of a canonical text (values separated by commas).
func setList(list *[]string, text string, canon func(string) (string, error)) error {
	*list = nil
	if strings.TrimSpace(text) == "" {
		return nil
	}
	for _, v := range strings.Split(text, ",") {
		if err := addList(list, v, canon); err != nil {
			return err
		}
	}
	return nil
}

// addDefine reads one -D NAME=VALUE into p.Defines. NAME is a script variable's name
// (letters, digits and underscores, not starting with a digit); VALUE is any text.
func addDefine(p *Params, text string) error {
	name, value, err := option.ParsePair(text)
	if err != nil {
		return err
	}
	if !validVariable(name) {
		return fmt.Errorf("%q is not a variable name: use letters, digits and underscores, not starting with a digit", name)
	}
	if p.Defines == nil {
		p.Defines = map[string]string{}
	}
	p.Defines[name] = value
	return nil
}

// formatDefines writes p.Defines as NAME=VALUE pairs sorted by name, separated by commas.
func formatDefines(p *Params) string {
	names := make([]string, 0, len(p.Defines))
	for n := range p.Defines {
		names = append(names, n)
	}
	slices.Sort(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + "=" + p.Defines[n]
	}
	return strings.Join(parts, ",")
}

// validVariable is pgbench's rule for a variable's name (valid_variable_name): letters,
// digits, underscores and non-ASCII bytes, not starting with a digit.
func validVariable(name string) bool {
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_', c >= 0x80:
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return name != ""
}

// allWeightsZero reports whether r gives scripts (files or built-ins) and every one has
// weight 0, so that none would ever run.
func (r *Run) allWeightsZero() bool {
	given, total := false, 0
	for _, list := range [][]string{r.Scripts, r.Builtins} {
		for _, e := range list {
			given = true
			if _, w, err := SplitWeight(e); err == nil {
				total += w
			}
		}
	}
	return given && total == 0
}
