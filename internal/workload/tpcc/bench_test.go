package tpcc

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/engine/postgres"
	"github.com/dblat/dblat/internal/workload"
)

// BenchmarkLoad4Warehouses loads 4 warehouses per iteration (drop, create, load, keys,
// ANALYZE) into one database on the shared test server and reports warehouses per minute.
// The reference is go-tpc's loader: about 11 s for 4 warehouses with 4 threads on the
// 2-core development machine, i.e. ~22 warehouses/min.
func BenchmarkLoad4Warehouses(b *testing.B) {
	const w = 4
	tg := newTarget(b, postgres.Engine{})
	ctx := context.Background()
	var calls int
	var elapsed time.Duration
	for b.Loop() {
		start := time.Now()
		err := Load(ctx, tg, LoadConfig{Warehouses: w, Seed: 1, Progress: func(done, total int64) { calls++ }})
		elapsed += time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(w*b.N)/elapsed.Minutes(), "warehouses/min")
	b.ReportMetric(elapsed.Seconds()/float64(b.N), "s/load")
	if calls == 0 {
		b.Error("no progress reported")
	}
}

// benchmarkTerminal runs one terminal's transactions back to back (no keying or think
// time) on one warehouse and reports transactions per second.
func benchmarkTerminal(b *testing.B, mix Mix) {
	tg := newTarget(b, postgres.Engine{})
	ctx := context.Background()
	if err := Load(ctx, tg, LoadConfig{Warehouses: 1, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	w, err := New(tg, Config{Seed: 1, Mix: mix})
	if err != nil {
		b.Fatal(err)
	}
	if err := w.Prepare(ctx, tg.DB); err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	term := w.NewTerminal(0)
	start := time.Now()
	for b.Loop() {
		typ, _ := term.Next()
		c, err := tg.DB.Conn(ctx)
		if err != nil {
			b.Fatal(err)
		}
		err = term.Run(ctx, c)
		c.Close()
		if err != nil && !errors.Is(err, workload.ErrExpectedRollback) {
			b.Fatalf("%s: %v", txNames[typ], err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "tx/s")
}

// BenchmarkTerminal is one terminal running the default 45/43/4/4/4 mix.
func BenchmarkTerminal(b *testing.B) { benchmarkTerminal(b, DefaultMix) }

// BenchmarkNewOrder is one terminal running New-Orders only.
func BenchmarkNewOrder(b *testing.B) { benchmarkTerminal(b, Mix{NewOrder: 1}) }

// BenchmarkPayment is one terminal running Payments only.
func BenchmarkPayment(b *testing.B) { benchmarkTerminal(b, Mix{Payment: 1}) }
