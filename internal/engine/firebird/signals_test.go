package firebird_test

import (
	"context"
	"testing"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/engine/enginetest"
	"github.com/dblat/dblat/internal/engine/firebird"
	"github.com/dblat/dblat/internal/engine/firebird/fbtest"
)

// TestSignalReader: in every architecture the reader gives the page counters as counters
// and the statements' states as gauges, and a query adds page fetches.
func TestSignalReader(t *testing.T) {
	for _, mode := range []string{"Super", "Classic"} {
		t.Run(mode, func(t *testing.T) {
			db := open(t, fbtest.NewDatabase(t, mode), engine.OpenOptions{})
			ctx := context.Background()
			read, err := firebird.Engine{}.SignalReader(ctx, db)
			if err != nil {
				t.Fatal(err)
			}
			byName := func() map[string]engine.Signal { return enginetest.Signals(t, ctx, read) }
			first := byName()
			for name, counter := range map[string]bool{"page_reads": true, "page_writes": true, "page_fetches": true,
				"record_waits": true, "statements_running": false, "statements_stalled": false} {
				s, ok := first[name]
				if !ok {
					t.Errorf("no signal %s in %v", name, first)
					continue
				}
				if s.Counter != counter || s.Value < 0 {
					t.Errorf("%s: %+v, want counter %v and a value ≥ 0", name, s, counter)
				}
			}
			var n int
			if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM RDB$RELATIONS").Scan(&n); err != nil {
				t.Fatal(err)
			}
			if got := byName()["page_fetches"].Value; got <= first["page_fetches"].Value {
				t.Errorf("page_fetches %v after a query, %v before", got, first["page_fetches"].Value)
			}
		})
	}
}
