package capture

import (
	"encoding/binary"
	"net/netip"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/reassembly"

	"github.com/dblat/dblat/internal/latency"
	"github.com/dblat/dblat/internal/observe"
	"github.com/dblat/dblat/internal/wire"
)

// factory makes a stream per TCP connection (reassembly.StreamFactory).
type factory struct{ f *Follower }

// New implements reassembly.StreamFactory; it runs under Follower.mu, within Packet.
func (fa *factory) New(netFlow, tcpFlow gopacket.Flow, t *layers.TCP, ac reassembly.AssemblerContext) reassembly.Stream {
	f := fa.f
	src, _ := netip.AddrFromSlice(netFlow.Src().Raw())
	dst, _ := netip.AddrFromSlice(netFlow.Dst().Raw())
	a := netip.AddrPortFrom(src.Unmap(), uint16(t.SrcPort))
	b := netip.AddrPortFrom(dst.Unmap(), uint16(t.DstPort))
	srv := f.serverOf(a, b, t)
	s := &stream{f: f, srv: f.server(srv), firstFromClient: srv == b}
	if s.srv == nil {
		return s // not followed: every packet is refused
	}
	s.srv.stats.Packets-- // Accept counts every packet, this one included
	return s
}

// Following states of a stream.
const (
	// following: its bytes go to the Observer's ConnObserver.
	following = iota
	// lost: waiting for a point to resume following (a connection already open when the
	// capture started, or after a gap).
	lost
	// given up: no protocol can resume it; its traffic is counted only.
	givenUp
)

// Reasons a connection is not followed, one line each in the Observation.
const (
	reasonMidStream = "already open when the capture started, and no point to follow it from came (PostgreSQL " +
		"is followed from a ReadyForQuery outside a transaction, MySQL/MariaDB from an OK packet outside one, " +
		"Firebird not at all): start the capture before the application connects"
	reasonGap = "the capture lost some of its bytes (dropped packets, a short snap length: capture with -s 0 " +
		"and a larger buffer, -B), and its protocol cannot be followed again from the middle"
)

// stream follows one TCP connection (reassembly.Stream). Its methods run under
// Follower.mu.
type stream struct {
	f               *Follower
	srv             *server
	firstFromClient bool // reassembly's ClientToServer direction is the client's

	state    int
	co       latency.ConnObserver
	proto    string // the protocol followed, once known
	shown    bool   // the Observer has been shown the connection
	midStart bool   // no SYN was seen
	midCount bool   // midStart, and counted in Capture.MidStream (it carried bytes)
	reason   string // why the connection is not followed (when state is not following)
	scanners []scanner
	lostAt   int64 // when following stopped: older bytes (flushed late) are ignored

	// Per direction (wire.Client, wire.Server): whether its first packet was seen, the
	// sequence number after the last byte reassembly delivered or skipped (it hands them
	// over in order), whether a FIN was seen, and up to where bytes were counted missing
	// from the other side's acknowledgements.
	started   [2]bool
	next      [2]uint32
	fin       [2]bool
	counted   [2]bool
	countedTo [2]uint32
	// Bytes of the connection while it is not followed, for Observation.Unfollowed.
	up, down, rts int64
	lastDir       int8

	// RTT samples: the handshake's times (ns), and the TCP timestamps still to be echoed.
	synAt, synAckAt int64
	handshake       bool
	ts              [2]tsWatch
	tsMin           [2]int64
}

type scanner struct {
	p wire.Resumer
	s wire.ResumeScanner
}

// tsWatch remembers when a side first sent a few recent TCP timestamp values, to time the
// other side's echo of each.
type tsWatch struct {
	val [4]uint32
	at  [4]int64
	n   int
}

func (w *tsWatch) sent(v uint32, at int64) {
	for i := range min(w.n, len(w.val)) {
		if w.val[i] == v {
			return
		}
	}
	i := w.n % len(w.val)
	w.val[i], w.at[i] = v, at
	w.n++
}

// echoed returns how long ago v was first sent, and forgets it.
func (w *tsWatch) echoed(v uint32, at int64) (int64, bool) {
	for i := range min(w.n, len(w.val)) {
		if w.val[i] == v && w.at[i] != 0 {
			d := at - w.at[i]
			w.at[i] = 0
			return d, d >= 0
		}
	}
	return 0, false
}

