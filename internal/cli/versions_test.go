package cli_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dblat/dblat/internal/cli"
	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/engine/firebird"
	"github.com/dblat/dblat/internal/engine/firebird/fbtest"
	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
	"github.com/dblat/dblat/internal/results"
)

// TestVersionStudy fetches PostgreSQL 13 and 17 with `server install` (a cache shared
// between test runs keeps that to one fetch per machine), runs a short TPC-C study with
// server.version as its factor, and checks that every run records its version and build,
// that the report names its series by version, and that `check study` finds nothing to
// refuse: a version comparison is like for like when only the version differs.
func TestVersionStudy(t *testing.T) {
	t.Parallel()
	pgtest.Server(t) // skips or fails, as the suite asks, without PostgreSQL
	e := newEnv(t)
	pgtest.LinkBinaryCache(t, filepath.Join(e.dir, "state"))
	for _, v := range []string{"13", "17"} {
		dir := strings.TrimSpace(e.must("server", "install", "postgres", v))
		if _, err := os.Stat(filepath.Join(dir, "bin", "postgres")); err != nil {
			t.Fatalf("server install postgres %s printed %q: %v", v, dir, err)
		}
	}
	e.fails(2, []string{"13, 14, 15, 16, 17, 18"}, "server", "install", "postgres", "9")
	path := filepath.Join(e.dir, "versions.yaml")
	src := `study: versions
repeat: 1
order: grouped
server:
  engine: postgres
  settings: {shared_buffers: 64MB, fsync: "off"}
base:
  workload: tpcc
  warehouses: 1
  terminals: 2
  duration: 2s
  warmup: 1s
factors:
  server.version: [13, 17]
`
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if plan := e.must("study", "plan", path); !strings.Contains(plan, "2 cells × repeat 1") || strings.Contains(plan, "note:") {
		t.Errorf("plan (both versions installed: no note):\n%s", plan)
	}
	e.must("study", "run", path, "-o", filepath.Join(e.dir, "versions.html"))
	runs := e.runsOf("versions")
	if len(runs) != 2 {
		t.Fatalf("%d runs, want 2", len(runs))
	}
	for _, r := range runs {
		v := r.Params.Options[results.FactorVersion]
		if r.Status != results.StatusFinished || !strings.HasPrefix(r.Server.Version, "PostgreSQL "+v+".") ||
			r.Server.Target != "versions-"+v || r.Server.Settings[engine.SettingBits] != "64" || r.Summary.NOPM <= 0 {
			t.Errorf("run %d: %s %q, requested version %q, server %q on %s, bits %q, NOPM %.0f", r.ID, r.Status, r.Reason, v,
				r.Server.Version, r.Server.Target, r.Server.Settings[engine.SettingBits], r.Summary.NOPM)
		}
	}
	if rep := e.must("report", "versions", "--format", "text"); !strings.Contains(rep, "version=13") || !strings.Contains(rep, "version=17") {
		t.Errorf("report does not name its series by version:\n%s", rep)
	}
	code, out, errs := e.run("check", "study", "versions")
	if code != 0 || strings.Contains(out, "[error]") {
		t.Errorf("check study: exit %d\n%s%s", code, out, errs)
	}
	// The same runs with seed 002's 32-bit build planted in one version: check study refuses
	// them (exit 3).
	planted := filepath.Join(e.dir, "planted.db")
	store, err := results.Open(context.Background(), planted)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.SaveStudy(context.Background(), results.Study{Name: "versions", File: path, Source: src,
		Factors: []string{results.FactorVersion}}); err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		status := r.Status
		r.ID, r.UID = 0, ""
		if r.Params.Options[results.FactorVersion] == "13" {
			r.Server.Settings[engine.SettingBits], r.Server.Settings[engine.SettingArch] = "32", "i686"
		}
		if _, err := store.Begin(context.Background(), &r); err != nil {
			t.Fatal(err)
		}
		r.Status = status
		if err := store.Finish(context.Background(), &r); err != nil {
			t.Fatal(err)
		}
	}
	store.Close()
	code, out, _ = e.run("--results", planted, "check", "study", "versions")
	if code != cli.ExitCheckFailed || !strings.Contains(out, "[error] mixed-build") {
		t.Errorf("check study of the planted runs: exit %d\n%s", code, out)
	}
	// The servers are the study's, one per version, stopped at its end.
	if list := e.must("server", "list"); !regexp.MustCompile(`versions-13\s+postgres\s+stopped.*version 13`).MatchString(list) {
		t.Errorf("server list:\n%s", list)
	}
	e.fails(2, []string{"versions-13", "runs version 13, not version 17"}, "server", "start", "postgres", "--name", "versions-13", "--version", "17")
}

