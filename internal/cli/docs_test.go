package cli_test

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dblat/dblat/internal/cli"
)

// TestDocsCommandsParse: every dblat command line in the README's and docs/'s shell
// examples names a command that exists, with flags it has, values its flags take and as
// many arguments as it takes, so that the documentation's examples work as written.
func TestDocsCommandsParse(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join("..", "..", "README.md"))
	checked := 0
	for _, f := range files {
		for _, ex := range shellExamples(t, f) {
			for _, args := range commands(splitShell(ex.line)) {
				if len(args) == 0 || args[0] != "dblat" {
					continue
				}
				checked++
				if err := cli.ParseCommandLine(args[1:]); err != nil {
					t.Errorf("%s:%d: %s: %v", filepath.Base(f), ex.n, ex.line, err)
				}
			}
		}
	}
	if checked < 60 {
		t.Errorf("only %d dblat command lines found in the docs: is shellExamples still reading them?", checked)
	}
}

type example struct {
	n    int
	line string
}

// shellExamples returns the lines of path's ```sh blocks, continuation lines (a trailing
// backslash) joined and comments removed, with the line number each starts at.
func shellExamples(t *testing.T, path string) []example {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var out []example
	sc := bufio.NewScanner(fh)
	in, n, pending, start := false, 0, "", 0
	for sc.Scan() {
		n++
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "```"):
			in = !in && strings.TrimPrefix(line, "```") == "sh"
			continue
		case !in:
			continue
		}
		if pending == "" {
			start = n
		}
		if trimmed, ok := strings.CutSuffix(strings.TrimRight(line, " "), `\`); ok {
			pending += trimmed + " "
			continue
		}
		out = append(out, example{start, strings.TrimSpace(stripComment(pending + line))})
		pending = ""
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// stripComment cuts a shell comment (a # outside quotes, after a space) off line.
func stripComment(line string) string {
	var quote rune
	for i, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == '#' && (i == 0 || line[i-1] == ' '):
			return line[:i]
		}
	}
	return line
}

// splitShell splits a command line into words as a shell would, for what the docs write:
// spaces separate, single and double quotes group.
func splitShell(line string) []string {
	var out []string
	var cur strings.Builder
	var quote rune
	word := false
	for _, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, word = r, true
		case r == ' ' || r == '\t':
			if word {
				out = append(out, cur.String())
				cur.Reset()
				word = false
			}
		default:
			cur.WriteRune(r)
			word = true
		}
	}
	if word {
		out = append(out, cur.String())
	}
	return out
}

// commands splits a line's words into the commands that &&, ||, ; and | join.
func commands(words []string) [][]string {
	var out [][]string
	var cur []string
	for _, w := range words {
		switch w {
		case "&&", "||", ";", "|":
			out, cur = append(out, cur), nil
		default:
			cur = append(cur, w)
		}
	}
	return append(out, cur)
}
