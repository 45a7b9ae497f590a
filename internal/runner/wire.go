package runner

import "github.com/dblat/dblat/internal/latency"

// Meter reports a connection's cumulative wire counts (latency.MeteredConn is one). It must
// be safe to call while the connection is in use by another goroutine. The runner takes the
// difference before and after each transaction to attribute round trips and bytes to it.
type Meter interface {
	Counts() latency.Counts
}
