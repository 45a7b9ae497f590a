package mariadbtest

import (
	"context"
	_ "embed"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/engine/mariadb"
)

// stmtClientSource is a C program on libmariadb (MariaDB Connector/C) that runs
// transactions of prepared SELECTs; its header comment says how to call it.
//
//go:embed testdata/stmtclient.c
var stmtClientSource []byte

// StmtClient compiles the C client in testdata/stmtclient.c with gcc against Debian's
// libmariadb-dev (found through mariadb_config) and returns the program's path, in a
// directory removed when t ends. It skips t when gcc or libmariadb-dev is missing, or
// fails it under DBLAT_REQUIRE_SERVERS=1.
func StmtClient(t testing.TB) string {
	t.Helper()
	for _, tool := range []string{"gcc", "mariadb_config"} {
		if _, err := exec.LookPath(tool); err != nil {
			msg := tool + " is not installed (the C client needs gcc and libmariadb-dev: scripts/setup.sh installs them)"
			if Required() {
				t.Fatal(msg)
			}
			t.Skip("skipping: " + msg)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	flags, err := exec.CommandContext(ctx, "mariadb_config", "--cflags", "--libs").Output()
	if err != nil {
		t.Fatalf("mariadb_config: %v", err)
	}
	dir := t.TempDir()
	src, bin := filepath.Join(dir, "stmtclient.c"), filepath.Join(dir, "stmtclient")
	if err := os.WriteFile(src, stmtClientSource, 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"-O1", "-Wall", "-o", bin, src}, strings.Fields(string(flags))...)
	if out, err := exec.CommandContext(ctx, "gcc", append(args, "-lpthread")...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return bin
}

var stmtClientCount = regexp.MustCompile(`(?m)^transactions: (\d+)$`)

// RunStmtClient runs the client built by StmtClient against host:port and database db
// with args (see testdata/stmtclient.c), logged in with the shared server's option file,
// and returns the transactions it committed.
func RunStmtClient(t testing.TB, bin, host string, port int, db string, args ...string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	all := append([]string{"-F", mariadb.OptionFile(Server(t)), "-h", host, "-P", strconv.Itoa(port), "-u", "dblat", "-D", db}, args...)
	out, err := exec.CommandContext(ctx, bin, all...).CombinedOutput()
	if err != nil {
		t.Fatalf("stmtclient %s: %v\n%s", strings.Join(all, " "), err, out)
	}
	m := stmtClientCount.FindSubmatch(out)
	if m == nil {
		return 0
	}
	n, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return n
}
