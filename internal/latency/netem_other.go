//go:build !linux

package latency

import "errors"

// NetemAvailable reports whether the kernel can run tc-netem; netem exists on Linux only.
func NetemAvailable() error {
	return errors.New("netem unavailable: netem is a Linux qdisc; use the proxy link (default)")
}
