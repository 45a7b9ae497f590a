package observe_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/observe"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/results/storetest"
	"github.com/dblat/dblat/internal/workload/tpcc"
)

// TestRoundTripEvidence: the runs of a workload that declares round-trip modes (TPC-C),
// alike but for their mode, are quoted, the newest of each mode, in the declaration's
// order, with their metric and the metric transaction's round trips; without them, or
// without a store, the declaration's hint says how to measure them.
func TestRoundTripEvidence(t *testing.T) {
	ctx := context.Background()
	hint := tpcc.Definition.RoundTripModes.Hint
	if got := observe.RoundTripEvidence(ctx, nil); len(got) != 1 || got[0] != hint {
		t.Fatalf("without a store: %q", got)
	}
	store, err := results.Open(ctx, filepath.Join(t.TempDir(), "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if got := observe.RoundTripEvidence(ctx, store); len(got) != 1 || got[0] != hint {
		t.Fatalf("an empty store: %q", got)
	}
	t0 := time.Now().Add(-time.Hour)
	add := func(mode string, nopm, roundTrips float64, terminals int) int64 {
		r := storetest.FullRun(t, "", "", t0)
		t0 = t0.Add(time.Minute)
		r.Params.Options = map[string]string{tpcc.OptionMode: mode}
		r.Params.Terminals, r.Params.RTT = terminals, 20*time.Millisecond
		r.Summary.NOPM, r.Tx[0].RoundTrips = nopm, roundTrips
		id, err := store.Begin(ctx, &r)
		if err != nil {
			t.Fatal(err)
		}
		r.ID, r.Status, r.Ended = id, results.StatusFinished, r.Started.Add(time.Second)
		if err := store.Finish(ctx, &r); err != nil {
			t.Fatal(err)
		}
		return id
	}
	add(tpcc.ModeProcedure, 900, 1, 10) // older: the newer procedure run is quoted
	client := add(tpcc.ModeClient, 100, 37, 10)
	proc := add(tpcc.ModeProcedure, 1000, 1, 10)
	add(tpcc.ModeBatched, 500, 2, 20) // alone at 20 terminals: nothing to compare with
	got := observe.RoundTripEvidence(ctx, store)
	want := fmt.Sprintf("stored TPC-C runs on postgres at 20ms added RTT, 10 terminals: client 100 NOPM (run %d, New-Order in 37 round trips); procedure 1000 NOPM (run %d, New-Order in 1 round trips)", client, proc)
	if len(got) != 1 || got[0] != want {
		t.Fatalf("evidence:\n%s\nwant\n%s", strings.Join(got, "\n"), want)
	}
}
