// Package capture observes an application's database connections from captured packets,
// without touching the application or the network: `dblat observe --pcap FILE` reads a
// capture file, `dblat observe --interface IFACE` captures live.
//
// # What it does
//
// A Follower is shown packets (Packet), from a file (ReadFile: pcap or pcapng as tcpdump
// and dumpcap write them on Linux, with Ethernet, Linux cooked v1 and v2, BSD loopback or
// raw IP link layers) or from an interface (Live: an AF_PACKET socket with a memory-mapped
// ring, filtered in the kernel to the servers' TCP ports). It keeps the TCP connections to
// the database servers it was told of (Config.Servers, or any server on Config.Ports: by
// default PostgreSQL's, MySQL's and Firebird's well-known ports; the side that answers the
// handshake is the server), reassembles each direction in order (retransmissions and
// duplicates dropped, out-of-order segments put back in place), and shows each connection's
// bytes, with the packets' timestamps, to the observe.Session of its server, exactly as the
// proxy shows the chunks it forwards: the same protocol followers (the engines' wire
// decoders), the same transactions and shapes, the same Observation and stored run. One
// Session per server, so that a capture of several databases gives one observation each.
// Run is a whole capture as `dblat observe` takes it: a file read, or a live capture until
// its duration, a stop or its context ends, with snapshots on request; each server's
// session configured alike, its files named after it from the second server on
// (PerServer), and an Observer told what happens, for the caller to print.
//
// Because the times are the packets', where the capture was taken decides what the server
// time holds: the Follower estimates the network round-trip time already in them from each
// connection's handshake (SYN to SYN-ACK is the capture point's way to the server and back,
// SYN-ACK to ACK its way to the client and back) or, for a connection whose handshake it
// did not see, from its TCP timestamps (the shortest wait before each side echoed the
// other's), and adds it to the Observation (observe.Network).
//
// Captures are imperfect, and the Follower never makes up a transaction from a stream it
// does not hold whole:
//   - A connection already open when the capture started is followed from the first point
//     where its protocol allows it (wire.Resumer: PostgreSQL's ReadyForQuery with status
//     idle; MySQL's OK packet with no transaction open, the next command's packet sequence
//     starting at 0), or left unfollowed and counted, with the reason, where its protocol
//     does not (Firebird's operations carry no framing to find a boundary by).
//   - Bytes the capture does not hold (packets it dropped, a short snap length) are a gap:
//     seen when reassembly gives up waiting for them, or at once when the other side
//     acknowledges them. The transaction open at the gap is abandoned (counted, never a
//     transaction), and following resumes as for a connection already open, or stops.
//   - Retransmissions and segments out of order are counted and handled by reassembly.
//   - TLS is counted and not followed, in one line: a capture cannot decline it as the
//     proxy does (it only watches), so the trackers run watch-only
//     (wire.TrackerConfig.WatchOnly) and a client that switches to TLS is not followed.
//
// An Observation never holds a literal or parameter value; a recording
// (observe.SessionConfig.Script, `--record`) does, from a capture as from the proxy.
//
// # Speed
//
// A Follower reads a tcpdump capture of pgbench -N into its observation at 150 MB per
// second of its CPU (make bench FIGURE=capture-read; target ≥ 100 MB/s): 136 MB/s of wall
// time in a run that had most of a core, 46-114 MB/s in runs that shared the project's 2
// cores with a load of 6 to 9. Half of that CPU is the protocol followers' (the same work as
// the proxy's observer), a fifth reassembly. A live capture on lo followed every one of
// pgbench -S's 4,473 transactions a second, the kernel dropping none (FIGURE=capture-live).
//
// # What it does not do
//
// It prints nothing and stores nothing (package cli prints, package execution stores the
// observation as a run); it does not follow IP fragments, tunnels other than VLAN tags, or
// anything but TCP; it does not decrypt TLS. It does not need libpcap: reading, the live
// socket and reassembly are pure Go, and the binary stays static.
//
// # The packet library
//
// It uses github.com/gopacket/gopacket: pcapgo for the files, afpacket for the live ring,
// layers for the headers, reassembly for TCP. That is the community fork of
// github.com/google/gopacket, whose last release (v1.1.19, 2020) has had no maintainer
// since; the fork is released regularly, builds with current Go, reads Linux cooked
// capture v2 (tcpdump -i any in newer versions), which the original cannot, and has a
// pure-Go AF_PACKET ring.
//
// # Neighbours
//
// Package observe owns each Session (a Follower is attached to it as a source, as the
// proxy's link is) and package wire with the engine packages decode the protocols; package
// cli parses `dblat observe` and prints what the Sessions hand back; package latency is the
// other source of chunks, the proxy.
package capture
