package firebird_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/engine/firebird"
	"github.com/dblat/dblat/internal/engine/firebird/fbtest"
	"github.com/dblat/dblat/internal/option"
	"github.com/dblat/dblat/internal/runner"
	"github.com/dblat/dblat/internal/spec"
	"github.com/dblat/dblat/internal/workload"
	"github.com/dblat/dblat/internal/workload/tpcc"
)

// envOr returns the environment variable name, or def when it is not set.
func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// txCell is one cell of BenchmarkTxParams.
type txCell struct {
	arch           string
	terminals      int
	lockResolution string
	recordVersion  string
}

func (c txCell) String() string {
	return fmt.Sprintf("%s/terminals=%d/%s,%s", c.arch, c.terminals, c.lockResolution, c.recordVersion)
}

// txOutcome is what one run of a cell measured.
type txOutcome struct {
	nopm      float64
	conflicts float64 // retryable errors per 100 attempted transactions
	p90NewOrd float64 // ms
	overrun   time.Duration
}

// BenchmarkTxParams measures what the transaction parameters do to TPC-C on Firebird: for
// each combination the driver can start (wait/rec_version, the driver's default;
// nowait/rec_version; wait/no_rec_version, BenchmarkSQL's), at 10 and 50 terminals on 10
// warehouses, client mode, it reports NOPM, the share of attempted transactions that failed
// on a conflict (update conflict, lock conflict, deadlock: engine.ClassRetryable; no
// retries) and New-Order's p90 response time. Every run starts from the pristine copy of
// one load (RestorePristine), and the cells of a round run one after another, so rounds
// put them side by side; the metrics are medians over the rounds. Architectures, rounds,
// warm-up and window come from DBLAT_TXPARAMS_ARCHS (default Super), DBLAT_TXPARAMS_ROUNDS
// (1), DBLAT_TXPARAMS_WARMUP (5s) and DBLAT_TXPARAMS_WINDOW (30s): about 6 minutes per
// architecture and round, after a load of 1 to 2 minutes. The package documentation's
// figures come from, run alone (make bench FIGURE=firebird-txparams, and
// FIGURE=firebird-txparams-classic for its Classic column, one round):
//
//	DBLAT_TXPARAMS_ARCHS=Super,SuperClassic DBLAT_TXPARAMS_ROUNDS=2 \
//	go test ./internal/engine/firebird -run '^$' -bench TxParams -benchtime 1x -timeout 2h
//	DBLAT_TXPARAMS_ARCHS=Classic \
//	go test ./internal/engine/firebird -run '^$' -bench TxParams -benchtime 1x -timeout 1h
func BenchmarkTxParams(b *testing.B) {
	ctx := context.Background()
	archs := strings.Split(envOr("DBLAT_TXPARAMS_ARCHS", "Super"), ",")
	rounds, _ := strconv.Atoi(envOr("DBLAT_TXPARAMS_ROUNDS", "1"))
	warmup, err1 := time.ParseDuration(envOr("DBLAT_TXPARAMS_WARMUP", "5s"))
	window, err2 := time.ParseDuration(envOr("DBLAT_TXPARAMS_WINDOW", "30s"))
	if err1 != nil || err2 != nil || rounds < 1 {
		b.Fatalf("bad DBLAT_TXPARAMS_* settings: %v %v rounds=%d", err1, err2, rounds)
	}
	params := [][2]string{{"wait", "rec_version"}, {"nowait", "rec_version"}, {"wait", "no_rec_version"}}
	e := firebird.Engine{}
	var cells []txCell
	got := map[txCell][]txOutcome{}
	for _, arch := range archs {
		dsn := fbtest.NewDatabase(b, arch)
		db, err := e.Open(ctx, dsn, engine.OpenOptions{})
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if err := tpcc.Load(ctx, workload.Target{Engine: e, DB: db}, tpcc.LoadConfig{Warehouses: 10, Seed: 1}); err != nil {
			b.Fatal(err)
		}
		db.Close()
		b.Logf("%s: loaded 10 warehouses in %v", arch, time.Since(start).Round(time.Second))
		if err := e.SavePristine(ctx, dsn); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { os.Remove(dbPath(b, dsn) + ".pristine") })
		for round := 0; round < rounds; round++ {
			for _, terminals := range []int{10, 50} {
				for _, p := range params {
					c := txCell{arch, terminals, p[0], p[1]}
					if round == 0 {
						cells = append(cells, c)
					}
					o := runTxCell(b, dsn, c, warmup, window)
					b.Logf("round %d %v: NOPM %.0f, conflicts %.1f %%, New-Order p90 %.1f ms, ended %v after the window",
						round+1, c, o.nopm, o.conflicts, o.p90NewOrd, o.overrun.Round(time.Millisecond))
					got[c] = append(got[c], o)
				}
			}
		}
	}
	median := func(os []txOutcome, f func(txOutcome) float64) float64 {
		v := make([]float64, len(os))
		for i, o := range os {
			v[i] = f(o)
		}
		slices.Sort(v)
		if len(v)%2 == 1 {
			return v[len(v)/2]
		}
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	var table strings.Builder
	fmt.Fprintf(&table, "%-13s %9s %-22s %8s %10s %12s\n", "architecture", "terminals", "parameters", "NOPM", "conflicts", "NO p90 ms")
	for _, c := range cells {
		os := got[c]
		nopm := median(os, func(o txOutcome) float64 { return o.nopm })
		conflicts := median(os, func(o txOutcome) float64 { return o.conflicts })
		p90 := median(os, func(o txOutcome) float64 { return o.p90NewOrd })
		fmt.Fprintf(&table, "%-13s %9d %-22s %8.0f %9.1f%% %12.1f\n", c.arch, c.terminals, c.lockResolution+","+c.recordVersion, nopm, conflicts, p90)
		b.Run(c.String(), func(b *testing.B) {
			for b.Loop() {
			}
			b.ReportMetric(nopm, "NOPM")
			b.ReportMetric(conflicts, "conflicts-%")
			b.ReportMetric(p90, "new-order-p90-ms")
		})
	}
	b.Logf("10 warehouses, client mode, %v warm-up, %v window, medians of %d rounds:\n%s", warmup, window, rounds, table.String())
}