// dirOf maps reassembly's direction to the side that sent.
func (s *stream) dirOf(d reassembly.TCPFlowDirection) wire.Direction {
	if (d == reassembly.TCPDirClientToServer) == s.firstFromClient {
		return wire.Client
	}
	return wire.Server
}

// Accept implements reassembly.Stream: every packet of the connection, before
// reassembly. It counts it, times the handshake and the TCP timestamps, starts a direction
// whose first bytes were not seen, and finds bytes the capture lost from what the other
// side acknowledges.
func (s *stream) Accept(t *layers.TCP, ci gopacket.CaptureInfo, dir reassembly.TCPFlowDirection, nextSeq reassembly.Sequence, start *bool, _ reassembly.AssemblerContext) bool {
	if s.srv == nil {
		return false
	}
	at := ci.Timestamp.UnixNano()
	d := s.dirOf(dir)
	st := &s.srv.stats
	st.Packets++
	st.Bytes += int64(ci.CaptureLength)
	n := len(t.Payload)
	if t.FIN {
		s.fin[d] = true
	}
	switch {
	case t.SYN && !t.ACK && d == wire.Client:
		s.synAt = at
	case t.SYN && t.ACK && d == wire.Server && s.synAt != 0:
		s.synAckAt = at
	case !t.SYN && t.ACK && d == wire.Client && s.synAckAt != 0 && !s.handshake:
		s.handshake = true
		s.srv.handshakes.add(rttSample{server: s.synAckAt - s.synAt, client: at - s.synAckAt})
	}
	s.timestamps(t, d, at)
	if !s.started[d] {
		s.started[d] = true
		s.next[d] = t.Seq
		if t.SYN {
			s.next[d]++
		} else {
			*start = true // the connection's start was not seen: take the stream from here
			if !s.midStart && s.synAt == 0 {
				s.midStart = true
				s.lose(reasonMidStream, at, false)
			}
		}
	} else if n > 0 && nextSeq >= 0 {
		switch diff := int32(t.Seq - uint32(nextSeq)); {
		case diff < 0:
			st.Retransmitted++
		case diff > 0:
			st.OutOfOrder++
			if s.counted[d] && int32(s.countedTo[d]-t.Seq) >= 0 {
				// The hole before it is known lost: reassembly need not wait for it.
				s.f.flushNow = true
			}
		}
	}
	// Bytes of the other side that this one acknowledges and reassembly has not delivered
	// were on the wire but are not in the capture: following stops at once, before this
	// packet's own bytes (which answer them) are shown, and reassembly is told to deliver
	// what it holds after the hole.
	o := 1 - d
	if t.ACK && s.started[o] {
		from := s.next[o]
		if s.counted[o] && int32(s.countedTo[o]-from) > 0 {
			from = s.countedTo[o]
		}
		to := t.Ack
		if s.fin[o] {
			to-- // a FIN takes a sequence number
		}
		// One sequence number may be a FIN that the capture shows after its
		// acknowledgement (on lo, the packets of two CPUs reach the capture in either
		// order): not counted here; a real one-byte hole is, by reassembly, once bytes
		// after it arrive.
		if missing := int32(to - from); missing > 1 && missing < 1<<30 {
			st.Gaps++
			st.GapBytes += int64(missing)
			s.counted[o], s.countedTo[o] = true, to
			s.lose(reasonGap, at, true)
			s.f.flushNow = true
		}
	}
	return true
}

// timestamps times the TCP timestamps option: the wait from a side's first segment with a
// value to the other side's first echo of it is at least the way from the capture point to
// that other side and back.
func (s *stream) timestamps(t *layers.TCP, d wire.Direction, at int64) {
	if s.handshake || t.SYN {
		return
	}
	for _, opt := range t.Options {
		if opt.OptionType != layers.TCPOptionKindTimestamps || len(opt.OptionData) != 8 {
			continue
		}
		val, ecr := binary.BigEndian.Uint32(opt.OptionData), binary.BigEndian.Uint32(opt.OptionData[4:])
		s.ts[d].sent(val, at)
		if w, ok := s.ts[1-d].echoed(ecr, at); ok {
			// d echoed the other side's value: the capture point's way to d and back.
			if s.tsMin[d] == 0 || w < s.tsMin[d] {
				s.tsMin[d] = max(w, 1)
			}
		}
		return
	}
}

