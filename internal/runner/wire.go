package runner

import (
	"context"
	"net"

	"github.com/dblat/dblat/internal/latency"
)

// Meter reports a connection's cumulative wire counts (latency.MeteredConn is one). It must
// be safe to call while the connection is in use by another goroutine. The runner takes the
// difference before and after each transaction to attribute round trips and bytes to it.
type Meter interface {
	Counts() latency.Counts
}

// Slot receives the Meter of a connection dialled while a context carrying it is in use.
type Slot struct{ Meter Meter }

type slotKey struct{}

// WithSlot returns a context carrying an empty Slot. The runner opens each pooled connection
// with such a context; a dialer that meters its connections puts the meter in the slot.
func WithSlot(ctx context.Context) (context.Context, *Slot) {
	s := &Slot{}
	return context.WithValue(ctx, slotKey{}, s), s
}

// SlotFrom returns the Slot carried by ctx, or nil.
func SlotFrom(ctx context.Context) *Slot {
	s, _ := ctx.Value(slotKey{}).(*Slot)
	return s
}

// Metered is what a run's dialer does with each new connection: when ctx carries a Slot it
// wraps c in a latency.MeteredConn and puts its meter in the slot; otherwise it returns c.
func Metered(ctx context.Context, c net.Conn) net.Conn {
	slot := SlotFrom(ctx)
	if slot == nil {
		return c
	}
	mc := latency.MeterConn(c)
	slot.Meter = mc
	return mc
}
