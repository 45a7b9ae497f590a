package capture

import (
	"bytes"
	"context"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// A synthetic capture: TCP conversations turned into packets with their handshakes,
// sequence and acknowledgement numbers, written with pcapgo's writers. The tests build the
// captures real ones are imperfect in (TLS, two servers, link types, timestamps) from
// conversations whose bytes they know.

// packet is one captured packet before it is written.
type packet struct {
	at   time.Time
	data []byte
}

// synth builds a capture of several connections.
type synth struct {
	t       testing.TB
	link    layers.LinkType
	packets []packet
	t0      time.Time
}

func newSynth(t testing.TB, link layers.LinkType) *synth {
	return &synth{t: t, link: link, t0: time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)}
}

// conn is one TCP connection of a synth.
type synthConn struct {
	s              *synth
	client, server netip.AddrPort
	seq            [2]uint32 // next sequence number: [0] the client's, [1] the server's
	ts             bool      // add TCP timestamps
	tsval          [2]uint32
	now            time.Duration // since synth.t0
}

// conn starts a connection; with handshake, its SYN, SYN-ACK and ACK are captured at the
// given times after at: cs is the capture point's way to the server and back, cc its way to
// the client and back.
func (s *synth) conn(client, server string, at time.Duration) *synthConn {
	return &synthConn{s: s, client: netip.MustParseAddrPort(client), server: netip.MustParseAddrPort(server),
		seq: [2]uint32{1000, 500000}, now: at, tsval: [2]uint32{7000, 90000}}
}

func (c *synthConn) handshake(cs, cc time.Duration) *synthConn {
	c.packet(0, true, false, false, nil)
	c.seq[0]++
	c.now += cs
	c.packet(1, true, true, false, nil)
	c.seq[1]++
	c.now += cc
	c.packet(0, false, true, false, nil)
	return c
}

// send captures side (0 client, 1 server) sending b in segments of at most mss bytes,
// after d.
func (c *synthConn) send(side int, d time.Duration, b []byte) *synthConn {
	c.now += d
	const mss = 1400
	for len(b) > 0 {
		n := min(len(b), mss)
		c.packet(side, false, true, false, b[:n])
		c.seq[side] += uint32(n)
		b = b[n:]
	}
	return c
}

// fin captures both sides closing, d apart.
func (c *synthConn) fin(d time.Duration) {
	c.now += d
	c.packet(0, false, true, true, nil)
	c.seq[0]++
	c.now += d
	c.packet(1, false, true, true, nil)
	c.seq[1]++
	c.now += d
	c.packet(0, false, true, false, nil)
}

func (c *synthConn) packet(side int, syn, ack, fin bool, payload []byte) {
	src, dst := c.client, c.server
	if side == 1 {
		src, dst = dst, src
	}
	tcp := &layers.TCP{SrcPort: layers.TCPPort(src.Port()), DstPort: layers.TCPPort(dst.Port()), Seq: c.seq[side],
		SYN: syn, ACK: ack, FIN: fin, PSH: len(payload) > 0, Window: 512}
	if ack {
		tcp.Ack = c.seq[1-side]
	}
	if c.ts {
		c.tsval[side]++
		opt := make([]byte, 8)
		be := func(b []byte, v uint32) { b[0], b[1], b[2], b[3] = byte(v>>24), byte(v>>16), byte(v>>8), byte(v) }
		be(opt, c.tsval[side])
		be(opt[4:], c.tsval[1-side])
		tcp.Options = []layers.TCPOption{{OptionType: layers.TCPOptionKindNop}, {OptionType: layers.TCPOptionKindNop},
			{OptionType: layers.TCPOptionKindTimestamps, OptionLength: 10, OptionData: opt}}
	}
	var ip gopacket.NetworkLayer
	var ipl gopacket.SerializableLayer
	var etype layers.EthernetType
	if src.Addr().Is4() {
		v4 := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolTCP, SrcIP: net.IP(src.Addr().AsSlice()), DstIP: net.IP(dst.Addr().AsSlice())}
		ip, ipl, etype = v4, v4, layers.EthernetTypeIPv4
	} else {
		v6 := &layers.IPv6{Version: 6, HopLimit: 64, NextHeader: layers.IPProtocolTCP, SrcIP: net.IP(src.Addr().AsSlice()), DstIP: net.IP(dst.Addr().AsSlice())}
		ip, ipl, etype = v6, v6, layers.EthernetTypeIPv6
	}
	if err := tcp.SetNetworkLayerForChecksum(ip); err != nil {
		c.s.t.Fatal(err)
	}
	var ls []gopacket.SerializableLayer
	var head []byte // a cooked header, which gopacket does not serialise
	switch c.s.link {
	case layers.LinkTypeEthernet:
		ls = append(ls, &layers.Ethernet{SrcMAC: make(net.HardwareAddr, 6), DstMAC: make(net.HardwareAddr, 6), EthernetType: etype})
	case layers.LinkTypeLinuxSLL: // packet type, ARPHRD_LOOPBACK, address length, address (8), protocol
		head = []byte{0, 0, 3, 4, 0, 6, 0, 0, 0, 0, 0, 0, 0, 0, byte(etype >> 8), byte(etype)}
	case layers.LinkTypeLinuxSLL2: // protocol, reserved, interface index, ARPHRD, packet type, address length, address (8)
		head = []byte{byte(etype >> 8), byte(etype), 0, 0, 0, 0, 0, 1, 3, 4, 0, 6, 0, 0, 0, 0, 0, 0, 0, 0}
	}
	ls = append(ls, ipl, tcp, gopacket.Payload(payload))
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ls...); err != nil {
		c.s.t.Fatal(err)
	}
	c.s.packets = append(c.s.packets, packet{at: c.s.t0.Add(c.now), data: append(head, buf.Bytes()...)})
}

// sorted returns the packets in the order of their times (connections interleave).
func (s *synth) sorted() []packet {
	ps := append([]packet(nil), s.packets...)
	// A stable insertion sort: packets of one connection are already in order.
	for i := 1; i < len(ps); i++ {
		for j := i; j > 0 && ps[j].at.Before(ps[j-1].at); j-- {
			ps[j], ps[j-1] = ps[j-1], ps[j]
		}
	}
	return ps
}

// pcap writes the capture as a pcap file, ng as pcapng.
func (s *synth) file(ng bool, ps []packet) []byte {
	var b bytes.Buffer
	if ng {
		w, err := pcapgo.NewNgWriter(&b, s.link)
		if err != nil {
			s.t.Fatal(err)
		}
		for _, p := range ps {
			ci := gopacket.CaptureInfo{Timestamp: p.at, CaptureLength: len(p.data), Length: len(p.data)}
			if err := w.WritePacket(ci, p.data); err != nil {
				s.t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			s.t.Fatal(err)
		}
		return b.Bytes()
	}
	w := pcapgo.NewWriterNanos(&b)
	if err := w.WriteFileHeader(65535, s.link); err != nil {
		s.t.Fatal(err)
	}
	for _, p := range ps {
		ci := gopacket.CaptureInfo{Timestamp: p.at, CaptureLength: len(p.data), Length: len(p.data)}
		if err := w.WritePacket(ci, p.data); err != nil {
			s.t.Fatal(err)
		}
	}
	return b.Bytes()
}

// readCapture runs a Follower of cfg over a capture file's bytes and returns it.
func readCapture(t testing.TB, file []byte, cfg Config) *Follower {
	t.Helper()
	f := New(cfg)
	if _, err := Read(context.Background(), bytes.NewReader(file), f); err != nil {
		t.Fatal(err)
	}
	return f
}
