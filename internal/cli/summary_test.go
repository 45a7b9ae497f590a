package cli_test

import (
	"regexp"
	"strings"
	"testing"
)

// TestRunSummarySaysWhatItMeasured: a run with think times whose window is shorter than
// one New-Order cycle says so beside its NOPM; a workload without a scale (blob) does not
// claim "scale 0"; counts of one are singular.
func TestRunSummarySaysWhatItMeasured(t *testing.T) {
	t.Parallel()
	dsn := loaded(t, "tpcc", "--warehouses", "1")
	e := newEnv(t)
	// A window in which nothing completes is a failed run, which says why.
	code, _, errs := e.run("run", "tpcc", "--target", dsn, "--terminals", "2", "--duration", "2s", "--warmup", "0s", "--think")
	if code != 1 || !regexp.MustCompile(`no transaction completed in the 2s window: with think times one terminal completes a new_order about every 4\d s`).MatchString(errs) {
		t.Errorf("a think-time run with a 2 s window that completes nothing should fail and say why: exit %d\n%s", code, errs)
	}
	// One that completes some says its NOPM is no figure of the server.
	_, out, _ := e.run("run", "tpcc", "--target", dsn, "--terminals", "10", "--duration", "8s", "--warmup", "0s", "--think")
	if !regexp.MustCompile(`note: with think times one terminal completes a new_order about every 4\d s .*this 8 s window is shorter than that`).MatchString(out) {
		t.Errorf("a think-time run with an 8 s window should say it is shorter than one New-Order cycle:\n%s", out)
	}
	if out := e.must("run", "tpcc", "--target", dsn, "--terminals", "1", "--duration", "1s", "--warmup", "0s"); strings.Contains(out, "note: with think times") ||
		!strings.Contains(out, "1 warehouse, 1 terminal, 1 connection, window") {
		t.Errorf("a run without think times, one terminal on one warehouse:\n%s", out)
	}

	e.must("load", "simple", "blob", "--target", dsn, "--blob-rows", "10", "--blob-size", "100")
	code, out, errs = e.run("run", "simple", "blob", "--target", dsn, "--terminals", "2", "--duration", "1s", "--warmup", "0s")
	if code != 0 || strings.Contains(out+errs, "scale") || !strings.Contains(out, "  2 terminals, 2 connections, window") {
		t.Errorf("blob has no scale, and its summary should not name one: exit %d\n%s%s", code, out, errs)
	}
}
