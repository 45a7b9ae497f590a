package tpcc

import (
	"math/rand/v2"
	"strconv"

	"github.com/dblat/dblat/internal/workload"
)

// NURand A constants (§2.1.6): C_LAST over [0..999], C_ID over [1..3000], OL_I_ID over
// [1..100000].
const (
	aCLast = 255
	aCID   = 1023
	aOLIID = 8191
)

// Scale constants (§1.2.1, §4.2.2, §4.3.3.1).
const (
	numItems             = 100000 // ITEM rows; fixed, does not scale with W
	districtsPerW        = 10
	customersPerDistrict = 3000
	ordersPerDistrict    = 3000
	// firstUndelivered is the first O_ID loaded without a carrier (§4.3.3.1: O_CARRIER_ID
	// is set if O_ID < 2,101), so 900 orders per district are NEW-ORDER rows.
	firstUndelivered = 2101
)

// randInt is "random within [x..y]" (§2.1.4, §4.3.2.5): uniform over x..y inclusive.
func randInt(r *rand.Rand, x, y int) int { return x + r.IntN(y-x+1) }

// nurand is NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x
// (§2.1.6). In Go | and + have the same precedence, hence the explicit parentheses.
func nurand(r *rand.Rand, a, c, x, y int) int {
	return (((randInt(r, 0, a) | randInt(r, x, y)) + c) % (y - x + 1)) + x
}

// cRunForLast picks the run-time C for C_LAST given the load-time one (§2.1.6.1): the
// difference must lie in [65..119] and be neither 96 nor 112. A valid value exists for
// every cLoad in [0..255] (for cLoad <= 127 one above it, else one below), so the
// rejection loop ends; it draws 256 values on average at worst.
func cRunForLast(r *rand.Rand, cLoad int) int {
	for {
		c := r.IntN(aCLast + 1)
		if validCDelta(cLoad, c) {
			return c
		}
	}
}

// validCDelta reports whether C-Run c is allowed with C-Load cLoad (§2.1.6.1).
func validCDelta(cLoad, c int) bool {
	d := c - cLoad
	if d < 0 {
		d = -d
	}
	return d >= 65 && d <= 119 && d != 96 && d != 112
}

// runConstants are the NURand C values of one run (§2.1.6): chosen once per run at random
// within [0..A] and shared by every terminal.
type runConstants struct {
	cLast, cID, cItem int
}

// newRunConstants draws the run's C values from the run seed; C_LAST's obeys the delta
// rule against the C-Load stored at load time (§2.1.6.1).
func newRunConstants(seed int64, cLoad int) runConstants {
	r := workload.NewRand(seed, "c-run")
	return runConstants{
		cLast: cRunForLast(r, cLoad),
		cID:   r.IntN(aCID + 1),
		cItem: r.IntN(aOLIID + 1),
	}
}

// syllables are the C_LAST building blocks indexed by digit (§4.3.2.3).
var syllables = [10]string{"BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"}

// lastNames[n] is C_LAST for n in [0..999]: the syllables of its hundreds, tens and units
// digits (§4.3.2.3), e.g. 371 -> PRICALLYOUGHT. Precomputed: the loader and Payment and
// Order-Status look names up millions of times.
var lastNames = func() (t [1000]string) {
	for n := range t {
		t[n] = syllables[n/100] + syllables[n/10%10] + syllables[n%10]
	}
	return t
}()

// lastName returns C_LAST for n in [0..999] (§4.3.2.3).
func lastName(n int) string { return lastNames[n] }

// zips[n] is the zip code for the 4-digit n-string n (§4.3.2.7): "%04d" + "11111".
var zips = func() (t [10000]string) {
	for n := range t {
		s := strconv.Itoa(n)
		for len(s) < 4 {
			s = "0" + s
		}
		t[n] = s + "11111"
	}
	return t
}()

// zip returns a random zip code (§4.3.2.7).
func zip(r *rand.Rand) string { return zips[r.IntN(len(zips))] }

const (
	alnum   = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	digits  = "0123456789"
	// poolLen is the length of each pre-generated random character pool: 64 Ki characters,
	// far above the 10,000 pre-generated random numbers §4.3.2.1 asks for, and above the
	// longest string taken from it (C_DATA, 500).
	poolLen = 1 << 16
)

// textPool holds pre-generated random characters for the initial load. §4.3.2.1 lets the
// load take random values in sequence from a set of at least 10,000 pre-generated ones: a
// string of random length [x..y] is a slice of a pool starting at a random offset, so it
// costs two random draws and no allocation. It is not used at run time, nor for O_OL_CNT.
type textPool struct {
	alnum, letters, digits string
}

// newTextPool fills the pools from the load seed.
func newTextPool(seed int64) *textPool {
	r := workload.NewRand(seed, "text-pool")
	fill := func(set string) string {
		b := make([]byte, poolLen)
		for i := range b {
			b[i] = set[r.IntN(len(set))]
		}
		return string(b)
	}
	return &textPool{alnum: fill(alnum), letters: fill(letters), digits: fill(digits)}
}

func slice(r *rand.Rand, pool string, n int) string {
	off := r.IntN(len(pool) - n + 1)
	return pool[off : off+n]
}

// aString is a random a-string of random length [x..y] (§4.3.2.2), alphanumeric.
func (p *textPool) aString(r *rand.Rand, x, y int) string {
	return slice(r, p.alnum, randInt(r, x, y))
}

// letterString is a random a-string of exactly n letters (W_STATE, S_DIST_xx,
// OL_DIST_INFO; §4.3.3.1).
func (p *textPool) letterString(r *rand.Rand, n int) string { return slice(r, p.letters, n) }

// nString is a random n-string of exactly n digits (§4.3.2.2; C_PHONE).
func (p *textPool) nString(r *rand.Rand, n int) string { return slice(r, p.digits, n) }

// dataString is I_DATA or S_DATA: an a-string [26..50] where in 10 % of the rows, chosen at
// random, "ORIGINAL" occupies 8 consecutive characters at a random position (§4.3.3.1).
func (p *textPool) dataString(r *rand.Rand) string {
	n := randInt(r, 26, 50)
	if r.IntN(10) != 0 {
		return slice(r, p.alnum, n)
	}
	pos := r.IntN(n - 8 + 1)
	return slice(r, p.alnum, pos) + "ORIGINAL" + slice(r, p.alnum, n-8-pos)
}
