//go:build !race

package latency

// raceEnabled reports whether the race detector is on (it allocates on its own).
const raceEnabled = false
