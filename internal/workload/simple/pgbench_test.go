package simple_test

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
	"github.com/dblat/dblat/internal/workload"
	"github.com/dblat/dblat/internal/workload/simple"
)

// TestPgbenchOnLoadedData runs pgbench's own select-only and TPC-B-like scripts on tables
// loaded by simple.Load (the comparison of issue 7 needs both tools on one data set), checks
// the balance invariant after pgbench's transactions, then reloads with `pgbench -i -s 2`
// and expects Loaded to notice that the tables are no longer dblat's.
func TestPgbenchOnLoadedData(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	tg := open(t, engines()[0], dsn)
	if err := simple.Load(ctx, tg, simple.LoadConfig{Workload: "tpcb", Scale: 1}); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(pgtest.Server(t).Binaries, "pgbench")
	for _, args := range [][]string{
		{"-n", "-S", "-M", "prepared", "-c", "2", "-t", "200"},
		{"-n", "-M", "prepared", "-c", "2", "-t", "100"},
	} {
		if out, err := exec.Command(bin, append(args, dsn)...).CombinedOutput(); err != nil {
			t.Fatalf("pgbench %v: %v\n%s", args, err, out)
		}
	}
	if n := queryInt(t, tg.DB, "SELECT COUNT(*) FROM pgbench_history"); n != 200 {
		t.Errorf("%d history rows after pgbench's 200 transactions", n)
	}
	sum := queryInt(t, tg.DB, "SELECT SUM(delta) FROM pgbench_history")
	for _, q := range []string{"SELECT SUM(abalance) FROM pgbench_accounts", "SELECT SUM(tbalance) FROM pgbench_tellers",
		"SELECT SUM(bbalance) FROM pgbench_branches"} {
		if s := queryInt(t, tg.DB, q); s != sum {
			t.Errorf("%s = %d, history deltas sum to %d", q, s, sum)
		}
	}
	if info, err := simple.Loaded(ctx, tg.DB, "tpcb"); err != nil || info.Scale != 1 {
		t.Errorf("Loaded after pgbench runs = %+v, %v", info, err)
	}
	if out, err := exec.Command(bin, "-i", "-q", "-s", "2", dsn).CombinedOutput(); err != nil {
		t.Fatalf("pgbench -i: %v\n%s", err, out)
	}
	if _, err := simple.Loaded(ctx, tg.DB, "select-only"); !errors.Is(err, workload.ErrNotLoaded) {
		t.Errorf("Loaded after pgbench -i -s 2 = %v, want ErrNotLoaded", err)
	}
}