// lose stops following the connection at time at: the Observer's connection ends (its
// open transaction abandoned) and the stream looks for a point to resume, or gives up.
func (s *stream) lose(reason string, at int64, gap bool) {
	if s.state != following && s.co == nil {
		if s.state == lost && gap {
			s.lostAt = at
			s.resetScanners()
		}
		return
	}
	if s.co != nil {
		if p, ok := s.co.(interface{ Protocol() string }); ok && p.Protocol() != "" {
			s.proto = p.Protocol()
		}
		s.co.Close(at)
		s.co = nil
	}
	s.lostAt = at
	s.reason = reason
	s.state = lost
	s.resetScanners()
	if len(s.scanners) == 0 {
		s.state = givenUp
	}
}

// resetScanners starts looking for a resume point afresh: with the protocol the connection
// spoke, or every protocol that can resume when it is not known.
func (s *stream) resetScanners() {
	s.scanners = s.scanners[:0]
	for _, p := range s.srv.resumers {
		if s.proto == "" || p.Name() == s.proto {
			s.scanners = append(s.scanners, scanner{p: p, s: p.ResumeScanner()})
		}
	}
}

// ReassembledSG implements reassembly.Stream: the connection's bytes in order, per
// direction.
func (s *stream) ReassembledSG(sg reassembly.ScatterGather, _ reassembly.AssemblerContext) {
	if s.srv == nil {
		return
	}
	rdir, _, _, skip := sg.Info()
	d := s.dirOf(rdir)
	n, _ := sg.Lengths()
	at := sg.CaptureInfo(0).Timestamp.UnixNano()
	if skip > 0 {
		// A hole reassembly gave up waiting for; part of it may have been counted already,
		// from the other side's acknowledgement.
		known := 0
		if s.counted[d] {
			known = int(min(max(int32(s.countedTo[d]-s.next[d]), 0), int32(skip)))
		}
		s.next[d] += uint32(skip)
		if fresh := skip - known; fresh > 0 {
			s.srv.stats.Gaps++
			s.srv.stats.GapBytes += int64(fresh)
			s.lose(reasonGap, at, true)
		}
	}
	s.next[d] += uint32(n)
	if n == 0 {
		return
	}
	if s.midStart && !s.midCount {
		// Counted once it carries bytes: the last packets of a connection that ended as
		// the capture started (its FIN and ACKs) are no connection to follow.
		s.midCount = true
		s.srv.stats.MidStream++
	}
	b := sg.Fetch(n)
	switch s.state {
	case following:
		if s.co == nil {
			s.co = s.srv.obs.Open()
			s.shown = true
		}
		s.co.Data(d == wire.Client, b, at)
		return
	case lost:
		if at < s.lostAt {
			return // bytes from before the gap, flushed late
		}
		for _, sc := range s.scanners {
			if sc.s.Chunk(d, b) {
				s.co = s.srv.obs.Resume(sc.p, sc.s, s.shown)
				s.shown, s.state, s.proto = true, following, sc.p.Name()
				s.srv.stats.Resumed++
				return
			}
		}
	}
	s.count(d, n)
}

// count adds bytes of a connection not followed to its traffic.
func (s *stream) count(d wire.Direction, n int) {
	if d == wire.Client {
		s.up += int64(n)
	} else {
		s.down += int64(n)
		if s.lastDir == 1 {
			s.rts++
		}
	}
	s.lastDir = int8(d) + 1
}

// ReassemblyComplete implements reassembly.Stream: the connection ended (FIN, RST, the
// end of the capture, or no packet for idleClose).
func (s *stream) ReassemblyComplete(_ reassembly.AssemblerContext) bool {
	if s.srv == nil {
		return true
	}
	at := s.f.nowNs.Load()
	if s.co != nil {
		s.co.Close(at)
		s.co = nil
	}
	if s.state != following || !s.shown {
		if reason := s.reason; reason != "" && !s.shown && s.up+s.down > 0 {
			u := s.srv.unfollowed[reason]
			if u == nil {
				u = &observe.Unfollowed{}
				s.srv.unfollowed[reason] = u
			}
			u.Connections++
			u.BytesUp += s.up
			u.BytesDown += s.down
			u.RoundTrips += s.rts
		}
	}
	if !s.handshake && (s.tsMin[wire.Client] > 0 || s.tsMin[wire.Server] > 0) {
		s.srv.tsConns.add(rttSample{server: s.tsMin[wire.Server], client: s.tsMin[wire.Client]})
	}
	return true
}
