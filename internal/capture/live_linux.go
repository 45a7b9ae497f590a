//go:build linux

package capture

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"github.com/gopacket/gopacket/afpacket"
	"github.com/gopacket/gopacket/layers"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// Ring of the live capture: ringBlocks blocks of ringBlock bytes (64 MiB), each handed to
// the reader when full or after ringTimeout, whichever comes first. 64 MiB holds about
// half a second of a saturated 1 Gbit/s link; pollTimeout is how often the reader looks at
// its context while no packet comes.
const (
	ringBlock   = 1 << 20
	ringBlocks  = 64
	ringTimeout = 10 * time.Millisecond
	pollTimeout = 100 * time.Millisecond
)

// Live captures the TCP packets of f's ports on the network interface iface and shows
// them to f until ctx is done, then closes f (every connection ends). It opens an AF_PACKET
// socket (root or CAP_NET_RAW), cooked (no link layer), with a kernel filter that passes
// only TCP to or from f.Ports() and, on a loopback interface, each packet once (its copy
// as it leaves is dropped). The kernel's drop count (PACKET_STATISTICS) goes into every
// Observation f makes, and is returned.
func Live(ctx context.Context, iface string, f *Follower) (drops int64, err error) {
	ifi, err := net.InterfaceByName(iface)
	if err != nil {
		return 0, fmt.Errorf("--interface %s: %w", iface, err)
	}
	tp, err := afpacket.NewTPacket(afpacket.OptInterface(iface), afpacket.SocketDgram, afpacket.TPacketVersion3,
		afpacket.OptBlockSize(ringBlock), afpacket.OptNumBlocks(ringBlocks), afpacket.OptFrameSize(1<<16),
		afpacket.OptBlockTimeout(ringTimeout), afpacket.OptPollTimeout(pollTimeout))
	if err != nil {
		if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
			return 0, fmt.Errorf("capturing on %s needs root or the CAP_NET_RAW capability (sudo setcap cap_net_raw+ep dblat): %w", iface, err)
		}
		return 0, fmt.Errorf("capture on %s: %w", iface, err)
	}
	defer tp.Close()
	prog, err := bpf.Assemble(filter(f.Ports(), ifi.Flags&net.FlagLoopback != 0))
	if err != nil {
		return 0, fmt.Errorf("capture filter: %w", err)
	}
	if err := tp.SetBPF(prog); err != nil {
		return 0, fmt.Errorf("capture filter on %s: %w", iface, err)
	}
	var total atomic.Int64
	readDrops := func() {
		if _, v3, err := tp.SocketStats(); err == nil {
			total.Store(int64(v3.Drops()))
		}
	}
	f.setDrops(func() (int64, bool) { return total.Load(), true })
	defer func() {
		readDrops()
		f.Close()
		drops = total.Load()
	}()
	lastStats := time.Now()
	for ctx.Err() == nil {
		data, ci, err := tp.ZeroCopyReadPacketData()
		switch {
		case err == nil:
			f.Packet(data, ci, layers.LinkTypeRaw)
		case errors.Is(err, afpacket.ErrTimeout) || errors.Is(err, unix.EINTR):
		default:
			return 0, fmt.Errorf("capture on %s: %w", iface, err)
		}
		if time.Since(lastStats) >= time.Second {
			lastStats = time.Now()
			readDrops()
		}
	}
	return 0, nil
}

// filter is the kernel filter of a cooked AF_PACKET socket (offsets from the IP header):
// IPv4 or IPv6, TCP, not a later fragment, one of ports at either end; on a loopback
// interface, not the copy of a packet as it leaves (PACKET_OUTGOING), since it is seen
// again as it arrives.
func filter(ports []uint16, loopback bool) []bpf.Instruction {
	// Labels, resolved into skips at the end: a filter is far shorter than 254
	// instructions (Config's ports are a handful).
	const (
		accept uint8 = 255
		drop   uint8 = 254
	)
	var p []bpf.Instruction
	if loopback {
		p = append(p, bpf.LoadExtension{Num: bpf.ExtType},
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.PACKET_OUTGOING, SkipTrue: drop})
	}
	// The version nibble.
	p = append(p, bpf.LoadAbsolute{Off: 0, Size: 1}, bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: 0xf0})
	v6 := len(p)
	p = append(p, bpf.JumpIf{Cond: bpf.JumpEqual, Val: 0x60}) // SkipTrue set below
	p = append(p, bpf.JumpIf{Cond: bpf.JumpEqual, Val: 0x40, SkipFalse: drop},
		// IPv4: TCP, no fragment offset, X = the header's length.
		bpf.LoadAbsolute{Off: 9, Size: 1},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: 6, SkipFalse: drop},
		bpf.LoadAbsolute{Off: 6, Size: 2},
		bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: 0x1fff, SkipTrue: drop},
		bpf.LoadMemShift{Off: 0},
		bpf.LoadIndirect{Off: 0, Size: 2})
	p = appendPorts(p, ports, accept)
	p = append(p, bpf.LoadIndirect{Off: 2, Size: 2})
	p = appendPorts(p, ports, accept)
	p = append(p, bpf.RetConstant{Val: 0})
	// IPv6 without extension headers: TCP at 40.
	p[v6] = bpf.JumpIf{Cond: bpf.JumpEqual, Val: 0x60, SkipTrue: uint8(len(p) - v6 - 1)}
	p = append(p, bpf.LoadAbsolute{Off: 6, Size: 1},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: 6, SkipFalse: drop},
		bpf.LoadAbsolute{Off: 40, Size: 2})
	p = appendPorts(p, ports, accept)
	p = append(p, bpf.LoadAbsolute{Off: 42, Size: 2})
	p = appendPorts(p, ports, accept)
	dropAt := len(p)
	p = append(p, bpf.RetConstant{Val: 0})
	acceptAt := len(p)
	p = append(p, bpf.RetConstant{Val: 1 << 18})
	// Resolve the labels into skips.
	for i, in := range p {
		j, ok := in.(bpf.JumpIf)
		if !ok {
			continue
		}
		fix := func(s uint8) uint8 {
			switch s {
			case accept:
				return uint8(acceptAt - i - 1)
			case drop:
				return uint8(dropAt - i - 1)
			}
			return s
		}
		j.SkipTrue, j.SkipFalse = fix(j.SkipTrue), fix(j.SkipFalse)
		p[i] = j
	}
	return p
}

// appendPorts jumps to the label accept when the accumulator is one of ports.
func appendPorts(p []bpf.Instruction, ports []uint16, accept uint8) []bpf.Instruction {
	for _, port := range ports {
		p = append(p, bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(port), SkipTrue: accept})
	}
	return p
}
