package execution

import (
	"context"
	"time"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/observe"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/sysinfo"
)

// storeObservedTimeout bounds the two writes that store an observation: it is stored when
// the observing proxy stops, and a store that does not answer must not keep it running.
const storeObservedTimeout = 30 * time.Second

// StoreObserved stores what an observation session saw (observe.Session) as a finished run
// of workload results.WorkloadObserved (observe.Observation.Run), described with this
// client, and returns the run with its ID. The run's engine is the one the observation
// names, else the engine whose wire protocol it saw most (engine.WireProtocol), else the
// protocol's own name. It stores an observation without transactions too; whether one is
// worth storing is the caller's question.
func (c *Core) StoreObserved(ctx context.Context, o *observe.Observation) (*results.Run, error) {
	r, err := o.Run(engineOfProtocol(o.Engine, o.Protocol), observe.RunSourceOf(o.Source))
	if err != nil {
		return nil, err
	}
	r.Client = sysinfo.Client()
	ctx, cancel := context.WithTimeout(ctx, storeObservedTimeout)
	defer cancel()
	status := r.Status // Begin stores a run as running
	if _, err := c.Store.Begin(ctx, r); err != nil {
		return nil, err
	}
	r.Status = status
	if err := c.Store.Finish(ctx, r); err != nil {
		return nil, err
	}
	return r, nil
}

// engineOfProtocol names the engine whose wire protocol is called proto ("PostgreSQL" is
// postgres's), or given when the observation was told the engine; "" when none is.
func engineOfProtocol(given, proto string) string {
	if given != "" || proto == "" {
		return given
	}
	for _, n := range engine.Names() {
		e, err := engine.Lookup(n)
		if err != nil {
			continue
		}
		if w := engine.Caps(e).WireProtocol; w != nil && w.WireProtocol().Name() == proto {
			return n
		}
	}
	return ""
}
