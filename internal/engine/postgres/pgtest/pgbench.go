package pgtest

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

var processedRe = regexp.MustCompile(`number of transactions actually processed: (\d+)`)

// Pgbench runs pgbench with args against the test server (its credentials from ClientEnv)
// and returns how many transactions it processed; pgbench -i processes none. A pgbench
// that fails, or a run that reports no count, fails the test.
func Pgbench(t testing.TB, args ...string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "pgbench", args...)
	cmd.Env = append(append(os.Environ(), "PGCONNECT_TIMEOUT=10", "PGOPTIONS="), ClientEnv(t)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("pgbench %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	m := processedRe.FindSubmatch(out)
	if m == nil {
		if len(args) > 0 && args[0] == "-i" {
			return 0
		}
		t.Fatalf("pgbench said no count:\n%s", out)
	}
	n, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return n
}
