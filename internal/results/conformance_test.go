package results_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/results/storetest"
)

func TestMain(m *testing.M) {
	storetest.Child() // a child process of the multi-process test does its writes and exits
	os.Exit(pgtest.Main(m))
}

// backends are the two kinds of store, each as a way to make a new, empty one.
var backends = []struct {
	name     string
	newStore storetest.NewStore
}{
	{"SQLite", func(t testing.TB) string { return filepath.Join(t.TempDir(), "results.db") }},
	{"PostgreSQL", pgtest.NewDatabase},
}

func TestConformance(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { storetest.Run(t, b.newStore) })
	}
}

// BenchmarkFinish measures Finish of a TPC-C-like run on each backend: 5 tx types with
// histograms and 300 samples already stored. Begin and AddSamples run outside the timer.
func BenchmarkFinish(b *testing.B) {
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			s := storetest.Open(b, be.newStore(b))
			ctx := context.Background()
			types := []string{"new_order", "payment", "order_status", "delivery", "stock_level"}
			proto := storetest.FullRun(b, "bench", "cell", time.Now())
			proto.Tx = nil
			for _, ty := range types {
				vals := make([]int64, 0, 1000)
				for i := range 1000 {
					vals = append(vals, int64(500+i*37%20000))
				}
				proto.Tx = append(proto.Tx, results.TxSummary{Type: ty, Committed: 1000, P50Us: 1000, P99Us: 5000,
					Hist: storetest.Hist(b, vals...), WaitHist: storetest.Hist(b, 1, 2, 3)})
			}
			batch := storetest.Samples(10, types...) // 50 rows
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				r := proto
				if _, err := s.Begin(ctx, &r); err != nil {
					b.Fatal(err)
				}
				for range 6 { // 300 samples
					if err := s.AddSamples(ctx, r.ID, batch); err != nil {
						b.Fatal(err)
					}
				}
				r.Status = results.StatusFinished
				b.StartTimer()
				if err := s.Finish(ctx, &r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAddSamples measures one interval's flush on each backend: 6 samples (all types
// and 5 types).
func BenchmarkAddSamples(b *testing.B) {
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			s := storetest.Open(b, be.newStore(b))
			ctx := context.Background()
			r := storetest.FullRun(b, "bench", "cell", time.Now())
			if _, err := s.Begin(ctx, &r); err != nil {
				b.Fatal(err)
			}
			batch := storetest.Samples(1, "", "new_order", "payment", "order_status", "delivery", "stock_level")
			b.ReportAllocs()
			for b.Loop() {
				if err := s.AddSamples(ctx, r.ID, batch); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
