package simple_test

import (
	"context"
	"testing"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/workload"
	"github.com/dblat/dblat/internal/workload/simple"
	"github.com/dblat/dblat/internal/workload/workloadtest"
)

// wantTrips are the round trips per transaction measured on each engine once a
// connection has its statements prepared (the first transaction on a connection costs one
// more per statement prepared). Blobs are testBlobSize (40,000) bytes, small ones 100.
//
//   - PostgreSQL: one per statement, BEGIN and COMMIT included (pgbench's counts); blobs
//     travel inline with their rows, in every protocol.
//   - MariaDB: as PostgreSQL, plus one for SET TRANSACTION ISOLATION LEVEL before every
//     read-write transaction (LockingIsolation is not the server's default).
//   - Firebird: BEGIN and COMMIT around single statements (TxOnly), two per SELECT (execute,
//     fetch) and per UPDATE/INSERT (execute, row count), and per blob read an open plus one
//     per 32,000-byte segment: the cost seed 000 warns about.
var wantTrips = map[string]map[string]int64{
	"postgres": {
		"select-only/prepared": 1, "tpcb/prepared": 7, "ping/prepared": 1,
		"blob-read-1/prepared": 1, "blob-read-5/prepared": 1, "blob-write-5/prepared": 7,
		"select-only/simple": 1, "tpcb/simple": 7, "ping/simple": 1,
		"blob-read-1/simple": 1, "blob-read-5/simple": 1, "blob-write-5/simple": 7,
		"select-only/extended": 1, "tpcb/extended": 7, "ping/extended": 1,
		"blob-read-1/extended": 1, "blob-read-5/extended": 1, "blob-write-5/extended": 7,
		"small-blob-read-1/prepared": 1, "small-blob-read-5/prepared": 1, "small-blob-write-5/prepared": 7,
	},
	"mariadb": {
		"select-only/prepared": 1, "tpcb/prepared": 8, "ping/prepared": 1,
		"blob-read-1/prepared": 1, "blob-read-5/prepared": 1, "blob-write-5/prepared": 8,
		"small-blob-read-1/prepared": 1, "small-blob-read-5/prepared": 1, "small-blob-write-5/prepared": 8,
	},
	"firebird": {
		"select-only/prepared": 4, "tpcb/prepared": 12, "ping/prepared": 4,
		"blob-read-1/prepared": 7, "blob-read-5/prepared": 19, "blob-write-5/prepared": 32,
		"small-blob-read-1/prepared": 6, "small-blob-read-5/prepared": 14, "small-blob-write-5/prepared": 12,
	},
}

// testRoundTrips measures the round trips of each workload (and, where the engine has
// several, each protocol) on a fresh metered connection. It ends by reloading the blob
// data with 100-byte blobs, to show what a blob costs whatever its size.
func testRoundTrips(t *testing.T, tg workload.Target) {
	ctx := context.Background()
	protocols := []string{"prepared"}
	if engine.Caps(tg.Engine).QueryProtocols != nil {
		protocols = simple.Protocols
	}
	for _, p := range protocols {
		measureTrips(t, tg, "select-only/"+p, simple.Config{Workload: "select-only", Protocol: p})
		measureTrips(t, tg, "tpcb/"+p, simple.Config{Workload: "tpcb", Protocol: p})
		measureTrips(t, tg, "ping/"+p, simple.Config{Workload: "ping", Protocol: p})
		measureTrips(t, tg, "blob-read-1/"+p, simple.Config{Workload: "blob", Protocol: p, BlobsPerTx: 1})
		measureTrips(t, tg, "blob-read-5/"+p, simple.Config{Workload: "blob", Protocol: p, BlobsPerTx: 5})
		measureTrips(t, tg, "blob-write-5/"+p, simple.Config{Workload: "blob", Protocol: p, BlobsPerTx: 5, BlobWrite: true})
	}
	if err := simple.Load(ctx, tg, simple.LoadConfig{Workload: "blob", BlobSize: 100, BlobRows: 10}); err != nil {
		t.Fatal(err)
	}
	measureTrips(t, tg, "small-blob-read-1/prepared", simple.Config{Workload: "blob", BlobsPerTx: 1})
	measureTrips(t, tg, "small-blob-read-5/prepared", simple.Config{Workload: "blob", BlobsPerTx: 5})
	measureTrips(t, tg, "small-blob-write-5/prepared", simple.Config{Workload: "blob", BlobsPerTx: 5, BlobWrite: true})
}

// slack is how many round trips above the minimum a transaction of cfg may cost on an
// engine. The Firebird driver sends some packets deferred, without waiting for their reply
// (op_close_blob, op_free_statement: engines.md §1.7); when that reply reaches the client
// before its next request goes out, the meter sees a round trip of its own. On loopback
// that race goes either way (measured over 200 transactions: reading five 40 KB blobs cost
// 19 round trips in half of them, 20 or 21 in the rest; five 100-byte blobs 14 to 18), so
// each deferred packet (two per statement, one per blob) may add one. The minimum is the
// cost in latency, and it is what wantTrips pins.
func slack(engine string, cfg simple.Config) int64 {
	if engine != "firebird" {
		return 0
	}
	return 2 + int64(cfg.BlobsPerTx)
}

// measureTrips runs twelve transactions of cfg on a new metered connection and checks that
// the last ten cost the same round trips (up to the engine's slack), and at least as few as
// wantTrips says.
func measureTrips(t *testing.T, tg workload.Target, name string, cfg simple.Config) {
	t.Helper()
	ctx := context.Background()
	w, err := simple.New(tg, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Prepare(ctx, tg.DB); err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	conn, meter := workloadtest.MeteredConn(t, tg.DB)
	defer conn.Close()
	term := w.NewTerminal(0)
	var first, lo, hi, down int64
	for i := range 12 {
		before := meter.Counts()
		term.Next()
		if err := term.Run(ctx, conn); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		d := meter.Counts().Sub(before)
		switch {
		case i == 0:
			first = d.RoundTrips
		case i == 2:
			lo, hi, down = d.RoundTrips, d.RoundTrips, d.BytesDown
		case i > 2:
			lo, hi = min(lo, d.RoundTrips), max(hi, d.RoundTrips)
		}
	}
	t.Logf("%-28s %3d..%-3d round trips per transaction (first on a connection %d), %d bytes down", name, lo, hi, first, down)
	if hi-lo > slack(tg.Engine.Name(), cfg) {
		t.Errorf("%s: %d to %d round trips per transaction: not stable", name, lo, hi)
	}
	if want := wantTrips[tg.Engine.Name()][name]; want != 0 && lo != want {
		t.Errorf("%s: %d round trips per transaction, want %d", name, lo, want)
	}
}
