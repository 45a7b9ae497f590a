//go:build linux

package latency

import (
	"encoding/binary"
	"os"
	"strings"
	"testing"
)

func TestNetemAvailable(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to create a network namespace")
	}
	err := NetemAvailable()
	if err == nil {
		t.Log("this kernel has sch_netem")
		return
	}
	msg := err.Error()
	t.Log(msg)
	if !strings.HasPrefix(msg, "netem unavailable: ") || !strings.HasSuffix(msg, "; use the proxy link (default)") || strings.Contains(msg, "\n") {
		t.Errorf("not a one-line user message: %q", msg)
	}
}

// TestProbeQdisc checks the rtnetlink request itself against qdisc kinds whose outcome is
// known, so a "no" from NetemAvailable can be trusted: pfifo is built into every kernel,
// and no kernel has a qdisc called "dblatnosuch".
func TestProbeQdisc(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to create a network namespace")
	}
	fifo := make([]byte, 4) // struct tc_fifo_qopt {limit u32}
	binary.NativeEndian.PutUint32(fifo, 100)
	if err := inNewNetns(func() error { return probeQdisc("pfifo", fifo) }); err != nil {
		t.Errorf("pfifo: %v", err)
	}
	err := inNewNetns(func() error { return probeQdisc("dblatnosuch", nil) })
	if err == nil || !strings.Contains(err.Error(), "has no sch_dblatnosuch qdisc") {
		t.Errorf("unknown kind: %v", err)
	}
}
