package capture

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/reassembly"

	"github.com/dblat/dblat/internal/observe"
	"github.com/dblat/dblat/internal/stats"
	"github.com/dblat/dblat/internal/wire"
)

// DefaultPorts are the ports a Follower takes for database servers when told of none:
// PostgreSQL's, MySQL's and MariaDB's, Firebird's.
var DefaultPorts = []uint16{5432, 3306, 3050}

// Config says which connections a Follower follows and how it observes them.
type Config struct {
	// Servers are the servers' addresses (`--server HOST:PORT`); when empty, any address
	// on one of Ports is a server.
	Servers []netip.AddrPort
	// Ports are the servers' ports when Servers is empty (`--port`; DefaultPorts when
	// empty too).
	Ports []uint16
	// Session is the observation session of each server's connections, made when the
	// Follower sees the server's first packet: its Upstream names the server, Source,
	// Passive, Now and Complete are the Follower's. Nil: the server is not followed.
	Session func(server netip.AddrPort) *observe.SessionConfig
	// OnSession, when set, is told of each Session the Follower made, as soon as it is
	// made (on the goroutine that shows the packets).
	OnSession func(server netip.AddrPort, s *observe.Session)
	// Source is observe.SourcePcap or observe.SourceInterface.
	Source string
}

// Timing bounds of reassembly, in capture time.
const (
	// flushAfter: bytes that wait this long for a hole before them to be filled are
	// given up on (the hole is a gap). A retransmission comes within a few RTOs (200 ms
	// at least on Linux); a capture that lost the packet never holds it.
	flushAfter = 2 * time.Second
	// flushEvery is how often, in capture time, the Follower looks for such bytes.
	flushEvery = 500 * time.Millisecond
	// idleClose: a connection with no packet for this long is taken as ended (its FIN
	// was not captured); its open transaction is abandoned.
	idleClose = time.Hour
	// maxBufferedPages bounds the out-of-order pages (1900 bytes each) reassembly keeps
	// per connection, and maxBufferedTotal in all: a capture that lost a packet of a busy
	// connection would otherwise keep everything after it until flushAfter.
	maxBufferedPages = 4096
	maxBufferedTotal = 1 << 18
)

// Follower follows the database connections in captured packets and shows them to one
// observe.Session per server (see the package doc). Packet must be called from one
// goroutine at a time; Close and the Sessions' snapshots may be called from any.
type Follower struct {
	cfg   Config
	ports map[uint16]bool

	mu        sync.Mutex // held while a packet is handled, and by Close
	asm       *reassembly.Assembler
	servers   map[netip.AddrPort]*server
	order     []*server
	nowNs     atomic.Int64 // the latest packet's timestamp
	lastFlush time.Time
	closed    bool
	flushNow  bool                 // a stream knows of a hole: deliver what waits behind it
	drops     func() (int64, bool) // the kernel's drop count, for a live capture

	// Decoding state, reused for every packet.
	ip4 layers.IPv4
	ip6 layers.IPv6
	tcp layers.TCP
	ctx assemblerContext

	// Totals over the whole capture.
	packets, other int64
}

// server is one server's Session and what the Follower saw of its connections.
type server struct {
	addr     netip.AddrPort
	sess     *observe.Session
	obs      *observe.Observer
	resumers []wire.Resumer

	// Guarded by Follower.mu.
	stats      observe.Capture
	handshakes samples
	tsConns    samples // per connection without a handshake: its smallest TCP-timestamp waits
	unfollowed map[string]*observe.Unfollowed
}

type rttSample struct{ server, client int64 }

// maxSamples bounds the RTT samples a server keeps of each kind (16 bytes each): a live
// capture of an application that connects per request sees a handshake per request.
const maxSamples = 1 << 15

// samples keeps every RTT sample up to maxSamples, then a uniform sample of all of them
// (reservoir sampling, with a fixed seed: the same capture gives the same figures).
type samples struct {
	v   []rttSample
	n   int64
	rng uint64
}

