package cli_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/dblat/dblat/internal/cli"
	"github.com/dblat/dblat/internal/spec"
)

// flagLine is one flag of a help page: "  -o, --output string   usage" or
// "      --think   usage"; the placeholder is what follows the flag's name before the gap.
var flagLine = regexp.MustCompile(`^\s+(?:-\w, )?--([\w-]+)(?: (.*?))?\s{2,}\S`)

// typeWords are the placeholders pflag prints for a flag's type (pflag.UnquoteUsage).
var typeWords = map[string]bool{"": true, "string": true, "int": true, "uint": true, "float": true, "duration": true,
	"strings": true, "ints": true, "uints": true, "bools": true, "stringArray": true, "durations": true}

// TestHelpPlaceholdersAreTypes renders every command's help and checks each flag's
// placeholder: pflag takes the first back-quoted words of a usage string as the value's
// name, so "N `dblat agent` processes" printed "--agents dblat agent".
func TestHelpPlaceholdersAreTypes(t *testing.T) {
	e := newEnv(t)
	paths := append(cli.CommandPaths(), []string{})
	flags := 0
	for _, path := range paths {
		args := append(append([]string(nil), path...), "--help")
		code, out, errs := e.run(args...)
		if code != 0 {
			t.Errorf("dblat %s: exit %d\n%s", strings.Join(args, " "), code, errs)
			continue
		}
		for _, line := range strings.Split(out, "\n") {
			m := flagLine.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			flags++
			if !typeWords[m[2]] {
				t.Errorf("dblat %s: --%s shows the placeholder %q, not a type (a back-quoted word in its usage?):\n%s",
					strings.Join(path, " "), m[1], m[2], line)
			}
		}
	}
	if len(paths) < 30 || flags < 300 {
		t.Errorf("only %d commands and %d flag lines found: is the help format still what flagLine reads?", len(paths), flags)
	}
}

// TestVersionSaysWhatItKnows: `dblat version` gives the Go release and, for a build that
// carries no version (a test binary is not stamped), says why instead of a bare "dev".
func TestVersionSaysWhatItKnows(t *testing.T) {
	e := newEnv(t)
	code, out, errs := e.run("version")
	if code != 0 || !regexp.MustCompile(`^dblat \S+\n(commit [0-9a-f]{40}.*\n)?built with go1\.\d+`).MatchString(out) {
		t.Errorf("version: exit %d\n%s", code, out)
	}
	if strings.HasPrefix(out, "dblat dev\n") && !strings.Contains(errs, "carries no version") {
		t.Errorf("an unstamped build should say why it is dev:\n%s", errs)
	}
}

// TestLinkFlagsAreTheDeclarations: the link's fields (spec.LinkKeys) are flags of dblat run,
// dblat proxy and dblat calibrate with their declared usage, word for word, and the study
// file's documentation (package study's "The link's shape") lists each with the same
// words: one declaration, every place a user reads it.
func TestLinkFlagsAreTheDeclarations(t *testing.T) {
	e := newEnv(t)
	space := regexp.MustCompile(`\s+`)
	for _, path := range [][]string{{"run", "tpcc"}, {"run", "simple"}, {"proxy"}, {"calibrate"}} {
		_, out, _ := e.run(append(path, "--help")...)
		lines := map[string]string{}
		for _, line := range strings.Split(out, "\n") {
			if m := flagLine.FindStringSubmatch(line); m != nil {
				lines[m[1]] = line
			}
		}
		for _, key := range spec.LinkKeys() {
			f, _ := spec.Lookup(key)
			line, ok := lines[f.FlagName()]
			if !ok {
				t.Errorf("dblat %s --help has no --%s", strings.Join(path, " "), f.FlagName())
			} else if !strings.Contains(line, f.Usage) {
				t.Errorf("dblat %s --help: --%s says\n%s\nnot its declaration's words: %q", strings.Join(path, " "), f.FlagName(), line, f.Usage)
			}
		}
	}
	doc, err := os.ReadFile("../study/doc.go")
	if err != nil {
		t.Fatal(err)
	}
	text := space.ReplaceAllString(strings.ReplaceAll(string(doc), "//", " "), " ")
	for _, key := range spec.LinkKeys() {
		f, _ := spec.Lookup(key)
		if want := "- " + key + ": " + f.Usage; !strings.Contains(text, want) {
			t.Errorf("the study file's documentation (internal/study/doc.go) does not list %q", want)
		}
	}
}
