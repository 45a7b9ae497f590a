package script

import "math/bits"

// The hash functions' constants (pgbench.c): FNV-1a's 64-bit prime and offset basis, and
// MurmurHash64A's multiplier m, m·8 (the key length, 8 bytes, times m) and shift r.
const (
	fnvPrime      = 0x100000001b3
	fnvOffset     = 0xcbf29ce484222325
	mm2Mul        = 0xc6a4a7935bd1e995
	mm2MulTimes8  = 0x35253c9ade8f4ca8
	mm2Rot        = 47
	permuteRounds = 6 // pgbench's choice: "found empirically to give a fairly good tradeoff"
)

// HashFNV1a is pgbench's hash_fnv1a(v, seed): FNV-1a over the 8 bytes of v, least
// significant first, with the offset basis xor-ed with the seed.
func HashFNV1a(v, seed int64) int64 {
	h := uint64(fnvOffset) ^ uint64(seed)
	u := uint64(v)
	for range 8 {
		h ^= u & 0xff
		h *= fnvPrime
		u >>= 8
	}
	return int64(h)
}

// HashMurmur2 is pgbench's hash_murmur2(v, seed) (also plain hash()): MurmurHash64A of
// the 8-byte key v.
func HashMurmur2(v, seed int64) int64 {
	h := uint64(seed) ^ mm2MulTimes8
	k := uint64(v)
	k *= mm2Mul
	k ^= k >> mm2Rot
	k *= mm2Mul
	h ^= k
	h *= mm2Mul
	h ^= h >> mm2Rot
	h *= mm2Mul
	h ^= h >> mm2Rot
	return int64(h)
}

// Permute is pgbench's permute(v, size, seed): the position of v mod size in a
// pseudorandom permutation of [0, size) chosen by seed; 0 when size < 2. Each of six rounds
// multiplies by a random odd number, xors and rotates the lower and then the upper
// power-of-two-sized part of the range, and adds a random offset modulo size, all drawn from
// a PRNG seeded with seed. Callers check size > 0 (pgbench's error otherwise).
func Permute(v, size, seed int64) int64 {
	if size < 2 {
		return 0
	}
	r := NewPRNG(uint64(seed))
	n := uint64(size)
	x := uint64(v) % n
	masklen := uint(63 - bits.LeadingZeros64(n)) // the largest power of 2 <= n is 1<<masklen
	mask := uint64(1)<<masklen - 1
	for range permuteRounds {
		m := r.Uint64()&mask | 1
		k := r.Uint64() & mask
		if x <= mask {
			x = (x*m ^ k) & mask
			x = (x<<1)&mask | x>>(masklen-1)
		}
		m = r.Uint64()&mask | 1
		k = r.Uint64() & mask
		if t := n - 1 - x; t <= mask {
			t = (t*m ^ k) & mask
			t = (t<<1)&mask | t>>(masklen-1)
			x = n - 1 - t
		}
		x = (x + r.Uint64Range(0, n-1)) % n
	}
	return int64(x)
}
