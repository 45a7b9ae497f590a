package latency

import (
	"context"
	"net"
)

// MeterSlot receives the MeteredConn a dialer makes while a context carrying the slot is in
// use: how a database driver's dial, which returns only a database connection, hands the
// meter of the network connection under it back to whoever asked for it (the runner, for
// each pooled connection; tests that count a workload's round trips).
type MeterSlot struct{ Conn *MeteredConn }

type meterSlotKey struct{}

// WithMeterSlot returns a context carrying an empty MeterSlot.
func WithMeterSlot(ctx context.Context) (context.Context, *MeterSlot) {
	s := &MeterSlot{}
	return context.WithValue(ctx, meterSlotKey{}, s), s
}

// MeterInto is what a metering dialer does with each new connection: when ctx carries a
// MeterSlot it wraps c in a MeteredConn and puts it in the slot; otherwise it returns c.
func MeterInto(ctx context.Context, c net.Conn) net.Conn {
	s, _ := ctx.Value(meterSlotKey{}).(*MeterSlot)
	if s == nil {
		return c
	}
	s.Conn = MeterConn(c)
	return s.Conn
}
