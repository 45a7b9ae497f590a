package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dblat/dblat/internal/cli"
	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
)

// TestBadInputExitsTwo: input dblat can judge before doing anything — a misspelt server
// setting, a missing required flag, arguments a command does not take — exits 2 (the
// README's "bad input") with one line naming the problem, prints nothing before it, and
// leaves nothing behind.
func TestBadInputExitsTwo(t *testing.T) {
	pgtest.Server(t) // the settings are judged against the installed server's own list
	e := newEnv(t)

	code, out, errs := e.run("server", "start", "postgres", "--name", "pgx", "--set", "shared_bufers=1MB")
	if code != cli.ExitUsage || strings.Count(strings.TrimSpace(errs), "\n") != 0 || out != "" ||
		!strings.Contains(errs, "unknown PostgreSQL setting") || !strings.Contains(errs, "did you mean shared_buffers?") {
		t.Errorf("a misspelt setting: exit %d, want %d and one line with a suggestion\nstdout: %s\nstderr: %s", code, cli.ExitUsage, out, errs)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "state", "servers", "pgx")); !os.IsNotExist(err) {
		t.Errorf("a refused start left state/servers/pgx behind (%v)", err)
	}
	if out := e.must("server", "list"); strings.Contains(out, "pgx") {
		t.Errorf("server list shows the refused server:\n%s", out)
	}

	e.fails(cli.ExitUsage, []string{"server start needs --name"}, "server", "start", "postgres")
	e.fails(cli.ExitUsage, []string{"dblat results export takes no arguments", `"3"`}, "results", "export", "3")
	e.fails(cli.ExitUsage, []string{"dblat results list takes no arguments", `"5"`}, "results", "list", "5")
	e.fails(cli.ExitUsage, []string{"dblat version takes no arguments", `"extra"`}, "version", "extra")
	e.fails(cli.ExitUsage, []string{"dblat server list takes no arguments"}, "server", "list", "pg1")
	e.fails(cli.ExitUsage, []string{"dblat check runs needs one RUN id or more"}, "check", "runs")
	e.fails(cli.ExitUsage, []string{`unknown command "foo" for "dblat"`}, "foo")
	// An option's bad value names the flag the user typed, not the study file's key.
	e.fails(cli.ExitUsage, []string{`--blob-size must be a whole number, got "abc"`}, "load", "simple", "blob", "--target", "x", "--blob-size", "abc")
	e.fails(cli.ExitUsage, []string{`--blob-rows must be at least 1`}, "load", "simple", "blob", "--target", "x", "--blob-rows", "0")
}

// TestReportAndExportRefuseWhatTheyCannotDo: `report -o rep.md` wrote text into rep.md, and
// `results export --study nosuch` printed an empty list and exited 0 where `report nosuch`
// exits 2.
func TestReportAndExportRefuseWhatTheyCannotDo(t *testing.T) {
	e := newEnv(t)
	e.fails(cli.ExitUsage, []string{"-o rep.md", `suffix ".md" names no report format`, ".html, .txt, .csv or .json", "--format"},
		"report", "nosuch", "-o", "rep.md")
	e.fails(cli.ExitUsage, []string{"-o report", "no suffix"}, "report", "nosuch", "-o", "report")
	if _, err := os.Stat(filepath.Join(e.dir, "rep.md")); !os.IsNotExist(err) {
		t.Errorf("a refused report left rep.md behind (%v)", err)
	}
	e.fails(cli.ExitUsage, []string{`no study "nosuch"`}, "report", "nosuch", "-o", "rep.txt")
	e.fails(cli.ExitUsage, []string{`no study "nosuch"`}, "report", "nosuch", "-o", "rep.md", "--format", "text")
	e.fails(cli.ExitUsage, []string{`no study "nosuch"`}, "results", "export", "--study", "nosuch")
	e.fails(cli.ExitUsage, []string{`no study "nosuch"`}, "results", "export", "--study", "nosuch", "--format", "csv")
	e.fails(cli.ExitUsage, []string{`no study "nosuch"`}, "results", "list", "--study", "nosuch")
}