// runTxCell restores the pristine database and runs one cell on it.
func runTxCell(b *testing.B, dsn string, c txCell, warmup, window time.Duration) txOutcome {
	ctx := context.Background()
	e := firebird.Engine{}
	if err := e.RestorePristine(ctx, dsn); err != nil {
		b.Fatal(err)
	}
	runDSN, err := e.RunDSN(dsn, option.Values{firebird.OptionLockResolution: c.lockResolution, firebird.OptionRecordVersion: c.recordVersion})
	if err != nil {
		b.Fatal(err)
	}
	db, err := e.Open(ctx, runDSN, engine.OpenOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	tg := workload.Target{Engine: e, DB: db}
	w, err := tpcc.New(tg, tpcc.Config{Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	session, err := runner.Open(ctx, tg, w, runner.Config{Drive: spec.Drive{Terminals: c.terminals, Warmup: warmup, Duration: window}})
	if err != nil {
		b.Fatal(err)
	}
	defer session.Close()
	connected := time.Now()
	res, err := session.Run(ctx, runner.Hooks{})
	if err != nil {
		b.Fatal(err)
	}
	o := txOutcome{nopm: res.Summary.NOPM, overrun: time.Since(connected) - warmup - window}
	var failed int64
	for _, n := range res.Summary.Errors {
		failed += n
	}
	if attempted := res.Summary.Committed + res.Summary.Rollbacks + failed; attempted > 0 {
		o.conflicts = 100 * float64(res.Summary.Errors[engine.ClassRetryable.String()]) / float64(attempted)
	}
	for _, tx := range res.Tx {
		if tx.Type == "new_order" {
			o.p90NewOrd = float64(tx.P90Us) / 1000
		}
	}
	return o
}
