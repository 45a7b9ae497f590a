package execution

import (
	"context"
	"testing"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/observe"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/wire"
	"github.com/dblat/dblat/internal/wire/wiretest"
)

// TestStoreObserved: an observation of pgbench's conversation, told apart by its first
// bytes, is stored as a finished run of workload observed on engine postgres, which reads
// back as the same observation.
func TestStoreObserved(t *testing.T) {
	c, err := wiretest.ReadFile("../engine/postgres/testdata/wire/pgbench-simple.cap")
	if err != nil {
		t.Fatal(err)
	}
	s := observe.NewSession(observe.SessionConfig{Config: observe.Config{Protocols: engine.WireProtocols(), Upstream: "db:5432"}})
	co := s.Observer().Open()
	for _, ch := range c {
		co.Data(ch.Dir == wire.Client, ch.Data, ch.At)
	}
	co.Close(c[len(c)-1].At + 1)
	snap, err := s.Stop()
	if err != nil {
		t.Fatal(err)
	}
	core, store := newCore(t)
	r, err := core.StoreObserved(context.Background(), snap.Observation)
	if err != nil {
		t.Fatal(err)
	}
	got, err := store.Get(context.Background(), r.ID, false)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != results.StatusFinished || got.Params.Workload != results.WorkloadObserved || got.Server.Engine != "postgres" ||
		got.Server.Target != "db:5432" || got.Client.Hostname == "" {
		t.Errorf("stored %s run of %q on %q at %q from %q", got.Status, got.Params.Workload, got.Server.Engine, got.Server.Target, got.Client.Hostname)
	}
	o, err := observe.FromRun(got)
	if err != nil {
		t.Fatal(err)
	}
	if o.Transactions == 0 || o.Transactions != snap.Observation.Transactions {
		t.Errorf("read back %d transactions, stored %d", o.Transactions, snap.Observation.Transactions)
	}
}
