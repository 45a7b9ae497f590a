//go:build linux

package latency

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// NetemAvailable reports whether this kernel can run the netem qdisc (tc-netem), the
// kernel path for delay, and nil if it can. It never touches the host's interfaces: it
// moves one OS thread into a new, private network namespace (unshare CLONE_NEWNET), asks
// over rtnetlink to add a netem qdisc to that namespace's own loopback device, and lets the
// thread exit, which discards the namespace and the qdisc with it. It needs CAP_SYS_ADMIN
// (root) and takes about a millisecond. Safe for concurrent use.
//
// The error is one line meant for the user, e.g. "netem unavailable: this kernel has no
// sch_netem qdisc (Specified qdisc kind is unknown); use the proxy link (default)".
func NetemAvailable() error {
	return inNewNetns(func() error { return probeQdisc("netem", netemQopt()) })
}

// inNewNetns runs f on a locked thread moved into a new network namespace that is
// discarded afterwards.
func inNewNetns(f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: see NetemAvailable
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("netem unavailable: cannot create a private network namespace to probe in (%v; needs root)%s", err, netemHint)
			return
		}
		errc <- f()
	}()
	return <-errc
}

// netemQopt is struct tc_netem_qopt {latency, limit, loss, gap, duplicate, jitter u32}:
// no delay, limit 1000 packets (tc's default).
func netemQopt() []byte {
	q := make([]byte, 24)
	binary.NativeEndian.PutUint32(q[4:], 1000)
	return q
}

const netemHint = "; use the proxy link (default)"

// probeQdisc adds a root qdisc of kind with options opts to the loopback device of the
// calling thread's network namespace and reports the outcome in NetemAvailable's words.
func probeQdisc(kind string, opts []byte) error {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err != nil {
		return fmt.Errorf("netem unavailable: rtnetlink: %v%s", err, netemHint)
	}
	defer unix.Close(fd)
	// Extended acks carry the kernel's reason as text ("Specified qdisc kind is unknown").
	_ = unix.SetsockoptInt(fd, unix.SOL_NETLINK, unix.NETLINK_EXT_ACK, 1)
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return fmt.Errorf("netem unavailable: rtnetlink: %v%s", err, netemHint)
	}
	if err := unix.Sendto(fd, qdiscRequest(kind, opts), 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return fmt.Errorf("netem unavailable: rtnetlink: %v%s", err, netemHint)
	}
	buf := make([]byte, 8192)
	n, _, err := unix.Recvfrom(fd, buf, 0)
	if err != nil {
		return fmt.Errorf("netem unavailable: rtnetlink: %v%s", err, netemHint)
	}
	errno, msg, err := parseAck(buf[:n])
	if err != nil {
		return fmt.Errorf("netem unavailable: %v%s", err, netemHint)
	}
	if errno == 0 {
		return nil
	}
	reason := msg
	if reason == "" {
		reason = errno.Error()
	}
	if errno == unix.ENOENT {
		return fmt.Errorf("netem unavailable: this kernel has no sch_%s qdisc (%s)%s", kind, reason, netemHint)
	}
	return fmt.Errorf("netem unavailable: adding a %s qdisc failed (%s)%s", kind, reason, netemHint)
}

// qdiscRequest builds RTM_NEWQDISC "tc qdisc add dev lo root <kind>" for ifindex 1 (the
// loopback device, which has index 1 in every namespace).
func qdiscRequest(kind string, opts []byte) []byte {
	le := binary.NativeEndian
	attr := func(typ uint16, payload []byte) []byte {
		l := unix.SizeofRtAttr + len(payload)
		b := make([]byte, (l+unix.RTA_ALIGNTO-1) & ^(unix.RTA_ALIGNTO-1))
		le.PutUint16(b[0:], uint16(l))
		le.PutUint16(b[2:], typ)
		copy(b[unix.SizeofRtAttr:], payload)
		return b
	}
	tcm := make([]byte, 20) // struct tcmsg: family, 3 pad bytes, ifindex, handle, parent, info
	tcm[0] = unix.AF_UNSPEC
	le.PutUint32(tcm[4:], 1)           // ifindex
	le.PutUint32(tcm[8:], 0x10000)     // handle 1:
	le.PutUint32(tcm[12:], 0xFFFFFFFF) // parent TC_H_ROOT
	body := append(tcm, attr(unix.TCA_KIND, append([]byte(kind), 0))...)
	body = append(body, attr(unix.TCA_OPTIONS, opts)...)
	msg := make([]byte, unix.SizeofNlMsghdr, unix.SizeofNlMsghdr+len(body))
	le.PutUint32(msg[0:], uint32(unix.SizeofNlMsghdr+len(body)))
	le.PutUint16(msg[4:], unix.RTM_NEWQDISC)
	le.PutUint16(msg[6:], unix.NLM_F_REQUEST|unix.NLM_F_ACK|unix.NLM_F_CREATE|unix.NLM_F_EXCL)
	le.PutUint32(msg[8:], 1) // sequence number
	return append(msg, body...)
}

// parseAck decodes the NLMSG_ERROR reply to a request: errno (0 = success) and the extended
// ack message if the kernel sent one.
func parseAck(b []byte) (unix.Errno, string, error) {
	le := binary.NativeEndian
	if len(b) < unix.SizeofNlMsghdr+4 {
		return 0, "", errors.New("short rtnetlink reply")
	}
	if le.Uint16(b[4:]) != unix.NLMSG_ERROR {
		return 0, "", fmt.Errorf("unexpected rtnetlink reply type %d", le.Uint16(b[4:]))
	}
	flags := le.Uint16(b[6:])
	l := min(int(le.Uint32(b[0:])), len(b))
	code := int32(le.Uint32(b[unix.SizeofNlMsghdr:]))
	errno := unix.Errno(-code)
	if flags&unix.NLM_F_ACK_TLVS == 0 {
		return errno, "", nil
	}
	// After the error code comes the request's header, and its payload unless capped.
	off := unix.SizeofNlMsghdr + 4
	if off+unix.SizeofNlMsghdr > l {
		return errno, "", nil
	}
	if flags&unix.NLM_F_CAPPED != 0 {
		off += unix.SizeofNlMsghdr
	} else {
		off += (int(le.Uint32(b[off:])) + unix.NLMSG_ALIGNTO - 1) & ^(unix.NLMSG_ALIGNTO - 1)
	}
	for off+unix.SizeofRtAttr <= l {
		al := int(le.Uint16(b[off:]))
		typ := le.Uint16(b[off+2:])
		if al < unix.SizeofRtAttr || off+al > l {
			break
		}
		if typ == unix.NLMSGERR_ATTR_MSG {
			return errno, strings.TrimRight(string(b[off+unix.SizeofRtAttr:off+al]), "\x00"), nil
		}
		off += (al + unix.RTA_ALIGNTO - 1) & ^(unix.RTA_ALIGNTO - 1)
	}
	return errno, "", nil
}