func (s *samples) add(x rttSample) {
	s.n++
	if len(s.v) < maxSamples {
		s.v = append(s.v, x)
		return
	}
	// xorshift64*: a reproducible draw in [0, n).
	if s.rng == 0 {
		s.rng = 0x9e3779b97f4a7c15
	}
	s.rng ^= s.rng >> 12
	s.rng ^= s.rng << 25
	s.rng ^= s.rng >> 27
	if j := (s.rng * 2685821657736338717) % uint64(s.n); j < maxSamples {
		s.v[j] = x
	}
}

// assemblerContext is reassembly's AssemblerContext for one packet.
type assemblerContext struct{ ci gopacket.CaptureInfo }

func (c *assemblerContext) GetCaptureInfo() gopacket.CaptureInfo { return c.ci }

// New returns a Follower.
func New(cfg Config) *Follower {
	if len(cfg.Ports) == 0 {
		cfg.Ports = DefaultPorts
	}
	f := &Follower{cfg: cfg, ports: map[uint16]bool{}, servers: map[netip.AddrPort]*server{}}
	for _, p := range cfg.Ports {
		f.ports[p] = true
	}
	for _, s := range cfg.Servers {
		f.ports[s.Port()] = true
	}
	f.asm = reassembly.NewAssembler(reassembly.NewStreamPool(&factory{f: f}))
	f.asm.MaxBufferedPagesPerConnection = maxBufferedPages
	f.asm.MaxBufferedPagesTotal = maxBufferedTotal
	return f
}

// Ports returns the TCP ports the Follower looks at (a live capture's kernel filter).
func (f *Follower) Ports() []uint16 {
	var ps []uint16
	for p := range f.ports {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	return ps
}

// Sessions returns the Sessions made so far, one per server, in the order their servers
// were first seen.
func (f *Follower) Sessions() []*observe.Session {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]*observe.Session, 0, len(f.order))
	for _, s := range f.order {
		out = append(out, s.sess)
	}
	return out
}

// Packets returns how many packets the Follower was shown, and how many of them were not
// TCP to or from a server it follows.
func (f *Follower) Packets() (all, other int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.packets, f.other
}

// setDrops has the Observations report the kernel's drops (a live capture).
func (f *Follower) setDrops(drops func() (int64, bool)) {
	f.mu.Lock()
	f.drops = drops
	f.mu.Unlock()
}

// now returns the capture's clock: the latest packet's timestamp.
func (f *Follower) now() time.Time { return time.Unix(0, f.nowNs.Load()) }

// Packet handles one captured packet of link type link. data is not retained.
func (f *Follower) Packet(data []byte, ci gopacket.CaptureInfo, link layers.LinkType) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return
	}
	f.packets++
	ts := ci.Timestamp
	if ns := ts.UnixNano(); ns > f.nowNs.Load() {
		f.nowNs.Store(ns)
	}
	if !f.decode(data, link) {
		f.other++
		return
	}
	var flow gopacket.Flow
	var src, dst netip.Addr
	if f.ip4.Version == 4 {
		flow = f.ip4.NetworkFlow()
		src, _ = netip.AddrFromSlice(f.ip4.SrcIP.To4())
		dst, _ = netip.AddrFromSlice(f.ip4.DstIP.To4())
	} else {
		flow = f.ip6.NetworkFlow()
		src, _ = netip.AddrFromSlice(f.ip6.SrcIP)
		dst, _ = netip.AddrFromSlice(f.ip6.DstIP)
	}
	sp, dp := uint16(f.tcp.SrcPort), uint16(f.tcp.DstPort)
	if !f.wants(netip.AddrPortFrom(src, sp), netip.AddrPortFrom(dst, dp)) {
		f.other++
		return
	}
	f.ctx.ci = ci
	f.asm.AssembleWithContext(flow, &f.tcp, &f.ctx)
	if f.lastFlush.IsZero() {
		f.lastFlush = ts
	}
	if f.flushNow {
		// Bytes behind a hole the other side acknowledged: the capture will never hold
		// the hole, so everything queued up to now goes (with the hole as a skip).
		f.flushNow = false
		f.asm.FlushWithOptions(reassembly.FlushOptions{T: ts.Add(time.Nanosecond)})
	}
	if ts.Sub(f.lastFlush) >= flushEvery {
		f.lastFlush = ts
		f.asm.FlushWithOptions(reassembly.FlushOptions{T: ts.Add(-flushAfter), TC: ts.Add(-idleClose)})
	}
}

