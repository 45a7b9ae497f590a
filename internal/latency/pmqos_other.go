//go:build !linux

package latency

import "errors"

// CPULatencyHold keeps the CPUs out of deep idle states while held (Linux only).
type CPULatencyHold struct{}

// HoldCPULatency fails: the PM QoS interface is Linux's.
func HoldCPULatency() (*CPULatencyHold, error) {
	return nil, errors.New("hold CPU latency: only on Linux (/dev/cpu_dma_latency)")
}

// Release does nothing.
func (h *CPULatencyHold) Release() {}
