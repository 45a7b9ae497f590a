package cli_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dblat/dblat/internal/engine/firebird/fbtest"
	"github.com/dblat/dblat/internal/engine/mariadb/mariadbtest"
	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
	"github.com/dblat/dblat/internal/managed"
)

// TestNoPasswordInOutputs: a managed server's generated passwords appear nowhere dblat
// writes them for a user or a store to keep: not in what server start and server list
// print, not in a run's output or its stored record (the results database's file, byte for
// byte), not in a report, not in instance.json, not in the server's log as dblat writes it
// (issue 46). What server start and server list print says how a client logs in instead:
// the credentials file.
func TestNoPasswordInOutputs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		engine string
		need   func(testing.TB)
		sets   []string
	}{
		{"postgres", func(t testing.TB) { pgtest.Server(t) }, []string{"--set", "fsync=off"}},
		{"mariadb", mariadbtest.SkipIfMissing, []string{"--set", "innodb_buffer_pool_size=64M", "--set", "innodb_flush_log_at_trx_commit=2"}},
		{"firebird", fbtest.Require, []string{"--set", "ForcedWrites=off"}},
	} {
		t.Run(tc.engine, func(t *testing.T) {
			t.Parallel()
			tc.need(t)
			e := newEnv(t)
			name := "sec-" + tc.engine
			var said strings.Builder
			do := func(args ...string) (string, string) {
				t.Helper()
				code, out, errs := e.run(args...)
				if code != 0 {
					t.Fatalf("dblat %s: exit %d\n%s\n%s", strings.Join(args, " "), code, out, errs)
				}
				said.WriteString(out + errs)
				return out, errs
			}
			out, errs := do(append([]string{"server", "start", tc.engine, "--name", name}, tc.sets...)...)
			inst := filepath.Join(e.dir, "state", "servers", name)
			creds := filepath.Join(inst, managed.CredentialsDir)
			if !strings.Contains(out, creds) {
				t.Errorf("server start printed a DSN that names no credentials file of %s: %s", creds, out)
			}
			if !regexp.MustCompile(`connect a client with: \S+ .*` + regexp.QuoteMeta(creds)).MatchString(errs) {
				t.Errorf("server start does not say how a client logs in:\n%s", errs)
			}
			if out, _ := do("server", "list"); !strings.Contains(out, name+"  ") || strings.Count(out, creds) < 2 {
				t.Errorf("server list names no credentials file for the DSN and the client:\n%s", out)
			}
			do("run", "simple", "ping", "--target", name, "--terminals", "2", "--duration", "1s", "--warmup", "0s")
			do("results", "show", "1", "--settings")
			do("results", "export", "--format", "json")
			do("report", "1", "--full")
			html := filepath.Join(e.dir, "report.html")
			do("report", "1", "-o", html)
			do("server", "stop", name)

			kept := map[string]string{"what dblat printed": said.String()}
			for _, f := range []string{html, e.resultsPath(), filepath.Join(inst, "instance.json"), filepath.Join(inst, "server.log")} {
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				kept[f] = string(b)
			}
			files, _ := filepath.Glob(filepath.Join(creds, "*.password"))
			if len(files) == 0 {
				t.Fatalf("no password in %s", creds)
			}
			for _, f := range files {
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				pw := strings.TrimSpace(string(b))
				for where, text := range kept {
					if strings.Contains(text, pw) {
						t.Errorf("the password of %s is in %s", filepath.Base(f), where)
					}
				}
			}
		})
	}
}

// TestEarlierServerGetsCredentials: a managed server of a dblat from before credentials/
// (its instance directory has none) gets them at its next start, which says so in one line,
// and runs on by name.
func TestEarlierServerGetsCredentials(t *testing.T) {
	t.Parallel()
	pgtest.Server(t)
	e := newEnv(t)
	e.must("server", "start", "postgres", "--name", "old", "--set", "fsync=off")
	e.must("server", "stop", "old")
	if err := os.RemoveAll(filepath.Join(e.dir, "state", "servers", "old", managed.CredentialsDir)); err != nil {
		t.Fatal(err)
	}
	code, _, errs := e.run("server", "start", "postgres", "--name", "old")
	if code != 0 {
		t.Fatalf("restart: exit %d: %s", code, errs)
	}
	if n := strings.Count(errs, "made by an earlier dblat"); n != 1 {
		t.Errorf("the restart said %d times that the server got credentials:\n%s", n, errs)
	}
	e.must("run", "simple", "ping", "--target", "old", "--terminals", "1", "--duration", "500ms", "--warmup", "0s")
	code, _, errs = e.run("server", "start", "postgres", "--name", "old")
	if code != 0 || strings.Contains(errs, "earlier dblat") {
		t.Errorf("a start of the running server: exit %d, %s", code, errs)
	}
}