// decode finds the IPv4 or IPv6 header and the TCP header of a packet; false when it is
// not TCP over IP on a link type the Follower reads.
func (f *Follower) decode(data []byte, link layers.LinkType) bool {
	off := 0
	var etype uint16
	switch link {
	case layers.LinkTypeEthernet:
		if len(data) < 14 {
			return false
		}
		etype, off = binary.BigEndian.Uint16(data[12:]), 14
		for (etype == 0x8100 || etype == 0x88a8) && len(data) >= off+4 { // VLAN tags
			etype, off = binary.BigEndian.Uint16(data[off+2:]), off+4
		}
	case layers.LinkTypeLinuxSLL: // 16 bytes, the protocol last
		if len(data) < 16 {
			return false
		}
		etype, off = binary.BigEndian.Uint16(data[14:]), 16
	case layers.LinkTypeLinuxSLL2: // 20 bytes, the protocol first
		if len(data) < 20 {
			return false
		}
		etype, off = binary.BigEndian.Uint16(data[0:]), 20
	case layers.LinkTypeNull, layers.LinkTypeLoop: // a 4-byte address family
		if len(data) < 4 {
			return false
		}
		off = 4
	case layers.LinkTypeRaw, layers.LinkTypeIPv4, layers.LinkTypeIPv6, 12: // 12: raw IP on some systems
	default:
		return false
	}
	data = data[off:]
	if len(data) == 0 {
		return false
	}
	if etype == 0 { // told by the IP version
		switch data[0] >> 4 {
		case 4:
			etype = 0x0800
		case 6:
			etype = 0x86dd
		}
	}
	var payload []byte
	switch etype {
	case 0x0800:
		if f.ip4.DecodeFromBytes(data, gopacket.NilDecodeFeedback) != nil || f.ip4.Protocol != layers.IPProtocolTCP ||
			f.ip4.Flags&layers.IPv4MoreFragments != 0 || f.ip4.FragOffset != 0 {
			return false
		}
		f.ip6.Version = 0
		payload = f.ip4.Payload
	case 0x86dd:
		if f.ip6.DecodeFromBytes(data, gopacket.NilDecodeFeedback) != nil || f.ip6.NextHeader != layers.IPProtocolTCP {
			return false
		}
		f.ip4.Version = 0
		payload = f.ip6.Payload
	default:
		return false
	}
	return f.tcp.DecodeFromBytes(payload, gopacket.NilDecodeFeedback) == nil
}

// wants reports whether a packet between a and b belongs to a server's connection.
func (f *Follower) wants(a, b netip.AddrPort) bool {
	if len(f.cfg.Servers) > 0 {
		return slices.Contains(f.cfg.Servers, a) || slices.Contains(f.cfg.Servers, b)
	}
	return f.ports[a.Port()] || f.ports[b.Port()]
}

// serverOf returns which of a connection's two ends is the server: the one of Servers, else
// the one that answers the handshake, else the one on a server port (the lower port when
// both are).
func (f *Follower) serverOf(src, dst netip.AddrPort, t *layers.TCP) netip.AddrPort {
	if len(f.cfg.Servers) > 0 {
		if slices.Contains(f.cfg.Servers, dst) {
			return dst
		}
		return src
	}
	switch {
	case t.SYN && !t.ACK:
		return dst
	case t.SYN && t.ACK:
		return src
	case f.ports[dst.Port()] && !f.ports[src.Port()]:
		return dst
	case f.ports[src.Port()] && !f.ports[dst.Port()]:
		return src
	case dst.Port() < src.Port():
		return dst
	}
	return src
}

