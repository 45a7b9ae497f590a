//go:build !linux

package capture

import (
	"context"
	"errors"
)

// Live captures on a network interface: Linux only (AF_PACKET).
func Live(ctx context.Context, iface string, f *Follower) (int64, error) {
	f.Close()
	return 0, errors.New("--interface: live capture needs Linux (AF_PACKET); capture with tcpdump -w and read it with --pcap")
}
