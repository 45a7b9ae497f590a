//go:build linux

package latency

import (
	"encoding/binary"
	"fmt"
	"os"
)

// cpuLatencyFile is the kernel's PM QoS interface for the CPU wake-up latency: a process
// that writes a 32-bit value (µs) and keeps the file open asks every CPU to stay in idle
// states that exit faster than that; the request ends when the file is closed, also when
// the process dies.
const cpuLatencyFile = "/dev/cpu_dma_latency"

// CPULatencyHold keeps the machine's CPUs out of deep idle states while it is held: idle
// CPUs poll instead of halting, so a timer or a packet wakes a waiting thread within a few
// microseconds instead of the tens a halted (virtual) CPU takes. cyclictest and tuned's
// latency-performance profile do the same. It affects every process on the machine, the
// database server's too, which is why runs record whether it was held.
type CPULatencyHold struct{ f *os.File }

// HoldCPULatency asks for a CPU wake-up latency of 0 until Release. It fails where the
// file does not exist or may not be written (it needs root or a udev rule).
func HoldCPULatency() (*CPULatencyHold, error) {
	f, err := os.OpenFile(cpuLatencyFile, os.O_WRONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("hold CPU latency: %w", err)
	}
	var b [4]byte
	binary.NativeEndian.PutUint32(b[:], 0)
	if _, err := f.Write(b[:]); err != nil {
		f.Close()
		return nil, fmt.Errorf("hold CPU latency: %w", err)
	}
	return &CPULatencyHold{f: f}, nil
}

// Release ends the request. Safe to call on nil and more than once.
func (h *CPULatencyHold) Release() {
	if h != nil && h.f != nil {
		h.f.Close()
		h.f = nil
	}
}