// server returns the state of a server, making its Session the first time; nil when the
// server is not followed.
func (f *Follower) server(addr netip.AddrPort) *server {
	if s, ok := f.servers[addr]; ok {
		return s
	}
	var s *server
	if f.cfg.Session != nil {
		if sc := f.cfg.Session(addr); sc != nil {
			cfg := *sc
			cfg.Upstream = addr.String()
			cfg.Source, cfg.Passive, cfg.Now = f.cfg.Source, true, f.now
			s = &server{addr: addr, unfollowed: map[string]*observe.Unfollowed{}}
			cfg.Complete = func(o *observe.Observation) { f.complete(s, o) }
			s.sess = observe.NewSession(cfg)
			s.obs = s.sess.Observer()
			for _, p := range cfg.Protocols {
				if r, ok := p.(wire.Resumer); ok {
					s.resumers = append(s.resumers, r)
				}
			}
			_ = s.sess.Attach(f) // a new Session is not stopped
			f.order = append(f.order, s)
			if f.cfg.OnSession != nil {
				f.cfg.OnSession(addr, s.sess)
			}
		}
	}
	f.servers[addr] = s
	return s
}

// complete adds what the capture knows to a server's Observation (observe.Config's
// Complete).
func (f *Follower) complete(s *server, o *observe.Observation) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := s.stats
	if f.drops != nil {
		if n, ok := f.drops(); ok {
			c.KernelDrops = &n
		}
	}
	o.Capture = &c
	o.Network = network(s.handshakes.v, s.tsConns.v, s.handshakes.n, s.tsConns.n)
	for reason, u := range s.unfollowed {
		if o.CannotFollow == nil {
			o.CannotFollow = map[string]int64{}
		}
		o.CannotFollow[reason] += u.Connections
		o.Unfollowed.Connections += u.Connections
		o.Unfollowed.BytesUp += u.BytesUp
		o.Unfollowed.BytesDown += u.BytesDown
		o.Unfollowed.RoundTrips += u.RoundTrips
	}
}

// network summarises the RTT samples of nhs handshakes and nts connections without one:
// the medians of the handshakes' sides, and where there are none, of the timestamp
// estimates.
func network(hs, ts []rttSample, nhs, nts int64) *observe.Network {
	n := &observe.Network{Handshakes: nhs, TimestampConns: nts}
	use, known := hs, func(int64) bool { return true }
	if len(use) == 0 {
		// A timestamp estimate of 0 is a side that echoed nothing it could be timed by.
		use, known = ts, func(v int64) bool { return v > 0 }
	}
	var sv, cl []int64
	for _, s := range use {
		if known(s.server) {
			sv = append(sv, s.server)
		}
		if known(s.client) {
			cl = append(cl, s.client)
		}
	}
	n.ServerSideNs, n.ClientSideNs = stats.Median(sv), stats.Median(cl)
	n.RTTNs = n.ServerSideNs + n.ClientSideNs
	return n
}

// Close ends every connection the Follower follows (the data reassembly still holds is
// given to them first; their open transactions are abandoned) and ignores packets after
// it. It implements io.Closer so that a Session it feeds closes it as it stops; later calls
// do nothing.
func (f *Follower) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil
	}
	f.asm.FlushAll()
	f.closed = true
	return nil
}

// String describes the Follower's servers, for messages.
func (f *Follower) String() string {
	if len(f.cfg.Servers) > 0 {
		return fmt.Sprint(f.cfg.Servers)
	}
	return fmt.Sprintf("TCP ports %v", f.Ports())
}