// TestFirebirdFromInstallHome lays out a copy of the system's Firebird 3.0 as a standalone
// home, as Firebird's own Linux tarballs unpack (bin/firebird, bin/isql, bin/gfix,
// bin/fbsvcmgr, lib/, plugins/, intl/, UDF/, firebird.msg, plugins.conf), which is how a
// user brings Firebird 4 or 5, and runs a managed server from it with --install.
func TestFirebirdFromInstallHome(t *testing.T) {
	fbtest.Dir(t) // skips or fails, as the suite asks, without Firebird
	sys, err := firebird.FindBinaries("")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t)
	home := filepath.Join(e.dir, "firebird3")
	copyFile(t, sys.Server, filepath.Join(home, "bin", "firebird"))
	copyFile(t, sys.ISQL, filepath.Join(home, "bin", "isql"))
	copyFile(t, sys.GFix, filepath.Join(home, "bin", "gfix"))
	if svc := filepath.Join(filepath.Dir(sys.GFix), "fbsvcmgr"); fileExists(svc) {
		copyFile(t, svc, filepath.Join(home, "bin", "fbsvcmgr"))
	}
	copyTree(t, sys.Root, home) // lib/, plugins/, intl/, UDF/, firebird.msg, *.conf
	out := e.must("server", "start", "firebird", "--name", "fbhome", "--install", home, "--set", "ServerMode=SuperClassic")
	if !strings.HasPrefix(out, "firebird://") {
		t.Errorf("server start printed %q, want a DSN", out)
	}
	if list := e.must("server", "list"); !strings.Contains(list, filepath.Join(home, "bin")) {
		t.Errorf("server list does not show the home's binaries:\n%s", list)
	}
	e.must("load", "simple", "ping", "--target", "fbhome")
	e.must("run", "simple", "ping", "--target", "fbhome", "--terminals", "1", "--duration", "1s", "--warmup", "0s")
	var runs []results.Run
	if err := json.Unmarshal([]byte(e.must("results", "export", "--format", "json")), &runs); err != nil || len(runs) != 1 {
		t.Fatalf("%d runs exported: %v", len(runs), err)
	}
	r := runs[0]
	if !strings.HasPrefix(r.Server.Version, "Firebird 3.0") || r.Server.Settings[engine.SettingBits] == "" ||
		r.Server.Settings["ServerMode"] != "SuperClassic" || r.Summary.TPS <= 0 {
		t.Errorf("run on the home's server: version %q, build %q-bit %q, ServerMode %q, TPS %.0f", r.Server.Version,
			r.Server.Settings[engine.SettingBits], r.Server.Settings[engine.SettingArch], r.Server.Settings["ServerMode"], r.Summary.TPS)
	}
	e.must("server", "stop", "fbhome")
	e.fails(2, []string{"no firebird, isql and gfix", "--install"}, "server", "start", "firebird", "--name", "fbnone", "--install", e.dir)
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// copyFile copies src (following links) to dst with src's mode.
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, st.Mode().Perm()|0o444)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// copyTree copies the files below src into dst, following links.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, en := range entries {
		s, d := filepath.Join(src, en.Name()), filepath.Join(dst, en.Name())
		st, err := os.Stat(s)
		if err != nil {
			continue // a dangling link
		}
		if st.IsDir() {
			copyTree(t, s, d)
		} else {
			copyFile(t, s, d)
		}
	}
}
