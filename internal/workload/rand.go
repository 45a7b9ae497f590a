package workload

import (
	"hash/fnv"
	"math/rand/v2"
)

// NewRand returns a PCG generator for one purpose: the run or load seed plus a stream name
// and numbers (table, warehouse, part, terminal...). Equal inputs give equal sequences,
// which is what makes a load reproducible (same seed -> same data) while the parallel
// chunks of a load stay independent of how they are scheduled. Changing how it derives
// the stream changes every workload's data and runs: the loaders' loaderVersion goes up
// with it.
func NewRand(seed int64, stream string, nums ...int) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(stream))
	var b [8]byte
	for _, n := range nums {
		for i := range b {
			b[i] = byte(uint64(n) >> (8 * i))
		}
		h.Write(b[:])
	}
	return rand.New(rand.NewPCG(uint64(seed), h.Sum64()))
}
