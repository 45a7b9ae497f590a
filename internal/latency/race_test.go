//go:build race

package latency

const raceEnabled = true
