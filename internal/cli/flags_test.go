package cli

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dblat/dblat/internal/option"
	"github.com/dblat/dblat/internal/spec"
	"github.com/dblat/dblat/internal/workload"
)

// TestEveryFlagIsDeclared walks the command tree: every flag is backed by a declaration (a
// spec.Field, or a workload's or engine's option.Option, whose flag it is) or is one of the
// plain flags plainFlags lists for its command, and every plain flag listed is still one.
// A flag added ad hoc fails it, with where to declare it.
func TestEveryFlagIsDeclared(t *testing.T) {
	a := &app{st: &State{Getenv: func(string) string { return "" }}}
	for _, p := range flagProblems(a.rootCommand()) {
		t.Error(p)
	}

	// The check is not vacuous: a flag registered ad hoc is named, with where it belongs.
	root := a.rootCommand()
	cmd, _, err := root.Find([]string{"run", "tpcc"})
	if err != nil {
		t.Fatal(err)
	}
	cmd.Flags().Int("ad-hoc", 0, "a flag no declaration backs")
	problems := flagProblems(root)
	if len(problems) != 1 || !strings.Contains(problems[0], "dblat run tpcc --ad-hoc") ||
		!strings.Contains(problems[0], "internal/spec/fields.go") || !strings.Contains(problems[0], "plainFlags") {
		t.Errorf("an ad hoc flag should be the one problem, saying where to declare it: %q", problems)
	}
}

// flagProblems returns a line per flag below root that is neither declared nor listed in
// plainFlags, and per plainFlags entry that names no such flag.
func flagProblems(root *cobra.Command) []string {
	var problems []string
	used := map[string]bool{} // "key flag" of plainFlags entries met
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if f.Name == "help" || f.Name == "version" && !c.HasParent() { // cobra's own
				return
			}
			path := c.CommandPath()
			if names, ok := f.Annotations[declaredAnnotation]; ok {
				if err := checkDeclared(f, names); err != nil {
					problems = append(problems, fmt.Sprintf("%s --%s: %v", path, f.Name, err))
				}
				return
			}
			for _, key := range plainKeys(c) {
				if slices.Contains(plainFlags[key], f.Name) {
					used[key+" "+f.Name] = true
					return
				}
			}
			problems = append(problems, fmt.Sprintf("%s --%s: no declaration backs this flag. A parameter of a run is a spec.Field "+
				"(internal/spec/fields.go), a workload's or an engine's an option.Option of its option.Set; register it with "+
				"fieldFlag or optionFlags (internal/cli/flags.go, run.go). A flag that is no such parameter (a target, an output, "+
				"a format) goes in plainFlags (internal/cli/flags.go) under %q", path, f.Name, path))
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	for key, names := range plainFlags {
		for _, n := range names {
			if !used[key+" "+n] {
				problems = append(problems, fmt.Sprintf("plainFlags[%q] lists --%s, which no command there has as a plain flag: remove it", key, n))
			}
		}
	}
	slices.Sort(problems)
	return problems
}

// plainKeys are the plainFlags keys that may list c's flags: its path, and its parent's
// with " *".
func plainKeys(c *cobra.Command) []string {
	keys := []string{c.CommandPath()}
	if p := c.Parent(); p != nil {
		keys = append(keys, p.CommandPath()+" *")
	}
	return keys
}

// checkDeclared checks that the declaration a flag's annotation names exists and that
// the flag is its flag.
func checkDeclared(f *pflag.Flag, names []string) error {
	if len(names) != 1 {
		return fmt.Errorf("annotation %s holds %q: want one option name", declaredAnnotation, names)
	}
	o, ok := declaration(names[0])
	if !ok {
		return fmt.Errorf("marked as declared by %q, which no spec.Field, workload or engine declares", names[0])
	}
	if fn := o.FlagName(); fn != "" && fn != f.Name {
		return fmt.Errorf("marked as declared by %q, whose flag is --%s", o.Name, fn)
	}
	return nil
}

// declaration finds the option of that name among the run's fields, the workloads' and
// engines' options and the CLI's own declarations.
func declaration(name string) (option.Option, bool) {
	if fld, ok := spec.Lookup(name); ok {
		return fld.Option, true
	}
	sets := []option.Set{engineRunOptions(), databaseOptions(), {storageOption, memoryOption, encryptionOption}}
	for _, n := range workload.Names() {
		d, _ := workload.Lookup(n)
		sets = append(sets, d.Options, d.LoadOptions)
	}
	for _, s := range sets {
		if o, ok := s.Lookup(name); ok {
			return o, true
		}
	}
	return option.Option{}, false
}
