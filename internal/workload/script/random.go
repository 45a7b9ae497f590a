package script

import (
	"math"
	"math/bits"
)

// PRNG is PostgreSQL's pg_prng (src/common/pg_prng.c): Blackman and Vigna's
// xoroshiro128** 1.0, its 128-bit state filled from a 64-bit seed by splitmix64. pgbench 15
// draws every random_* value of a client from one, and permute() seeds one from its seed
// argument, so reproducing it exactly is what makes permute() and the random functions
// return pgbench's values. The zero PRNG is not valid (NewPRNG never returns it); a PRNG is
// a value: copying it saves its state (what a retry restores).
type PRNG struct{ s0, s1 uint64 }

// NewPRNG returns the generator pg_prng_seed makes of seed.
func NewPRNG(seed uint64) PRNG {
	var r PRNG
	r.s0 = splitmix64(&seed)
	r.s1 = splitmix64(&seed)
	if r.s0 == 0 && r.s1 == 0 { // all zeroes is a fixed point: pg_prng_seed_check's Knuth LCG constants
		r.s0, r.s1 = 0x5851F42D4C957F2D, 0x14057B7EF767814F
	}
	return r
}

// splitmix64 advances *state and returns its next output.
func splitmix64(state *uint64) uint64 {
	*state += 0x9E3779B97F4A7C15
	v := *state
	v = (v ^ (v >> 30)) * 0xBF58476D1CE4E5B9
	v = (v ^ (v >> 27)) * 0x94D049BB133111EB
	return v ^ (v >> 31)
}

// Uint64 returns the next 64 random bits (pg_prng_uint64).
func (r *PRNG) Uint64() uint64 {
	s0 := r.s0
	sx := r.s1 ^ s0
	v := bits.RotateLeft64(s0*5, 7) * 9
	r.s0 = bits.RotateLeft64(s0, 24) ^ sx ^ (sx << 16)
	r.s1 = bits.RotateLeft64(sx, 37)
	return v
}

// Uint64Range returns a uniform value in [lo, hi], or lo when the range is empty
// (pg_prng_uint64_range: bitmask rejection, so on average fewer than two draws).
func (r *PRNG) Uint64Range(lo, hi uint64) uint64 {
	if hi <= lo {
		return lo
	}
	span := hi - lo
	shift := uint(bits.LeadingZeros64(span)) // 63 - pg_leftmost_one_pos64(span)
	for {
		if v := r.Uint64() >> shift; v <= span {
			return lo + v
		}
	}
}

// Float64 returns a uniform double in [0, 1) with 52 random bits (pg_prng_double).
func (r *PRNG) Float64() float64 {
	return math.Ldexp(float64(r.Uint64()>>(64-52)), -52)
}

// The parameter ranges of the random functions (pgbench.c MIN_GAUSSIAN_PARAM,
// MIN_ZIPFIAN_PARAM, MAX_ZIPFIAN_PARAM); random_exponential needs a parameter above 0.
const (
	minGaussianParam = 2.0
	minZipfianParam  = 1.001
	maxZipfianParam  = 1000.0
)

// uniform is random(lo, hi): lo + a uniform offset in [0, hi-lo] (pgbench's getrand). The
// caller has checked that hi-lo+1 does not overflow.
func (r *PRNG) uniform(lo, hi int64) int64 {
	return lo + int64(r.Uint64Range(0, uint64(hi-lo)))
}

// exponential is random_exponential(lo, hi, p) (getExponentialRand): with u uniform in
// (0, 1] and cut = exp(-p), x = -ln(cut + (1-cut)·u)/p lies in [0, 1) with density
// proportional to exp(-p·x), and the result is lo + trunc((hi-lo+1)·x). The caller has
// checked p > 0.
func (r *PRNG) exponential(lo, hi int64, p float64) int64 {
	cut := math.Exp(-p)
	u := 1.0 - r.Float64()
	x := -math.Log(cut+float64((1.0-cut)*u)) / p // float64(): no fused multiply-add, as in C
	return lo + int64(float64(hi-lo+1)*x)
}

// gaussian is random_gaussian(lo, hi, p) (getGaussianRand): a standard normal z by the
// basic Box-Muller transform (sin branch, both uniforms in (0, 1]), drawn again until
// -p <= z < p, mapped to x = (z+p)/(2p) in [0, 1), and the result is lo + trunc((hi-lo+1)·x).
// The caller has checked p >= 2.
func (r *PRNG) gaussian(lo, hi int64, p float64) int64 {
	var z float64
	for {
		u1 := 1.0 - r.Float64()
		u2 := 1.0 - r.Float64()
		z = math.Sqrt(-2.0*math.Log(u1)) * math.Sin(2.0*math.Pi*u2)
		if z >= -p && z < p {
			break
		}
	}
	x := (z + p) / (p * 2.0)
	return lo + int64(float64(hi-lo+1)*x)
}

// zipfian is random_zipfian(lo, hi, s) (getZipfianRand): lo-1 + k where k in [1, n],
// n = hi-lo+1, has probability proportional to k^-s, drawn by the rejection method of
// Devroye, "Non-Uniform Random Variate Generation" (1986), pp. 550-551, rejecting draws
// above n. The caller has checked s in [1.001, 1000].
func (r *PRNG) zipfian(lo, hi int64, s float64) int64 {
	n := hi - lo + 1
	return lo - 1 + r.iterativeZipfian(n, s)
}

func (r *PRNG) iterativeZipfian(n int64, s float64) int64 {
	if n <= 1 {
		return 1
	}
	b := math.Pow(2.0, s-1.0)
	for {
		u := r.Float64()
		v := r.Float64()
		x := math.Floor(math.Pow(u, -1.0/(s-1.0)))
		t := math.Pow(1.0+1.0/x, s-1.0)
		if v*x*(t-1.0)/(b-1.0) <= t/b && x <= float64(n) {
			return int64(x)
		}
	}
}

// PgbenchSeeds returns what pgbench 15 derives from --random-seed=seed with -c clients:
// each client's PRNG seed (client i's random functions draw from NewPRNG(seeds[i])) and
// :default_seed. pgbench seeds a base generator with the seed, gives each client, in order,
// the next value of it as the seed of its own generator, and then draws default_seed.
// Clients seeded so draw exactly pgbench's random values.
func PgbenchSeeds(seed uint64, clients int) (seeds []uint64, defaultSeed int64) {
	base := NewPRNG(seed)
	seeds = make([]uint64, clients)
	for i := range seeds {
		seeds[i] = base.Uint64()
	}
	return seeds, int64(base.Uint64())
}
